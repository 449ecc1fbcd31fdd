//! Accounts and API keys: creating an account with its four keys, and authenticating a
//! presented key to a [`Principal`].

use argon2::password_hash::{rand_core::OsRng, PasswordHasher, SaltString};
use argon2::Argon2;
use serde::Serialize;

use crate::auth::{classify_key, generate_key, hash_key, last4, KeyKind, Mode, Principal, Scope};
use crate::error::{AuthFailure, CoreError, CoreResult, StoreError};
use crate::ids::{self, random_base62, IdKind};
use crate::services::Services;
use crate::store::{AccountRecord, ApiKeyRecord, SessionRecord};
use crate::validate::email_valid;

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

/// What `tender accounts create` prints: the only time the secrets are shown. `Debug` hides
/// the password and the secret keys.
#[derive(Clone, Serialize)]
pub struct AccountCreated {
    pub account: String,
    pub email: String,
    pub password: String,
    pub keys: AccountKeys,
}

impl std::fmt::Debug for AccountCreated {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AccountCreated")
            .field("account", &self.account)
            .field("email", &self.email)
            .field("password", &crate::secret::REDACTED)
            .field("keys", &self.keys)
            .finish()
    }
}

/// Argon2id hash (PHC string) of a dashboard password.
pub fn hash_password(password: &str) -> CoreResult<String> {
    let salt = SaltString::generate(&mut OsRng);
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| CoreError::internal("hash a password", std::io::Error::other(e.to_string())))
}

