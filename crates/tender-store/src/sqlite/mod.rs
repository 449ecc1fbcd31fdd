//! The SQLite store: WAL, `synchronous=FULL`, one group-committing writer thread
//! ([`writer`]) and a pool of read connections used from `spawn_blocking`.

mod migrate;
mod writer;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use rusqlite::{params, Connection, OpenFlags, OptionalExtension};
use tender_core::auth::{KeyKind, Mode, Scope};
use tender_core::error::StoreError;
use tender_core::ids::{self, IdKind};
use tender_core::store::{
    AccountRecord, ApiKeyRecord, ClaimedDelivery, ClaimedTask, Collection, Cursor,
    DeliveryAttemptRecord, DeliveryClaim, DeliveryRecord, IdempotencyWrite, KeyState, ListQuery,
    Page, Record, SessionRecord, Store, StoreResult, StoredResponse, WriteBatch, WriteOp,
    IDEMPOTENCY_TTL_SECS,
};

use crate::key_cache::KeyCache;
use crate::schema::{column, index_columns, table};
use writer::Writer;

/// Read connections kept open between requests.
const MAX_IDLE_READERS: usize = 16;

/// Turns a driver error into a `StoreError`, keeping the cause.
pub(crate) fn classify(what: &str, e: rusqlite::Error) -> StoreError {
    if let rusqlite::Error::SqliteFailure(f, msg) = &e {
        if f.code == rusqlite::ErrorCode::ConstraintViolation {
            return StoreError::Duplicate(msg.clone().unwrap_or_else(|| what.to_string()));
        }
    }
    StoreError::unavailable(format!("sqlite {what}"), e)
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

fn parse_mode(s: &str) -> Mode {
    if s == "live" {
        Mode::Live
    } else {
        Mode::Test
    }
}

fn parse_kind(s: &str) -> KeyKind {
    if s == "secret" {
        KeyKind::Secret
    } else {
        KeyKind::Publishable
    }
}

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
            body: r.get(2)?,
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
        sql.push_str(&format!(" AND {} = ?", column(*field)));
        values.push(value.clone().into());
    }
    for (op, bound) in [
        (">", q.created.gt),
        (">=", q.created.gte),
        ("<", q.created.lt),
        ("<=", q.created.lte),
    ] {
        if let Some(b) = bound {
            sql.push_str(&format!(" AND created {op} ?"));
            values.push(b.into());
        }
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
                body: r.get(2)?,
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

/// Applies one batch on the writer's connection (inside the writer's savepoint).
fn apply_batch(conn: &Connection, batch: &WriteBatch) -> StoreResult<()> {
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
                let marks: String = cols.iter().map(|_| ", ?").collect();
                let sql = format!(
                    "INSERT INTO {} (id, account_id, livemode, created, version, body{names}) VALUES (?, ?, ?, ?, 1, ?{marks})",
                    table(*collection)
                );
                let mut values: Vec<rusqlite::types::Value> = vec![
                    id.clone().into(),
                    scope.account.clone().into(),
                    (live as i64).into(),
                    (*created).into(),
                    body.clone().into(),
                ];
                values.extend(
                    cols.into_iter()
                        .map(|(_, v)| rusqlite::types::Value::from(v)),
                );
                conn.prepare_cached(&sql)
                    .and_then(|mut s| s.execute(rusqlite::params_from_iter(values)))
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
                let sets: String = cols.iter().map(|(n, _)| format!(", {n} = ?")).collect();
                let sql = format!(
                    "UPDATE {} SET body = ?, version = version + 1{sets} WHERE id = ? AND account_id = ? AND livemode = ? AND version = ?",
                    table(*collection)
                );
                let mut values: Vec<rusqlite::types::Value> = vec![body.clone().into()];
                values.extend(
                    cols.into_iter()
                        .map(|(_, v)| rusqlite::types::Value::from(v)),
                );
                values.extend([
                    id.clone().into(),
                    scope.account.clone().into(),
                    (live as i64).into(),
                    (*expected_version).into(),
                ]);
                let n = conn
                    .prepare_cached(&sql)
                    .and_then(|mut s| s.execute(rusqlite::params_from_iter(values)))
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
                    "DELETE FROM {} WHERE id = ?1 AND account_id = ?2 AND livemode = ?3 AND version = ?4",
                    table(*collection)
                );
                let n = conn
                    .prepare_cached(&sql)
                    .and_then(|mut s| s.execute(params![id, scope.account, live, expected_version]))
                    .map_err(|e| classify("delete", e))?;
                if n != 1 {
                    return Err(StoreError::Conflict(id.clone()));
                }
                // Whatever was sealed for the object (secrets, a card) goes with it.
                conn.prepare_cached("DELETE FROM sealed_values WHERE owner_id = ?1")
                    .and_then(|mut s| s.execute([id]))
                    .map_err(|e| classify("delete sealed", e))?;
            }
            WriteOp::Check {
                collection,
                id,
                expected_version,
            } => {
                // The single writer serialises batches: what this reads cannot change before the
                // commit.
                let sql = format!(
                    "SELECT COUNT(*) FROM {} WHERE id = ?1 AND account_id = ?2 AND livemode = ?3 AND version = ?4",
                    table(*collection)
                );
                let n: i64 = conn
                    .prepare_cached(&sql)
                    .and_then(|mut s| {
                        s.query_row(params![id, scope.account, live, expected_version], |r| {
                            r.get(0)
                        })
                    })
                    .map_err(|e| classify("check", e))?;
                if n != 1 {
                    return Err(StoreError::Conflict(id.clone()));
                }
            }
            WriteOp::Seal { owner, sealed } => {
                conn.prepare_cached(
                    "INSERT INTO sealed_values (owner_id, account_id, livemode, sealed) VALUES (?1, ?2, ?3, ?4)
                     ON CONFLICT (owner_id) DO UPDATE SET sealed = excluded.sealed",
                )
                .and_then(|mut s| s.execute(params![owner, scope.account, live, sealed]))
                .map_err(|e| classify("seal", e))?;
            }
            WriteOp::Unseal { owner } => {
                conn.prepare_cached(
                    "DELETE FROM sealed_values WHERE owner_id = ?1 AND account_id = ?2 AND livemode = ?3",
                )
                .and_then(|mut s| s.execute(params![owner, scope.account, live]))
                .map_err(|e| classify("unseal", e))?;
            }
            WriteOp::ScheduleTask {
                id,
                kind,
                object_id,
                due_at,
            } => {
                conn.prepare_cached(
                    "INSERT INTO scheduled_tasks (id, kind, account_id, livemode, object_id, due_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                )
                .and_then(|mut s| s.execute(params![id, kind, scope.account, live, object_id, due_at]))
                .map_err(|e| classify("schedule task", e))?;
            }
            WriteOp::DeleteTask { id } => {
                let n = conn
                    .prepare_cached("DELETE FROM scheduled_tasks WHERE id = ?1 AND account_id = ?2 AND livemode = ?3")
                    .and_then(|mut s| s.execute(params![id, scope.account, live]))
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
                conn.prepare_cached(
                    "INSERT INTO events (id, account_id, livemode, created, version, type, body) VALUES (?1, ?2, ?3, ?4, 1, ?5, ?6)",
                )
                .and_then(|mut s| s.execute(params![id, scope.account, live, created, event_type, body]))
                .map_err(|e| classify("insert event", e))?;
                fan_out(conn, scope, id, event_type, *created)?;
            }
        }
    }
    if let Some(record) = &batch.idempotency {
        write_idempotency(conn, scope, record)?;
    }
    Ok(())
}

