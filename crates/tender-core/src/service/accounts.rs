//! Accounts and API keys: creating an account with its four keys, and authenticating a
//! presented key to a [`Principal`].

use argon2::password_hash::{rand_core::OsRng, PasswordHasher, SaltString};
use argon2::Argon2;
use serde::Serialize;

use super::Services;
use crate::auth::{classify_key, generate_key, hash_key, last4, KeyKind, Mode, Principal, Scope};
use crate::error::{AuthFailure, CoreError, CoreResult, StoreError};
use crate::ids::{self, random_base62, IdKind};
use crate::store::{AccountRecord, ApiKeyRecord};
use crate::validate::email_valid;

/// A secret/publishable pair of one mode.
#[derive(Debug, Clone, Serialize)]
pub struct KeyPair {
    pub secret: String,
    pub publishable: String,
}

/// The keys of both modes.
#[derive(Debug, Clone, Serialize)]
pub struct AccountKeys {
    pub test: KeyPair,
    pub live: KeyPair,
}

/// What `tender accounts create` prints: the only time the secrets are shown.
#[derive(Debug, Clone, Serialize)]
pub struct AccountCreated {
    pub account: String,
    pub email: String,
    pub password: String,
    pub keys: AccountKeys,
}

/// Argon2id hash (PHC string) of a dashboard password.
pub fn hash_password(password: &str) -> CoreResult<String> {
    let salt = SaltString::generate(&mut OsRng);
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| CoreError::Store(StoreError::Corrupt(format!("password hashing: {e}"))))
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
        if password.chars().count() < 8 {
            return Err(CoreError::invalid(
                "password",
                "parameter_invalid",
                "Passwords must have at least 8 characters.",
            ));
        }
        let now = self.now();
        let account = AccountRecord {
            id: ids::generate(IdKind::Account),
            email: email.to_string(),
            name,
            password_hash: hash_password(&password)?,
            created: now,
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
        self.store.insert_account(account, records).await?;
        Ok(created)
    }

    /// The caller a presented key stands for, or 401 with the reason.
    pub async fn authenticate(&self, key: &str) -> CoreResult<Principal> {
        let Some((kind, mode)) = classify_key(key) else {
            return Err(CoreError::Unauthenticated(AuthFailure::Invalid));
        };
        // The lookup is by SHA-256 of the key: an index probe on a hash reveals nothing about
        // how close a wrong key was, so no separate constant-time compare is needed here.
        let Some(record) = self.store.find_api_key(&hash_key(key)).await? else {
            return Err(CoreError::Unauthenticated(AuthFailure::Invalid));
        };
        if record.revoked || record.kind != kind || record.mode != mode {
            return Err(CoreError::Unauthenticated(AuthFailure::Invalid));
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
