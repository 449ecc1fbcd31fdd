//! Dashboard sessions: a login makes one (the cookie's token shown once, only its hash
//! stored), and it lasts [`SESSION_TTL_SECS`] in the mode it shows.

use crate::accounts::passwords::{hash_password, verify_password_bounded};
use crate::accounts::Accounts;
use crate::auth::{hash_key, Mode};
use crate::error::CoreResult;
use crate::ids::random_base62;
use crate::store::SessionRecord;

/// How long a dashboard session lasts.
pub const SESSION_TTL_SECS: i64 = 12 * 3600;

/// A new dashboard session: the cookie value is shown once, only its hash is stored.
#[derive(Debug, Clone)]
pub struct NewSession {
    pub token: String,
    pub session: SessionRecord,
}

impl Accounts<'_> {
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
}