/// The outbox: a pending delivery for every enabled endpoint of the scope that wants the event.
fn fan_out(
    conn: &Connection,
    scope: &Scope,
    event: &str,
    event_type: &str,
    now: i64,
) -> StoreResult<()> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT id FROM webhook_endpoints WHERE account_id = ?1 AND livemode = ?2 AND status = 'enabled'
             AND (enabled_events = '*' OR instr(enabled_events, ',' || ?3 || ',') > 0)",
        )
        .map_err(|e| classify("fan out", e))?;
    let endpoints = stmt
        .query_map(params![scope.account, scope.livemode(), event_type], |r| {
            r.get::<_, String>(0)
        })
        .map_err(|e| classify("fan out", e))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| classify("fan out", e))?;
    for endpoint in endpoints {
        conn.prepare_cached(
            "INSERT INTO webhook_deliveries (id, account_id, livemode, event_id, endpoint_id, status, next_attempt_at, created)
             VALUES (?1, ?2, ?3, ?4, ?5, 'pending', ?6 * 1000, ?6)",
        )
        .and_then(|mut s| {
            s.execute(params![
                ids::generate(IdKind::WebhookDelivery),
                scope.account,
                scope.livemode(),
                event,
                endpoint,
                now
            ])
        })
        .map_err(|e| classify("insert delivery", e))?;
    }
    Ok(())
}

