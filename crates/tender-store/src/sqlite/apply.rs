//! A batch applied on SQLite: [`apply_batch`] runs a whole `WriteBatch` on the writer's connection,
//! one function per kind of write.
//!
//! - A batch runs inside the writer's savepoint ([`super::writer`]): on any error nothing of it
//!   is applied. An update, delete or check that finds no row at the expected version, or a task
//!   deletion that finds no task (another runner finished it), fails the batch with `Conflict`.
//! - The single writer serialises batches: what a `Check` reads cannot change before the commit.
//! - Whatever was sealed for a deleted object (secrets, a card) goes with it.
//! - The outbox ([`fan_out`]): each event's batch also writes a pending delivery for every
//!   enabled endpoint of the scope that wants the event; the batch's idempotency record is
//!   written last, by [`super::idempotency::write_idempotency`].
//!
//! Depends on the parent module's connection helpers and on [`crate::schema`] for names.

use super::classify;
use super::idempotency::write_idempotency;
use crate::schema::{column, index_columns, table, ColumnValue};
use rusqlite::{params, Connection};
use tender_core::auth::Scope;
use tender_core::error::StoreError;
use tender_core::ids::{self, IdKind};
use tender_core::store::{Collection, Field, IndexValues, StoreResult, WriteBatch, WriteOp};
use tender_core::stripe::events::delivery_variants;

/// Applies one batch on the writer's connection (in the writer's transaction; it may run twice,
/// see `writer.rs`). `bodies` are the batch's documents packed beforehand, off the writer
/// ([`body::pack_batch`]), in the order of the ops that carry one (a document's insert or
/// update, an event).
pub(crate) fn apply_batch(
    conn: &Connection,
    batch: &WriteBatch,
    bodies: &[Vec<u8>],
) -> StoreResult<()> {
    let mut bodies = bodies.iter();
    // One body per document by construction (the same match in `pack_batch`); an error, never a
    // panic, should they disagree: a panic would end the writer thread.
    let mut next_body = move || {
        bodies.next().ok_or_else(|| StoreError::Unavailable {
            message: "sqlite apply: fewer packed bodies than documents in the batch".into(),
            source: None,
        })
    };
    let scope = &batch.scope;
    for op in &batch.ops {
        match op {
            WriteOp::Insert {
                collection,
                id,
                created,
                index,
                ..
            } => insert(
                conn,
                scope,
                *collection,
                (id, *created),
                index,
                next_body()?,
            )?,
            WriteOp::Update {
                collection,
                id,
                expected_version,
                index,
                ..
            } => update(
                conn,
                scope,
                *collection,
                (id, *expected_version),
                index,
                next_body()?,
            )?,
            WriteOp::Delete {
                collection,
                id,
                expected_version,
            } => delete(conn, scope, *collection, id, *expected_version)?,
            WriteOp::Check {
                collection,
                id,
                expected_version,
            } => check(conn, scope, *collection, id, *expected_version)?,
            WriteOp::Event { .. } => apply_other(conn, scope, op, Some(next_body()?))?,
            other => apply_other(conn, scope, other, None)?,
        }
    }
    if let Some(record) = &batch.idempotency {
        write_idempotency(conn, scope, record)?;
    }
    Ok(())
}

/// A new document `id`, created at `created`, with its index columns.
pub(crate) fn insert(
    conn: &Connection,
    scope: &Scope,
    collection: Collection,
    (id, created): (&str, i64),
    index: &IndexValues,
    body: &[u8],
) -> StoreResult<()> {
    let live = scope.livemode();
    let cols = index_columns(collection, index);
    let names: String = cols.iter().map(|(n, _)| format!(", {n}")).collect();
    let marks: String = cols.iter().map(|_| ", ?").collect();
    let sql = format!(
        "INSERT INTO {} (id, account_id, livemode, created, version, body{names}) VALUES (?, ?, ?, ?, 1, ?{marks})",
        table(collection)
    );
    let mut values: Vec<rusqlite::types::Value> = vec![
        id.to_string().into(),
        scope.account.clone().into(),
        (live as i64).into(),
        created.into(),
        body.to_vec().into(),
    ];
    values.extend(cols.into_iter().map(|(_, v)| match v {
        ColumnValue::Text(t) => rusqlite::types::Value::from(t),
        ColumnValue::Int(i) => rusqlite::types::Value::from(i),
    }));
    conn.prepare_cached(&sql)
        .and_then(|mut s| s.execute(rusqlite::params_from_iter(values)))
        .map_err(|e| classify("insert", e))?;
    Ok(())
}

