//! Idempotency records on PostgreSQL: what is under a key ([`key_state`]), claims taken before a
//! request runs, releases and purges, and [`write_idempotency`], the record a batch writes
//! (called by [`super::documents`] inside the batch's transaction).
//!
//! - A running claim carries its node's key; it is free once that node is gone (its session
//!   lock released, see [`node`]), never while it lives.
//! - A claim of a new key is one autocommitted statement; an existing key's row is examined
//!   under a row lock, so two nodes cannot both take over a stale claim.
//! - Completing a claim needs it to be still this node's: if another node took it over (this one
//!   was taken for dead), the batch applies nothing.
//! - A record is replaced only once it has expired (or is a gone node's claim with the same
//!   fingerprint); a concurrent insert of the key waits for the other transaction, then sees its
//!   row and fails with `IdempotencyKeyTaken`.
//!
//! Depends on the parent module's connection helpers and [`node`].

use async_trait::async_trait;
use deadpool_postgres::GenericClient;
use tender_core::auth::Scope;
use tender_core::documents::idempotency::key_state;
use tender_core::error::StoreError;
use tender_core::store::{
    IdempotencyStore, IdempotencyWrite, KeyRecord, KeyState, StoreResult, StoredResponse,
    IDEMPOTENCY_TTL_SECS,
};

use super::pipeline::{Stmt, Value};
use super::{classify, exec, node, query, PgStore};

/// The idempotency record of a batch: completes this node's claim, or inserts the record
/// unless a live one is there (another request with the key got there first; a concurrent
/// insert of the key waits for that transaction, then sees its row). Either way the statement
/// must change exactly one row, or the batch applies nothing.
pub(super) fn idempotency_statement(scope: &Scope, w: &IdempotencyWrite, node: i64) -> Stmt {
    let status = w.response.status as i64;
    let common = |params: &mut Vec<Value>| {
        params.push(Box::new(scope.account.clone()));
        params.push(Box::new(scope.livemode()));
        params.push(Box::new(w.key.clone()));
    };
    if w.claimed && w.checkpoint {
        let mut params: Vec<Value> = vec![Box::new(status), Box::new(w.response.body.clone())];
        common(&mut params);
        params.push(Box::new(node));
        return Stmt::new(
            "checkpoint idempotency",
            "UPDATE idempotency_keys SET status = $1, body = $2
             WHERE account_id = $3 AND livemode = $4 AND key = $5 AND state = 'running' AND node = $6",
            params,
        )
        .exactly_one(StoreError::Unavailable {
            message: format!("the claim of idempotency key {} was lost", w.key),
            source: None,
        });
    }
    if w.claimed {
        let mut params: Vec<Value> = vec![Box::new(status), Box::new(w.response.body.clone())];
        common(&mut params);
        params.push(Box::new(node));
        return Stmt::new(
            "complete idempotency",
            "UPDATE idempotency_keys SET state = 'done', status = $1, body = $2, node = NULL
             WHERE account_id = $3 AND livemode = $4 AND key = $5 AND state = 'running' AND node = $6",
            params,
        )
        // Another node took the claim over (this one was taken for dead): apply nothing.
        .exactly_one(StoreError::Unavailable {
            message: format!("the claim of idempotency key {} was lost", w.key),
            source: None,
        });
    }
    let sql = format!(
        "INSERT INTO idempotency_keys (account_id, livemode, key, fingerprint, state, status, body, created, locked_at)
         VALUES ($1, $2, $3, $4, 'done', $5, $6, $7, $7)
         ON CONFLICT (account_id, livemode, key) DO UPDATE SET
           fingerprint = excluded.fingerprint, state = 'done', status = excluded.status,
           body = excluded.body, created = excluded.created, locked_at = excluded.locked_at, node = NULL
         WHERE idempotency_keys.created < $8
            OR (idempotency_keys.state = 'running' AND idempotency_keys.fingerprint = excluded.fingerprint
                AND idempotency_keys.body IS NULL AND idempotency_keys.node IS NOT NULL AND {})",
        node::NODE_GONE
    );
    let mut params: Vec<Value> = Vec::with_capacity(8);
    common(&mut params);
    params.push(Box::new(w.fingerprint.clone()));
    params.push(Box::new(status));
    params.push(Box::new(w.response.body.clone()));
    params.push(Box::new(w.created));
    params.push(Box::new(w.created - IDEMPOTENCY_TTL_SECS));
    Stmt::new("insert idempotency", sql, params)
        .exactly_one(StoreError::IdempotencyKeyTaken(w.key.clone()))
}