/// The idempotency record of a batch: completes the request's claim, or inserts the record
/// unless a live one is there (another request with the key got there first).
fn write_idempotency(conn: &Connection, scope: &Scope, w: &IdempotencyWrite) -> StoreResult<()> {
    let live = scope.livemode();
    let status = w.response.status;
    if w.claimed {
        let n = conn
            .prepare_cached(
                "UPDATE idempotency_keys SET state = 'done', status = ?1, body = ?2
                 WHERE account_id = ?3 AND livemode = ?4 AND key = ?5 AND state = 'running'",
            )
            .and_then(|mut s| {
                s.execute(params![status, w.response.body, scope.account, live, w.key])
            })
            .map_err(|e| classify("complete idempotency", e))?;
        if n != 1 {
            // The claim was answered before its group committed, and that commit failed: apply
            // nothing, so a retry with the key runs afresh instead of repeating the change.
            return Err(StoreError::Unavailable {
                message: format!("the claim of idempotency key {} was lost", w.key),
                source: None,
            });
        }
        return Ok(());
    }
    // A record is replaced only once it has expired; a dead process's running claims were
    // deleted when this one started.
    let n = conn
        .prepare_cached(
            "INSERT INTO idempotency_keys (account_id, livemode, key, fingerprint, state, status, body, created, locked_at)
             VALUES (?1, ?2, ?3, ?4, 'done', ?5, ?6, ?7, ?7)
             ON CONFLICT (account_id, livemode, key) DO UPDATE SET
               fingerprint = excluded.fingerprint, state = 'done', status = excluded.status,
               body = excluded.body, created = excluded.created, locked_at = excluded.locked_at
             WHERE idempotency_keys.created < ?8",
        )
        .and_then(|mut s| {
            s.execute(params![
                scope.account,
                live,
                w.key,
                w.fingerprint,
                status,
                w.response.body,
                w.created,
                w.created - IDEMPOTENCY_TTL_SECS
            ])
        })
        .map_err(|e| classify("insert idempotency", e))?;
    if n != 1 {
        return Err(StoreError::IdempotencyKeyTaken(w.key.clone()));
    }
    Ok(())
}

/// What is under `key` for a request with `fingerprint`.
fn key_state(
    conn: &Connection,
    scope: &Scope,
    key: &str,
    fingerprint: &str,
    now: i64,
) -> StoreResult<KeyState> {
    let existing = conn
        .prepare_cached(
            "SELECT fingerprint, state, status, body, created FROM idempotency_keys
             WHERE account_id = ?1 AND livemode = ?2 AND key = ?3",
        )
        .and_then(|mut s| {
            s.query_row(params![scope.account, scope.livemode(), key], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, Option<u16>>(2)?,
                    r.get::<_, Option<Vec<u8>>>(3)?,
                    r.get::<_, i64>(4)?,
                ))
            })
            .optional()
        })
        .map_err(|e| classify("find idempotency", e))?;
    Ok(match existing {
        None => KeyState::Free,
        Some((_, _, _, _, created)) if created < now - IDEMPOTENCY_TTL_SECS => KeyState::Free,
        Some((stored_fp, _, _, _, _)) if stored_fp != fingerprint => KeyState::Mismatch,
        Some((_, state, Some(status), Some(body), _)) if state == "done" => {
            KeyState::Replay(StoredResponse { status, body })
        }
        // Running in this process (a dead process's claims were released at start).
        Some(_) => KeyState::InProgress,
    })
}

fn claim_idempotency(
    conn: &Connection,
    scope: &Scope,
    key: &str,
    fingerprint: &str,
    now: i64,
) -> StoreResult<KeyState> {
    match key_state(conn, scope, key, fingerprint, now)? {
        KeyState::Free => {}
        other => return Ok(other),
    }
    conn.prepare_cached(
        "INSERT INTO idempotency_keys (account_id, livemode, key, fingerprint, state, created, locked_at)
         VALUES (?1, ?2, ?3, ?4, 'running', ?5, ?5)
         ON CONFLICT (account_id, livemode, key) DO UPDATE SET
           fingerprint = excluded.fingerprint, state = 'running', status = NULL, body = NULL,
           created = excluded.created, locked_at = excluded.locked_at",
    )
    .and_then(|mut s| s.execute(params![scope.account, scope.livemode(), key, fingerprint, now]))
    .map_err(|e| classify("claim idempotency", e))?;
    Ok(KeyState::Free)
}

fn scope_from(account: String, live: bool) -> Scope {
    Scope {
        account,
        mode: if live { Mode::Live } else { Mode::Test },
    }
}