/// Document `id` replaced, if it is still at `expected_version` (else a conflict).
pub(crate) fn update(
    conn: &Connection,
    scope: &Scope,
    collection: Collection,
    (id, expected_version): (&str, i64),
    index: &IndexValues,
    body: &[u8],
) -> StoreResult<()> {
    let live = scope.livemode();
    let cols = index_columns(collection, index);
    let sets: String = cols.iter().map(|(n, _)| format!(", {n} = ?")).collect();
    let sql = format!(
        "UPDATE {} SET body = ?, version = version + 1{sets} WHERE id = ? AND account_id = ? AND livemode = ? AND version = ?",
        table(collection)
    );
    let mut values: Vec<rusqlite::types::Value> = vec![body.to_vec().into()];
    values.extend(cols.into_iter().map(|(_, v)| match v {
        ColumnValue::Text(t) => rusqlite::types::Value::from(t),
        ColumnValue::Int(i) => rusqlite::types::Value::from(i),
    }));
    values.extend([
        id.to_string().into(),
        scope.account.clone().into(),
        (live as i64).into(),
        expected_version.into(),
    ]);
    let n = conn
        .prepare_cached(&sql)
        .and_then(|mut s| s.execute(rusqlite::params_from_iter(values)))
        .map_err(|e| classify("update", e))?;
    exactly_one(n, id)
}

/// Every op but a document's write (insert, update, delete, check); `body` is an event's,
/// packed.
pub(crate) fn apply_other(
    conn: &Connection,
    scope: &Scope,
    op: &WriteOp,
    body: Option<&Vec<u8>>,
) -> StoreResult<()> {
    let live = scope.livemode();
    let next_body = || {
        body.ok_or_else(|| StoreError::Unavailable {
            message: "sqlite apply: an event without its packed body".into(),
            source: None,
        })
    };
    match op {
        WriteOp::Seal { owner, sealed } => {
            execute(conn, "seal", "INSERT INTO sealed_values (owner_id, account_id, livemode, sealed) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (owner_id) DO UPDATE SET sealed = excluded.sealed", params![owner, scope.account, live, sealed])?;
        }
        WriteOp::Unseal { owner } => {
            execute(conn, "unseal", "DELETE FROM sealed_values WHERE owner_id = ?1 AND account_id = ?2 AND livemode = ?3", params![owner, scope.account, live])?;
        }
        WriteOp::ScheduleTask {
            id,
            kind,
            object_id,
            due_at,
            clock,
        } => {
            execute(conn, "schedule task", "INSERT INTO scheduled_tasks (id, kind, account_id, livemode, object_id, due_at, clock) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)", params![id, kind, scope.account, live, object_id, due_at, clock])?;
        }
        WriteOp::DeleteClockTasks { clock } => {
            execute(conn, "delete clock tasks", "DELETE FROM scheduled_tasks WHERE clock = ?1 AND account_id = ?2 AND livemode = ?3", params![clock, scope.account, live])?;
        }
        WriteOp::Post(posting) => super::ledger::post(conn, scope, posting)?,
        WriteOp::RequireBalance {
            account,
            currency,
            at_least,
        } => super::ledger::require_balance(conn, scope, *account, *currency, *at_least)?,
        WriteOp::RequireAtMost {
            collection,
            filter,
            at_most,
            what,
        } => require_at_most(conn, scope, *collection, filter.as_ref(), (*at_most, what))?,
        WriteOp::DeleteTask { id } => {
            let n = execute(
                conn,
                "delete task",
                "DELETE FROM scheduled_tasks WHERE id = ?1 AND account_id = ?2 AND livemode = ?3",
                params![id, scope.account, live],
            )?;
            // Another runner finished it first: this batch must not apply twice.
            exactly_one(n, id)?;
        }
        WriteOp::Event {
            id,
            event_type,
            created,
            body: _,
        } => {
            let body = next_body()?;
            execute(conn, "insert event", "INSERT INTO events (id, account_id, livemode, created, version, type, body) VALUES (?1, ?2, ?3, ?4, 1, ?5, ?6)", params![id, scope.account, live, created, event_type, body])?;
            fan_out(conn, scope, id, event_type, *created)?;
        }
        WriteOp::Insert { .. }
        | WriteOp::Update { .. }
        | WriteOp::Delete { .. }
        | WriteOp::Check { .. } => {}
    }
    Ok(())
}

/// One row, or a conflict on `id`: another batch changed, deleted or finished it first.
fn exactly_one(rows: usize, id: &str) -> StoreResult<()> {
    match rows {
        1 => Ok(()),
        _ => Err(StoreError::Conflict(id.to_string())),
    }
}

/// Runs one write statement (cached), naming it `what` in an error; the rows it changed.
pub(crate) fn execute(
    conn: &Connection,
    what: &'static str,
    sql: &str,
    params: impl rusqlite::Params,
) -> StoreResult<usize> {
    conn.prepare_cached(sql)
        .and_then(|mut s| s.execute(params))
        .map_err(|e| classify(what, e))
}

