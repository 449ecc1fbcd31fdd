//! Errors as values: the API's own error envelope ([`ApiError`]) and what can go wrong on the way
//! to it ([`Error`]). Nothing here is a string to parse: match on [`ErrorType`], `code`,
//! `decline_code`.

use std::time::Duration;

use serde::Deserialize;

/// The `type` of an API error (CONTRACT §4.7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ErrorType {
    /// 400 (bad or missing parameter, wrong state, missing reference), 404, 405, 413, 415.
    InvalidRequestError,
    /// 400 (key reused with other parameters) or 409 (same key still in flight).
    IdempotencyError,
    /// 401: no valid API key.
    AuthenticationError,
    /// 402: the request was valid but the card was refused.
    CardError,
    /// 403: a publishable key on a secret-key operation.
    PermissionError,
    /// 429: slow down; see [`ApiError::retry_after`].
    RateLimitError,
    /// 500: the server's fault.
    ApiError,
    /// A type this client does not know (a newer server).
    #[serde(other)]
    Unknown,
}

/// An error answered by the API: its HTTP status and the fields of the `error` envelope.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{status} {kind:?} {code}: {message}")]
pub struct ApiError {
    /// The HTTP status (400, 401, 402, …).
    pub status: u16,
    /// `error.type`.
    pub kind: ErrorType,
    /// `error.code`, e.g. `card_declined`, `parameter_missing`, `resource_missing`.
    pub code: String,
    /// `error.message`, for humans.
    pub message: String,
    /// `error.param`: the offending parameter, nested names in bracket form
    /// (`payment_method[card][number]`).
    pub param: Option<String>,
    /// `error.decline_code` on card errors from the acquirer (`insufficient_funds`, …).
    pub decline_code: Option<String>,
    /// `error.payment`: the id of the `failed` payment a decline recorded.
    pub payment: Option<String>,
    /// `error.request_id` (else the `Request-Id` header): quote it when asking for help.
    pub request_id: Option<String>,
    /// The `Retry-After` header, on 429 (and whenever the server sends one).
    pub retry_after: Option<Duration>,
}

impl ApiError {
    /// A 402 `card_error`: the card was refused (by validation or by the bank).
    pub fn is_card_error(&self) -> bool {
        self.kind == ErrorType::CardError
    }
}

/// The envelope as it arrives.
#[derive(Deserialize)]
pub(crate) struct Envelope {
    pub error: WireError,
}

#[derive(Deserialize)]
pub(crate) struct WireError {
    #[serde(rename = "type")]
    pub kind: ErrorType,
    #[serde(default)]
    pub code: String,
    #[serde(default)]
    pub message: String,
    pub param: Option<String>,
    pub decline_code: Option<String>,
    pub payment: Option<String>,
    pub request_id: Option<String>,
}

/// Everything a call can fail with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The API answered with an error envelope (after any retries). Boxed: it is large and
    /// `Result`s travel far.
    #[error(transparent)]
    Api(Box<ApiError>),
    /// The request never got an HTTP answer: connection refused or reset, timeout, TLS (after
    /// any retries).
    #[error("transport error: {0}")]
    Transport(#[source] reqwest::Error),
    /// A non-2xx answer without the API's error envelope (a proxy's error page, say).
    #[error("unexpected {status} response: {body}")]
    UnexpectedResponse {
        status: u16,
        /// The first KiB of the body.
        body: String,
        request_id: Option<String>,
    },
    /// A 2xx answer whose body does not match the expected type.
    #[error("could not decode a {status} response: {source}")]
    Decode {
        status: u16,
        #[source]
        source: serde_json::Error,
    },
    /// An event stream received nothing, not even its keep-alive, for this long: the
    /// connection is presumed dead. Connect again with the last event id.
    #[error("the event stream was silent for {idle:?}")]
    Stalled { idle: Duration },
    /// Parameters that could not be encoded as JSON (map keys that are not strings, say).
    #[error("could not encode the request: {0}")]
    Encode(#[source] serde_json::Error),
}

impl From<ApiError> for Error {
    fn from(e: ApiError) -> Self {
        Error::Api(Box::new(e))
    }
}

impl Error {
    /// The API error, if the API answered with one.
    pub fn api(&self) -> Option<&ApiError> {
        match self {
            Error::Api(e) => Some(e),
            _ => None,
        }
    }

    /// The HTTP status, if there was an answer.
    pub fn status(&self) -> Option<u16> {
        match self {
            Error::Api(e) => Some(e.status),
            Error::UnexpectedResponse { status, .. } | Error::Decode { status, .. } => {
                Some(*status)
            }
            Error::Transport(e) => e.status().map(|s| s.as_u16()),
            Error::Encode(_) | Error::Stalled { .. } => None,
        }
    }

    /// `error.code`, if the API answered with an error.
    pub fn code(&self) -> Option<&str> {
        self.api().map(|e| e.code.as_str())
    }
}