/// Leases what `tender_core::webhook::fair_pick` chooses among the due deliveries: each
/// account and mode's oldest few (an index range each; scopes come from the endpoints table,
/// which is small), plus the oldest overall (deliveries of deleted endpoints, whose scope may
/// have no endpoint left). The cost grows with the number of scopes, not with the backlog.
fn claim_deliveries(conn: &Connection, claim: DeliveryClaim) -> StoreResult<Vec<ClaimedDelivery>> {
    use std::collections::HashMap;
    use tender_core::webhook::{fair_pick, DueDelivery, CANDIDATES_PER_SCOPE};
    let (now_ms, lease_until_ms) = (claim.now_ms, claim.lease_until_ms);
    let mut busy_accounts: HashMap<(String, bool), usize> = HashMap::new();
    let mut busy_endpoints: HashMap<String, usize> = HashMap::new();
    let busy: Vec<(String, bool, String)> = conn
        .prepare_cached(
            "SELECT account_id, livemode, endpoint_id FROM webhook_deliveries
             WHERE lease_until IS NOT NULL AND lease_until >= ?1 AND status = 'pending'",
        )
        .and_then(|mut s| {
            s.query_map([now_ms], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
                .collect::<Result<Vec<_>, _>>()
        })
        .map_err(|e| classify("claim deliveries", e))?;
    for (account, live, endpoint) in busy {
        *busy_accounts.entry((account, live)).or_insert(0) += 1;
        *busy_endpoints.entry(endpoint).or_insert(0) += 1;
    }
    let due_row = |r: &rusqlite::Row<'_>| {
        Ok(DueDelivery {
            id: r.get(0)?,
            scope: (r.get(1)?, r.get(2)?),
            endpoint_id: r.get(3)?,
            next_attempt_at_ms: r.get(4)?,
        })
    };
    let mut candidates: HashMap<String, DueDelivery> = HashMap::new();
    let scopes: Vec<(String, bool)> = conn
        .prepare_cached("SELECT DISTINCT account_id, livemode FROM webhook_endpoints")
        .and_then(|mut s| {
            s.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<Result<Vec<_>, _>>()
        })
        .map_err(|e| classify("claim deliveries", e))?;
    for (account, live) in scopes {
        if busy_accounts
            .get(&(account.clone(), live))
            .copied()
            .unwrap_or(0)
            >= claim.per_account
        {
            continue;
        }
        let rows = conn
            .prepare_cached(
                "SELECT id, account_id, livemode, endpoint_id, next_attempt_at FROM webhook_deliveries
                 WHERE account_id = ?1 AND livemode = ?2 AND status = 'pending' AND next_attempt_at <= ?3
                   AND (lease_until IS NULL OR lease_until < ?3)
                 ORDER BY next_attempt_at LIMIT ?4",
            )
            .and_then(|mut s| {
                s.query_map(params![account, live, now_ms, CANDIDATES_PER_SCOPE], due_row)?
                    .collect::<Result<Vec<_>, _>>()
            })
            .map_err(|e| classify("claim deliveries", e))?;
        candidates.extend(rows.into_iter().map(|d| (d.id.clone(), d)));
    }
    let oldest = conn
        .prepare_cached(
            "SELECT id, account_id, livemode, endpoint_id, next_attempt_at FROM webhook_deliveries
             WHERE status = 'pending' AND next_attempt_at <= ?1 AND (lease_until IS NULL OR lease_until < ?1)
             ORDER BY next_attempt_at LIMIT ?2",
        )
        .and_then(|mut s| {
            s.query_map(params![now_ms, claim.limit as i64], due_row)?
                .collect::<Result<Vec<_>, _>>()
        })
        .map_err(|e| classify("claim deliveries", e))?;
    candidates.extend(oldest.into_iter().map(|d| (d.id.clone(), d)));
    let ids = fair_pick(
        candidates.into_values().collect(),
        &busy_accounts,
        &busy_endpoints,
        claim.per_account,
        claim.per_endpoint,
        claim.limit,
    );
    let mut claimed = Vec::with_capacity(ids.len());
    for id in ids {
        conn.prepare_cached("UPDATE webhook_deliveries SET lease_until = ?1 WHERE id = ?2")
            .and_then(|mut s| s.execute(params![lease_until_ms, id]))
            .map_err(|e| classify("lease delivery", e))?;
        let row = conn
            .prepare_cached(
                "SELECT d.id, d.account_id, d.livemode, d.event_id, e.body, d.endpoint_id, w.body, s.sealed,
                        h.failing_since, json_array_length(d.attempts)
                 FROM webhook_deliveries d
                 JOIN events e ON e.id = d.event_id
                 LEFT JOIN webhook_endpoints w ON w.id = d.endpoint_id
                 LEFT JOIN sealed_values s ON s.owner_id = d.endpoint_id
                 LEFT JOIN webhook_endpoint_health h ON h.endpoint_id = d.endpoint_id
                 WHERE d.id = ?1",
            )
            .and_then(|mut s| {
                s.query_row([&id], |r| {
                    Ok(ClaimedDelivery {
                        id: r.get(0)?,
                        scope: scope_from(r.get(1)?, r.get(2)?),
                        event_id: r.get(3)?,
                        event_body: r.get(4)?,
                        endpoint_id: r.get(5)?,
                        endpoint_body: r.get(6)?,
                        endpoint_secrets: r.get(7)?,
                        endpoint_failing_since: r.get(8)?,
                        attempts_made: r.get::<_, i64>(9)? as usize,
                    })
                })
            })
            .map_err(|e| classify("load delivery", e))?;
        claimed.push(row);
    }
    Ok(claimed)
}

