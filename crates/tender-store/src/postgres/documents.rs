//! Documents and the outbox on PostgreSQL: finding and listing documents, sealed values, the
//! receipt lookup, and [`apply_batch`], which applies a whole `WriteBatch` in one transaction.
//!
//! - Every batch is one transaction on a pooled connection, committed durably
//!   (`synchronous_commit` is on); on any error nothing of it is applied.
//! - Optimistic versions: an update, delete or check that finds no row at the expected version,
//!   or a task deletion that finds no task, fails the batch with `Conflict`, so concurrent
//!   read-modify-writes on different nodes conflict and retry in the use case.
//! - A `Check` reads its row `FOR SHARE`: a concurrent change or delete of the row waits for this
//!   commit (or made this batch see the row gone).
//! - Whatever was sealed for a deleted object (secrets, a card) goes with it.
//! - The outbox ([`fan_out`]): each event's batch also writes a pending delivery for every
//!   enabled endpoint of the scope that wants the event; the batch's idempotency record is
//!   written last, by [`super::idempotency::write_idempotency`].
//!
//! Depends on the parent module's connection helpers and on [`crate::schema`] for names.

use async_trait::async_trait;
use deadpool_postgres::GenericClient;
use tender_core::auth::Scope;
use tender_core::error::StoreError;
use tender_core::store::{
    Collection, Cursor, DocumentStore, Field, IndexValues, ListQuery, Page, Record, StoreResult,
    StreamPosition, StreamedEvent, WriteBatch, WriteOp,
};
use tokio_postgres::Row;

use super::idempotency::idempotency_statement;
use super::pipeline::{self, Stmt, Value};
use super::{classify, document, scope_from, Param, PgStore, BODY};
use crate::body;
use crate::schema::{column, comparison, index_columns, ranges, table, ColumnValue};

