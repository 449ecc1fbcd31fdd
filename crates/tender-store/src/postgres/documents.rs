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
use tender_core::ids::{self, IdKind};
use tender_core::store::{
    Collection, Cursor, DocumentStore, ListQuery, Page, Record, StoreResult, WriteBatch, WriteOp,
};
use tokio_postgres::Row;

use super::idempotency::write_idempotency;
use super::{classify, exec, query, scope_from, Param, PgStore};
use crate::schema::{column, index_columns, table};

fn record(r: &Row) -> Record {
    Record {
        id: r.get(0),
        version: r.get(1),
        body: r.get(2),
    }
}

async fn find_record<C: GenericClient>(
    c: &C,
    scope: &Scope,
    col: Collection,
    id: &str,
) -> StoreResult<Option<Record>> {
    let sql = format!(
        "SELECT id, version, body FROM {} WHERE id = $1 AND account_id = $2 AND livemode = $3",
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
    Ok(row.as_ref().map(record))
}

async fn apply_batch(
    tx: &deadpool_postgres::Transaction<'_>,
    batch: &WriteBatch,
    node: i64,
) -> StoreResult<()> {
    let scope = &batch.scope;
    let live = scope.livemode();
    for op in &batch.ops {
        match op {
            WriteOp::Insert {
                collection,
                id,
                created,
                index,
                body,
            } => {
                let cols = index_columns(*collection, index);
                let names: String = cols.iter().map(|(n, _)| format!(", {n}")).collect();
                let marks: String = (0..cols.len()).map(|i| format!(", ${}", i + 6)).collect();
                let sql = format!(
                    "INSERT INTO {} (id, account_id, livemode, created, version, body{names}) VALUES ($1, $2, $3, $4, 1, $5{marks})",
                    table(*collection)
                );
                let values: Vec<Option<String>> = cols.into_iter().map(|(_, v)| v).collect();
                let mut params: Vec<Param> = vec![id, &scope.account, &live, created, body];
                params.extend(values.iter().map(|v| v as Param));
                exec(tx, &sql, &params)
                    .await
                    .map_err(|e| classify("insert", e))?;
            }
            WriteOp::Update {
                collection,
                id,
                expected_version,
                index,
                body,
            } => {
                let cols = index_columns(*collection, index);
                let sets: String = cols
                    .iter()
                    .enumerate()
                    .map(|(i, (n, _))| format!(", {n} = ${}", i + 6))
                    .collect();
                let sql = format!(
                    "UPDATE {} SET body = $1, version = version + 1{sets} WHERE id = $2 AND account_id = $3 AND livemode = $4 AND version = $5",
                    table(*collection)
                );
                let values: Vec<Option<String>> = cols.into_iter().map(|(_, v)| v).collect();
                let mut params: Vec<Param> =
                    vec![body, id, &scope.account, &live, expected_version];
                params.extend(values.iter().map(|v| v as Param));
                let n = exec(tx, &sql, &params)
                    .await
                    .map_err(|e| classify("update", e))?;
                if n != 1 {
                    return Err(StoreError::Conflict(id.clone()));
                }
            }
            WriteOp::Delete {
                collection,
                id,
                expected_version,
            } => {
                let sql = format!(
                    "DELETE FROM {} WHERE id = $1 AND account_id = $2 AND livemode = $3 AND version = $4",
                    table(*collection)
                );
                let n = exec(tx, &sql, &[id, &scope.account, &live, expected_version])
                    .await
                    .map_err(|e| classify("delete", e))?;
                if n != 1 {
                    return Err(StoreError::Conflict(id.clone()));
                }
                // Whatever was sealed for the object (secrets, a card) goes with it.
                exec(tx, "DELETE FROM sealed_values WHERE owner_id = $1", &[id])
                    .await
                    .map_err(|e| classify("delete sealed", e))?;
            }
            WriteOp::Check {
                collection,
                id,
                expected_version,
            } => {
                // FOR SHARE: a concurrent change or delete of the row waits for this commit (or
                // made this batch see the row gone).
                let sql = format!(
                    "SELECT 1 FROM {} WHERE id = $1 AND account_id = $2 AND livemode = $3 AND version = $4 FOR SHARE",
                    table(*collection)
                );
                let rows = tx
                    .query(&sql, &[id, &scope.account, &live, expected_version])
                    .await
                    .map_err(|e| classify("check", e))?;
                if rows.len() != 1 {
                    return Err(StoreError::Conflict(id.clone()));
                }
            }
            WriteOp::Seal { owner, sealed } => {
                exec(tx,
                    "INSERT INTO sealed_values (owner_id, account_id, livemode, sealed) VALUES ($1, $2, $3, $4)
                     ON CONFLICT (owner_id) DO UPDATE SET sealed = excluded.sealed",
                    &[owner, &scope.account, &live, sealed],
                )
                .await
                .map_err(|e| classify("seal", e))?;
            }
            WriteOp::Unseal { owner } => {
                exec(tx,
                    "DELETE FROM sealed_values WHERE owner_id = $1 AND account_id = $2 AND livemode = $3",
                    &[owner, &scope.account, &live],
                )
                .await
                .map_err(|e| classify("unseal", e))?;
            }
            WriteOp::ScheduleTask {
                id,
                kind,
                object_id,
                due_at,
            } => {
                exec(tx,
                    "INSERT INTO scheduled_tasks (id, kind, account_id, livemode, object_id, due_at) VALUES ($1, $2, $3, $4, $5, $6)",
                    &[id, kind, &scope.account, &live, object_id, due_at],
                )
                .await
                .map_err(|e| classify("schedule task", e))?;
            }
            WriteOp::DeleteTask { id } => {
                let n = exec(tx,
                        "DELETE FROM scheduled_tasks WHERE id = $1 AND account_id = $2 AND livemode = $3",
                        &[id, &scope.account, &live],
                    )
                    .await
                    .map_err(|e| classify("delete task", e))?;
                if n != 1 {
                    // Another runner finished it first: this batch must not apply twice.
                    return Err(StoreError::Conflict(id.clone()));
                }
            }
            WriteOp::Event {
                id,
                event_type,
                created,
                body,
            } => {
                exec(tx,
                    "INSERT INTO events (id, account_id, livemode, created, version, type, body) VALUES ($1, $2, $3, $4, 1, $5, $6)",
                    &[id, &scope.account, &live, created, event_type, body],
                )
                .await
                .map_err(|e| classify("insert event", e))?;
                fan_out(tx, scope, id, event_type, *created).await?;
            }
        }
    }
    if let Some(record) = &batch.idempotency {
        write_idempotency(tx, scope, record, node).await?;
    }
    Ok(())
}

/// The outbox: a pending delivery for every enabled endpoint of the scope that wants the event.
async fn fan_out(
    tx: &deadpool_postgres::Transaction<'_>,
    scope: &Scope,
    event: &str,
    event_type: &str,
    created: i64,
) -> StoreResult<()> {
    let live = scope.livemode();
    let pattern = format!(",{event_type},");
    let rows = query(tx,
            "SELECT id FROM webhook_endpoints WHERE account_id = $1 AND livemode = $2 AND status = 'enabled'
             AND (enabled_events = '*' OR strpos(enabled_events, $3) > 0)",
            &[&scope.account, &live, &pattern],
        )
        .await
        .map_err(|e| classify("fan out", e))?;
    let due = created * 1000;
    for row in rows {
        let endpoint: String = row.get(0);
        exec(tx,
            "INSERT INTO webhook_deliveries (id, account_id, livemode, event_id, endpoint_id, status, next_attempt_at, created)
             VALUES ($1, $2, $3, $4, $5, 'pending', $6, $7)",
            &[&ids::generate(IdKind::WebhookDelivery), &scope.account, &live, &event, &endpoint, &due, &created],
        )
        .await
        .map_err(|e| classify("insert delivery", e))?;
    }
    Ok(())
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
        let live = scope.livemode();
        let mut sql =
            format!("SELECT id, version, body FROM {t} WHERE account_id = $1 AND livemode = $2");
        let mut strings: Vec<String> = Vec::new();
        let mut ints: Vec<i64> = Vec::new();
        // Placeholders are numbered in the order values are pushed below.
        enum V {
            S(usize),
            I(usize),
        }
        let mut order: Vec<V> = Vec::new();
        for (field, value) in &q.filters {
            strings.push(value.clone());
            order.push(V::S(strings.len() - 1));
            sql.push_str(&format!(" AND {} = ${}", column(*field), order.len() + 2));
        }
        for (op, bound) in [
            (">", q.created.gt),
            (">=", q.created.gte),
            ("<", q.created.lt),
            ("<=", q.created.lte),
        ] {
            if let Some(b) = bound {
                ints.push(b);
                order.push(V::I(ints.len() - 1));
                sql.push_str(&format!(" AND created {op} ${}", order.len() + 2));
            }
        }
        let cursor_seq = |id: String| {
            let client = &client;
            async move {
                let row = client
                    .query_opt(
                        &format!("SELECT seq FROM {t} WHERE id = $1 AND account_id = $2 AND livemode = $3"),
                        &[&id, &scope.account, &live],
                    )
                    .await
                    .map_err(|e| classify("cursor", e))?;
                row.map(|r| r.get::<_, i64>(0))
                    .ok_or(StoreError::CursorNotFound(id))
            }
        };
        let ascending = match &q.cursor {
            Cursor::Newest => false,
            Cursor::StartingAfter(id) => {
                ints.push(cursor_seq(id.clone()).await?);
                order.push(V::I(ints.len() - 1));
                sql.push_str(&format!(" AND seq < ${}", order.len() + 2));
                false
            }
            Cursor::EndingBefore(id) => {
                ints.push(cursor_seq(id.clone()).await?);
                order.push(V::I(ints.len() - 1));
                sql.push_str(&format!(" AND seq > ${}", order.len() + 2));
                true
            }
        };
        ints.push(q.limit as i64 + 1);
        order.push(V::I(ints.len() - 1));
        sql.push_str(&format!(
            " ORDER BY seq {} LIMIT ${}",
            if ascending { "ASC" } else { "DESC" },
            order.len() + 2
        ));
        let mut params: Vec<Param> = vec![&scope.account, &live];
        for v in &order {
            match v {
                V::S(i) => params.push(&strings[*i]),
                V::I(i) => params.push(&ints[*i]),
            }
        }
        let stmt = client
            .prepare_cached(&sql)
            .await
            .map_err(|e| classify("list", e))?;
        let rows = client
            .query(&stmt, &params)
            .await
            .map_err(|e| classify("list", e))?;
        let mut records: Vec<Record> = rows.iter().map(record).collect();
        let has_more = records.len() > q.limit as usize;
        records.truncate(q.limit as usize);
        if ascending {
            records.reverse();
        }
        Ok(Page { records, has_more })
    }

    async fn commit(&self, batch: WriteBatch) -> StoreResult<()> {
        let node = self.node.key;
        self.in_transaction(move |tx| Box::pin(async move { apply_batch(tx, &batch, node).await }))
            .await
    }

    async fn find_payment_for_receipt(&self, id: &str) -> StoreResult<Option<(Scope, Record)>> {
        let client = self.client().await?;
        let row = client
            .query_opt(
                "SELECT account_id, livemode, id, version, body FROM payments WHERE id = $1",
                &[&id],
            )
            .await
            .map_err(|e| classify("find payment", e))?;
        Ok(row.map(|r| {
            (
                scope_from(r.get(0), r.get(1)),
                Record {
                    id: r.get(2),
                    version: r.get(3),
                    body: r.get(4),
                },
            )
        }))
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
}