fn record_attempt(conn: &Connection, rec: &DeliveryAttemptRecord) -> StoreResult<()> {
    conn.prepare_cached(
        "UPDATE webhook_deliveries SET attempts = json_insert(attempts, '$[#]', json(?1)), status = ?2,
         next_attempt_at = ?3, lease_until = NULL WHERE id = ?4",
    )
    .and_then(|mut s| s.execute(params![rec.attempt, rec.status, rec.next_attempt_at_ms, rec.delivery_id]))
    .map_err(|e| classify("record attempt", e))?;
    conn.prepare_cached(
        "INSERT INTO webhook_endpoint_health (endpoint_id, failing_since) VALUES (?1, ?2)
         ON CONFLICT (endpoint_id) DO UPDATE SET failing_since = excluded.failing_since",
    )
    .and_then(|mut s| s.execute(params![rec.endpoint_id, rec.endpoint_failing_since]))
    .map_err(|e| classify("endpoint health", e))?;
    Ok(())
}

const DELIVERY_COLUMNS: &str =
    "id, event_id, endpoint_id, status, next_attempt_at, attempts, created";

fn delivery_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<DeliveryRecord> {
    Ok(DeliveryRecord {
        id: r.get(0)?,
        event_id: r.get(1)?,
        endpoint_id: r.get(2)?,
        status: r.get(3)?,
        next_attempt_at_ms: r.get(4)?,
        attempts: r.get(5)?,
        created: r.get(6)?,
    })
}

const ACCOUNT_COLUMNS: &str = "id, email, name, password_hash, created, public_email";

fn account_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<AccountRecord> {
    Ok(AccountRecord {
        id: r.get(0)?,
        email: r.get(1)?,
        name: r.get(2)?,
        password_hash: r.get(3)?,
        created: r.get(4)?,
        public_email: r.get(5)?,
    })
}

const KEY_COLUMNS: &str =
    "id, account_id, mode, kind, key_hash, public_value, last4, created, expires_at, revoked";

fn key_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<ApiKeyRecord> {
    Ok(ApiKeyRecord {
        id: r.get(0)?,
        account: r.get(1)?,
        mode: parse_mode(&r.get::<_, String>(2)?),
        kind: parse_kind(&r.get::<_, String>(3)?),
        key_hash: r.get(4)?,
        public_value: r.get(5)?,
        last4: r.get(6)?,
        created: r.get(7)?,
        expires_at: r.get(8)?,
        revoked: r.get(9)?,
    })
}

fn insert_key(conn: &Connection, k: &ApiKeyRecord) -> StoreResult<()> {
    conn.prepare_cached(&format!(
        "INSERT INTO api_keys ({KEY_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"
    ))
    .and_then(|mut s| {
        s.execute(params![
            k.id,
            k.account,
            mode_str(k.mode),
            k.kind.as_str(),
            k.key_hash,
            k.public_value,
            k.last4,
            k.created,
            k.expires_at,
            k.revoked
        ])
    })
    .map(|_| ())
    .map_err(|e| classify("insert key", e))
}

fn session_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<SessionRecord> {
    Ok(SessionRecord {
        token_hash: r.get(0)?,
        account: r.get(1)?,
        csrf_token: r.get(2)?,
        mode: parse_mode(&r.get::<_, String>(3)?),
        created: r.get(4)?,
        expires_at: r.get(5)?,
    })
}

#[async_trait]
impl Store for SqliteStore {
    async fn find_account_by_email(&self, email: &str) -> StoreResult<Option<AccountRecord>> {
        let email = email.to_string();
        self.read(move |conn| {
            conn.prepare_cached(&format!(
                "SELECT {ACCOUNT_COLUMNS} FROM accounts WHERE email = ?1"
            ))
            .and_then(|mut s| s.query_row([email], account_row).optional())
            .map_err(|e| classify("find account", e))
        })
        .await
    }

    async fn list_accounts(&self) -> StoreResult<Vec<AccountRecord>> {
        self.read(|conn| {
            conn.prepare_cached(&format!(
                "SELECT {ACCOUNT_COLUMNS} FROM accounts ORDER BY created, id"
            ))
            .and_then(|mut s| s.query_map([], account_row)?.collect::<Result<Vec<_>, _>>())
            .map_err(|e| classify("list accounts", e))
        })
        .await
    }

    async fn update_account_profile(
        &self,
        account: &str,
        name: Option<&str>,
        public_email: Option<&str>,
    ) -> StoreResult<()> {
        let (account, name, public_email) = (
            account.to_string(),
            name.map(str::to_string),
            public_email.map(str::to_string),
        );
        self.writer
            .write(move |conn| {
                conn.execute(
                    "UPDATE accounts SET name = ?1, public_email = ?2 WHERE id = ?3",
                    params![name, public_email, account],
                )
                .map(|_| ())
                .map_err(|e| classify("update profile", e))
            })
            .await
    }