fn column_value((_, v): (&'static str, ColumnValue)) -> Value {
    match v {
        ColumnValue::Text(t) => Box::new(t),
        ColumnValue::Int(i) => Box::new(i),
    }
}

fn record(r: &Row) -> StoreResult<Record> {
    Ok(Record {
        id: r.get(0),
        version: r.get(1),
        body: document(r, 2)?,
    })
}

async fn find_record<C: GenericClient>(
    c: &C,
    scope: &Scope,
    col: Collection,
    id: &str,
) -> StoreResult<Option<Record>> {
    let sql = format!(
        "SELECT id, version, {BODY} FROM {} WHERE id = $1 AND account_id = $2 AND livemode = $3",
        table(col)
    );
    let stmt = c
        .prepare_cached(&sql)
        .await
        .map_err(|e| classify("find", e))?;
    let live = scope.livemode();
    let row = c
        .query_opt(&stmt, &[&id, &scope.account, &live])
        .await
        .map_err(|e| classify("find", e))?;
    row.as_ref().map(record).transpose()
}

/// The statements of a batch, in order ([`pipeline`] sends them in one round trip): the writes
/// to documents ([`document_statements`]), what goes with them ([`other_statements`]), and the
/// request's idempotency record.
fn plan(batch: &WriteBatch, node: i64) -> Vec<Stmt> {
    let scope = &batch.scope;
    let mut out = Vec::with_capacity(batch.ops.len() + 2);
    for op in &batch.ops {
        if !document_statements(scope, op, &mut out) {
            other_statements(scope, op, &mut out);
        }
    }
    if let Some(record) = &batch.idempotency {
        out.push(idempotency_statement(scope, record, node));
    }
    out
}

/// The statements of `op` when it writes a document (insert, update, delete, check); `false`
/// for any other op.
fn document_statements(scope: &Scope, op: &WriteOp, out: &mut Vec<Stmt>) -> bool {
    match op {
        WriteOp::Insert {
            collection,
            id,
            created,
            index,
            body,
        } => out.push(insert(scope, *collection, (id, *created), index, body)),
        WriteOp::Update {
            collection,
            id,
            expected_version,
            index,
            body,
        } => out.push(update(
            scope,
            *collection,
            (id, *expected_version),
            index,
            body,
        )),
        WriteOp::Delete {
            collection,
            id,
            expected_version,
        } => {
            out.push(versioned(
                "delete",
                format!("DELETE FROM {} WHERE", table(*collection)),
                "",
                (scope, id),
                *expected_version,
            ));
            // Whatever was sealed for the object (secrets, a card) goes with it.
            out.push(Stmt::new(
                "delete sealed",
                "DELETE FROM sealed_values WHERE owner_id = $1",
                vec![Box::new(id.clone())],
            ));
        }
        // FOR SHARE: a concurrent change or delete of the row waits for this commit (or
        // made this batch see the row gone).
        WriteOp::Check {
            collection,
            id,
            expected_version,
        } => out.push(
            versioned(
                "check",
                format!("SELECT 1 FROM {} WHERE", table(*collection)),
                " FOR SHARE",
                (scope, id),
                *expected_version,
            )
            .returning_rows(),
        ),
        _ => return false,
    }
    true
}

/// The statements of every op that is not a document's write: seals, tasks, ledger postings
/// and checks, limits, events.
fn other_statements(scope: &Scope, op: &WriteOp, out: &mut Vec<Stmt>) {
    let keyed = |id: &str| -> Vec<Value> {
        vec![
            Box::new(id.to_string()),
            Box::new(scope.account.clone()),
            Box::new(scope.livemode()),
        ]
    };
    match op {
        WriteOp::Seal { owner, sealed } => {
            let mut params = keyed(owner);
            params.push(Box::new(sealed.clone()));
            out.push(Stmt::new(
                    "seal",
                    "INSERT INTO sealed_values (owner_id, account_id, livemode, sealed) VALUES ($1, $2, $3, $4)
                 ON CONFLICT (owner_id) DO UPDATE SET sealed = excluded.sealed",
                    params,
                ))
        }
        WriteOp::Unseal { owner } => out.push(Stmt::new(
            "unseal",
            "DELETE FROM sealed_values WHERE owner_id = $1 AND account_id = $2 AND livemode = $3",
            keyed(owner),
        )),
        WriteOp::ScheduleTask {
            id,
            kind,
            object_id,
            due_at,
            clock,
        } => out.push(schedule_task(scope, id, kind, (object_id, *due_at), clock)),
        WriteOp::DeleteClockTasks { clock } => out.push(Stmt::new(
            "delete clock tasks",
            "DELETE FROM scheduled_tasks WHERE clock = $1 AND account_id = $2 AND livemode = $3",
            keyed(clock),
        )),
        WriteOp::Post(posting) => out.push(super::ledger::post_statement(scope, posting)),
        WriteOp::RequireBalance {
            account,
            currency,
            at_least,
        } => out.extend(super::ledger::require_balance_statements(
            scope, *account, *currency, *at_least,
        )),
        WriteOp::RequireAtMost {
            collection,
            filter,
            at_most,
            what,
        } => out.extend(require_at_most(
            scope,
            *collection,
            filter.as_ref(),
            *at_most,
            what,
        )),
        WriteOp::DeleteTask { id } => out.push(
            Stmt::new(
                "delete task",
                "DELETE FROM scheduled_tasks WHERE id = $1 AND account_id = $2 AND livemode = $3",
                keyed(id),
            )
            // Another runner finished it first: this batch must not apply twice.
            .exactly_one(StoreError::Conflict(id.clone())),
        ),
        WriteOp::Event {
            id,
            event_type,
            created,
            body,
        } => {
            out.push(insert_event(scope, id, event_type, *created, body));
            out.push(fan_out(scope, id, event_type, *created));
        }
        WriteOp::Insert { .. }
        | WriteOp::Update { .. }
        | WriteOp::Delete { .. }
        | WriteOp::Check { .. } => {}
    }
}

/// A new document `id`, created at `created`, with its index columns.
fn insert(
    scope: &Scope,
    collection: Collection,
    (id, created): (&str, i64),
    index: &IndexValues,
    body: &str,
) -> Stmt {
    let cols = index_columns(collection, index);
    let names: String = cols.iter().map(|(n, _)| format!(", {n}")).collect();
    let marks: String = (0..cols.len()).map(|i| format!(", ${}", i + 6)).collect();
    let sql = format!(
        "INSERT INTO {} (id, account_id, livemode, created, version, packed{names}) VALUES ($1, $2, $3, $4, 1, $5{marks})",
        table(collection)
    );
    let mut params: Vec<Value> = vec![
        Box::new(id.to_string()),
        Box::new(scope.account.clone()),
        Box::new(scope.livemode()),
        Box::new(created),
        Box::new(body::pack(body)),
    ];
    params.extend(cols.into_iter().map(column_value));
    Stmt::new("insert", sql, params)
}

/// Document `id` replaced, if it is still at `expected_version` (else a conflict).
fn update(
    scope: &Scope,
    collection: Collection,
    (id, expected_version): (&str, i64),
    index: &IndexValues,
    body: &str,
) -> Stmt {
    let cols = index_columns(collection, index);
    let sets: String = cols
        .iter()
        .enumerate()
        .map(|(i, (n, _))| format!(", {n} = ${}", i + 6))
        .collect();
    let sql = format!(
        "UPDATE {} SET packed = $1, body = NULL, version = version + 1{sets} WHERE id = $2 AND account_id = $3 AND livemode = $4 AND version = $5",
        table(collection)
    );
    let mut params: Vec<Value> = vec![
        Box::new(body::pack(body)),
        Box::new(id.to_string()),
        Box::new(scope.account.clone()),
        Box::new(scope.livemode()),
        Box::new(expected_version),
    ];
    params.extend(cols.into_iter().map(column_value));
    Stmt::new("update", sql, params).exactly_one(StoreError::Conflict(id.to_string()))
}

/// `head` (`DELETE FROM t WHERE`, `SELECT 1 FROM t WHERE`) applied to exactly the row `id` of
/// the scope at `expected_version`, then `tail`: any other count is a conflict.
fn versioned(
    what: &'static str,
    head: String,
    tail: &str,
    (scope, id): (&Scope, &str),
    expected_version: i64,
) -> Stmt {
    Stmt::new(
        what,
        format!("{head} id = $1 AND account_id = $2 AND livemode = $3 AND version = $4{tail}"),
        vec![
            Box::new(id.to_string()),
            Box::new(scope.account.clone()),
            Box::new(scope.livemode()),
            Box::new(expected_version),
        ],
    )
    .exactly_one(StoreError::Conflict(id.to_string()))
}

/// A task scheduled for `object_id`, due at `due_at` (in test clock `clock`'s time, if any).
fn schedule_task(
    scope: &Scope,
    id: &str,
    kind: &str,
    (object_id, due_at): (&str, i64),
    clock: &Option<String>,
) -> Stmt {
    Stmt::new(
        "schedule task",
        "INSERT INTO scheduled_tasks (id, kind, account_id, livemode, object_id, due_at, clock) VALUES ($1, $2, $3, $4, $5, $6, $7)",
        vec![
            Box::new(id.to_string()),
            Box::new(kind.to_string()),
            Box::new(scope.account.clone()),
            Box::new(scope.livemode()),
            Box::new(object_id.to_string()),
            Box::new(due_at),
            Box::new(clock.clone()),
        ],
    )
}

/// At most `at_most` documents of `collection` in the scope (matching `filter`) once the batch
/// is applied, counted under a per-scope lock so racing batches count one after the other.
fn require_at_most(
    scope: &Scope,
    collection: Collection,
    filter: Option<&(Field, String)>,
    at_most: i64,
    what: &str,
) -> [Stmt; 2] {
    let t = table(collection);
    let live = scope.livemode();
    let lock = Stmt::new(
        "lock count",
        "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
        vec![Box::new(format!(
            "tender-count:{}:{live}:{t}",
            scope.account
        ))],
    )
    .returning_rows();
    let mut params: Vec<Value> = vec![
        Box::new(scope.account.clone()),
        Box::new(live),
        Box::new(at_most),
    ];
    let condition = match filter {
        Some((field, value)) => {
            params.push(Box::new(value.clone()));
            format!(" AND {} = $4", column(*field))
        }
        None => String::new(),
    };
    let count = Stmt::new(
        "count",
        format!(
            "SELECT 1 WHERE (SELECT COUNT(*) FROM {t} WHERE account_id = $1 AND livemode = $2{condition}) <= $3::bigint"
        ),
        params,
    )
    .returning_rows()
    .exactly_one(StoreError::LimitReached(what.to_string()));
    [lock, count]
}

/// An event row (its webhook deliveries are [`fan_out`]).
fn insert_event(scope: &Scope, id: &str, event_type: &str, created: i64, body: &str) -> Stmt {
    Stmt::new(
        "insert event",
        "INSERT INTO events (id, account_id, livemode, created, version, type, packed) VALUES ($1, $2, $3, $4, 1, $5, $6)",
        vec![
            Box::new(id.to_string()),
            Box::new(scope.account.clone()),
            Box::new(scope.livemode()),
            Box::new(created),
            Box::new(event_type.to_string()),
            Box::new(body::pack(body)),
        ],
    )
}

/// The outbox, in one statement: a pending delivery for every enabled endpoint of the scope
/// that wants the event. A delivery's id is derived from the pair it stands for (the event's
/// time part, then 16 hex digits of the MD5 of event and endpoint ids): unique per pair, and
/// made by the database, so the statement needs no answer before it is sent.
fn fan_out(scope: &Scope, event: &str, event_type: &str, created: i64) -> Stmt {
    Stmt::new(
        "fan out",
        "INSERT INTO webhook_deliveries (id, account_id, livemode, event_id, endpoint_id, status, next_attempt_at, created)
         SELECT 'wd_' || substr($4, 5, 8) || substr(md5($4 || e.id), 1, 16),
                $1, $2, $4, e.id, 'pending', $5, $6
         FROM webhook_endpoints e WHERE e.account_id = $1 AND e.livemode = $2 AND e.status = 'enabled'
           AND (e.enabled_events = '*' OR strpos(e.enabled_events, $3) > 0)",
        vec![
            Box::new(scope.account.clone()),
            Box::new(scope.livemode()),
            Box::new(format!(",{event_type},")),
            Box::new(event.to_string()),
            Box::new(created * 1000),
            Box::new(created),
        ],
    )
}

#[async_trait]
impl DocumentStore for PgStore {
    async fn find_record(
        &self,
        scope: &Scope,
        collection: Collection,
        id: &str,
    ) -> StoreResult<Option<Record>> {
        let client = self.client().await?;
        find_record(&client, scope, collection, id).await
    }

    async fn list_records(
        &self,
        scope: &Scope,
        collection: Collection,
        q: &ListQuery,
    ) -> StoreResult<Page> {
        let client = self.client().await?;
        let t = table(collection);
        let mut sql =
            format!("SELECT id, version, {BODY} FROM {t} WHERE account_id = $1 AND livemode = $2");
        // Placeholders are numbered in the order values are pushed.
        let mut values: Vec<Value> =
            vec![Box::new(scope.account.clone()), Box::new(scope.livemode())];
        let mut and = |sql: &mut String, clause: String, value: Value| {
            values.push(value);
            sql.push_str(&format!(" AND {clause} ${}", values.len()));
        };
        for (field, value) in &q.filters {
            let clause = format!("{} {}", column(*field), comparison(*field));
            and(&mut sql, clause, Box::new(value.clone()));
        }
        for (col, op, bound) in ranges(collection, q) {
            and(&mut sql, format!("{col} {op}"), Box::new(bound));
        }
        let ascending = match &q.cursor {
            Cursor::Newest => false,
            Cursor::StartingAfter(id) => {
                let seq = cursor_seq(&client, collection, scope, id).await?;
                and(&mut sql, "seq <".into(), Box::new(seq));
                false
            }
            Cursor::EndingBefore(id) => {
                let seq = cursor_seq(&client, collection, scope, id).await?;
                and(&mut sql, "seq >".into(), Box::new(seq));
                true
            }
        };
        values.push(Box::new(q.limit as i64 + 1));
        sql.push_str(&format!(
            " ORDER BY seq {} LIMIT ${}",
            if ascending { "ASC" } else { "DESC" },
            values.len()
        ));
        let params: Vec<Param> = values.iter().map(|v| v.as_ref() as Param).collect();
        let stmt = client
            .prepare_cached(&sql)
            .await
            .map_err(|e| classify("list", e))?;
        let rows = client
            .query(&stmt, &params)
            .await
            .map_err(|e| classify("list", e))?;
        let mut records: Vec<Record> = rows.iter().map(record).collect::<StoreResult<_>>()?;
        let has_more = records.len() > q.limit as usize;
        records.truncate(q.limit as usize);
        if ascending {
            records.reverse();
        }
        Ok(Page { records, has_more })
    }

    async fn commit(&self, batch: WriteBatch) -> StoreResult<()> {
        body::check_sizes(&batch)?;
        let node = self.node.key();
        let stmts = plan(&batch, node);
        self.in_transaction(move |tx| Box::pin(pipeline::run(tx, stmts)))
            .await
    }

    async fn find_unscoped(
        &self,
        collection: Collection,
        id: &str,
    ) -> StoreResult<Option<(Scope, Record)>> {
        let client = self.client().await?;
        let row = client
            .query_opt(
                &format!(
                    "SELECT account_id, livemode, id, version, {BODY} FROM {} WHERE id = $1",
                    table(collection)
                ),
                &[&id],
            )
            .await
            .map_err(|e| classify("find unscoped", e))?;
        row.map(|r| {
            Ok((
                scope_from(r.get(0), r.get(1)),
                Record {
                    id: r.get(2),
                    version: r.get(3),
                    body: document(&r, 4)?,
                },
            ))
        })
        .transpose()
    }

    async fn find_sealed(&self, scope: &Scope, owner: &str) -> StoreResult<Option<String>> {
        let client = self.client().await?;
        let row = client
            .query_opt(
                "SELECT sealed FROM sealed_values WHERE owner_id = $1 AND account_id = $2 AND livemode = $3",
                &[&owner, &scope.account, &scope.livemode()],
            )
            .await
            .map_err(|e| classify("find sealed", e))?;
        Ok(row.map(|r| r.get(0)))
    }

    async fn find_sealed_unscoped(&self, owner: &str) -> StoreResult<Option<(Scope, String)>> {
        let client = self.client().await?;
        let row = client
            .query_opt(
                "SELECT account_id, livemode, sealed FROM sealed_values WHERE owner_id = $1",
                &[&owner],
            )
            .await
            .map_err(|e| classify("find sealed", e))?;
        Ok(row.map(|r| (super::scope_from(r.get(0), r.get(1)), r.get(2))))
    }

    /// Positions are `(txid, seq)` (migration 0009): only events of transactions older than
    /// every one still running are read, in (txid, seq) order. A transaction still running
    /// holds back the events of later ones, so an event committing behind a stream's position
    /// cannot exist (T3-M7): every transaction below the horizon has finished.
    async fn stream_events(
        &self,
        scope: &Scope,
        after: StreamPosition,
        limit: u32,
    ) -> StoreResult<Vec<StreamedEvent>> {
        let client = self.client().await?;
        let rows = client
            .query(
                &format!(
                    "SELECT txid, seq, id, {BODY} FROM events
                     WHERE account_id = $1 AND livemode = $2 AND (txid, seq) > ($3, $4)
                       AND txid < pg_snapshot_xmin(pg_current_snapshot())::text::bigint
                     ORDER BY txid, seq LIMIT $5"
                ),
                &[
                    &scope.account,
                    &scope.livemode(),
                    &after.0,
                    &after.1,
                    &i64::from(limit),
                ],
            )
            .await
            .map_err(|e| classify("stream events", e))?;
        rows.iter()
            .map(|r| {
                Ok(StreamedEvent {
                    position: StreamPosition(r.get(0), r.get(1)),
                    id: r.get(2),
                    body: document(r, 3)?,
                })
            })
            .collect()
    }

    /// The horizon now: events of transactions running now (or later) are new.
    async fn stream_head(&self, _scope: &Scope) -> StoreResult<StreamPosition> {
        let client = self.client().await?;
        let row = client
            .query_one(
                "SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint",
                &[],
            )
            .await
            .map_err(|e| classify("stream head", e))?;
        Ok(StreamPosition(row.get::<_, i64>(0), i64::MIN))
    }

    async fn stream_position(
        &self,
        scope: &Scope,
        id: &str,
    ) -> StoreResult<Option<StreamPosition>> {
        let client = self.client().await?;
        let row = client
            .query_opt(
                "SELECT txid, seq FROM events WHERE id = $1 AND account_id = $2 AND livemode = $3",
                &[&id, &scope.account, &scope.livemode()],
            )
            .await
            .map_err(|e| classify("stream position", e))?;
        Ok(row.map(|r| StreamPosition(r.get(0), r.get(1))))
    }
}

/// The position (`seq`) of document `id`, the cursor of a list; `CursorNotFound` when the scope
/// has no such document.
async fn cursor_seq(
    client: &deadpool_postgres::Object,
    collection: Collection,
    scope: &Scope,
    id: &str,
) -> StoreResult<i64> {
    let row = client
        .query_opt(
            &format!(
                "SELECT seq FROM {} WHERE id = $1 AND account_id = $2 AND livemode = $3",
                table(collection)
            ),
            &[&id, &scope.account, &scope.livemode()],
        )
        .await
        .map_err(|e| classify("cursor", e))?;
    row.map(|r| r.get::<_, i64>(0))
        .ok_or_else(|| StoreError::CursorNotFound(id.to_string()))
}
