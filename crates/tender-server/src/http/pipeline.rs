//! The middleware every API request passes through, outermost first:
//!
//! 1. [`request_id`]: a `req_…` id for the request (task-local for error bodies), the
//!    `Request-Id` and `Tender-Version` headers on every response, and JSON bodies for errors
//!    produced outside our handlers (405, panics).
//! 2. [`api_gate`]: `Tender-Version` check, authentication (401/403), the rate limit, the body
//!    rules (415, 413, malformed JSON) and the idempotency claim/replay/completion.

use axum::body::{Body, Bytes};
use axum::extract::{FromRequestParts, Request, State};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use base64::Engine;
use serde_json::Value;
use tender_core::auth::{KeyKind, Principal};
use tender_core::documents::idempotency::{Begun, Settled};
use tender_core::error::{AuthFailure, CoreError};
use tender_core::ids::{self, IdKind};
use tender_core::services::RequestContext;

use super::error::{json_response, ApiError, HttpFailure, REQUEST_ID};
use crate::state::AppState;

/// Largest request body (CONTRACT §4.10).
pub const MAX_BODY: usize = 64 * 1024;
/// The one API version (`Tender-Version`), the same that events carry.
pub use tender_core::event::API_VERSION;

/// Outermost layer: request id, standard headers, JSON for every error.
///
/// It also writes the one log line per request (id, method, route template, status, latency,
/// account) and records the request metrics. Bodies are never logged, so no card number can be.
pub async fn request_id(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let id = ids::generate(IdKind::Request);
    let started = std::time::Instant::now();
    let method = req.method().clone();
    let route = req
        .extensions()
        .get::<axum::extract::MatchedPath>()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| "unmatched".to_string());
    let mut resp = REQUEST_ID
        .scope(id.clone(), async move {
            let resp = next.run(req).await;
            jsonify_bare_errors(resp)
        })
        .await;
    let elapsed = started.elapsed();
    let status = resp.status().as_u16();
    let account = resp
        .extensions()
        .get::<tender_core::auth::Scope>()
        .map(|s| s.account.clone());
    tracing::info!(
        request_id = %id,
        method = %method,
        route = %route,
        status,
        // Two decimals: 0.73, not 0.7300000000000001.
        latency_ms = (elapsed.as_secs_f64() * 100_000.0).round() / 100.0,
        account = account.as_deref().unwrap_or("-"),
        "request"
    );
    state
        .metrics
        .observe_request(&route, method.as_str(), status, elapsed.as_secs_f64());
    let headers = resp.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&id) {
        headers.insert("request-id", v);
    }
    headers.insert("tender-version", HeaderValue::from_static(API_VERSION));
    resp
}

/// Errors made by the framework (405 with an empty body, 413 from a limit) become our envelope.
fn jsonify_bare_errors(resp: Response) -> Response {
    let status = resp.status();
    // JSON is already ours; HTML is the dashboard's own error page.
    let is_ours = resp.headers().get(header::CONTENT_TYPE).is_some_and(|v| {
        v.as_bytes().starts_with(b"application/json") || v.as_bytes().starts_with(b"text/html")
    });
    if is_ours || !(status.is_client_error() || status.is_server_error()) {
        return resp;
    }
    let failure = match status {
        StatusCode::METHOD_NOT_ALLOWED => HttpFailure::MethodNotAllowed,
        StatusCode::NOT_FOUND => HttpFailure::RouteNotFound("Unrecognized request URL.".into()),
        StatusCode::PAYLOAD_TOO_LARGE => HttpFailure::BodyTooLarge,
        StatusCode::UNSUPPORTED_MEDIA_TYPE => HttpFailure::UnsupportedMediaType,
        StatusCode::REQUEST_TIMEOUT => HttpFailure::BodyTimedOut,
        s if s.is_server_error() => HttpFailure::Internal,
        s => HttpFailure::Other(s),
    };
    failure.into_response()
}

