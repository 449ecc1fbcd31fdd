//! `tender.js` and its card field (CONTRACT §14), served on the API listener beside `/v1`:
//!
//! | Address | What | Caching |
//! |---|---|---|
//! | `GET /v1/tender.js` | the library a shop's page loads (`Tender(pk)`, the card element, `createPaymentMethod`, `confirmCardPayment`, `confirmCardSetup`) | public, an hour, `ETag` |
//! | `GET /v1/elements/card?key=pk_…` | the card field: a page framed by the shop's page, holding the number, expiry and CVC | never: who may frame it is the account's setting |
//! | `GET /v1/elements/card.js` | the field's own script (tokenises to `/v1/payment_methods` on this origin) | public, an hour, `ETag` |
//!
//! The number never reaches the shop's page: it is typed into the frame, which is on Tender's
//! origin, and leaves the frame only in the tokenising request to that same origin. The frame
//! talks only to the page that framed it (its origin fixed by its first message) and tells it
//! what a shop may know (brand, completeness, the PaymentMethod). `/v1` is the library's
//! version: its calls stay as long as `/v1` does; `Tender.version` names the build.
//!
//! Depends on `tender-core`'s accounts (who may frame the field) only.

use std::sync::OnceLock;

use axum::extract::{Query, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use maud::{html, DOCTYPE};
use serde::Deserialize;
use sha2::{Digest, Sha256};

use crate::state::AppState;

const TENDER_JS: &str = include_str!("tender.js");
const CARD_JS: &str = include_str!("card.js");

/// The card field's look: one row, the number growing, expiry and CVC fixed.
const CARD_STYLE: &str = "html,body{margin:0;padding:0;background:transparent}\
.row{display:flex;gap:.5rem;align-items:center;border:1px solid #c9c9d6;border-radius:8px;padding:0 .75rem;height:44px;box-sizing:border-box;background:#fff}\
input{border:0;outline:0;font:16px system-ui,sans-serif;color:#1a1a2e;background:transparent;min-width:0;padding:0}\
#number{flex:1}#expiry{width:5.2em}#cvc{width:3.4em}input.bad{color:#c92a2a}\
.row:focus-within{border-color:#3b5bdb;box-shadow:0 0 0 3px rgba(59,91,219,.15)}";

pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/v1/tender.js", get(tender_js))
        .route("/v1/elements/card.js", get(card_js))
        .route("/v1/elements/card", get(card_field))
        .with_state(state)
}

async fn tender_js(headers: HeaderMap) -> Response {
    static TAG: OnceLock<String> = OnceLock::new();
    script(&headers, TENDER_JS, TAG.get_or_init(|| etag(TENDER_JS)))
}

async fn card_js(headers: HeaderMap) -> Response {
    static TAG: OnceLock<String> = OnceLock::new();
    script(&headers, CARD_JS, TAG.get_or_init(|| etag(CARD_JS)))
}

fn etag(body: &str) -> String {
    let digest = Sha256::digest(body.as_bytes());
    format!("\"{}\"", hex::encode(&digest[..12]))
}

/// A script any page may load, cached an hour and revalidated by its `ETag`.
fn script(request: &HeaderMap, body: &'static str, tag: &str) -> Response {
    let fresh = request
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == tag));
    let mut resp = match fresh {
        true => StatusCode::NOT_MODIFIED.into_response(),
        false => body.into_response(),
    };
    let headers = resp.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/javascript; charset=utf-8"),
    );
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=3600"),
    );
    if let Ok(tag) = HeaderValue::from_str(tag) {
        headers.insert(header::ETAG, tag);
    }
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    // Shops that isolate their pages (COEP) may still load it.
    headers.insert(
        "cross-origin-resource-policy",
        HeaderValue::from_static("cross-origin"),
    );
    resp
}

#[derive(Deserialize)]
struct FieldQuery {
    key: Option<String>,
}

/// The card field's page: the three inputs and the field's script, nothing else.
async fn card_field(
    State(state): State<AppState>,
    query: Result<Query<FieldQuery>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let key = query.ok().and_then(|q| q.0.key).unwrap_or_default();
    let ancestors = match frame_ancestors(&state, &key).await {
        Ok(a) => a,
        Err(reason) => return field_page(StatusCode::BAD_REQUEST, "'none'", Some(reason)),
    };
    field_page(StatusCode::OK, &ancestors, None)
}

/// Who may frame the field of the account `key` belongs to. An unknown or secret key frames
/// nothing.
async fn frame_ancestors(state: &AppState, key: &str) -> Result<String, &'static str> {
    if !key.starts_with("pk_") {
        return Err("This card field needs a publishable key.");
    }
    let principal = state
        .services
        .accounts()
        .authenticate(key)
        .await
        .map_err(|_| "This card field's key is not valid.")?;
    Ok(ancestors(state, &principal.scope.account).await)
}

/// Who may frame an account's card field and its 3-D Secure page: the shop origins it listed,
/// or any page (CONTRACT §14); nothing when its settings cannot be read.
pub(crate) async fn ancestors(state: &AppState, account: &str) -> String {
    match state.services.accounts().checkout_settings(account).await {
        Ok(s) if !s.frame_origins.is_empty() => s.frame_origins.join(" "),
        Ok(_) => "*".to_string(),
        Err(_) => "'none'".to_string(),
    }
}

fn field_page(status: StatusCode, ancestors: &str, problem: Option<&str>) -> Response {
    let markup = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { "Card" }
                style { (CARD_STYLE) }
            }
            body {
                @if let Some(problem) = problem {
                    p { (problem) }
                } @else {
                    div.row {
                        input #number inputmode="numeric" autocomplete="cc-number" placeholder="Card number" aria-label="Card number" maxlength="23";
                        input #expiry inputmode="numeric" autocomplete="cc-exp" placeholder="MM / YY" aria-label="Expiry date" maxlength="7";
                        input #cvc inputmode="numeric" autocomplete="cc-csc" placeholder="CVC" aria-label="Security code" maxlength="4";
                    }
                    script src="/v1/elements/card.js" {}
                }
            }
        }
    };
    let mut resp = (status, axum::response::Html(markup.into_string())).into_response();
    let csp = format!(
        "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'unsafe-inline'; \
         base-uri 'none'; form-action 'none'; frame-ancestors {ancestors}"
    );
    let headers = resp.headers_mut();
    // Origins were checked when set; were one not a header's text, no page may frame it.
    let csp = HeaderValue::from_str(&csp).unwrap_or(HeaderValue::from_static(
        "default-src 'none'; frame-ancestors 'none'",
    ));
    headers.insert(header::CONTENT_SECURITY_POLICY, csp);
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    resp
}
