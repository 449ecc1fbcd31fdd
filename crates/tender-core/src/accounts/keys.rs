//! API keys (CONTRACT §3): an account's four keys, authenticating a presented key to a
//! [`Principal`], and creating, rolling (with a grace period) and revoking keys.

use serde::Serialize;

use crate::accounts::Accounts;
use crate::auth::{classify_key, generate_key, hash_key, last4, KeyKind, Mode, Principal, Scope};
use crate::error::{AuthFailure, CoreError, CoreResult};
use crate::ids::{self, IdKind};
use crate::store::ApiKeyRecord;

/// A secret/publishable pair of one mode. `Debug` shows the secret key's last four only.
#[derive(Clone, Serialize)]
pub struct KeyPair {
    pub secret: String,
    pub publishable: String,
}

impl std::fmt::Debug for KeyPair {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyPair")
            .field(
                "secret",
                &format_args!("[REDACTED …{}]", last4(&self.secret)),
            )
            .field("publishable", &self.publishable)
            .finish()
    }
}

/// The keys of both modes.
#[derive(Debug, Clone, Serialize)]
pub struct AccountKeys {
    pub test: KeyPair,
    pub live: KeyPair,
}

pub(crate) fn new_key(
    account: &str,
    kind: KeyKind,
    mode: Mode,
    now: i64,
) -> (String, ApiKeyRecord) {
    let key = generate_key(kind, mode);
    let record = ApiKeyRecord {
        id: ids::generate(IdKind::ApiKey),
        account: account.to_string(),
        mode,
        kind,
        key_hash: hash_key(&key),
        public_value: (kind == KeyKind::Publishable).then(|| key.clone()),
        last4: last4(&key),
        created: now,
        expires_at: None,
        revoked: false,
    };
    (key, record)
}

/// Longest grace period of a rolled key (CONTRACT §3).
pub const MAX_KEY_GRACE_SECS: i64 = 7 * 24 * 3600;

/// A key as error messages may show it: its kind-and-mode prefix and last four characters
/// (`sk_test_…wxyz`); never more, whatever the input.
pub fn redact_key(key: &str) -> String {
    let prefix: String = key.chars().take(8).collect();
    let count = key.chars().count();
    if count < 16 {
        return format!("{prefix}…");
    }
    let last4: String = key.chars().skip(count - 4).collect();
    format!("{prefix}…{last4}")
}

impl Accounts<'_> {
    /// The caller a presented key stands for, or 401 with the reason.
    pub async fn authenticate(&self, key: &str) -> CoreResult<Principal> {
        let Some((kind, mode)) = classify_key(key) else {
            return Err(CoreError::Unauthenticated(AuthFailure::Invalid));
        };
        // The lookup is by SHA-256 of the key: an index probe on a hash reveals nothing about
        // how close a wrong key was, so no separate constant-time compare is needed here.
        let unknown = || {
            CoreError::Unauthenticated(AuthFailure::Unknown {
                redacted: redact_key(key),
            })
        };
        let Some(record) = self.store.find_api_key(&hash_key(key)).await? else {
            return Err(unknown());
        };
        if record.revoked || record.kind != kind || record.mode != mode {
            return Err(unknown());
        }
        if record.expires_at.is_some_and(|at| at <= self.now()) {
            return Err(CoreError::Unauthenticated(AuthFailure::Expired));
        }
        Ok(Principal {
            scope: Scope {
                account: record.account,
                mode,
            },
            key_kind: kind,
        })
    }

    /// Whether `key` still stands for `principal`, asked of the database itself rather than
    /// a node's key cache: a response that outlives its request (an event stream) ends within
    /// one check of the key's revocation or the end of its grace period, on any node
    /// (CONTRACT §17).
    pub async fn key_still_valid(&self, key: &str, principal: &Principal) -> CoreResult<bool> {
        let hash = hash_key(key);
        let now = self.now();
        Ok(self
            .store
            .list_api_keys(&principal.scope.account)
            .await?
            .iter()
            .any(|r| {
                r.key_hash == hash
                    && !r.revoked
                    && r.kind == principal.key_kind
                    && r.mode == principal.scope.mode
                    && r.expires_at.is_none_or(|at| at > now)
            }))
    }

    /// Creates a key of `kind` in `mode` for `account`; the full key is returned only here.
    pub async fn create_api_key(
        &self,
        account: &str,
        mode: Mode,
        kind: KeyKind,
    ) -> CoreResult<(String, ApiKeyRecord)> {
        let (key, record) = new_key(account, kind, mode, self.now());
        self.store.insert_api_key(record.clone()).await?;
        Ok((key, record))
    }

    /// Replaces a key: a new one of the same kind and mode now; the old one keeps working for
    /// `grace_secs` (0 = stops at once, at most 7 days). A revoked or expired key is refused
    /// (400), and a key already in a grace period keeps the earlier of its two ends.
    pub async fn roll_api_key(
        &self,
        account: &str,
        key_id: &str,
        grace_secs: i64,
    ) -> CoreResult<(String, ApiKeyRecord)> {
        if !(0..=MAX_KEY_GRACE_SECS).contains(&grace_secs) {
            return Err(CoreError::invalid(
                "expires_in",
                "parameter_invalid",
                "The grace period must be between 0 and 7 days.",
            ));
        }
        let old = self.find_key(account, key_id).await?;
        let now = self.now();
        // A revoked or expired key stays dead: rolling it would bring it back to life.
        if old.revoked {
            return Err(CoreError::invalid(
                "key",
                "api_key_revoked",
                "This key was revoked; a revoked key cannot be rolled. Create a new key instead.",
            ));
        }
        if old.expires_at.is_some_and(|at| at <= now) {
            return Err(CoreError::invalid(
                "key",
                "api_key_expired",
                "This key has expired; an expired key cannot be rolled. Create a new key instead.",
            ));
        }
        let (key, record) = new_key(account, old.kind, old.mode, now);
        self.store.insert_api_key(record.clone()).await?;
        // Rolling a key already in its grace period never extends that grace.
        let expires_at = Some(
            old.expires_at
                .map_or(now + grace_secs, |at| at.min(now + grace_secs)),
        );
        self.store
            .update_api_key(account, key_id, expires_at, grace_secs == 0)
            .await?;
        Ok((key, record))
    }

    /// Revokes a key at once.
    pub async fn revoke_api_key(&self, account: &str, key_id: &str) -> CoreResult<()> {
        let old = self.find_key(account, key_id).await?;
        self.store
            .update_api_key(account, &old.id, old.expires_at, true)
            .await?;
        Ok(())
    }

    pub(crate) async fn find_key(&self, account: &str, key_id: &str) -> CoreResult<ApiKeyRecord> {
        self.store
            .list_api_keys(account)
            .await?
            .into_iter()
            .find(|k| k.id == key_id)
            .ok_or_else(|| CoreError::NotFound {
                kind: "api_key",
                id: key_id.to_string(),
            })
    }
}
