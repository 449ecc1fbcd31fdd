//! Accounts, API keys, dashboard sessions and store-wide settings on PostgreSQL.
//!
//! - `find_api_key` is served from this node's [`KeyCache`](crate::key_cache::KeyCache) when the
//!   key was found in the last few seconds; `insert_api_key` and `update_api_key` clear it, so
//!   a change takes effect at once on this node and within the cache's TTL on the others.
//! - Creating an account with its keys, and changing a password while ending the account's other
//!   dashboard sessions, each run in one transaction.
//!
//! Depends on the parent module's connection helpers and shared row helpers.

use async_trait::async_trait;
use deadpool_postgres::GenericClient;
use tender_core::auth::{KeyKind, Mode};
use tender_core::error::StoreError;
use tender_core::store::{
    AccountRecord, AccountSetting, AccountStore, ApiKeyRecord, SessionRecord, StoreResult,
};
use tokio_postgres::Row;

use super::{classify, mode_from, PgStore};

const ACCOUNT_COLUMNS: &str = "id, email, name, password_hash, created, public_email";
/// What an account's reads select: the inserted columns and the prices, set later.
const ACCOUNT_READ: &str =
    "id, email, name, password_hash, created, public_email, pricing, payout_destination, checkout_settings";

fn account_row(r: &Row) -> AccountRecord {
    AccountRecord {
        id: r.get(0),
        email: r.get(1),
        name: r.get(2),
        password_hash: r.get(3),
        created: r.get(4),
        public_email: r.get(5),
        pricing: r.get(6),
        payout_destination: r.get(7),
        checkout_settings: r.get(8),
    }
}

const KEY_COLUMNS: &str =
    "id, account_id, mode, kind, key_hash, public_value, last4, created, expires_at, revoked";

fn key_row(r: &Row) -> StoreResult<ApiKeyRecord> {
    let kind: &str = r.get(3);
    Ok(ApiKeyRecord {
        id: r.get(0),
        account: r.get(1),
        mode: mode_from(r.get(2))?,
        kind: KeyKind::parse(kind)
            .ok_or_else(|| StoreError::Corrupt(format!("unknown key kind {kind:?}")))?,
        key_hash: r.get(4),
        public_value: r.get(5),
        last4: r.get(6),
        created: r.get(7),
        expires_at: r.get(8),
        revoked: r.get(9),
    })
}

async fn insert_key<C: GenericClient>(c: &C, k: &ApiKeyRecord) -> StoreResult<()> {
    c.execute(
        &format!(
            "INSERT INTO api_keys ({KEY_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"
        ),
        &[
            &k.id,
            &k.account,
            &k.mode.as_str(),
            &k.kind.as_str(),
            &k.key_hash,
            &k.public_value,
            &k.last4,
            &k.created,
            &k.expires_at,
            &k.revoked,
        ],
    )
    .await
    .map(|_| ())
    .map_err(|e| classify("insert key", e))
}

fn session_row(r: &Row) -> StoreResult<SessionRecord> {
    Ok(SessionRecord {
        token_hash: r.get(0),
        account: r.get(1),
        csrf_token: r.get(2),
        mode: mode_from(r.get(3))?,
        created: r.get(4),
        expires_at: r.get(5),
    })
}

#[async_trait]
impl AccountStore for PgStore {
    async fn insert_account(
        &self,
        account: AccountRecord,
        keys: Vec<ApiKeyRecord>,
    ) -> StoreResult<()> {
        self.in_transaction(move |tx| {
            Box::pin(async move {
                tx.execute(
                    &format!(
                        "INSERT INTO accounts ({ACCOUNT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6)"
                    ),
                    &[
                        &account.id,
                        &account.email,
                        &account.name,
                        &account.password_hash,
                        &account.created,
                        &account.public_email,
                    ],
                )
                .await
                .map_err(|e| classify("insert account", e))?;
                for k in &keys {
                    insert_key(tx, k).await?;
                }
                Ok(())
            })
        })
        .await
    }

    async fn find_account(&self, id: &str) -> StoreResult<Option<AccountRecord>> {
        let client = self.client().await?;
        let row = client
            .query_opt(
                &format!("SELECT {ACCOUNT_READ} FROM accounts WHERE id = $1"),
                &[&id],
            )
            .await
            .map_err(|e| classify("find account", e))?;
        Ok(row.as_ref().map(account_row))
    }

    async fn find_account_by_email(&self, email: &str) -> StoreResult<Option<AccountRecord>> {
        let client = self.client().await?;
        let row = client
            .query_opt(
                &format!("SELECT {ACCOUNT_READ} FROM accounts WHERE lower(email) = lower($1)"),
                &[&email],
            )
            .await
            .map_err(|e| classify("find account", e))?;
        Ok(row.as_ref().map(account_row))
    }

    async fn list_accounts(&self) -> StoreResult<Vec<AccountRecord>> {
        let client = self.client().await?;
        let rows = client
            .query(
                &format!("SELECT {ACCOUNT_READ} FROM accounts ORDER BY created, id"),
                &[],
            )
            .await
            .map_err(|e| classify("list accounts", e))?;
        Ok(rows.iter().map(account_row).collect())
    }

    async fn update_account_profile(
        &self,
        account: &str,
        name: Option<&str>,
        public_email: Option<&str>,
    ) -> StoreResult<()> {
        let client = self.client().await?;
        client
            .execute(
                "UPDATE accounts SET name = $1, public_email = $2 WHERE id = $3",
                &[&name, &public_email, &account],
            )
            .await
            .map(|_| ())
            .map_err(|e| classify("update profile", e))
    }

