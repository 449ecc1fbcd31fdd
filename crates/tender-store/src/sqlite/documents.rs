//! Documents on SQLite: finding and listing documents, sealed values, the receipt lookup, and
//! the commit of a batch (applied on the writer's connection by [`super::apply`]).
//!
//! - Lists are keyset pagination on (account, livemode[, filter], seq): an index walk of at most
//!   `limit + 1` rows whatever the table size, so they run on the calling thread (`read_now`).
//!
//! Depends on the parent module's connection helpers and on [`crate::schema`] for names.

use async_trait::async_trait;
use rusqlite::{params, Connection, OptionalExtension};
use tender_core::auth::{Mode, Scope};
use tender_core::error::StoreError;
use tender_core::store::{
    Collection, Cursor, DocumentStore, ListQuery, Page, Record, StoreResult, StreamPosition,
    StreamedEvent, WriteBatch,
};

use super::{classify, Document, SqliteStore};
use crate::body;
use crate::schema::{column, comparison, ranges, table};

fn find_record(
    conn: &Connection,
    scope: &Scope,
    c: Collection,
    id: &str,
) -> StoreResult<Option<Record>> {
    let sql = format!(
        "SELECT id, version, body FROM {} WHERE id = ?1 AND account_id = ?2 AND livemode = ?3",
        table(c)
    );
    let mut stmt = conn.prepare_cached(&sql).map_err(|e| classify("find", e))?;
    stmt.query_row(params![id, scope.account, scope.livemode()], |r| {
        Ok(Record {
            id: r.get(0)?,
            version: r.get(1)?,
            body: r.get::<_, Document>(2)?.0,
        })
    })
    .optional()
    .map_err(|e| classify("find", e))
}

fn list_records(
    conn: &Connection,
    scope: &Scope,
    c: Collection,
    q: &ListQuery,
) -> StoreResult<Page> {
    let t = table(c);
    let mut sql =
        format!("SELECT id, version, body, seq FROM {t} WHERE account_id = ? AND livemode = ?");
    let mut values: Vec<rusqlite::types::Value> = vec![
        scope.account.clone().into(),
        (scope.livemode() as i64).into(),
    ];
    for (field, value) in &q.filters {
        sql.push_str(&format!(" AND {} {} ?", column(*field), comparison(*field)));
        values.push(value.clone().into());
    }
    for (col, op, bound) in ranges(c, q) {
        sql.push_str(&format!(" AND {col} {op} ?"));
        values.push(bound.into());
    }
    let cursor_seq = |id: &str| -> StoreResult<i64> {
        let sql =
            format!("SELECT seq FROM {t} WHERE id = ?1 AND account_id = ?2 AND livemode = ?3");
        conn.query_row(&sql, params![id, scope.account, scope.livemode()], |r| {
            r.get(0)
        })
        .optional()
        .map_err(|e| classify("cursor", e))?
        .ok_or_else(|| StoreError::CursorNotFound(id.to_string()))
    };
    let ascending = match &q.cursor {
        Cursor::Newest => false,
        Cursor::StartingAfter(id) => {
            sql.push_str(" AND seq < ?");
            values.push(cursor_seq(id)?.into());
            false
        }
        Cursor::EndingBefore(id) => {
            sql.push_str(" AND seq > ?");
            values.push(cursor_seq(id)?.into());
            true
        }
    };
    sql.push_str(if ascending {
        " ORDER BY seq ASC LIMIT ?"
    } else {
        " ORDER BY seq DESC LIMIT ?"
    });
    values.push((q.limit as i64 + 1).into());
    let mut stmt = conn.prepare_cached(&sql).map_err(|e| classify("list", e))?;
    let mut records = stmt
        .query_map(rusqlite::params_from_iter(values), |r| {
            Ok(Record {
                id: r.get(0)?,
                version: r.get(1)?,
                body: r.get::<_, Document>(2)?.0,
            })
        })
        .map_err(|e| classify("list", e))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| classify("list", e))?;
    let has_more = records.len() > q.limit as usize;
    records.truncate(q.limit as usize);
    if ascending {
        records.reverse();
    }
    Ok(Page { records, has_more })
}

#[async_trait]
impl DocumentStore for SqliteStore {
    async fn find_sealed(&self, scope: &Scope, owner: &str) -> StoreResult<Option<String>> {
        let (scope, owner) = (scope.clone(), owner.to_string());
        self.read(move |conn| {
            conn.prepare_cached(
                "SELECT sealed FROM sealed_values WHERE owner_id = ?1 AND account_id = ?2 AND livemode = ?3",
            )
            .and_then(|mut s| s.query_row(params![owner, scope.account, scope.livemode()], |r| r.get(0)).optional())
            .map_err(|e| classify("find sealed", e))
        })
        .await
    }

