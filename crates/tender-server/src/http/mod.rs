//! The JSON API under `/v2`.
//!
//! # Layout
//! - [`pipeline`]: the middleware (request id, version, auth, rate limit, body, idempotency).
//! - [`cors`]: CORS on exactly the routes a publishable key may call, in both dialects.
//! - [`routes`]: THE route table (method, path, parser, handler, publishable), which everything
//!   that needs to know the routes reads; [`routes::decode`] runs a row's parser alone.
//! - [`operation`]: what a row of the table is (a parser joined to a handler), the request's
//!   [`operation::Input`], and the handlers all resources share (retrieve, list).
//! - [`params`]: reading JSON bodies and query strings into typed values with named errors.
//! - [`error`]: THE table from `CoreError` to status, `type` and `code`.
//! - one module per resource with its handlers and parsers: [`payments`], [`payment_methods`],
//!   [`customers`], [`refunds`], [`events`], [`webhook_endpoints`], [`connectors`],
//!   [`checkout`], [`payment_links`].
//! - [`openapi`]: the OpenAPI document, served at `/v2/openapi.json`.
//! - [`connector_webhooks`]: processors' webhooks, outside `/v2`, verified by signature.
//!
//! Handlers parse input into domain commands and call a service; they never see SQL.

pub mod balance;
pub mod billing;
pub mod checkout;
pub mod connector_webhooks;
pub mod connectors;
pub mod cors;
pub mod customers;
pub mod disputes;
pub mod error;
pub mod events;
pub mod openapi;
pub mod operation;
pub mod params;
pub mod payment_links;
pub mod payment_methods;
pub mod payments;
pub mod payouts;
pub mod pipeline;
pub mod refunds;
pub mod routes;
pub mod setup_intents;
pub mod webhook_endpoints;

use axum::http::StatusCode;
use axum::middleware;
use axum::response::Response;
use axum::Router;
use serde::Serialize;
use tender_core::error::CoreError;
use tender_core::services::RawPage;

use crate::state::AppState;
use axum::response::IntoResponse;
use error::{json_response, ApiError, HttpFailure};

pub type ApiResult = Result<Response, ApiError>;

/// The API router, mounted at `/v2` by the caller.
pub fn router(state: AppState) -> Router {
    let api = routes::ROUTES
        .iter()
        .fold(Router::new(), |api, route| {
            api.route(route.path, route.method_router())
        })
        .fallback(unknown_path)
        .layer(middleware::from_fn_with_state(
            state.clone(),
            pipeline::api_gate,
        ))
        .with_state(state);
    Router::new().merge(openapi::router()).nest("/v2", api)
}

/// 404 for a path no route serves, with a hint when it looks like another API version.
pub async fn unknown_path(
    method: axum::http::Method,
    axum::extract::OriginalUri(uri): axum::extract::OriginalUri,
) -> Response {
    let path = uri.path();
    let hint = match path.strip_prefix("/v1") {
        // A hint only to a route that exists: a Stripe path with no /v2 twin (charges,
        // payment_intents) is not sent to a second 404 (first-run review).
        Some(rest)
            if (rest.is_empty() || rest.starts_with('/'))
                && routes::resolve(method.as_str(), &format!("/v2{rest}")).is_some() =>
        {
            format!(" Tender's API is at /v2: try {method} /v2{rest}.")
        }
        Some(rest) if rest.is_empty() || rest.starts_with('/') => {
            " Tender's API is at /v2, which has no such operation: docs/api.md lists them.".into()
        }
        _ if path.ends_with('/') && path.len() > 1 => {
            format!(
                " Paths have no trailing slash: try {}.",
                path.trim_end_matches('/')
            )
        }
        _ => String::new(),
    };
    HttpFailure::RouteNotFound(format!("Unrecognized request URL ({method} {path}).{hint}"))
        .into_response()
}

/// 200 with a resource's JSON.
pub fn ok<T: Serialize>(value: &T) -> ApiResult {
    let body = serde_json::to_vec(value)
        .map_err(|e| ApiError(CoreError::internal("serialise a response", e)))?;
    Ok(json_response(StatusCode::OK, body))
}

/// 200 with a stored document as it is.
pub fn raw_response(body: String) -> Response {
    json_response(StatusCode::OK, body.into_bytes())
}

/// The list envelope around raw documents.
pub fn list_response(url: &str, page: RawPage) -> Response {
    let mut body = String::with_capacity(64 + page.data.iter().map(|d| d.len() + 1).sum::<usize>());
    body.push_str("{\"object\":\"list\",\"data\":[");
    body.push_str(&page.data.join(","));
    body.push_str("],\"has_more\":");
    body.push_str(if page.has_more { "true" } else { "false" });
    body.push_str(",\"url\":");
    body.push_str(&serde_json::to_string(url).unwrap_or_else(|_| "\"\"".into()));
    body.push('}');
    json_response(StatusCode::OK, body.into_bytes())
}
