//! THE mapping from errors to the wire (CONTRACT §4.7): one table, [`wire`], for the domain's
//! errors ([`CoreError`]) and the HTTP layer's own ([`HttpFailure`]: 404 of an unknown path,
//! 405, 408, 413, 415, 429, panics; 503 when the database is unreachable, with `Retry-After`),
//! and one envelope builder, [`error_body`], used for live
//! responses and for the bytes kept under idempotency keys. Internal errors are logged here,
//! once, with their whole cause chain.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Map, Value};
use tender_core::error::{AuthFailure, CoreError, StoreError};
use tender_core::ids::IdKind;
use tender_core::services::ResponseEncoder;
use tender_core::store::StoredResponse;

tokio::task_local! {
    /// The id of the request being served, set by the request-id middleware so that error
    /// bodies can carry it without threading it through every function.
    pub static REQUEST_ID: String;
}

/// The request id of the current task, or a fresh one outside a request.
pub fn current_request_id() -> String {
    REQUEST_ID
        .try_with(Clone::clone)
        .unwrap_or_else(|_| tender_core::ids::generate(tender_core::ids::IdKind::Request))
}

/// How an error appears on the wire.
pub struct Wire<'a> {
    pub status: StatusCode,
    pub kind: &'static str,
    pub code: &'a str,
}

/// A failure of the HTTP layer itself, not of a use case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HttpFailure {
    /// No route has this path; the message may carry a hint (`/v1` → `/v2`, a trailing slash).
    RouteNotFound(String),
    MethodNotAllowed,
    /// The body did not arrive within the deadline.
    BodyTimedOut,
    BodyTooLarge,
    UnsupportedMediaType,
    /// The account's rate limit; the response also carries `Retry-After`.
    RateLimited,
    /// The account (in this mode) already has its most event streams open, or the listener
    /// its share of them (CONTRACT §17); the response also carries `Retry-After`.
    TooManyStreams,
    /// A panic, or a 5xx the framework made.
    Internal,
    /// Any other 4xx the framework made.
    Other(StatusCode),
}

