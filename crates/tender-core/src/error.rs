//! The domain's one error type, [`CoreError`], and the storage port's [`StoreError`].
//!
//! Variants are what a caller acts on; the HTTP layer maps each to a status and wire `type` in
//! exactly one table (`tender-server/src/http/error.rs`). Pure; depends on `thiserror`.

use std::borrow::Cow;

/// Errors raised by storage implementations, classified so nobody above the store matches on a
/// driver's error type.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// An optimistic-concurrency precondition failed: the row changed since it was read.
    #[error("concurrent modification of {0}")]
    Conflict(String),
    /// A unique constraint was violated (the named constraint or column).
    #[error("duplicate value for {0}")]
    Duplicate(String),
    /// The batch's idempotency key was written by another request first (or is claimed by one
    /// still running): nothing of the batch was applied.
    #[error("idempotency key {0} is taken")]
    IdempotencyKeyTaken(String),
    /// A pagination cursor id does not exist in this scope.
    #[error("cursor object {0} not found")]
    CursorNotFound(String),
    /// The database is unreachable, busy beyond its timeout, or failed; the source says why.
    #[error("storage unavailable: {message}")]
    Unavailable {
        message: String,
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
    /// A batch's [`crate::store::WriteOp::RequireBalance`] did not hold: nothing was applied.
    #[error("the balance of {0} is insufficient")]
    BalanceInsufficient(String),
    /// A batch's [`crate::store::WriteOp::RequireAtMost`] did not hold (what was counted):
    /// nothing was applied.
    #[error("the limit of {0} is reached")]
    LimitReached(String),
    /// A stored document could not be decoded (a bug or a corrupted row).
    #[error("corrupt record {0}")]
    Corrupt(String),
}

impl StoreError {
    pub fn unavailable(
        message: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        StoreError::Unavailable {
            message: message.into(),
            source: Some(Box::new(source)),
        }
    }
}

/// Why a request could not be authenticated (401).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthFailure {
    /// No key was presented.
    Missing,
    /// A key was presented but is malformed, unknown or revoked.
    Invalid,
    /// A key-shaped value that is no key of ours (unknown or revoked); `redacted` is its
    /// prefix and last four, which help find a mixed-up environment variable (as Stripe does).
    Unknown { redacted: String },
    /// The `Authorization` header is not one of the two accepted forms; what is wrong with it.
    Malformed(&'static str),
    /// The key's roll grace period has ended.
    Expired,
}

/// Every error a use case can return.
#[derive(Debug, thiserror::Error)]
pub enum CoreError {
    /// A parameter is missing, malformed or out of range (400 `invalid_request_error`).
    #[error("{message}")]
    InvalidParam {
        param: Option<String>,
        code: &'static str,
        message: Cow<'static, str>,
    },
    /// The object named in the path does not exist in the caller's scope (404).
    #[error("No such {kind}: '{id}'")]
    NotFound { kind: &'static str, id: String },
    /// The card was refused: by validation before any money moved (`payment` is `None`) or by
    /// the acquirer (a `failed` payment was recorded, or a setup intent's decline: `payment`
    /// is then its `seti_…` id) (402 `card_error`).
    #[error("{message}")]
    Card {
        code: Cow<'static, str>,
        decline_code: Option<Cow<'static, str>>,
        message: Cow<'static, str>,
        param: Option<&'static str>,
        payment: Option<String>,
    },
    /// The card-testing guard refused a try before any card reached the bank (429
    /// `rate_limit_error`; `code` `card_testing_blocked` or `checkout_attempts_exhausted`).
    #[error("{message}")]
    Blocked {
        code: &'static str,
        message: Cow<'static, str>,
    },
    /// The payment's state does not allow the operation (400 `payment_unexpected_state`).
    #[error("{message}")]
    UnexpectedState { message: String },
    /// The idempotency key was used with a different request (400 `idempotency_error`).
    #[error("Keys for idempotent requests can only be used with the same parameters they were first used with.")]
    IdempotencyMismatch,
    /// The idempotency key's first request is still running (409 `idempotency_error`).
    #[error("A request with this idempotency key is still in progress; retry later.")]
    IdempotencyInProgress,
    /// No valid API key (401).
    #[error("authentication failed")]
    Unauthenticated(AuthFailure),
    /// A publishable key on a secret-key operation (403).
    #[error("This operation requires a secret key.")]
    SecretKeyRequired,
    /// The store failed; the client sees an opaque 500 and the cause is logged.
    #[error("storage failure")]
    Store(#[from] StoreError),
    /// The acquirer failed (not a decline); opaque 500.
    #[error("acquirer failure: {0}")]
    Acquirer(String),
    /// The payment's processor could not be reached or did not answer a capture, cancel or
    /// refund (502 `api_error`, `processor_unavailable`): nothing changed here, and a retry
    /// (with the same idempotency key) is safe, since every upstream call carries a key derived
    /// from Tender's object id.
    #[error("The payment processor did not answer: {0}. Nothing was changed; retry later.")]
    ProcessorUnavailable(String),
    /// A bug or an impossible state on our side (a value that would not serialise, a hashing
    /// library that failed): opaque 500; `source` says why in the log.
    #[error("internal error: {what}")]
    Internal {
        what: &'static str,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// The innermost cause of `err`: for a refused connection "Connection refused (os error 111)"
/// rather than an HTTP client's "error sending request"; for a line a person reads.
pub fn root_cause(err: &(dyn std::error::Error + 'static)) -> String {
    let mut cur = err;
    while let Some(next) = cur.source() {
        cur = next;
    }
    cur.to_string()
}

/// `err` and every error it was caused by, as one line (`a: b: c`), for the log. Use it
/// wherever an error is logged: the top error alone often says only "storage failure".
pub fn error_chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut chain = err.to_string();
    let mut source = err.source();
    while let Some(s) = source {
        chain.push_str(": ");
        chain.push_str(&s.to_string());
        source = s.source();
    }
    chain
}

impl CoreError {
    /// A 500 caused by `source` while doing `what`.
    pub fn internal(
        what: &'static str,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        CoreError::Internal {
            what,
            source: Box::new(source),
        }
    }

    /// Whether the client sees an opaque 500 (and the cause belongs in the log).
    pub fn is_internal(&self) -> bool {
        matches!(
            self,
            CoreError::Store(_) | CoreError::Acquirer(_) | CoreError::Internal { .. }
        )
    }

    /// A 400 naming the offending parameter.
    pub fn invalid(
        param: impl Into<String>,
        code: &'static str,
        message: impl Into<Cow<'static, str>>,
    ) -> Self {
        CoreError::InvalidParam {
            param: Some(param.into()),
            code,
            message: message.into(),
        }
    }

    /// A referenced object in the body that does not exist: 400 `resource_missing` with `param`.
    pub fn missing_reference(param: &str, kind: &str, id: &str) -> Self {
        CoreError::invalid(param, "resource_missing", format!("No such {kind}: '{id}'"))
    }
}

pub type CoreResult<T> = Result<T, CoreError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chain_names_every_cause() {
        let io = std::io::Error::other("disk full");
        let err = CoreError::Store(StoreError::unavailable("write the batch", io));
        assert_eq!(
            error_chain(&err),
            "storage failure: storage unavailable: write the batch: disk full"
        );
    }
}