/// The JSON body of a request, parsed once by [`api_gate`] (`{}` when empty). The handler takes
/// it out of the request and its `parse_*` consumes it into the command: no copy of it is made.
///
/// Why a `Value` first and not the command straight from the bytes: the idempotency fingerprint
/// is over the parameters (sorted keys, secrets as keyed digests), so a retry whose client
/// orders its keys differently is the same request; and the contract's errors name each
/// unknown parameter with a suggestion and each wrong type by its bracketed name
/// (`payment_method[card][exp_month]`), which `params.rs` reads off the tree.
#[derive(Clone)]
pub struct JsonBody(pub Value);

impl<S: Send + Sync> FromRequestParts<S> for JsonBody {
    type Rejection = ApiError;
    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(parts
            .extensions
            .remove::<JsonBody>()
            .unwrap_or_else(|| JsonBody(Value::Object(Default::default()))))
    }
}

/// The authenticated request context, put in place by [`api_gate`].
pub struct Ctx(pub RequestContext);

impl<S: Send + Sync> FromRequestParts<S> for Ctx {
    type Rejection = ApiError;
    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        parts
            .extensions
            .get::<RequestContext>()
            .cloned()
            .map(Ctx)
            .ok_or(ApiError(CoreError::Unauthenticated(AuthFailure::Missing)))
    }
}

/// The API key presented in `Authorization` (Bearer, or Basic with the key as user).
pub(crate) fn presented_key(headers: &HeaderMap) -> Result<String, CoreError> {
    let Some(value) = headers.get(header::AUTHORIZATION) else {
        return Err(CoreError::Unauthenticated(AuthFailure::Missing));
    };
    let malformed = |why| CoreError::Unauthenticated(AuthFailure::Malformed(why));
    let value = value
        .to_str()
        .map_err(|_| malformed("The Authorization header is not printable ASCII."))?
        .trim();
    let Some((scheme, rest)) = value.split_once(' ') else {
        return Err(if value.starts_with("sk_") || value.starts_with("pk_") {
            malformed(
                "The Authorization header carries a key without a scheme: put 'Bearer ' before it.",
            )
        } else {
            malformed("The Authorization header has no scheme.")
        });
    };
    let rest = rest.trim();
    if scheme.eq_ignore_ascii_case("bearer") {
        return Ok(rest.to_string());
    }
    if scheme.eq_ignore_ascii_case("basic") {
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(rest)
            .map_err(|_| malformed("The Basic credentials are not valid base64."))?;
        let decoded = String::from_utf8(decoded)
            .map_err(|_| malformed("The Basic credentials are not valid UTF-8."))?;
        let (user, password) = decoded.split_once(':').unwrap_or((&decoded, ""));
        if !password.is_empty() {
            return Err(malformed(
                "HTTP Basic must carry the key as user and an empty password.",
            ));
        }
        return Ok(user.to_string());
    }
    Err(malformed("Only the Bearer and Basic schemes are accepted."))
}

/// Version check, authentication, rate limit, body rules, idempotency.
pub async fn api_gate(State(state): State<AppState>, req: Request, next: Next) -> Response {
    match gate(state, req, next).await {
        Ok(resp) => resp,
        Err(resp) => resp,
    }
}

async fn gate(state: AppState, req: Request, next: Next) -> Result<Response, Response> {
    let (parts, body) = req.into_parts();
    // A method the path does not serve gets its 405 (from the router, with `Allow`) whatever
    // version it names, and without touching idempotency keys.
    let refused = parts
        .extensions
        .get::<axum::extract::MatchedPath>()
        .is_some_and(|p| super::routes::refuses(&parts.method, p.as_str()));
    if !refused {
        check_version(&parts.headers).map_err(|e| ApiError(e).into_response())?;
    }
    let principal = admit(&state, &parts).await?;
    let value = read_body(&parts, body).await?;
    let request_id = super::error::current_request_id();
    let ctx = RequestContext {
        client: browser_address(&principal, &parts),
        principal,
        request_id,
        idempotency: None,
    };
    let key = idempotency_key(&parts, refused).map_err(|e| ApiError(e).into_response())?;
    let path = parts.uri.path().to_string();
    run_idempotent(&state, ctx, key, &path, parts, value, next).await
}

