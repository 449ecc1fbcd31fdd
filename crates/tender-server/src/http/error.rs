//! THE mapping from domain errors to the wire (CONTRACT §4.7): one table, [`wire`], used both
//! for live responses and for the bytes kept under idempotency keys.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Map, Value};
use tender_core::error::{AuthFailure, CoreError};
use tender_core::service::ResponseEncoder;
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
pub struct Wire {
    pub status: StatusCode,
    pub kind: &'static str,
    pub code: &'static str,
}

/// The table: status, `type` and `code` for every domain error.
pub fn wire(err: &CoreError) -> Wire {
    use CoreError::*;
    let (status, kind, code) = match err {
        InvalidParam { code, .. } => (StatusCode::BAD_REQUEST, "invalid_request_error", *code),
        NotFound { .. } => (
            StatusCode::NOT_FOUND,
            "invalid_request_error",
            "resource_missing",
        ),
        Card { code, .. } => (StatusCode::PAYMENT_REQUIRED, "card_error", *code),
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
        Store(_) | Acquirer(_) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            "api_error",
            "internal_error",
        ),
    };
    Wire { status, kind, code }
}

/// The error envelope for `err` under `request_id`.
pub fn error_body(err: &CoreError, request_id: &str) -> (StatusCode, Vec<u8>) {
    let w = wire(err);
    let message = if w.status.is_server_error() {
        "An internal error occurred; the request id identifies it in our logs.".to_string()
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
                e.insert("payment".into(), json!(p));
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
        if matches!(self.0, CoreError::Store(_) | CoreError::Acquirer(_)) {
            let mut chain = format!("{}", self.0);
            let mut source = std::error::Error::source(&self.0);
            while let Some(s) = source {
                chain.push_str(&format!(": {s}"));
                source = s.source();
            }
            tracing::error!(request_id = %request_id, error = %chain, "request failed");
        }
        let (status, body) = error_body(&self.0, &request_id);
        let mut resp = json_response(status, body);
        if status == StatusCode::UNAUTHORIZED {
            resp.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Basic realm=\"Tender\""),
            );
        }
        resp
    }
}

/// A 400/404/405/413/415 that is not a domain error but an HTTP one.
pub fn http_error(status: StatusCode, code: &'static str, message: &str) -> Response {
    let body = json!({"error": {
        "type": "invalid_request_error",
        "code": code,
        "message": message,
        "request_id": current_request_id(),
    }});
    json_response(status, serde_json::to_vec(&body).unwrap_or_default())
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
                let (status, body) = error_body(err, request_id);
                StoredResponse {
                    status: status.as_u16(),
                    body,
                }
            }
        }
    }
}
