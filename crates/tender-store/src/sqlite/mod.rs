//! The SQLite store: WAL, `synchronous=FULL`, one group-committing writer thread
//! ([`writer`]) and a pool of read connections used from `spawn_blocking`.
//!
//! # Layout
//! - this file: [`SqliteStore`], opening and configuring connections, the read helpers, driver
//!   error classification, the lifecycle (`impl Store`), row helpers several concerns share, and
//!   `backup`.
//! - `documents`: documents, sealed values, batches and their outbox.
//! - `idempotency`: idempotency lookups and claims, and the record a batch writes.
//! - `queue`: webhook deliveries and scheduled tasks, leased to one worker at a time.
//! - `accounts`: accounts, API keys, dashboard sessions, settings.
//! - `writer`: the single writer thread; `migrate`: the embedded migrations.
//!
//! Every write runs on the writer; reads run on pooled read-only connections. The concern files
//! depend on this one (and `crate::schema`), never on each other, except that a batch writes
//! its idempotency record through `idempotency::write_idempotency`.

mod accounts;
mod apply;
mod documents;
mod idempotency;
mod ledger;
mod migrate;
mod queue;
mod writer;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use rusqlite::{Connection, OpenFlags};
use tender_core::auth::{KeyKind, Mode, Scope};
use tender_core::error::StoreError;
use tender_core::store::{Store, StoreResult};

use crate::key_cache::KeyCache;
use writer::Writer;

/// Read connections kept open between requests.
const MAX_IDLE_READERS: usize = 16;

/// Turns a driver error into a `StoreError`, keeping the cause.
pub(crate) fn classify(what: &str, e: rusqlite::Error) -> StoreError {
    // A body that does not unpack ([`Document`]) is the store's own finding, not the driver's.
    if let rusqlite::Error::FromSqlConversionFailure(_, _, cause) = &e {
        if let Some(StoreError::Corrupt(why)) = cause.downcast_ref::<StoreError>() {
            return StoreError::Corrupt(why.clone());
        }
    }
    if let rusqlite::Error::SqliteFailure(f, msg) = &e {
        // Only a unique or primary key is a duplicate (as PostgreSQL's 23505); a NOT NULL,
        // CHECK or foreign key violation is a bug, reported as a failure.
        if f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE
            || f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY
        {
            return StoreError::Duplicate(msg.clone().unwrap_or_else(|| what.to_string()));
        }
    }
    StoreError::unavailable(format!("sqlite {what}"), e)
}

/// A `body` column read as the document's stored form ([`crate::body::unpack`]), whether the
/// row holds a frame (a BLOB) or JSON written before compression (TEXT). A damaged body fails
/// the read with `StoreError::Corrupt`, through [`classify`].
pub(crate) struct Document(pub(crate) String);

impl rusqlite::types::FromSql for Document {
    fn column_result(v: rusqlite::types::ValueRef<'_>) -> rusqlite::types::FromSqlResult<Self> {
        use rusqlite::types::{FromSqlError, ValueRef};
        let (ValueRef::Blob(stored) | ValueRef::Text(stored)) = v else {
            return Err(FromSqlError::InvalidType);
        };
        crate::body::unpack(stored)
            .map(Document)
            .map_err(|e| FromSqlError::Other(Box::new(e)))
    }
}

/// Tender's embedded store.
pub struct SqliteStore {
    path: PathBuf,
    writer: Writer,
    readers: Arc<Mutex<Vec<Connection>>>,
    keys: KeyCache,
}

/// Statements each connection keeps prepared. The writer alone uses a few dozen distinct
/// statements; rusqlite's default of 16 made `prepare_cached` miss (and re-parse) constantly.
const STATEMENT_CACHE: usize = 256;