/// The client's address when a browser calls (a publishable key): the card-testing guard
/// counts its declines (CONTRACT §14). Both dialects' gates ask it.
pub(crate) fn browser_address(
    principal: &tender_core::auth::Principal,
    parts: &axum::http::request::Parts,
) -> Option<String> {
    if principal.key_kind != tender_core::auth::KeyKind::Publishable {
        return None;
    }
    parts
        .extensions
        .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
        .map(|axum::extract::ConnectInfo(peer)| peer.ip().to_string())
}

/// Runs the operation (`next`) with the request context and parameters in place, under the
/// request's idempotency key if it has one: every rule of the claim, the replay and the answer
/// kept is `tender_core::documents::idempotency`'s; both dialects' gates end here, `path` being
/// the request's own (its fingerprint names it). The answer is the operation's, a replay of
/// the kept one, or another request's that took the key meanwhile.
pub(crate) async fn run_idempotent(
    state: &AppState,
    mut ctx: RequestContext,
    key: Option<String>,
    path: &str,
    mut parts: Parts,
    value: Value,
    next: Next,
) -> Result<Response, Response> {
    let mut claim = None;
    if let Some(key) = key {
        let begun = state
            .services
            .begin_idempotent(&ctx.principal, key, parts.method.as_str(), path, &value)
            .await
            .map_err(|e| ApiError(e).into_response())?;
        match begun {
            Begun::Run(c) => {
                ctx.idempotency = Some(c.hold());
                claim = Some(c);
            }
            Begun::Replay(stored) => return Ok(replay(stored)),
        }
    }

    let scope = ctx.scope().clone();
    parts.extensions.insert(ctx);
    parts.extensions.insert(JsonBody(value));
    // If this future is dropped here (the client hung up), dropping `claim` releases the key.
    let mut resp = next.run(Request::from_parts(parts, Body::empty())).await;
    // For the request log line.
    resp.extensions_mut().insert(scope);

    let Some(claim) = claim else { return Ok(resp) };
    // Whether the answer is kept, sent as it is, or replaced by another request's answer:
    // tender_core::documents::idempotency::Claim::settle.
    let (resp_parts, body) = resp.into_parts();
    let bytes = axum::body::to_bytes(body, usize::MAX)
        .await
        .unwrap_or_default();
    match claim.settle(resp_parts.status.as_u16(), &bytes).await {
        Settled::Send => Ok(Response::from_parts(resp_parts, Body::from(bytes))),
        Settled::Replay(stored) => Ok(replay(stored)),
        Settled::Refuse(e) => Err(ApiError(e).into_response()),
    }
}

/// A `Tender-Version` header, if given, names the one version there is.
fn check_version(headers: &HeaderMap) -> Result<(), CoreError> {
    match headers.get("tender-version") {
        Some(v) if v.as_bytes() != API_VERSION.as_bytes() => Err(CoreError::invalid(
            "Tender-Version",
            "api_version_invalid",
            format!("Unknown API version; the only version is {API_VERSION}."),
        )),
        _ => Ok(()),
    }
}

/// Who is asking: the key authenticated, allowed on this route (a publishable key only where
/// the route table says), and within its rate limit.
async fn admit(state: &AppState, parts: &Parts) -> Result<Principal, Response> {
    let principal: Principal = async {
        let key = presented_key(&parts.headers)?;
        state.services.accounts().authenticate(&key).await
    }
    .await
    .map_err(|e| ApiError(e).into_response())?;
    if principal.key_kind == KeyKind::Publishable
        && !super::routes::publishable(&parts.method, parts.uri.path())
    {
        return Err(ApiError(CoreError::SecretKeyRequired).into_response());
    }
    match over_rate_limit(state, &principal) {
        Some(resp) => Err(resp),
        None => Ok(principal),
    }
}

