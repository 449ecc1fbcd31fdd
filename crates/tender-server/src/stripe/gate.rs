//! The middleware every `/v1` request passes through (inside the request-id layer, which
//! adds `Request-Id`): the operation looked up in the `/v1` route table (none: Stripe's 404),
//! authentication (a publishable key only where the table allows; else 401, as Stripe), the
//! rate limit, the parameters (form-encoded body, or query string for `GET` and `DELETE`;
//! JSON is refused), `expand[]` taken out and checked, then idempotency exactly as `/v2`
//! (`tender_core::documents::idempotency`: the same store, fingerprint over the decoded
//! parameters and the `/v1` path). The operation answers as `/v2` would; that answer (or
//! the one a key kept) is what is kept and replayed, and [`super::answer::show`] shows it in
//! Stripe's shape on the way out. `Stripe-Version` is echoed (or set to the one shape
//! Tender answers in).

use axum::body::{Body, Bytes};
use axum::extract::{OriginalUri, Request, State};
use axum::http::request::Parts;
use axum::http::{header, HeaderValue, Method};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use tender_core::auth::{KeyKind, Principal, Scope};
use tender_core::error::CoreError;
use tender_core::services::RequestContext;
use tender_core::stripe::API_VERSION;

use super::answer::{self, check_expand, keep_headers};
use super::form;
use super::routes::{self, Caller, StripeRoute};
use crate::http::error::ApiError;
use crate::http::params::Params;
use crate::http::pipeline::{
    idempotency_key, over_rate_limit, presented_key, run_idempotent, MAX_BODY,
};
use crate::state::AppState;

/// Most `expand[]` entries a request may give.
const MAX_EXPAND: usize = 10;

/// What the gate knows once the request is admitted, to show the answer.
struct Admitted {
    route: &'static StripeRoute,
    /// The `{id}` of the path, as sent.
    id: Option<String>,
    scope: Option<Scope>,
    expand: Vec<String>,
    /// Asked with a publishable key: the answer is the part a browser may see.
    publishable: bool,
}

pub async fn stripe_gate(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let version = req
        .headers()
        .get("stripe-version")
        .filter(|v| !v.is_empty() && v.len() <= 64)
        .cloned()
        .unwrap_or(HeaderValue::from_static(API_VERSION));
    let path = match req.extensions().get::<OriginalUri>() {
        Some(OriginalUri(uri)) => uri.path().to_string(),
        None => req.uri().path().to_string(),
    };
    let method = req.method().clone();
    let mut resp = match routes::resolve(method.as_str(), path.strip_prefix("/v1").unwrap_or(&path))
    {
        None => super::not_served(method.as_str(), &path),
        Some((route, id)) => {
            let mut admitted = Admitted {
                route,
                id: id.map(str::to_string),
                scope: None,
                expand: Vec::new(),
                publishable: false,
            };
            let v2 = run(&state, &mut admitted, req, next).await;
            show(&state, &admitted, v2).await
        }
    };
    resp.headers_mut().insert("stripe-version", version);
    resp
}

/// The `/v2` answer `v2` in Stripe's shape, with the headers a client needs kept.
async fn show(state: &AppState, admitted: &Admitted, v2: Response) -> Response {
    let (parts, body) = v2.into_parts();
    let bytes = axum::body::to_bytes(body, usize::MAX)
        .await
        .unwrap_or_default();
    let shown = answer::show(
        state,
        admitted.scope.as_ref(),
        admitted.route.answer,
        &admitted.expand,
        admitted.publishable,
        parts.status,
        &bytes,
    )
    .await;
    let mut shown = keep_headers(shown, &parts.headers);
    shown.extensions_mut().extend(parts.extensions);
    shown
}

/// Admission, parameters and idempotency around the operation: its answer as `/v2` gives it.
async fn run(state: &AppState, admitted: &mut Admitted, req: Request, next: Next) -> Response {
    match try_run(state, admitted, req, next).await {
        Ok(resp) | Err(resp) => resp,
    }
}

async fn try_run(
    state: &AppState,
    admitted: &mut Admitted,
    req: Request,
    next: Next,
) -> Result<Response, Response> {
    let (parts, body) = req.into_parts();
    let principal = admit(state, &parts, admitted.route).await?;
    admitted.scope = Some(principal.scope.clone());
    admitted.publishable = principal.key_kind == KeyKind::Publishable;
    let mut params = read_params(&parts, body).await.map_err(err)?;
    if admitted.route.caller == Caller::ClientSecret {
        check_client_secret(state, admitted, &mut params).map_err(err)?;
    }
    let expand = take_expand(&mut params).map_err(err)?;
    admitted.expand = check_expand(admitted.route.answer, &expand).map_err(err)?;
    let ctx = RequestContext {
        client: crate::http::pipeline::browser_address(&principal, &parts),
        principal,
        request_id: crate::http::error::current_request_id(),
        idempotency: None,
    };
    let key = idempotency_key(&parts, false).map_err(err)?;
    // The path as requested, `/v1` and all: the fingerprint tells the dialects apart.
    let path = match parts.extensions.get::<OriginalUri>() {
        Some(OriginalUri(uri)) => uri.path().to_string(),
        None => parts.uri.path().to_string(),
    };
    run_idempotent(state, ctx, key, &path, parts, params, next).await
}