/// Every connection: WAL, an fsync at every commit, foreign keys. Temporary files in memory:
/// each writer job runs in a SAVEPOINT, whose sub-journal (the pages it changed, kept for a
/// rollback) was otherwise written to a temp file, 13% of the server's CPU in a profile of
/// payment creates.
fn configure(conn: &Connection) -> rusqlite::Result<()> {
    conn.busy_timeout(std::time::Duration::from_secs(10))?;
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
    conn.execute_batch(
        "PRAGMA journal_mode = WAL;
         PRAGMA synchronous = FULL;
         PRAGMA foreign_keys = ON;
         PRAGMA temp_store = MEMORY;",
    )
}

impl SqliteStore {
    /// Opens (creating if needed) the database at `path` and applies migrations.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            crate::files::create_private_dir(dir)
                .map_err(|e| StoreError::unavailable(format!("create {}", dir.display()), e))?;
        }
        // Owner-only before SQLite creates anything: its -wal and -shm files copy this mode.
        for suffix in ["", "-wal", "-shm"] {
            let mut file = path.as_os_str().to_owned();
            file.push(suffix);
            let file = PathBuf::from(file);
            if suffix.is_empty() || file.exists() {
                crate::files::ensure_private_file(&file).map_err(|e| {
                    StoreError::unavailable(format!("create {}", file.display()), e)
                })?;
            }
        }
        let mut conn = Connection::open(path).map_err(|e| classify("open", e))?;
        configure(&conn).map_err(|e| classify("configure", e))?;
        migrate::migrate(&mut conn)?;
        let writer = Writer::spawn(conn)
            .map_err(|e| StoreError::unavailable("spawn the writer thread", e))?;
        Ok(Self {
            path: path.to_path_buf(),
            writer,
            readers: Arc::new(Mutex::new(Vec::new())),
            keys: KeyCache::default(),
        })
    }

    /// The migration version this build applies.
    pub fn schema_version() -> i64 {
        migrate::latest_version()
    }

    /// Runs `f` on a read connection on the blocking pool.
    async fn read<R, F>(&self, f: F) -> StoreResult<R>
    where
        R: Send + 'static,
        F: FnOnce(&Connection) -> StoreResult<R> + Send + 'static,
    {
        let readers = Arc::clone(&self.readers);
        let path = self.path.clone();
        tokio::task::spawn_blocking(move || {
            let pooled = readers.lock().map(|mut pool| pool.pop()).unwrap_or(None);
            let conn = match pooled {
                Some(conn) => conn,
                None => open_reader(&path)?,
            };
            let result = f(&conn);
            if let Ok(mut pool) = readers.lock() {
                if pool.len() < MAX_IDLE_READERS {
                    pool.push(conn);
                }
            }
            result
        })
        .await
        .map_err(|e| StoreError::unavailable("read task", e))?
    }

    /// Runs `f` on a read connection right here, on the calling task's thread. Only for the
    /// hot API reads — index probes and `LIMIT`ed index walks of a few rows, microseconds on a
    /// warm page cache — where the hop to the blocking pool and back (two thread wake-ups)
    /// cost more than the query itself. Anything that may scan stays on [`Self::read`].
    fn read_now<R>(&self, f: impl FnOnce(&Connection) -> StoreResult<R>) -> StoreResult<R> {
        let pooled = self
            .readers
            .lock()
            .map(|mut pool| pool.pop())
            .unwrap_or(None);
        let conn = match pooled {
            Some(conn) => conn,
            None => open_reader(&self.path)?,
        };
        let result = f(&conn);
        if let Ok(mut pool) = self.readers.lock() {
            if pool.len() < MAX_IDLE_READERS {
                pool.push(conn);
            }
        }
        result
    }
}

fn open_reader(path: &Path) -> StoreResult<Connection> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| classify("open reader", e))?;
    conn.busy_timeout(std::time::Duration::from_secs(10))
        .map_err(|e| classify("configure", e))?;
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
    Ok(conn)
}

fn mode_str(mode: Mode) -> &'static str {
    mode.as_str()
}

/// Column `idx` of a row as a mode; an unknown value fails the read instead of becoming test.
fn parse_mode(r: &rusqlite::Row<'_>, idx: usize) -> rusqlite::Result<Mode> {
    let s: String = r.get(idx)?;
    Mode::parse(&s).ok_or_else(|| unknown_value(idx, "mode", &s))
}