fn new_key(account: &str, kind: KeyKind, mode: Mode, now: i64) -> (String, ApiKeyRecord) {
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

impl Services {
    /// Creates an account with a dashboard login and test and live key pairs.
    pub async fn create_account(
        &self,
        email: &str,
        name: Option<String>,
        password: Option<String>,
    ) -> CoreResult<AccountCreated> {
        if !email_valid(email) {
            return Err(CoreError::invalid(
                "email",
                "email_invalid",
                "Invalid email address.",
            ));
        }
        let password = password.unwrap_or_else(|| random_base62(20));
        check_new_password("password", &password)?;
        let now = self.now();
        let account = AccountRecord {
            id: ids::generate(IdKind::Account),
            email: email.to_string(),
            name,
            public_email: None,
            password_hash: hash_password_bounded(&password).await?,
            created: now,
            pricing: None,
        };
        let mut records = Vec::new();
        let mut pair = |mode| {
            let (secret, s) = new_key(&account.id, KeyKind::Secret, mode, now);
            let (publishable, p) = new_key(&account.id, KeyKind::Publishable, mode, now);
            records.push(s);
            records.push(p);
            KeyPair {
                secret,
                publishable,
            }
        };
        let keys = AccountKeys {
            test: pair(Mode::Test),
            live: pair(Mode::Live),
        };
        let created = AccountCreated {
            account: account.id.clone(),
            email: account.email.clone(),
            password,
            keys,
        };
        match self.store.insert_account(account, records).await {
            Ok(()) => {}
            Err(StoreError::Duplicate(_)) => {
                return Err(CoreError::invalid(
                    "email",
                    "email_taken",
                    "An account with this e-mail already exists.",
                ))
            }
            Err(e) => return Err(e.into()),
        }
        Ok(created)
    }

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
}

impl Services {
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
}

/// How long a dashboard session lasts.
pub const SESSION_TTL_SECS: i64 = 12 * 3600;
/// Longest grace period of a rolled key (CONTRACT §3).
pub const MAX_KEY_GRACE_SECS: i64 = 7 * 24 * 3600;

/// A new dashboard session: the cookie value is shown once, only its hash is stored.
#[derive(Debug, Clone)]
pub struct NewSession {
    pub token: String,
    pub session: SessionRecord,
}

/// Verifies a password against an Argon2id PHC string (constant-time inside argon2).
/// A new dashboard password must have at least 8 characters (400 naming `param`).
fn check_new_password(param: &str, password: &str) -> CoreResult<()> {
    if password.chars().count() < 8 {
        return Err(CoreError::invalid(
            param,
            "parameter_invalid",
            "Passwords must have at least 8 characters.",
        ));
    }
    Ok(())
}

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

/// Argon2 runs at most this many at once per process, on the blocking pool: a flood of logins
/// costs a bounded share of the CPU and never stalls the request threads.
const HASHING_SLOTS: usize = 2;
static HASHING: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(HASHING_SLOTS);

/// [`verify_password`] off the request threads, bounded by [`HASHING_SLOTS`].
pub async fn verify_password_bounded(password: &str, phc: &str) -> bool {
    let Ok(_slot) = HASHING.acquire().await else {
        return false;
    };
    let (password, phc) = (password.to_string(), phc.to_string());
    tokio::task::spawn_blocking(move || verify_password(&password, &phc))
        .await
        .unwrap_or(false)
}

/// [`hash_password`] off the request threads, bounded by [`HASHING_SLOTS`].
pub async fn hash_password_bounded(password: &str) -> CoreResult<String> {
    let _slot = HASHING
        .acquire()
        .await
        .map_err(|e| CoreError::Store(StoreError::unavailable("password hashing", e)))?;
    let password = password.to_string();
    tokio::task::spawn_blocking(move || hash_password(&password))
        .await
        .map_err(|e| CoreError::Store(StoreError::unavailable("password hashing", e)))?
}

pub fn verify_password(password: &str, phc: &str) -> bool {
    use argon2::password_hash::{PasswordHash, PasswordVerifier};
    PasswordHash::new(phc)
        .map(|h| {
            Argon2::default()
                .verify_password(password.as_bytes(), &h)
                .is_ok()
        })
        .unwrap_or(false)
}

impl Services {
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

    async fn find_key(&self, account: &str, key_id: &str) -> CoreResult<ApiKeyRecord> {
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

    /// Checks a dashboard login; `None` for an unknown e-mail or a wrong password (the same
    /// answer, after the same Argon2 work, so the two cannot be told apart).
    pub async fn login(&self, email: &str, password: &str) -> CoreResult<Option<NewSession>> {
        let account = self.store.find_account_by_email(email.trim()).await?;
        // Hash against a dummy when the account is unknown, so timing does not reveal it.
        static DUMMY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
        let dummy = DUMMY.get_or_init(|| hash_password("not a real password").unwrap_or_default());
        let phc = account
            .as_ref()
            .map(|a| a.password_hash.as_str())
            .unwrap_or(dummy);
        let ok = verify_password_bounded(password, phc).await;
        let Some(account) = account.filter(|_| ok) else {
            return Ok(None);
        };
        let token = random_base62(43);
        let now = self.now();
        let session = SessionRecord {
            token_hash: hash_key(&token),
            account: account.id,
            csrf_token: random_base62(32),
            mode: Mode::Test,
            created: now,
            expires_at: now + SESSION_TTL_SECS,
        };
        self.store.insert_session(session.clone()).await?;
        Ok(Some(NewSession { token, session }))
    }

    /// Sets what customers see of the account on receipts: its business name and public
    /// e-mail (`None` or blank clears one).
    pub async fn update_account_profile(
        &self,
        account: &str,
        name: Option<&str>,
        public_email: Option<&str>,
    ) -> CoreResult<AccountRecord> {
        let name = name.map(str::trim).filter(|n| !n.is_empty());
        let public_email = public_email.map(str::trim).filter(|e| !e.is_empty());
        if name.is_some_and(|n| n.chars().count() > 200) {
            return Err(CoreError::invalid(
                "name",
                "parameter_invalid",
                "The business name can have at most 200 characters.",
            ));
        }
        if public_email.is_some_and(|e| !email_valid(e)) {
            return Err(CoreError::invalid(
                "public_email",
                "email_invalid",
                "Invalid email address.",
            ));
        }
        self.require_account(account).await?;
        self.store
            .update_account_profile(account, name, public_email)
            .await?;
        self.require_account(account).await
    }

    /// Sets a dashboard password without the current one (the operator's recovery, from the
    /// CLI), and ends every session of the account. Generates one when `password` is `None`.
    pub async fn set_password(
        &self,
        account: &str,
        password: Option<String>,
    ) -> CoreResult<String> {
        self.require_account(account).await?;
        let password = password.unwrap_or_else(|| random_base62(20));
        check_new_password("password", &password)?;
        self.store
            .update_account_password(account, &hash_password_bounded(&password).await?, None)
            .await?;
        Ok(password)
    }

    async fn require_account(&self, account: &str) -> CoreResult<AccountRecord> {
        self.store
            .find_account(account)
            .await?
            .ok_or_else(|| CoreError::NotFound {
                kind: "account",
                id: account.to_string(),
            })
    }

    /// The live session behind a cookie value.
    pub async fn session(&self, token: &str) -> CoreResult<Option<SessionRecord>> {
        if token.is_empty() || token.len() > 128 {
            return Ok(None);
        }
        Ok(self
            .store
            .find_session(&hash_key(token), self.now())
            .await?)
    }

    pub async fn logout(&self, token: &str) -> CoreResult<()> {
        Ok(self.store.delete_session(&hash_key(token)).await?)
    }

    pub async fn switch_session_mode(&self, session: &SessionRecord, mode: Mode) -> CoreResult<()> {
        Ok(self
            .store
            .update_session_mode(&session.token_hash, mode)
            .await?)
    }

    /// Changes a dashboard password after checking the current one; every other session of the
    /// account ends (the one making the change, `session`, stays).
    pub async fn change_password(
        &self,
        session: &SessionRecord,
        current: &str,
        new: &str,
    ) -> CoreResult<()> {
        let account = session.account.as_str();
        let Some(record) = self.store.find_account(account).await? else {
            return Err(CoreError::NotFound {
                kind: "account",
                id: account.to_string(),
            });
        };
        if !verify_password_bounded(current, &record.password_hash).await {
            return Err(CoreError::invalid(
                "current_password",
                "password_incorrect",
                "The current password is wrong.",
            ));
        }
        check_new_password("new_password", new)?;
        self.store
            .update_account_password(
                account,
                &hash_password_bounded(new).await?,
                Some(&session.token_hash),
            )
            .await?;
        Ok(())
    }
}
