//! Dashboard passwords: Argon2id, at most [`HASHING_SLOTS`] hashes at once per process on the
//! blocking pool, so a flood of logins costs a bounded share of the CPU.

use argon2::password_hash::{rand_core::OsRng, PasswordHasher, SaltString};
use argon2::Argon2;

use crate::accounts::Accounts;
use crate::error::{CoreError, CoreResult, StoreError};
use crate::ids::random_base62;
use crate::store::SessionRecord;

/// Argon2id hash (PHC string) of a dashboard password.
pub fn hash_password(password: &str) -> CoreResult<String> {
    let salt = SaltString::generate(&mut OsRng);
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| CoreError::internal("hash a password", std::io::Error::other(e.to_string())))
}

/// A new dashboard password must have at least 8 characters (400 naming `param`).
pub(crate) fn check_new_password(param: &str, password: &str) -> CoreResult<()> {
    if password.chars().count() < 8 {
        return Err(CoreError::invalid(
            param,
            "parameter_invalid",
            "Passwords must have at least 8 characters.",
        ));
    }
    Ok(())
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

/// Verifies a password against an Argon2id PHC string (constant-time inside argon2).
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

impl Accounts<'_> {
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
