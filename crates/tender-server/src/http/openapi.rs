//! `GET /v2/openapi.json`: the OpenAPI 3.1 document of the API, served without a key.
//!
//! The document is `docs/openapi.json`, kept by hand and compiled in. `tests/openapi.rs` holds
//! it to the router both ways (every documented operation is routed, every `.route(…)` of the
//! `http` modules is documented) and validates real responses against its schemas; CI runs
//! schemathesis against a live server with it (`scripts/schemathesis.sh`).

use std::collections::HashSet;
use std::sync::LazyLock;

use axum::http::{header, HeaderValue, Method, StatusCode};
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

/// `(path, method)` of every documented operation, e.g. `("/v2/payments/{id}", "POST")`.
static OPERATIONS: LazyLock<HashSet<(String, String)>> = LazyLock::new(|| {
    let doc: serde_json::Value = serde_json::from_str(DOCUMENT).unwrap_or_default();
    let mut out = HashSet::new();
    if let Some(paths) = doc.get("paths").and_then(|p| p.as_object()) {
        for (path, item) in paths {
            for method in item.as_object().into_iter().flat_map(|m| m.keys()) {
                out.insert((format!("/v2{path}"), method.to_ascii_uppercase()));
            }
        }
    }
    out
});

/// Whether `method` on the matched route `path` (`/v2/payments/{id}`) is one the router will
/// answer with 405: the path is documented and the method is not. The pipeline uses it to
/// leave such requests out of idempotency (their 405 is neither kept nor replayed).
pub fn refuses(method: &Method, path: &str) -> bool {
    let ops = &*OPERATIONS;
    let method = method.as_str();
    // HEAD is served wherever GET is.
    let method = if method == "HEAD" { "GET" } else { method };
    ops.iter().any(|(p, _)| p == path) && !ops.contains(&(path.to_string(), method.to_string()))
}