/// Reads the record under a key; `lock` takes its row lock until the transaction ends.
async fn idempotency_row<C: GenericClient>(
    c: &C,
    scope: &Scope,
    key: &str,
    lock: bool,
) -> StoreResult<Option<KeyRecord>> {
    let sql = format!(
        "SELECT fingerprint, state, status, body, created, node IS NOT NULL AND {} FROM idempotency_keys
         WHERE account_id = $1 AND livemode = $2 AND key = $3{}",
        node::NODE_GONE,
        if lock { " FOR UPDATE" } else { "" }
    );
    let rows = query(c, &sql, &[&scope.account, &scope.livemode(), &key])
        .await
        .map_err(|e| classify("find idempotency", e))?;
    Ok(rows.first().map(|r| KeyRecord {
        fingerprint: r.get(0),
        state: r.get(1),
        response: r
            .get::<_, Option<i64>>(2)
            .zip(r.get::<_, Option<Vec<u8>>>(3))
            .map(|(status, body)| StoredResponse {
                status: status as u16,
                body,
            }),
        created: r.get(4),
        // A running claim of a node that is gone is free (see `node`).
        claimer_gone: r.get(5),
    }))
}

#[async_trait]
impl IdempotencyStore for PgStore {
    async fn find_idempotency(
        &self,
        scope: &Scope,
        key: &str,
        fingerprint: &str,
        now: i64,
    ) -> StoreResult<KeyState> {
        let client = self.client().await?;
        Ok(key_state(
            idempotency_row(&client, scope, key, false).await?,
            fingerprint,
            now,
        ))
    }

    async fn claim_idempotency(
        &self,
        scope: &Scope,
        key: &str,
        fingerprint: &str,
        now: i64,
    ) -> StoreResult<KeyState> {
        const CLAIM: &str = "INSERT INTO idempotency_keys (account_id, livemode, key, fingerprint, state, created, locked_at, node)
             VALUES ($1, $2, $3, $4, 'running', $5, $5, $6) ON CONFLICT DO NOTHING";
        // The common case, a new key, is one autocommitted statement (one round trip, no
        // BEGIN/COMMIT); an existing key is examined under a row lock below.
        {
            let client = self.client().await?;
            let inserted = exec(
                &client,
                CLAIM,
                &[
                    &scope.account,
                    &scope.livemode(),
                    &key,
                    &fingerprint,
                    &now,
                    &self.node.key(),
                ],
            )
            .await
            .map_err(|e| classify("claim idempotency", e))?;
            if inserted == 1 {
                return Ok(KeyState::Free);
            }
        }
        let (scope, key, fingerprint) = (scope.clone(), key.to_string(), fingerprint.to_string());
        let node = self.node.key();
        self.in_transaction(move |tx| {
            Box::pin(async move {
                let live = scope.livemode();
                let inserted = exec(tx, CLAIM, &[&scope.account, &live, &key, &fingerprint, &now, &node])
                    .await
                    .map_err(|e| classify("claim idempotency", e))?;
                if inserted == 1 {
                    return Ok(KeyState::Free);
                }
                // The row exists: lock it, so two nodes cannot both take over a stale claim.
                let row = idempotency_row(tx, &scope, &key, true).await?;
                let state = key_state(row, &fingerprint, now);
                if state == KeyState::Free {
                    exec(tx,
                        "UPDATE idempotency_keys SET fingerprint = $4, state = 'running', status = NULL, body = NULL,
                         created = $5, locked_at = $5, node = $6 WHERE account_id = $1 AND livemode = $2 AND key = $3",
                        &[&scope.account, &live, &key, &fingerprint, &now, &node],
                    )
                    .await
                    .map_err(|e| classify("claim idempotency", e))?;
                }
                Ok(state)
            })
        })
        .await
    }

    async fn release_idempotency(&self, scope: &Scope, key: &str) -> StoreResult<()> {
        let client = self.client().await?;
        // A checkpointed claim keeps its checkpoint as its answer; others are deleted.
        for sql in [
            "UPDATE idempotency_keys SET state = 'done', node = NULL
             WHERE account_id = $1 AND livemode = $2 AND key = $3 AND state = 'running' AND body IS NOT NULL",
            "DELETE FROM idempotency_keys WHERE account_id = $1 AND livemode = $2 AND key = $3 AND state = 'running'",
        ] {
            client
                .execute(sql, &[&scope.account, &scope.livemode(), &key])
                .await
                .map_err(|e| classify("release idempotency", e))?;
        }
        Ok(())
    }

    async fn purge_idempotency(&self, before: i64) -> StoreResult<u64> {
        let client = self.client().await?;
        client
            .execute(
                "DELETE FROM idempotency_keys WHERE created < $1",
                &[&before],
            )
            .await
            .map_err(|e| classify("purge idempotency", e))
    }
}