    async fn update_account_password(
        &self,
        account: &str,
        password_hash: &str,
        keep_session: Option<&str>,
    ) -> StoreResult<()> {
        let (account, hash) = (account.to_string(), password_hash.to_string());
        let keep = keep_session.unwrap_or_default().to_string();
        // The writer runs each closure inside its batch transaction: both statements or neither.
        self.writer
            .write(move |conn| {
                conn.execute(
                    "UPDATE accounts SET password_hash = ?1 WHERE id = ?2",
                    params![hash, account],
                )
                .map_err(|e| classify("update password", e))?;
                conn.execute(
                    "DELETE FROM dashboard_sessions WHERE account_id = ?1 AND token_hash <> ?2",
                    params![account, keep],
                )
                .map(|_| ())
                .map_err(|e| classify("end sessions", e))
            })
            .await
    }

    async fn list_api_keys(&self, account: &str) -> StoreResult<Vec<ApiKeyRecord>> {
        let account = account.to_string();
        self.read(move |conn| {
            conn.prepare_cached(&format!(
                "SELECT {KEY_COLUMNS} FROM api_keys WHERE account_id = ?1 ORDER BY created DESC, rowid DESC"
            ))
            .and_then(|mut s| s.query_map([account], key_row)?.collect::<Result<Vec<_>, _>>())
            .map_err(|e| classify("list keys", e))
        })
        .await
    }

    async fn insert_api_key(&self, key: ApiKeyRecord) -> StoreResult<()> {
        let result = self.writer.write(move |conn| insert_key(conn, &key)).await;
        self.keys.clear();
        result
    }

    async fn update_api_key(
        &self,
        account: &str,
        key_id: &str,
        expires_at: Option<i64>,
        revoked: bool,
    ) -> StoreResult<()> {
        let (account, key_id) = (account.to_string(), key_id.to_string());
        let result = self
            .writer
            .write(move |conn| {
                conn.execute(
                    "UPDATE api_keys SET expires_at = ?1, revoked = ?2 WHERE id = ?3 AND account_id = ?4",
                    params![expires_at, revoked, key_id, account],
                )
                .map(|_| ())
                .map_err(|e| classify("update key", e))
            })
            .await;
        // After the commit, so no reader can cache the old row again.
        self.keys.clear();
        result
    }

