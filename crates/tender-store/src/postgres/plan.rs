//! A batch planned for PostgreSQL: [`plan`] turns a whole `WriteBatch` into its statements, in order,
//! one function per kind of write; [`super::pipeline`] sends them in one round trip, in one
//! transaction.
//!
//! - Optimistic versions: an update, delete or check that finds no row at the expected version,
//!   or a task deletion that finds no task, fails the batch with `Conflict`, so concurrent
//!   read-modify-writes on different nodes conflict and retry in the use case.
//! - A `Check` reads its row `FOR SHARE`: a concurrent change or delete of the row waits for this
//!   commit (or made this batch see the row gone).
//! - Whatever was sealed for a deleted object (secrets, a card) goes with it.
//! - The outbox ([`fan_out`]): each event's batch also writes a pending delivery for every
//!   enabled endpoint of the scope that wants the event; the batch's idempotency record is
//!   written last.
//!
//! Depends on the parent module's helpers and on [`crate::schema`] for names.

use super::idempotency::idempotency_statement;
use super::pipeline::{Stmt, Value};
use crate::body;
use crate::schema::{column, index_columns, table, ColumnValue};
use tender_core::auth::Scope;
use tender_core::error::StoreError;
use tender_core::store::{Collection, Field, IndexValues, WriteBatch, WriteOp};

pub(crate) fn column_value((_, v): (&'static str, ColumnValue)) -> Value {
    match v {
        ColumnValue::Text(t) => Box::new(t),
        ColumnValue::Int(i) => Box::new(i),
    }
}

/// The statements of a batch, in order ([`pipeline`] sends them in one round trip): the writes
/// to documents ([`document_statements`]), what goes with them ([`other_statements`]), and the
/// request's idempotency record.
pub(crate) fn plan(batch: &WriteBatch, node: i64) -> Vec<Stmt> {
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
pub(crate) fn document_statements(scope: &Scope, op: &WriteOp, out: &mut Vec<Stmt>) -> bool {
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
pub(crate) fn other_statements(scope: &Scope, op: &WriteOp, out: &mut Vec<Stmt>) {
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
pub(crate) fn insert(
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
pub(crate) fn update(
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
pub(crate) fn versioned(
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
pub(crate) fn schedule_task(
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
pub(crate) fn require_at_most(
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
pub(crate) fn insert_event(
    scope: &Scope,
    id: &str,
    event_type: &str,
    created: i64,
    body: &str,
) -> Stmt {
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
/// that wants the event — for a `/v1` endpoint (its index has a `|`), one per Stripe name of the
/// event it listens to ($7, the event's names in order; the rule of
/// [`tender_core::stripe::events::delivery_variants`]). A delivery's id is derived from what
/// it stands for (the event's time part, then 16 hex digits of the MD5 of event id, endpoint
/// id and name): unique per delivery, and made by the database, so the statement needs no
/// answer before it is sent.
pub(crate) fn fan_out(scope: &Scope, event: &str, event_type: &str, created: i64) -> Stmt {
    let names: Vec<String> = tender_core::stripe::events::names_of(event_type)
        .map(|(n, _)| n.to_string())
        .collect();
    Stmt::new(
        "fan out",
        "INSERT INTO webhook_deliveries (id, account_id, livemode, event_id, endpoint_id, variant, status, next_attempt_at, created)
         SELECT 'wd_' || substr($4, 5, 8) || substr(md5($4 || e.id || v.name), 1, 16),
                $1, $2, $4, e.id, v.name, 'pending', $5, $6
         FROM webhook_endpoints e
         CROSS JOIN LATERAL (
             SELECT '' AS name WHERE strpos(e.enabled_events, '|') = 0
             UNION ALL
             SELECT n FROM unnest($7::text[]) AS n
             WHERE strpos(e.enabled_events, '|') > 0
               AND (e.enabled_events = '*|*'
                    OR strpos(split_part(e.enabled_events, '|', 2), ',' || n || ',') > 0)
         ) v
         WHERE e.account_id = $1 AND e.livemode = $2 AND e.status = 'enabled'
           AND (e.enabled_events IN ('*', '*|*') OR strpos(e.enabled_events, $3) > 0)",
        vec![
            Box::new(scope.account.clone()),
            Box::new(scope.livemode()),
            Box::new(format!(",{event_type},")),
            Box::new(event.to_string()),
            Box::new(created * 1000),
            Box::new(created),
            Box::new(names),
        ],
    )
}
