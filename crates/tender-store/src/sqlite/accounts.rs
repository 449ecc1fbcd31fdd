//! Accounts, API keys, dashboard sessions and store-wide settings on SQLite.
//!
//! - `find_api_key` is served from the
//!   [`KeyCache`](crate::key_cache::KeyCache) when the key was found in the last few seconds;
//!   `insert_api_key` and `update_api_key` clear the cache after their commit, so no reader can
//!   cache the old row again.
//! - A password change ends the account's other dashboard sessions in the same writer
//!   transaction: both statements or neither.
//!
//! Depends on the parent module's connection helpers and shared row helpers.

use async_trait::async_trait;
use rusqlite::{params, Connection, OptionalExtension};
use tender_core::auth::Mode;
use tender_core::store::{
    AccountRecord, AccountSetting, AccountStore, ApiKeyRecord, SessionRecord, StoreResult,
};

use super::{classify, mode_str, parse_kind, parse_mode, SqliteStore};

/// What an account's reads select.
const ACCOUNT_READ: &str =
    "id, email, name, password_hash, created, public_email, pricing, payout_destination, checkout_settings";

fn account_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<AccountRecord> {
    Ok(AccountRecord {
        id: r.get(0)?,
        email: r.get(1)?,
        name: r.get(2)?,
        password_hash: r.get(3)?,
        created: r.get(4)?,
        public_email: r.get(5)?,
        pricing: r.get(6)?,
        payout_destination: r.get(7)?,
        checkout_settings: r.get(8)?,
    })
}

const KEY_COLUMNS: &str =
    "id, account_id, mode, kind, key_hash, public_value, last4, created, expires_at, revoked";

fn key_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<ApiKeyRecord> {
    Ok(ApiKeyRecord {
        id: r.get(0)?,
        account: r.get(1)?,
        mode: parse_mode(r, 2)?,
        kind: parse_kind(r, 3)?,
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
        mode: parse_mode(r, 3)?,
        created: r.get(4)?,
        expires_at: r.get(5)?,
    })
}

#[async_trait]
impl AccountStore for SqliteStore {
    async fn find_account_by_email(&self, email: &str) -> StoreResult<Option<AccountRecord>> {
        let email = email.to_string();
        self.read(move |conn| {
            conn.prepare_cached(&format!(
                "SELECT {ACCOUNT_READ} FROM accounts WHERE email = ?1"
            ))
            .and_then(|mut s| s.query_row([email], account_row).optional())
            .map_err(|e| classify("find account", e))
        })
        .await
    }

    async fn list_accounts(&self) -> StoreResult<Vec<AccountRecord>> {
        self.read(|conn| {
            conn.prepare_cached(&format!(
                "SELECT {ACCOUNT_READ} FROM accounts ORDER BY created, id"
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

    async fn update_account_setting(
        &self,
        account: &str,
        setting: AccountSetting,
        value: Option<&str>,
    ) -> StoreResult<()> {
        let (account, value) = (account.to_string(), value.map(str::to_string));
        // The column comes from the enum, never from input.
        let sql = format!(
            "UPDATE accounts SET {} = ?1 WHERE id = ?2",
            setting.column()
        );
        self.writer
            .write(move |conn| {
                conn.execute(&sql, params![value, account])
                    .map(|_| ())
                    .map_err(|e| classify("update an account setting", e))
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
                "SELECT {KEY_COLUMNS} FROM api_keys WHERE account_id = ?1 ORDER BY created DESC, id DESC"
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
                    [&token_hash],
                )
                .map(|_| ())
                .map_err(|e| classify("delete session", e))
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

    async fn find_account(&self, id: &str) -> StoreResult<Option<AccountRecord>> {
        let id = id.to_string();
        self.read(move |conn| {
            conn.prepare_cached(&format!(
                "SELECT {ACCOUNT_READ} FROM accounts WHERE id = ?1"
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

    /// Served from the [`KeyCache`](crate::key_cache::KeyCache) when this key was found in the
    /// last few seconds.
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
