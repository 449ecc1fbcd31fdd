//! Documents on PostgreSQL: finding and listing documents, sealed values, the receipt lookup,
//! and the commit of a batch ([`super::plan`] makes its statements).
//!
//! - Every batch is one transaction on a pooled connection, committed durably
//!   (`synchronous_commit` is on); on any error nothing of it is applied.
//!
//! Depends on the parent module's connection helpers and on [`crate::schema`] for names.

use async_trait::async_trait;
use deadpool_postgres::GenericClient;
use tender_core::auth::Scope;
use tender_core::error::StoreError;
use tender_core::store::{
    Collection, Cursor, DocumentStore, ListQuery, Page, Record, StoreResult, StreamPosition,
    StreamedEvent, WriteBatch,
};
use tokio_postgres::Row;

use super::pipeline::{self, Value};
use super::{classify, document, scope_from, Param, PgStore, BODY};
use crate::body;
use crate::schema::{column, comparison, ranges, table};

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
        let stmts = super::plan::plan(&batch, node);
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

    /// Where a stream opened now starts: after the scope's newest event visible now, or, when
    /// it has none past the horizon, at the horizon (events of transactions running now or
    /// later are new). The horizon alone is not enough: a transaction of anyone on the server
    /// still running from before (another tenant's, a background task's) holds it back, and the
    /// scope's events committed since would be streamed as new. What this misses: an event of
    /// the scope whose transaction, older than that newest event's, was still running at the
    /// moment of connecting — written while the stream opened, not after.
    async fn stream_head(&self, scope: &Scope) -> StoreResult<StreamPosition> {
        let client = self.client().await?;
        let row = client
            .query_one(
                "SELECT h.xmin, e.txid, e.seq
                 FROM (SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint AS xmin) h
                 LEFT JOIN LATERAL (
                     SELECT txid, seq FROM events
                     WHERE account_id = $1 AND livemode = $2 AND txid >= h.xmin
                     ORDER BY txid DESC, seq DESC LIMIT 1
                 ) e ON true",
                &[&scope.account, &scope.livemode()],
            )
            .await
            .map_err(|e| classify("stream head", e))?;
        Ok(
            match (row.get::<_, Option<i64>>(1), row.get::<_, Option<i64>>(2)) {
                (Some(txid), Some(seq)) => StreamPosition(txid, seq),
                _ => StreamPosition(row.get::<_, i64>(0), i64::MIN),
            },
        )
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