/// Anything that is answered with an error envelope.
#[derive(Debug, Clone, Copy)]
pub enum Failure<'a> {
    Core(&'a CoreError),
    Http(&'a HttpFailure),
}

/// The table: status, `type` and `code` for every error.
pub fn wire(failure: Failure<'_>) -> Wire<'_> {
    match failure {
        Failure::Core(err) => wire_core(err),
        Failure::Http(http) => wire_http(http),
    }
}

/// The table's rows for the core's errors.
fn wire_core(err: &CoreError) -> Wire<'_> {
    use CoreError::*;
    let (status, kind, code) = match err {
        InvalidParam { code, .. } => (StatusCode::BAD_REQUEST, "invalid_request_error", *code),
        NotFound { .. } => (
            StatusCode::NOT_FOUND,
            "invalid_request_error",
            "resource_missing",
        ),
        Card { code, .. } => (StatusCode::PAYMENT_REQUIRED, "card_error", code.as_ref()),
        Blocked { code, .. } => (StatusCode::TOO_MANY_REQUESTS, "rate_limit_error", *code),
        UnexpectedState { .. } => (
            StatusCode::BAD_REQUEST,
            "invalid_request_error",
            "payment_unexpected_state",
        ),
        IdempotencyMismatch => (
            StatusCode::BAD_REQUEST,
            "idempotency_error",
            "idempotency_key_reused",
        ),
        IdempotencyInProgress => (
            StatusCode::CONFLICT,
            "idempotency_error",
            "idempotency_key_in_use",
        ),
        Unauthenticated(AuthFailure::Missing) => (
            StatusCode::UNAUTHORIZED,
            "authentication_error",
            "api_key_missing",
        ),
        Unauthenticated(
            AuthFailure::Invalid | AuthFailure::Unknown { .. } | AuthFailure::Malformed(_),
        ) => (
            StatusCode::UNAUTHORIZED,
            "authentication_error",
            "api_key_invalid",
        ),
        Unauthenticated(AuthFailure::Expired) => (
            StatusCode::UNAUTHORIZED,
            "authentication_error",
            "api_key_expired",
        ),
        SecretKeyRequired => (
            StatusCode::FORBIDDEN,
            "permission_error",
            "secret_key_required",
        ),
        ProcessorUnavailable(_) => (
            StatusCode::BAD_GATEWAY,
            "api_error",
            "processor_unavailable",
        ),
        // The database is unreachable or not the primary (a failover): retry the same request.
        Store(StoreError::Unavailable { .. }) => (
            StatusCode::SERVICE_UNAVAILABLE,
            "api_error",
            "service_unavailable",
        ),
        Store(_) | Acquirer(_) | Internal { .. } => (
            StatusCode::INTERNAL_SERVER_ERROR,
            "api_error",
            "internal_error",
        ),
    };
    Wire { status, kind, code }
}

/// The table's rows for what the HTTP layer refuses itself.
fn wire_http(http: &HttpFailure) -> Wire<'static> {
    let (status, kind, code) = match http {
        HttpFailure::RouteNotFound(_) => (
            StatusCode::NOT_FOUND,
            "invalid_request_error",
            "resource_missing",
        ),
        HttpFailure::MethodNotAllowed => (
            StatusCode::METHOD_NOT_ALLOWED,
            "invalid_request_error",
            "method_not_allowed",
        ),
        HttpFailure::BodyTimedOut => (
            StatusCode::REQUEST_TIMEOUT,
            "invalid_request_error",
            "request_timeout",
        ),
        HttpFailure::BodyTooLarge => (
            StatusCode::PAYLOAD_TOO_LARGE,
            "invalid_request_error",
            "body_too_large",
        ),
        HttpFailure::UnsupportedMediaType => (
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "invalid_request_error",
            "unsupported_media_type",
        ),
        HttpFailure::RateLimited => (
            StatusCode::TOO_MANY_REQUESTS,
            "rate_limit_error",
            "rate_limit",
        ),
        HttpFailure::TooManyStreams => (
            StatusCode::TOO_MANY_REQUESTS,
            "rate_limit_error",
            "too_many_streams",
        ),
        HttpFailure::Internal => (
            StatusCode::INTERNAL_SERVER_ERROR,
            "api_error",
            "internal_error",
        ),
        HttpFailure::Other(status) => (*status, "invalid_request_error", "invalid_request"),
    };
    Wire { status, kind, code }
}

/// The message of an HTTP-layer failure.
fn http_message(failure: &HttpFailure) -> String {
    match failure {
        HttpFailure::RouteNotFound(message) => message.clone(),
        HttpFailure::MethodNotAllowed => "This method is not allowed on this path.".into(),
        HttpFailure::BodyTimedOut => "The request body did not arrive in time (30 seconds).".into(),
        HttpFailure::BodyTooLarge => "The request body is larger than 64 KiB.".into(),
        HttpFailure::UnsupportedMediaType => {
            "Request bodies must be sent as Content-Type: application/json.".into()
        }
        HttpFailure::RateLimited => {
            "Too many requests; slow down and retry after the Retry-After seconds.".into()
        }
        HttpFailure::TooManyStreams => format!(
            "At most {} event streams may be open per account and mode; close one (or retry after the Retry-After seconds).",
            crate::streams::PER_SCOPE
        ),
        HttpFailure::Internal => INTERNAL_MESSAGE.into(),
        HttpFailure::Other(_) => "The request could not be handled.".into(),
    }
}

const UNAVAILABLE_MESSAGE: &str = "The service cannot reach its database just now (it may be failing over). Retry the request with the same Idempotency-Key: it is then done exactly once.";

const INTERNAL_MESSAGE: &str =
    "An internal error occurred; the request id identifies it in our logs.";