/// Column `idx` of a row as a key kind; an unknown value fails the read.
fn parse_kind(r: &rusqlite::Row<'_>, idx: usize) -> rusqlite::Result<KeyKind> {
    let s: String = r.get(idx)?;
    KeyKind::parse(&s).ok_or_else(|| unknown_value(idx, "key kind", &s))
}

fn unknown_value(idx: usize, what: &str, s: &str) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(
        idx,
        rusqlite::types::Type::Text,
        Box::new(StoreError::Corrupt(format!("unknown {what} {s:?}"))),
    )
}

fn scope_from(account: String, live: bool) -> Scope {
    Scope {
        account,
        mode: if live { Mode::Live } else { Mode::Test },
    }
}

#[async_trait]
impl Store for SqliteStore {
    async fn recover_after_restart(&self) -> StoreResult<u64> {
        self.writer
            .write(|conn| {
                // A checkpointed claim answers its checkpoint from now on; the rest are free.
                conn.execute(
                    "UPDATE idempotency_keys SET state = 'done' WHERE state = 'running' AND body IS NOT NULL",
                    [],
                )
                .and_then(|kept| {
                    conn.execute("DELETE FROM idempotency_keys WHERE state = 'running'", [])
                        .map(|n| n + kept)
                })
                // The dead process's leases on tasks and deliveries: theirs are run again now
                // rather than a lease later (each is done in one batch, so none runs twice).
                .and_then(|claims| {
                    let tasks = conn.execute(
                        "UPDATE scheduled_tasks SET lease_until = NULL WHERE lease_until IS NOT NULL",
                        [],
                    )?;
                    let deliveries = conn.execute(
                        "UPDATE webhook_deliveries SET lease_until = NULL WHERE lease_until IS NOT NULL",
                        [],
                    )?;
                    Ok((claims + tasks + deliveries) as u64)
                })
                .map_err(|e| classify("release claims", e))
            })
            .await
    }

    async fn check_ready(&self) -> StoreResult<()> {
        let expected = migrate::latest_version();
        let found: i64 = self
            .read(|conn| {
                conn.query_row(
                    "SELECT COALESCE(MAX(version), 0) FROM schema_migrations",
                    [],
                    |r| r.get(0),
                )
                .map_err(|e| classify("schema version", e))
            })
            .await?;
        if found < expected {
            return Err(StoreError::Unavailable {
                message: format!("schema version {found}, this build needs {expected}"),
                source: None,
            });
        }
        Ok(())
    }

    fn pool_status(&self) -> (usize, usize) {
        let idle = self.readers.lock().map(|p| p.len()).unwrap_or(0);
        (0, idle)
    }
}

/// Copies a live SQLite database to `dest` with SQLite's online backup API: consistent even
/// while a server writes, without stopping it (`tender backup FILE`).
pub fn backup(source: &Path, dest: &Path) -> Result<(), StoreError> {
    let src = Connection::open_with_flags(source, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(|e| classify("open for backup", e))?;
    src.busy_timeout(std::time::Duration::from_secs(10))
        .map_err(|e| classify("configure", e))?;
    crate::files::ensure_private_file(dest)
        .map_err(|e| StoreError::unavailable(format!("create {}", dest.display()), e))?;
    let mut dst = Connection::open(dest).map_err(|e| classify("open backup file", e))?;
    let backup =
        rusqlite::backup::Backup::new(&src, &mut dst).map_err(|e| classify("backup", e))?;
    backup
        .run_to_completion(256, std::time::Duration::from_millis(5), None)
        .map_err(|e| classify("backup", e))?;
    drop(backup);
    dst.execute_batch("PRAGMA journal_mode = DELETE;")
        .map_err(|e| classify("backup", e))?;
    let ok: String = dst
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .map_err(|e| classify("backup check", e))?;
    if ok != "ok" {
        return Err(StoreError::Corrupt(format!(
            "backup failed its integrity check: {ok}"
        )));
    }
    Ok(())
}