    async fn find_sealed_unscoped(&self, owner: &str) -> StoreResult<Option<(Scope, String)>> {
        let owner = owner.to_string();
        self.read(move |conn| {
            conn.prepare_cached(
                "SELECT account_id, livemode, sealed FROM sealed_values WHERE owner_id = ?1",
            )
            .and_then(|mut s| {
                s.query_row(params![owner], |r| {
                    Ok((
                        super::scope_from(r.get(0)?, r.get(1)?),
                        r.get::<_, String>(2)?,
                    ))
                })
                .optional()
            })
            .map_err(|e| classify("find sealed", e))
        })
        .await
    }

    async fn find_record(
        &self,
        scope: &Scope,
        collection: Collection,
        id: &str,
    ) -> StoreResult<Option<Record>> {
        self.read_now(|conn| find_record(conn, scope, collection, id))
    }

    async fn list_records(
        &self,
        scope: &Scope,
        collection: Collection,
        query: &ListQuery,
    ) -> StoreResult<Page> {
        // Keyset pagination on (account, livemode[, filter], seq): an index walk of at most
        // `limit + 1` rows whatever the table size, so it runs in place too.
        self.read_now(|conn| list_records(conn, scope, collection, query))
    }

    async fn commit(&self, batch: WriteBatch) -> StoreResult<()> {
        body::check_sizes(&batch)?;
        let bodies = body::pack_batch(&batch);
        self.writer
            .write(move |conn| super::apply::apply_batch(conn, &batch, &bodies))
            .await
    }

    async fn find_unscoped(
        &self,
        collection: Collection,
        id: &str,
    ) -> StoreResult<Option<(Scope, Record)>> {
        let id = id.to_string();
        self.read(move |conn| {
            conn.prepare_cached(&format!(
                "SELECT account_id, livemode, id, version, body FROM {} WHERE id = ?1",
                table(collection)
            ))
            .and_then(|mut s| {
                s.query_row([id], |r| {
                    let live: bool = r.get(1)?;
                    Ok((
                        Scope {
                            account: r.get(0)?,
                            mode: if live { Mode::Live } else { Mode::Test },
                        },
                        Record {
                            id: r.get(2)?,
                            version: r.get(3)?,
                            body: r.get::<_, Document>(4)?.0,
                        },
                    ))
                })
                .optional()
            })
            .map_err(|e| classify("find unscoped", e))
        })
        .await
    }

    /// One writer commits one batch at a time, each with `seq`s above every earlier one: what
    /// a reader sees is final in `seq` order. Positions are `(0, seq)`.
    async fn stream_events(
        &self,
        scope: &Scope,
        after: StreamPosition,
        limit: u32,
    ) -> StoreResult<Vec<StreamedEvent>> {
        let (account, live) = (scope.account.clone(), scope.livemode());
        let from = after.1;
        self.read(move |conn| {
            conn.prepare_cached(
                "SELECT seq, id, body FROM events WHERE account_id = ?1 AND livemode = ?2 AND seq > ?3
                 ORDER BY seq LIMIT ?4",
            )
            .and_then(|mut s| {
                s.query_map(params![account, live, from, limit], |r| {
                    Ok(StreamedEvent {
                        position: StreamPosition(0, r.get(0)?),
                        id: r.get(1)?,
                        body: r.get::<_, Document>(2)?.0,
                    })
                })?
                .collect()
            })
            .map_err(|e| classify("stream events", e))
        })
        .await
    }

    async fn stream_head(&self, scope: &Scope) -> StoreResult<StreamPosition> {
        let (account, live) = (scope.account.clone(), scope.livemode());
        self.read(move |conn| {
            conn.prepare_cached(
                "SELECT COALESCE(MAX(seq), 0) FROM events WHERE account_id = ?1 AND livemode = ?2",
            )
            .and_then(|mut s| s.query_row(params![account, live], |r| r.get(0)))
            .map(|seq| StreamPosition(0, seq))
            .map_err(|e| classify("stream head", e))
        })
        .await
    }

    async fn stream_position(
        &self,
        scope: &Scope,
        id: &str,
    ) -> StoreResult<Option<StreamPosition>> {
        let (account, live, id) = (scope.account.clone(), scope.livemode(), id.to_string());
        self.read(move |conn| {
            conn.prepare_cached(
                "SELECT seq FROM events WHERE id = ?1 AND account_id = ?2 AND livemode = ?3",
            )
            .and_then(|mut s| {
                s.query_row(params![id, account, live], |r| r.get(0))
                    .optional()
            })
            .map(|seq| seq.map(|seq| StreamPosition(0, seq)))
            .map_err(|e| classify("stream position", e))
        })
        .await
    }
}