/// The error envelope for `failure` under `request_id`.
pub fn error_body(failure: Failure<'_>, request_id: &str) -> (StatusCode, Vec<u8>) {
    let w = wire(failure);
    let err = match failure {
        Failure::Core(err) => err,
        Failure::Http(http) => {
            let body = json!({"error": {
                "type": w.kind,
                "code": w.code,
                "message": http_message(http),
                "request_id": request_id,
            }});
            return (w.status, serde_json::to_vec(&body).unwrap_or_default());
        }
    };
    let message = if w.status == StatusCode::INTERNAL_SERVER_ERROR {
        INTERNAL_MESSAGE.to_string()
    } else if w.status == StatusCode::SERVICE_UNAVAILABLE {
        UNAVAILABLE_MESSAGE.to_string()
    } else if let CoreError::Unauthenticated(f) = err {
        match f {
            AuthFailure::Missing => "No API key provided. Use 'Authorization: Bearer sk_…' or HTTP Basic with the key as user.".into(),
            AuthFailure::Invalid => "Invalid API key provided.".into(),
            AuthFailure::Unknown { redacted } => format!("Invalid API key provided: {redacted}."),
            AuthFailure::Malformed(why) => format!(
                "{why} Send 'Authorization: Bearer sk_…', or HTTP Basic with the key as user and an empty password."
            ),
            AuthFailure::Expired => "This API key has expired; use the key that replaced it.".into(),
        }
    } else {
        err.to_string()
    };
    let mut e = Map::new();
    e.insert("type".into(), json!(w.kind));
    e.insert("code".into(), json!(w.code));
    e.insert("message".into(), json!(message));
    match err {
        CoreError::InvalidParam { param: Some(p), .. } => {
            e.insert("param".into(), json!(p));
        }
        CoreError::Card {
            decline_code,
            param,
            payment,
            ..
        } => {
            if let Some(p) = param {
                e.insert("param".into(), json!(p));
            }
            if let Some(d) = decline_code {
                e.insert("decline_code".into(), json!(d));
            }
            if let Some(p) = payment {
                // The object the decline belongs to: a payment, or a setup intent.
                let key = match p.starts_with(IdKind::SetupIntent.prefix()) {
                    true => "setup_intent",
                    false => "payment",
                };
                e.insert(key.into(), json!(p));
            }
        }
        _ => {}
    }
    e.insert("request_id".into(), json!(request_id));
    let body = serde_json::to_vec(&json!({ "error": Value::Object(e) })).unwrap_or_default();
    (w.status, body)
}

/// A JSON response from bytes.
pub fn json_response(status: StatusCode, body: Vec<u8>) -> Response {
    let mut resp = (status, body).into_response();
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    resp
}

/// The success body for a resource.
pub fn ok_body(value: &Value) -> Vec<u8> {
    serde_json::to_vec(value).unwrap_or_default()
}

/// A domain error on its way to the client.
#[derive(Debug)]
pub struct ApiError(pub CoreError);

impl From<CoreError> for ApiError {
    fn from(e: CoreError) -> Self {
        ApiError(e)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let request_id = current_request_id();
        if self.0.is_internal() {
            tracing::error!(
                request_id = %request_id,
                error = %tender_core::error::error_chain(&self.0),
                "request failed"
            );
        }
        let (status, body) = error_body(Failure::Core(&self.0), &request_id);
        let mut resp = json_response(status, body);
        if status == StatusCode::SERVICE_UNAVAILABLE {
            resp.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        if status == StatusCode::UNAUTHORIZED {
            resp.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Basic realm=\"Tender\""),
            );
        }
        resp
    }
}

impl IntoResponse for HttpFailure {
    fn into_response(self) -> Response {
        let (status, body) = error_body(Failure::Http(&self), &current_request_id());
        let mut resp = json_response(status, body);
        if matches!(self, HttpFailure::BodyTimedOut | HttpFailure::BodyTooLarge) {
            // The rest of the body is not read, so the connection cannot carry another request
            // (CONTRACT §12): without the header a keep-alive client would send its next
            // request into a connection the server is closing.
            resp.headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
        resp
    }
}

/// The HTTP layer's encoder for idempotent responses: the same table as live responses.
pub struct WireEncoder;

impl ResponseEncoder for WireEncoder {
    fn encode(&self, result: Result<&Value, &CoreError>, request_id: &str) -> StoredResponse {
        match result {
            Ok(value) => StoredResponse {
                status: 200,
                body: ok_body(value),
            },
            Err(err) => {
                let (status, body) = error_body(Failure::Core(err), request_id);
                StoredResponse {
                    status: status.as_u16(),
                    body,
                }
            }
        }
    }
}