fn err(e: CoreError) -> Response {
    ApiError(e).into_response()
}

/// The key authenticated, allowed on this operation, within its rate limit.
async fn admit(
    state: &AppState,
    parts: &Parts,
    route: &StripeRoute,
) -> Result<Principal, Response> {
    let principal = async {
        let key = presented_key(&parts.headers)?;
        state.services.accounts().authenticate(&key).await
    }
    .await
    .map_err(err)?;
    if principal.key_kind == KeyKind::Publishable && route.caller == Caller::Secret {
        return Err(err(CoreError::SecretKeyRequired));
    }
    match over_rate_limit(state, &principal) {
        Some(resp) => Err(resp),
        None => Ok(principal),
    }
}

/// The request's parameters: the form-encoded body of a `POST`, the query string of a `GET`
/// or `DELETE` (as Stripe's SDKs send them); bounded in size and time.
async fn read_params(parts: &Parts, body: Body) -> Result<Value, CoreError> {
    if parts.method != Method::POST {
        return form::decode(parts.uri.query().unwrap_or_default().as_bytes());
    }
    if parts.uri.query().is_some_and(|q| !q.is_empty()) {
        return Err(CoreError::invalid(
            "query",
            "parameter_invalid",
            "A POST takes its parameters in the form-encoded body, not the query string.",
        ));
    }
    let too_large = || {
        CoreError::invalid(
            "body",
            "parameter_invalid",
            "The request body is larger than 64 KiB.",
        )
    };
    let declared = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_BODY as u64) {
        return Err(too_large());
    }
    let bytes: Bytes = axum::body::to_bytes(body, MAX_BODY)
        .await
        .map_err(|_| too_large())?;
    if bytes.is_empty() {
        return Ok(Value::Object(Default::default()));
    }
    let content_type = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|v| v.trim().to_ascii_lowercase())
        .unwrap_or_default();
    if content_type != "application/x-www-form-urlencoded" {
        return Err(CoreError::invalid(
            "body",
            "parameter_invalid",
            "Tender's /v1 takes form-encoded parameters (Content-Type: application/x-www-form-urlencoded), as Stripe's API does; JSON bodies are for /v2.",
        ));
    }
    form::decode(&bytes)
}

/// `client_secret`, taken out of the parameters: required with a publishable key, and then the
/// intent's (else 404, as if it did not exist: a wrong secret learns nothing); with a secret
/// key, checked when given.
fn check_client_secret(
    state: &AppState,
    admitted: &Admitted,
    params: &mut Value,
) -> Result<(), CoreError> {
    let given = params
        .as_object_mut()
        .and_then(|m| m.remove("client_secret"));
    let id = admitted.id.as_deref().unwrap_or_default();
    let payment = tender_core::stripe::ids::tender(id);
    let kind = match id.starts_with("seti_") {
        true => "setup_intent",
        false => "payment_intent",
    };
    let missing = || CoreError::NotFound {
        kind,
        id: id.to_string(),
    };
    match given {
        None if admitted.publishable => Err(CoreError::invalid(
            "client_secret",
            "parameter_missing",
            "A publishable key needs the intent's client_secret.",
        )),
        None => Ok(()),
        Some(Value::String(secret))
            if state
                .services
                .stripe_shapes()
                .client_secret_matches(&payment, &secret) =>
        {
            Ok(())
        }
        Some(_) => Err(missing()),
    }
}

/// `expand` (`expand[]=a` or `expand[0]=a`), taken out of the parameters.
fn take_expand(params: &mut Value) -> Result<Vec<String>, CoreError> {
    let Some(map) = params.as_object_mut() else {
        return Ok(Vec::new());
    };
    let Some(expand) = map.remove("expand") else {
        return Ok(Vec::new());
    };
    let mut wrapper = serde_json::Map::new();
    wrapper.insert("expand".into(), expand);
    let mut p = Params::form(Value::Object(wrapper), &["expand"])?;
    Ok(p.strings("expand", MAX_EXPAND)?.unwrap_or_default())
}
