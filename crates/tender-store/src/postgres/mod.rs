//! The PostgreSQL store: several stateless Tender nodes on one database.
//!
//! Every batch is one transaction on a pooled connection. Optimistic version checks make
//! concurrent read-modify-writes on different nodes conflict (and retry in the use case);
//! leases on deliveries and tasks are taken with `FOR UPDATE SKIP LOCKED`, so each due item goes
//! to exactly one node; idempotency claims lock the key's row. The server must keep `fsync` and
//! `synchronous_commit` on: [`PgStore::open`] refuses otherwise.
//!
//! # Layout
//! - this file: [`PgStore`], opening the pool and checking durability, the connection and
//!   transaction helpers (`client`, `in_transaction`, `exec`, `query`), driver error
//!   classification, the lifecycle (`impl Store`) and row helpers several concerns share.
//! - `documents`: documents, sealed values, batches and their outbox.
//! - `idempotency`: idempotency lookups and claims, and the record a batch writes.
//! - `queue`: webhook deliveries and scheduled tasks, leased to one node at a time.
//! - `accounts`: accounts, API keys, dashboard sessions, settings.
//! - `pipeline`: a batch's statements sent in one round trip, their row counts checked.
//! - `node`: this node's liveness lock; `migrate`: the embedded migrations.
//! - `failover`: connection settings, pool timeouts and stale connections, so that a promoted
//!   standby is found without a restart.
//!
//! The concern files depend on this one (and `crate::schema`), never on each other, except
//! that a batch plans its idempotency record with `idempotency::idempotency_statement`, and
//! that batches run through `pipeline`.

mod accounts;
pub mod copy;
mod documents;
mod failover;
mod idempotency;
mod ledger;
mod migrate;
mod node;
mod pipeline;
mod plan;
mod queue;

use async_trait::async_trait;
use deadpool_postgres::{GenericClient, Manager, ManagerConfig, Pool, RecyclingMethod};
use tender_core::auth::{Mode, Scope};
use tender_core::error::StoreError;
use tender_core::store::{Store, StoreResult};
use tokio_postgres::types::ToSql;
use tokio_postgres::Row;

use crate::key_cache::KeyCache;

/// Default pool size per node (see docs/operations.md for sizing).
pub const DEFAULT_POOL_SIZE: usize = 16;

/// Turns a driver error into a `StoreError`, keeping the cause.
fn classify(what: &str, e: tokio_postgres::Error) -> StoreError {
    // The server is not the primary any more: drop the connections to it (`failover`).
    failover::observe(&e);
    if let Some(db) = e.as_db_error() {
        let code = db.code().code();
        if code == "23505" {
            return StoreError::Duplicate(db.constraint().unwrap_or(what).to_string());
        }
        // Serialization failure / deadlock: the batch lost a race; the use case retries.
        if code == "40001" || code == "40P01" {
            return StoreError::Conflict(what.to_string());
        }
    }
    StoreError::unavailable(format!("postgres {what}"), e)
}

/// A document's body in SQL: `packed` (a frame, [`crate::body`]) since migration 0007, the JSON
/// text of `body` in rows written before it. Both are read as bytes by [`document`].
const BODY: &str = "COALESCE(packed, convert_to(body, 'UTF8'))";

/// [`BODY`] of the table aliased `alias` in a join.
fn body_of(alias: &str) -> String {
    format!("COALESCE({alias}.packed, convert_to({alias}.body, 'UTF8'))")
}

/// A document's body ([`BODY`], bytes) read as its stored form ([`crate::body::unpack`]).
pub(crate) struct Document(pub(crate) String);

impl<'a> tokio_postgres::types::FromSql<'a> for Document {
    fn from_sql(
        _: &tokio_postgres::types::Type,
        raw: &'a [u8],
    ) -> Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        Ok(Document(crate::body::unpack(raw)?))
    }

    fn accepts(ty: &tokio_postgres::types::Type) -> bool {
        *ty == tokio_postgres::types::Type::BYTEA
    }
}

/// Reads a `body` column: a body that does not unpack is `StoreError::Corrupt`.
fn document(r: &Row, idx: usize) -> StoreResult<String> {
    r.try_get::<_, Document>(idx).map(|d| d.0).map_err(|e| {
        match std::error::Error::source(&e).and_then(|c| c.downcast_ref::<StoreError>()) {
            Some(StoreError::Corrupt(why)) => StoreError::Corrupt(why.clone()),
            _ => StoreError::unavailable("postgres read body", e),
        }
    })
}

/// Like [`document`], for a column that may be NULL.
fn optional_document(r: &Row, idx: usize) -> StoreResult<Option<String>> {
    match r.try_get::<_, Option<&[u8]>>(idx) {
        Ok(None) => Ok(None),
        _ => document(r, idx).map(Some),
    }
}

fn pool_error(e: deadpool_postgres::PoolError) -> StoreError {
    StoreError::unavailable("postgres connection pool", e)
}

/// Tender's PostgreSQL store.
pub struct PgStore {
    pool: Pool,
    keys: KeyCache,
    /// This node's liveness lock; idempotency claims carry its key ([`node`]).
    node: node::NodeLock,
}

type Param<'a> = &'a (dyn ToSql + Sync);

