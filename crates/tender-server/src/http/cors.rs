//! CORS (CONTRACT §14): a shop's page, on its own origin, calls Tender from the browser with a
//! publishable key — to tokenise a card, or to read and confirm the intent it was given with its
//! `client_secret`. Exactly those routes answer CORS: the `/v2` rows marked `publishable` and
//! the `/v1` rows a publishable key may call ([`crate::stripe::routes::Caller`]). A preflight
//! (`OPTIONS` with `Access-Control-Request-Method`) to one of them is answered here, before any
//! authentication (a browser sends none with it); their answers, errors included, carry
//! `Access-Control-Allow-Origin: *`. Any origin, never credentials: a publishable key is
//! public, and a secret key never belongs in a browser, so no secret-key route answers a
//! preflight or names an origin, and a browser refuses to show its answer to a page.
//!
//! Depends on the two route tables only.

use axum::extract::Request;
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// What a browser may send to those routes besides the simple headers.
const ALLOWED_HEADERS: &str =
    "Authorization, Content-Type, Idempotency-Key, Stripe-Version, Tender-Version";
/// What a page may read of their answers besides the simple headers.
const EXPOSED_HEADERS: &str = "Request-Id, Idempotent-Replayed, Tender-Version, Retry-After";
/// How long a browser may keep a preflight's answer.
const MAX_AGE_SECS: &str = "600";

/// Whether a publishable key may make the request `method path` (in either dialect).
pub fn open_to_browsers(method: &Method, path: &str) -> bool {
    if let Some(rest) = path.strip_prefix("/v1") {
        return crate::stripe::routes::resolve(method.as_str(), rest)
            .is_some_and(|(route, _)| route.caller != crate::stripe::routes::Caller::Secret);
    }
    super::routes::publishable(method, path)
}

/// The layer: answers the preflights of the routes open to browsers, and marks their answers.
pub async fn cors(req: Request, next: Next) -> Response {
    let path = req.uri().path().to_string();
    if req.method() == Method::OPTIONS {
        let asked = req
            .headers()
            .get(header::ACCESS_CONTROL_REQUEST_METHOD)
            .and_then(|m| m.to_str().ok())
            .and_then(|m| Method::from_bytes(m.as_bytes()).ok());
        if let Some(method) = asked.filter(|m| open_to_browsers(m, &path)) {
            return preflight(&method);
        }
        return next.run(req).await;
    }
    let open = open_to_browsers(req.method(), &path);
    let mut resp = next.run(req).await;
    if open {
        let headers = resp.headers_mut();
        headers.insert(
            header::ACCESS_CONTROL_ALLOW_ORIGIN,
            HeaderValue::from_static("*"),
        );
        headers.insert(
            header::ACCESS_CONTROL_EXPOSE_HEADERS,
            HeaderValue::from_static(EXPOSED_HEADERS),
        );
    }
    resp
}

/// `204` allowing `method` from any origin, without credentials.
fn preflight(method: &Method) -> Response {
    let mut resp = StatusCode::NO_CONTENT.into_response();
    let headers = resp.headers_mut();
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    if let Ok(m) = HeaderValue::from_str(method.as_str()) {
        headers.insert(header::ACCESS_CONTROL_ALLOW_METHODS, m);
    }
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_HEADERS,
        HeaderValue::from_static(ALLOWED_HEADERS),
    );
    headers.insert(
        header::ACCESS_CONTROL_MAX_AGE,
        HeaderValue::from_static(MAX_AGE_SECS),
    );
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_routes_a_publishable_key_may_call_are_open_to_browsers() {
        assert!(open_to_browsers(&Method::POST, "/v2/payment_methods"));
        assert!(open_to_browsers(&Method::POST, "/v1/payment_methods"));
        assert!(open_to_browsers(&Method::GET, "/v1/payment_intents/pi_abc"));
        assert!(open_to_browsers(
            &Method::POST,
            "/v1/payment_intents/pi_abc/confirm"
        ));
        assert!(open_to_browsers(
            &Method::POST,
            "/v1/setup_intents/seti_abc/confirm"
        ));
        for (method, path) in [
            (Method::GET, "/v2/payment_methods"),
            (Method::POST, "/v2/payments"),
            (Method::POST, "/v1/customers"),
            (Method::POST, "/v1/payment_intents"),
            (Method::POST, "/v1/payment_intents/pi_abc/capture"),
            (Method::GET, "/v1/balance"),
            (Method::GET, "/dashboard"),
        ] {
            assert!(!open_to_browsers(&method, path), "{method} {path}");
        }
    }
}