    async fn update_account_setting(
        &self,
        account: &str,
        setting: AccountSetting,
        value: Option<&str>,
    ) -> StoreResult<()> {
        let client = self.client().await?;
        // The column comes from the enum, never from input.
        let sql = format!(
            "UPDATE accounts SET {} = $1 WHERE id = $2",
            setting.column()
        );
        client
            .execute(&sql, &[&value, &account])
            .await
            .map(|_| ())
            .map_err(|e| classify("update an account setting", e))
    }

    async fn update_account_password(
        &self,
        account: &str,
        password_hash: &str,
        keep_session: Option<&str>,
    ) -> StoreResult<()> {
        let (account, hash) = (account.to_string(), password_hash.to_string());
        let keep = keep_session.unwrap_or_default().to_string();
        self.in_transaction(move |tx| {
            Box::pin(async move {
                tx.execute(
                    "UPDATE accounts SET password_hash = $1 WHERE id = $2",
                    &[&hash, &account],
                )
                .await
                .map_err(|e| classify("update password", e))?;
                tx.execute(
                    "DELETE FROM dashboard_sessions WHERE account_id = $1 AND token_hash <> $2",
                    &[&account, &keep],
                )
                .await
                .map(|_| ())
                .map_err(|e| classify("end sessions", e))
            })
        })
        .await
    }

    async fn claim_setting(&self, name: &str, value: &str) -> StoreResult<String> {
        let client = self.client().await?;
        client
            .execute(
                "INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING",
                &[&name, &value],
            )
            .await
            .map_err(|e| classify("claim setting", e))?;
        client
            .query_one("SELECT value FROM settings WHERE name = $1", &[&name])
            .await
            .map(|r| r.get(0))
            .map_err(|e| classify("read setting", e))
    }

    async fn count_accounts(&self) -> StoreResult<u64> {
        let client = self.client().await?;
        let row = client
            .query_one("SELECT COUNT(*) FROM accounts", &[])
            .await
            .map_err(|e| classify("count", e))?;
        Ok(row.get::<_, i64>(0) as u64)
    }

    /// Served from the [`KeyCache`](crate::key_cache::KeyCache) when this key was found in the
    /// last few seconds.
    async fn find_api_key(&self, key_hash: &str) -> StoreResult<Option<ApiKeyRecord>> {
        if let Some(record) = self.keys.get(key_hash) {
            return Ok(Some(record));
        }
        let client = self.client().await?;
        let stmt = client
            .prepare_cached(&format!(
                "SELECT {KEY_COLUMNS} FROM api_keys WHERE key_hash = $1"
            ))
            .await
            .map_err(|e| classify("find api key", e))?;
        let row = client
            .query_opt(&stmt, &[&key_hash])
            .await
            .map_err(|e| classify("find api key", e))?;
        let found = row.as_ref().map(key_row).transpose()?;
        if let Some(record) = &found {
            self.keys.put(record);
        }
        Ok(found)
    }

    async fn list_api_keys(&self, account: &str) -> StoreResult<Vec<ApiKeyRecord>> {
        let client = self.client().await?;
        let rows = client
            .query(&format!("SELECT {KEY_COLUMNS} FROM api_keys WHERE account_id = $1 ORDER BY created DESC, id DESC"), &[&account])
            .await
            .map_err(|e| classify("list keys", e))?;
        rows.iter().map(key_row).collect()
    }

    async fn insert_api_key(&self, key: ApiKeyRecord) -> StoreResult<()> {
        let client = self.client().await?;
        let result = insert_key(&client, &key).await;
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
        let client = self.client().await?;
        let result = client
            .execute(
                "UPDATE api_keys SET expires_at = $1, revoked = $2 WHERE id = $3 AND account_id = $4",
                &[&expires_at, &revoked, &key_id, &account],
            )
            .await
            .map(|_| ())
            .map_err(|e| classify("update key", e));
        // On this node the change takes effect at once; other nodes see it within the TTL.
        self.keys.clear();
        result
    }

    async fn insert_session(&self, s: SessionRecord) -> StoreResult<()> {
        let client = self.client().await?;
        client
            .execute(
                "INSERT INTO dashboard_sessions (token_hash, account_id, csrf_token, mode, created, expires_at) VALUES ($1, $2, $3, $4, $5, $6)",
                &[&s.token_hash, &s.account, &s.csrf_token, &s.mode.as_str(), &s.created, &s.expires_at],
            )
            .await
            .map(|_| ())
            .map_err(|e| classify("insert session", e))
    }

    async fn find_session(&self, token_hash: &str, now: i64) -> StoreResult<Option<SessionRecord>> {
        let client = self.client().await?;
        let row = client
            .query_opt(
                "SELECT token_hash, account_id, csrf_token, mode, created, expires_at FROM dashboard_sessions
                 WHERE token_hash = $1 AND expires_at > $2",
                &[&token_hash, &now],
            )
            .await
            .map_err(|e| classify("find session", e))?;
        row.as_ref().map(session_row).transpose()
    }

    async fn update_session_mode(&self, token_hash: &str, mode: Mode) -> StoreResult<()> {
        let client = self.client().await?;
        client
            .execute(
                "UPDATE dashboard_sessions SET mode = $1 WHERE token_hash = $2",
                &[&mode.as_str(), &token_hash],
            )
            .await
            .map(|_| ())
            .map_err(|e| classify("update session", e))
    }

    async fn delete_session(&self, token_hash: &str) -> StoreResult<()> {
        let client = self.client().await?;
        client
            .execute(
                "DELETE FROM dashboard_sessions WHERE token_hash = $1",
                &[&token_hash],
            )
            .await
            .map(|_| ())
            .map_err(|e| classify("delete session", e))
    }
}