impl PgStore {
    /// Connects, refuses an unsafe server configuration, and applies migrations.
    ///
    /// `url` may name several hosts (`postgres://h1:5432,h2:5432/db`): each connection goes to
    /// the one that takes writes now ([`failover`]).
    pub async fn open(url: &str, pool_size: usize) -> Result<Self, StoreError> {
        let mut config: tokio_postgres::Config = url
            .parse()
            .map_err(|e| StoreError::unavailable("invalid PostgreSQL URL", e))?;
        failover::harden(&mut config);
        let manager = Manager::from_config(
            config,
            tokio_postgres::NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = failover::pool_builder(manager, pool_size)
            .build()
            .map_err(|e| StoreError::unavailable("building the PostgreSQL pool", e))?;
        let node = node::NodeLock::acquire(&pool)
            .await
            .map_err(|e| StoreError::Unavailable {
                message: format!("taking the node lock: {e}"),
                source: None,
            })?;
        let store = Self {
            pool,
            keys: KeyCache::default(),
            node,
        };
        store.check_durability().await?;
        let mut client = store.pool.get().await.map_err(pool_error)?;
        migrate::migrate(&mut client).await?;
        Ok(store)
    }

    /// An acknowledged payment must survive a crash: `fsync` and `synchronous_commit` on.
    async fn check_durability(&self) -> StoreResult<()> {
        let client = self.pool.get().await.map_err(pool_error)?;
        for setting in ["fsync", "synchronous_commit"] {
            let row = client
                .query_one(&format!("SHOW {setting}"), &[])
                .await
                .map_err(|e| classify("show settings", e))?;
            let value: String = row.get(0);
            if value == "off" {
                return Err(StoreError::Unavailable {
                    message: format!(
                        "PostgreSQL has {setting}=off: acknowledged payments could be lost in a crash; turn it on"
                    ),
                    source: None,
                });
            }
        }
        // Not a durability matter, so a warning: without autovacuum nothing ever ANALYZEs the
        // tables, and a statement a pooled connection planned while a table was nearly empty
        // keeps its sequential scan as the table grows (measured: creates fell from 1,000 to
        // 350 a second over the first 60,000 payments; docs/performance.md).
        let autovacuum: String = client
            .query_one("SHOW autovacuum", &[])
            .await
            .map_err(|e| classify("show settings", e))?
            .get(0);
        if autovacuum == "off" {
            tracing::warn!(
                "PostgreSQL has autovacuum=off: tables are never analysed, so plans made while they were small stay in use as they grow and writes slow down; turn it on"
            );
        }
        Ok(())
    }

    /// The migration version this build applies.
    pub fn schema_version() -> i64 {
        migrate::latest_version()
    }
}

/// A mode as stored; an unknown value fails the read instead of becoming test.
fn mode_from(s: &str) -> StoreResult<Mode> {
    Mode::parse(s).ok_or_else(|| StoreError::Corrupt(format!("unknown mode {s:?}")))
}

fn scope_from(account: String, live: bool) -> Scope {
    Scope {
        account,
        mode: if live { Mode::Live } else { Mode::Test },
    }
}

/// Runs `sql` as a prepared statement cached on the connection: parsed and planned once per
/// connection, then one round trip per call (`execute(&str, …)` costs an extra prepare round
/// trip and a parse on the server every time).
async fn exec<C: GenericClient>(
    c: &C,
    sql: &str,
    params: &[Param<'_>],
) -> Result<u64, tokio_postgres::Error> {
    let stmt = c.prepare_cached(sql).await?;
    c.execute(&stmt, params).await
}

/// [`exec`] for statements returning rows.
async fn query<C: GenericClient>(
    c: &C,
    sql: &str,
    params: &[Param<'_>],
) -> Result<Vec<Row>, tokio_postgres::Error> {
    let stmt = c.prepare_cached(sql).await?;
    c.query(&stmt, params).await
}

impl PgStore {
    async fn client(&self) -> StoreResult<deadpool_postgres::Object> {
        self.pool.get().await.map_err(pool_error)
    }

    /// Runs `f` in a transaction and commits it (durably: synchronous_commit is on).
    async fn in_transaction<R, F>(&self, f: F) -> StoreResult<R>
    where
        F: for<'a> FnOnce(
            &'a deadpool_postgres::Transaction<'a>,
        ) -> std::pin::Pin<
            Box<dyn std::future::Future<Output = StoreResult<R>> + Send + 'a>,
        >,
    {
        let mut client = self.client().await?;
        let tx = client
            .transaction()
            .await
            .map_err(|e| classify("begin", e))?;
        let out = f(&tx).await?;
        tx.commit().await.map_err(|e| classify("commit", e))?;
        Ok(out)
    }
}

#[async_trait]
impl Store for PgStore {
    async fn check_ready(&self) -> StoreResult<()> {
        let client = self.client().await?;
        let found: i64 = client
            .query_one(
                "SELECT COALESCE(MAX(version), 0) FROM schema_migrations",
                &[],
            )
            .await
            .map_err(|e| classify("schema version", e))?
            .get(0);
        let expected = migrate::latest_version();
        if found < expected {
            return Err(StoreError::Unavailable {
                message: format!("schema version {found}, this build needs {expected}"),
                source: None,
            });
        }
        Ok(())
    }

    fn pool_status(&self) -> (usize, usize) {
        let s = self.pool.status();
        (s.size.saturating_sub(s.available), s.available)
    }
}