/// The account's rate limit (both dialects): `None` within it, else the 429 with
/// `Retry-After`.
pub(crate) fn over_rate_limit(state: &AppState, principal: &Principal) -> Option<Response> {
    let retry_after = state
        .rate_limiter
        .check(&principal.scope, principal.key_kind)
        .err()?;
    let mut resp = HttpFailure::RateLimited.into_response();
    resp.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(retry_after));
    Some(resp)
}

/// The request's JSON body (an empty object for a method without one, or an empty body):
/// bounded in size and time, `application/json`, well formed.
async fn read_body(parts: &Parts, body: Body) -> Result<Value, Response> {
    let has_body = matches!(
        parts.method,
        Method::POST | Method::PATCH | Method::DELETE | Method::PUT
    );
    let mut value = Value::Object(Default::default());
    if has_body {
        let declared = parts
            .headers
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if declared.is_some_and(|n| n > MAX_BODY as u64) {
            return Err(HttpFailure::BodyTooLarge.into_response());
        }
        let bytes: Bytes = axum::body::to_bytes(body, MAX_BODY).await.map_err(|e| {
            if crate::connection::is_body_timeout(&e) {
                HttpFailure::BodyTimedOut.into_response()
            } else {
                HttpFailure::BodyTooLarge.into_response()
            }
        })?;
        if !bytes.is_empty() {
            let json = parts
                .headers
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.split(';').next())
                .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"));
            if !json {
                return Err(HttpFailure::UnsupportedMediaType.into_response());
            }
            value = parse_json_body(&bytes).map_err(|e| ApiError(e).into_response())?;
        }
    }
    Ok(value)
}

/// The request's idempotency key, checked, when its method takes one.
pub(crate) fn idempotency_key(parts: &Parts, refused: bool) -> Result<Option<String>, CoreError> {
    match parts.headers.get("idempotency-key") {
        Some(k)
            if !refused
                && tender_core::documents::idempotency::applies_to(parts.method.as_str()) =>
        {
            tender_core::documents::idempotency::check_key(k.to_str().ok()).map(Some)
        }
        _ => Ok(None),
    }
}

/// A response kept under an idempotency key, sent again.
pub(crate) fn replay(stored: tender_core::store::StoredResponse) -> Response {
    let status = StatusCode::from_u16(stored.status).unwrap_or(StatusCode::OK);
    let mut resp = json_response(status, stored.body);
    resp.headers_mut()
        .insert("idempotent-replayed", HeaderValue::from_static("true"));
    resp
}

/// A non-empty request body as JSON: malformed JSON, invalid UTF-8 or nesting deeper than
/// serde_json's recursion limit (128) → 400 `invalid_json`.
pub fn parse_json_body(bytes: &[u8]) -> Result<Value, CoreError> {
    serde_json::from_slice(bytes).map_err(|e| CoreError::InvalidParam {
        param: None,
        code: "invalid_json",
        message: format!("Invalid JSON in the request body: {e}").into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_auth_takes_the_key_as_user_with_empty_password() {
        let mut h = HeaderMap::new();
        let enc = base64::engine::general_purpose::STANDARD.encode("sk_test_abc:");
        h.insert(
            header::AUTHORIZATION,
            HeaderValue::from_str(&format!("Basic {enc}")).unwrap(),
        );
        assert_eq!(presented_key(&h).unwrap(), "sk_test_abc");
        let enc = base64::engine::general_purpose::STANDARD.encode("sk_test_abc:pw");
        h.insert(
            header::AUTHORIZATION,
            HeaderValue::from_str(&format!("Basic {enc}")).unwrap(),
        );
        assert!(presented_key(&h).is_err());
    }
}
