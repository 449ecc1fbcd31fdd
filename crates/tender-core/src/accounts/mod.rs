//! Accounts: creating one with its four keys, and its profile.
//!
//! - [`keys`]: API keys and authenticating a presented key.
//! - [`checkout_settings`]: the card-testing limits and who may frame the card field.
//! - [`sessions`]: dashboard sessions; [`passwords`]: dashboard passwords.

pub mod checkout_settings;
pub mod keys;
pub mod passwords;
pub mod sessions;

crate::services::resource_handle!(
    /// Accounts, keys, sessions and passwords: `Services` seen as this resource.
    Accounts,
    accounts
);

use serde::Serialize;

use crate::auth::{KeyKind, Mode};
use crate::error::{CoreError, CoreResult, StoreError};
use crate::ids::{self, random_base62, IdKind};
use crate::store::AccountRecord;
use crate::validate::email_valid;
use keys::{new_key, AccountKeys, KeyPair};
use passwords::{check_new_password, hash_password_bounded};

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

impl Accounts<'_> {
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
            payout_destination: None,
            checkout_settings: None,
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
}

impl Accounts<'_> {
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

    async fn require_account(&self, account: &str) -> CoreResult<AccountRecord> {
        self.store
            .find_account(account)
            .await?
            .ok_or_else(|| CoreError::NotFound {
                kind: "account",
                id: account.to_string(),
            })
    }
}