    async fn insert_session(&self, session: SessionRecord) -> StoreResult<()> {
        self.writer
            .write(move |conn| {
                conn.execute(
                    "INSERT INTO dashboard_sessions (token_hash, account_id, csrf_token, mode, created, expires_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                    params![
                        session.token_hash,
                        session.account,
                        session.csrf_token,
                        mode_str(session.mode),
                        session.created,
                        session.expires_at
                    ],
                )
                .map(|_| ())
                .map_err(|e| classify("insert session", e))
            })
            .await
    }

    async fn find_session(&self, token_hash: &str, now: i64) -> StoreResult<Option<SessionRecord>> {
        let token_hash = token_hash.to_string();
        self.read(move |conn| {
            conn.prepare_cached(
                "SELECT token_hash, account_id, csrf_token, mode, created, expires_at FROM dashboard_sessions
                 WHERE token_hash = ?1 AND expires_at > ?2",
            )
            .and_then(|mut s| s.query_row(params![token_hash, now], session_row).optional())
            .map_err(|e| classify("find session", e))
        })
        .await
    }

    async fn update_session_mode(&self, token_hash: &str, mode: Mode) -> StoreResult<()> {
        let token_hash = token_hash.to_string();
        self.writer
            .write(move |conn| {
                conn.execute(
                    "UPDATE dashboard_sessions SET mode = ?1 WHERE token_hash = ?2",
                    params![mode_str(mode), token_hash],
                )
                .map(|_| ())
                .map_err(|e| classify("update session", e))
            })
            .await
    }

    async fn delete_session(&self, token_hash: &str) -> StoreResult<()> {
        let token_hash = token_hash.to_string();
        self.writer
            .write(move |conn| {
                conn.execute(
                    "DELETE FROM dashboard_sessions WHERE token_hash = ?1",
                    [token_hash],
                )
                .map(|_| ())
                .map_err(|e| classify("delete session", e))
            })
            .await
    }

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

    async fn claim_tasks(
        &self,
        now: i64,
        lease_until: i64,
        limit: usize,
    ) -> StoreResult<Vec<ClaimedTask>> {
        self.writer
            .write(move |conn| {
                let tasks = conn
                    .prepare_cached(
                        "SELECT id, account_id, livemode, kind, object_id FROM scheduled_tasks
                         WHERE due_at <= ?1 AND (lease_until IS NULL OR lease_until < ?1) ORDER BY due_at LIMIT ?2",
                    )
                    .and_then(|mut s| {
                        s.query_map(params![now, limit as i64], |r| {
                            Ok(ClaimedTask {
                                id: r.get(0)?,
                                scope: scope_from(r.get(1)?, r.get(2)?),
                                kind: r.get(3)?,
                                object_id: r.get(4)?,
                            })
                        })?
                        .collect::<Result<Vec<_>, _>>()
                    })
                    .map_err(|e| classify("claim tasks", e))?;
                for t in &tasks {
                    conn.prepare_cached("UPDATE scheduled_tasks SET lease_until = ?1 WHERE id = ?2")
                        .and_then(|mut s| s.execute(params![lease_until, t.id]))
                        .map_err(|e| classify("lease task", e))?;
                }
                Ok(tasks)
            })
            .await
    }

    async fn claim_deliveries(&self, claim: DeliveryClaim) -> StoreResult<Vec<ClaimedDelivery>> {
        self.writer
            .write(move |conn| claim_deliveries(conn, claim))
            .await
    }

    async fn record_delivery_attempt(&self, record: DeliveryAttemptRecord) -> StoreResult<()> {
        self.writer
            .write(move |conn| record_attempt(conn, &record))
            .await
    }

    async fn list_deliveries(
        &self,
        scope: &Scope,
        event_id: &str,
    ) -> StoreResult<Vec<DeliveryRecord>> {
        let (scope, event_id) = (scope.clone(), event_id.to_string());
        self.read(move |conn| {
            let sql = format!(
                "SELECT {DELIVERY_COLUMNS} FROM webhook_deliveries WHERE account_id = ?1 AND livemode = ?2 AND event_id = ?3 ORDER BY seq"
            );
            conn.prepare_cached(&sql)
                .and_then(|mut s| {
                    s.query_map(params![scope.account, scope.livemode(), event_id], delivery_row)?
                        .collect::<Result<Vec<_>, _>>()
                })
                .map_err(|e| classify("list deliveries", e))
        })
        .await
    }

    async fn schedule_delivery(
        &self,
        scope: &Scope,
        event_id: &str,
        endpoint_id: &str,
        now_ms: i64,
    ) -> StoreResult<DeliveryRecord> {
        let (scope, event_id, endpoint_id) =
            (scope.clone(), event_id.to_string(), endpoint_id.to_string());
        self.writer
            .write(move |conn| {
                conn.prepare_cached(
                    "INSERT INTO webhook_deliveries (id, account_id, livemode, event_id, endpoint_id, status, next_attempt_at, created)
                     VALUES (?1, ?2, ?3, ?4, ?5, 'pending', ?6, ?6 / 1000)
                     ON CONFLICT (event_id, endpoint_id) DO UPDATE SET status = 'pending', next_attempt_at = excluded.next_attempt_at",
                )
                .and_then(|mut s| {
                    s.execute(params![
                        ids::generate(IdKind::WebhookDelivery),
                        scope.account,
                        scope.livemode(),
                        event_id,
                        endpoint_id,
                        now_ms
                    ])
                })
                .map_err(|e| classify("schedule delivery", e))?;
                let sql = format!("SELECT {DELIVERY_COLUMNS} FROM webhook_deliveries WHERE event_id = ?1 AND endpoint_id = ?2");
                conn.query_row(&sql, params![event_id, endpoint_id], delivery_row)
                    .map_err(|e| classify("schedule delivery", e))
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
        self.writer
            .write(move |conn| apply_batch(conn, &batch))
            .await
    }

    async fn find_idempotency(
        &self,
        scope: &Scope,
        key: &str,
        fingerprint: &str,
        now: i64,
    ) -> StoreResult<KeyState> {
        // A primary-key lookup of committed rows: a reader connection, on this thread.
        self.read_now(|conn| key_state(conn, scope, key, fingerprint, now))
    }

    async fn claim_idempotency(
        &self,
        scope: &Scope,
        key: &str,
        fingerprint: &str,
        now: i64,
    ) -> StoreResult<KeyState> {
        let (scope, key, fingerprint) = (scope.clone(), key.to_string(), fingerprint.to_string());
        // A newly acquired claim is answered before its group's fsync: only later jobs of this
        // writer read claims, and the request's own batch (which the client's answer waits on)
        // commits after it. A claim is not worth a crash's survival on SQLite anyway: running
        // claims are released on restart. A replay, by contrast, shows a stored response, so it
        // waits for the commit like every other answer.
        self.writer
            .write_early(
                move |conn| claim_idempotency(conn, &scope, &key, &fingerprint, now),
                |claim| matches!(claim, KeyState::Free),
            )
            .await
    }

    async fn release_idempotency(&self, scope: &Scope, key: &str) -> StoreResult<()> {
        let (scope, key) = (scope.clone(), key.to_string());
        self.writer
            .write(move |conn| {
                conn.prepare_cached(
                    "DELETE FROM idempotency_keys WHERE account_id = ?1 AND livemode = ?2 AND key = ?3 AND state = 'running'",
                )
                .and_then(|mut s| s.execute(params![scope.account, scope.livemode(), key]))
                .map(|_| ())
                .map_err(|e| classify("release idempotency", e))
            })
            .await
    }

    async fn purge_idempotency(&self, before: i64) -> StoreResult<u64> {
        self.writer
            .write(move |conn| {
                conn.prepare_cached("DELETE FROM idempotency_keys WHERE created < ?1")
                    .and_then(|mut s| s.execute(params![before]))
                    .map(|n| n as u64)
                    .map_err(|e| classify("purge idempotency", e))
            })
            .await
    }

    async fn insert_account(
        &self,
        account: AccountRecord,
        keys: Vec<ApiKeyRecord>,
    ) -> StoreResult<()> {
        self.writer
            .write(move |conn| {
                conn.execute(
                    "INSERT INTO accounts (id, email, name, password_hash, created, public_email) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                    params![account.id, account.email, account.name, account.password_hash, account.created, account.public_email],
                )
                .map_err(|e| classify("insert account", e))?;
                for k in &keys {
                    insert_key(conn, k)?;
                }
                Ok(())
            })
            .await
    }

    async fn recover_after_restart(&self) -> StoreResult<u64> {
        self.writer
            .write(|conn| {
                conn.execute("DELETE FROM idempotency_keys WHERE state = 'running'", [])
                    .map(|n| n as u64)
                    .map_err(|e| classify("release claims", e))
            })
            .await
    }

    async fn count_pending_deliveries(&self) -> StoreResult<u64> {
        self.read(|conn| {
            conn.query_row(
                "SELECT COUNT(*) FROM webhook_deliveries WHERE status = 'pending'",
                [],
                |r| r.get::<_, i64>(0),
            )
            .map(|n| n as u64)
            .map_err(|e| classify("count deliveries", e))
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

    async fn find_payment_for_receipt(&self, id: &str) -> StoreResult<Option<(Scope, Record)>> {
        let id = id.to_string();
        self.read(move |conn| {
            conn.prepare_cached(
                "SELECT account_id, livemode, id, version, body FROM payments WHERE id = ?1",
            )
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
                            body: r.get(4)?,
                        },
                    ))
                })
                .optional()
            })
            .map_err(|e| classify("find payment", e))
        })
        .await
    }

    async fn find_account(&self, id: &str) -> StoreResult<Option<AccountRecord>> {
        let id = id.to_string();
        self.read(move |conn| {
            conn.prepare_cached(&format!(
                "SELECT {ACCOUNT_COLUMNS} FROM accounts WHERE id = ?1"
            ))
            .and_then(|mut s| s.query_row([id], account_row).optional())
            .map_err(|e| classify("find account", e))
        })
        .await
    }

    async fn claim_setting(&self, name: &str, value: &str) -> StoreResult<String> {
        let (name, value) = (name.to_string(), value.to_string());
        self.writer
            .write(move |conn| {
                conn.execute(
                    "INSERT INTO settings (name, value) VALUES (?1, ?2) ON CONFLICT (name) DO NOTHING",
                    params![name, value],
                )
                .map_err(|e| classify("claim setting", e))?;
                conn.query_row("SELECT value FROM settings WHERE name = ?1", [&name], |r| {
                    r.get(0)
                })
                .map_err(|e| classify("read setting", e))
            })
            .await
    }

    async fn count_accounts(&self) -> StoreResult<u64> {
        self.read(|conn| {
            conn.query_row("SELECT COUNT(*) FROM accounts", [], |r| r.get::<_, i64>(0))
                .map(|n| n as u64)
                .map_err(|e| classify("count accounts", e))
        })
        .await
    }

    /// Served from the [`KeyCache`] when this key was found in the last few seconds.
    async fn find_api_key(&self, key_hash: &str) -> StoreResult<Option<ApiKeyRecord>> {
        if let Some(record) = self.keys.get(key_hash) {
            return Ok(Some(record));
        }
        let found = self.read_now(|conn| {
            conn.prepare_cached(&format!(
                "SELECT {KEY_COLUMNS} FROM api_keys WHERE key_hash = ?1"
            ))
            .and_then(|mut s| s.query_row([key_hash], key_row).optional())
            .map_err(|e| classify("find api key", e))
        })?;
        if let Some(record) = &found {
            self.keys.put(record);
        }
        Ok(found)
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
