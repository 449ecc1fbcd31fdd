//! Idempotency records on SQLite: what is under a key ([`key_state`]), claims taken before a
//! request runs, releases and purges, and [`write_idempotency`], the record a batch writes
//! (called by [`super::documents`] inside the batch).
//!
//! - One process per data dir: a running claim belongs to this process, since a dead process's
//!   claims are deleted when the next one starts (`recover_after_restart`, in the parent module).
//! - A newly acquired claim is answered before its group's fsync (`Writer::write_early`): only
//!   later jobs of this writer read claims, and the request's own batch commits after it. A
//!   replay shows a stored response, so it waits for the commit like every other answer.
//! - Completing a claim that was lost (its group's commit failed) applies nothing, so a retry
//!   with the key runs afresh instead of repeating the change.
//! - A record is replaced only once it has expired; a live one written first by another request
//!   with the key fails the batch with `IdempotencyKeyTaken`.
//!
//! Depends on the parent module's connection helpers.

use async_trait::async_trait;
use rusqlite::{params, Connection, OptionalExtension};
use tender_core::auth::Scope;
use tender_core::documents::idempotency::key_state;
use tender_core::error::StoreError;
use tender_core::store::{
    IdempotencyStore, IdempotencyWrite, KeyRecord, KeyState, StoreResult, StoredResponse,
    IDEMPOTENCY_TTL_SECS,
};

use super::{classify, SqliteStore};

/// The idempotency record of a batch: completes the request's claim, or inserts the record
/// unless a live one is there (another request with the key got there first).
pub(super) fn write_idempotency(
    conn: &Connection,
    scope: &Scope,
    w: &IdempotencyWrite,
) -> StoreResult<()> {
    let live = scope.livemode();
    let status = w.response.status;
    if w.claimed && w.checkpoint {
        let n = conn
            .prepare_cached(
                "UPDATE idempotency_keys SET status = ?1, body = ?2
                 WHERE account_id = ?3 AND livemode = ?4 AND key = ?5 AND state = 'running'",
            )
            .and_then(|mut s| {
                s.execute(params![status, w.response.body, scope.account, live, w.key])
            })
            .map_err(|e| classify("checkpoint idempotency", e))?;
        if n != 1 {
            return Err(StoreError::Unavailable {
                message: format!("the claim of idempotency key {} was lost", w.key),
                source: None,
            });
        }
        return Ok(());
    }
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
fn find_key_state(
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
    let record = existing.map(|(fingerprint, state, status, body, created)| KeyRecord {
        fingerprint,
        response: status
            .zip(body)
            .map(|(status, body)| StoredResponse { status, body }),
        state,
        created,
        // Every claim in the table belongs to this process: a dead one's were released at start.
        claimer_gone: false,
    });
    Ok(key_state(record, fingerprint, now))
}

fn claim_idempotency(
    conn: &Connection,
    scope: &Scope,
    key: &str,
    fingerprint: &str,
    now: i64,
) -> StoreResult<KeyState> {
    match find_key_state(conn, scope, key, fingerprint, now)? {
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

#[async_trait]
impl IdempotencyStore for SqliteStore {
    async fn find_idempotency(
        &self,
        scope: &Scope,
        key: &str,
        fingerprint: &str,
        now: i64,
    ) -> StoreResult<KeyState> {
        // A primary-key lookup of committed rows: a reader connection, on this thread.
        self.read_now(|conn| find_key_state(conn, scope, key, fingerprint, now))
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
                // A checkpointed claim keeps its checkpoint as its answer; others are deleted.
                for sql in [
                    "UPDATE idempotency_keys SET state = 'done'
                     WHERE account_id = ?1 AND livemode = ?2 AND key = ?3 AND state = 'running' AND body IS NOT NULL",
                    "DELETE FROM idempotency_keys WHERE account_id = ?1 AND livemode = ?2 AND key = ?3 AND state = 'running'",
                ] {
                    conn.prepare_cached(sql)
                        .and_then(|mut s| s.execute(params![scope.account, scope.livemode(), key]))
                        .map_err(|e| classify("release idempotency", e))?;
                }
                Ok(())
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
}
