//! `GET /v2/openapi.json`: the OpenAPI 3.1 document of the API, served without a key.
//!
//! The document is `docs/openapi.json`, kept by hand and compiled in. `tests/openapi.rs` holds
//! it to the route table both ways (every documented operation is routed, every row of
//! [`super::routes::ROUTES`] is documented) and validates real responses against its schemas; CI runs
//! schemathesis against a live server with it (`scripts/schemathesis.sh`).

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;

/// The document, byte for byte as in the repository.
pub const DOCUMENT: &str = include_str!("../../../../docs/openapi.json");

/// Where it is served (outside the authenticating layer).
pub const PATH: &str = "/v2/openapi.json";

/// A router with the one public route; merged next to the `/v2` nest.
pub fn router<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new().route(PATH, get(document))
}

async fn document() -> Response {
    let mut resp = (StatusCode::OK, DOCUMENT).into_response();
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    resp
}