/// Document `id` deleted, if it is still at `expected_version` (else a conflict), with what
/// was sealed for it.
pub(crate) fn delete(
    conn: &Connection,
    scope: &Scope,
    collection: Collection,
    id: &str,
    expected_version: i64,
) -> StoreResult<()> {
    let live = scope.livemode();
    let sql = format!(
        "DELETE FROM {} WHERE id = ?1 AND account_id = ?2 AND livemode = ?3 AND version = ?4",
        table(collection)
    );
    let n = conn
        .prepare_cached(&sql)
        .and_then(|mut s| s.execute(params![id, scope.account, live, expected_version]))
        .map_err(|e| classify("delete", e))?;
    exactly_one(n, id)?;
    // Whatever was sealed for the object (secrets, a card) goes with it.
    conn.prepare_cached("DELETE FROM sealed_values WHERE owner_id = ?1")
        .and_then(|mut s| s.execute([id]))
        .map_err(|e| classify("delete sealed", e))?;
    Ok(())
}

/// Document `id` is still at `expected_version` (else a conflict).
pub(crate) fn check(
    conn: &Connection,
    scope: &Scope,
    collection: Collection,
    id: &str,
    expected_version: i64,
) -> StoreResult<()> {
    let live = scope.livemode();
    // The single writer serialises batches: what this reads cannot change before the
    // commit.
    let sql = format!(
        "SELECT COUNT(*) FROM {} WHERE id = ?1 AND account_id = ?2 AND livemode = ?3 AND version = ?4",
        table(collection)
    );
    let n: usize = conn
        .prepare_cached(&sql)
        .and_then(|mut s| {
            s.query_row(params![id, scope.account, live, expected_version], |r| {
                r.get(0)
            })
        })
        .map_err(|e| classify("check", e))?;
    exactly_one(n, id)
}

/// At most `at_most` documents of `collection` in the scope (matching `filter`), else
/// `LimitReached(what)`: the single writer serialises batches, so the count cannot race.
pub(crate) fn require_at_most(
    conn: &Connection,
    scope: &Scope,
    collection: Collection,
    filter: Option<&(Field, String)>,
    (at_most, what): (i64, &str),
) -> StoreResult<()> {
    let live = scope.livemode();
    let mut sql = format!(
        "SELECT COUNT(*) FROM {} WHERE account_id = ?1 AND livemode = ?2",
        table(collection)
    );
    if let Some((field, _)) = filter {
        sql.push_str(&format!(" AND {} = ?3", column(*field)));
    }
    let mut stmt = conn
        .prepare_cached(&sql)
        .map_err(|e| classify("count", e))?;
    let count: i64 = match filter {
        Some((_, value)) => stmt.query_row(params![scope.account, live, value], |r| r.get(0)),
        None => stmt.query_row(params![scope.account, live], |r| r.get(0)),
    }
    .map_err(|e| classify("count", e))?;
    if count > at_most {
        return Err(StoreError::LimitReached(what.to_string()));
    }
    Ok(())
}

/// The outbox: a pending delivery for every enabled endpoint of the scope that wants the event
/// (for a `/v1` endpoint, one per Stripe name of it the endpoint listens to).
pub(crate) fn fan_out(
    conn: &Connection,
    scope: &Scope,
    event: &str,
    event_type: &str,
    now: i64,
) -> StoreResult<()> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT id, enabled_events FROM webhook_endpoints WHERE account_id = ?1 AND livemode = ?2 AND status = 'enabled'
             AND (enabled_events IN ('*', '*|*') OR instr(enabled_events, ',' || ?3 || ',') > 0)",
        )
        .map_err(|e| classify("fan out", e))?;
    let endpoints = stmt
        .query_map(params![scope.account, scope.livemode(), event_type], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
        })
        .map_err(|e| classify("fan out", e))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| classify("fan out", e))?;
    for (endpoint, index) in endpoints {
        // One delivery per name the endpoint hears the event under (a /v1 endpoint may
        // listen to both of a change's Stripe names).
        for variant in delivery_variants(&index, event_type) {
            conn.prepare_cached(
                "INSERT INTO webhook_deliveries (id, account_id, livemode, event_id, endpoint_id, variant, status, next_attempt_at, created)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'pending', ?7 * 1000, ?7)",
            )
            .and_then(|mut s| {
                s.execute(params![
                    ids::generate(IdKind::WebhookDelivery),
                    scope.account,
                    scope.livemode(),
                    event,
                    endpoint,
                    variant,
                    now
                ])
            })
            .map_err(|e| classify("insert delivery", e))?;
        }
    }
    Ok(())
}
