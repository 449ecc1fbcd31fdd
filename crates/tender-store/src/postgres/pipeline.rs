//! A batch's statements sent to PostgreSQL in one round trip.
//!
//! A batch is planned as a list of [`Stmt`]s, each with the row count it must reach. They are
//! prepared (once per connection, cached), then all sent without waiting for one another:
//! tokio-postgres pipelines requests issued concurrently on one connection, and the server runs
//! them in the order sent. Only when every answer is in are the row counts checked; the
//! transaction is committed by the caller only if all hold, and otherwise dropped, which rolls
//! it back. A statement that fails makes every later one of the transaction fail too (the
//! transaction is aborted); the first failure in statement order is the one reported.
//!
//! So a create (payment, event, outbox, idempotency record) costs BEGIN, one round trip and
//! COMMIT, however many statements the batch holds, where it cost one round trip per statement.

use futures::future::{join_all, try_join_all};
use tender_core::error::StoreError;
use tender_core::store::StoreResult;
use tokio_postgres::types::ToSql;

use super::classify;

/// A statement parameter, owned by its statement.
pub(super) type Value = Box<dyn ToSql + Sync + Send>;

/// One statement of a batch.
pub(super) struct Stmt {
    /// What it does, for errors.
    pub what: &'static str,
    pub sql: String,
    pub params: Vec<Value>,
    /// It returns rows (a `SELECT … FOR SHARE`), which are counted instead of rows changed.
    pub returns_rows: bool,
    /// The error of the batch when the statement does not count exactly one row.
    pub unless_one: Option<StoreError>,
}

impl Stmt {
    pub fn new(what: &'static str, sql: impl Into<String>, params: Vec<Value>) -> Self {
        Self {
            what,
            sql: sql.into(),
            params,
            returns_rows: false,
            unless_one: None,
        }
    }

    /// The batch fails with `err` unless this statement counts exactly one row.
    pub fn exactly_one(mut self, err: StoreError) -> Self {
        self.unless_one = Some(err);
        self
    }

    /// The statement returns rows; their number is what [`Stmt::exactly_one`] checks.
    pub fn returning_rows(mut self) -> Self {
        self.returns_rows = true;
        self
    }
}

/// Runs `stmts` on `tx` in one round trip (after their preparation, which is cached per
/// connection) and checks their row counts; the caller commits only on `Ok`.
pub(super) async fn run(
    tx: &deadpool_postgres::Transaction<'_>,
    stmts: Vec<Stmt>,
) -> StoreResult<()> {
    // Prepared first, so that every execute below is sent at its first poll, in order.
    let prepared = try_join_all(stmts.iter().map(|s| tx.prepare_cached(&s.sql)))
        .await
        .map_err(|e| classify("prepare", e))?;
    let outcomes = join_all(
        stmts
            .iter()
            .zip(&prepared)
            .map(|(s, statement)| async move {
                let params: Vec<&(dyn ToSql + Sync)> = s
                    .params
                    .iter()
                    .map(|p| p.as_ref() as &(dyn ToSql + Sync))
                    .collect();
                if s.returns_rows {
                    tx.query(statement, &params)
                        .await
                        .map(|rows| rows.len() as u64)
                } else {
                    tx.execute(statement, &params).await
                }
            }),
    )
    .await;
    for (s, outcome) in stmts.into_iter().zip(outcomes) {
        let n = outcome.map_err(|e| classify(s.what, e))?;
        if let Some(err) = s.unless_one {
            if n != 1 {
                return Err(err);
            }
        }
    }
    Ok(())
}
