//! The receipt host (a separate listener): `GET /{payment_id}` renders a payment's receipt.
//!
//! Receipts need no login: payment ids are unguessable. The page is plain server-rendered HTML
//! with every value escaped.

use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use tender_core::money::format_amount;
use tender_core::payment::Payment;

use crate::state::AppState;

pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/{payment_id}", get(receipt))
        .fallback(not_found)
        .with_state(state)
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

async fn not_found() -> Response {
    (
        StatusCode::NOT_FOUND,
        Html("<!doctype html><title>Not found</title><h1>Receipt not found</h1>"),
    )
        .into_response()
}

async fn receipt(State(state): State<AppState>, Path(id): Path<String>) -> Response {
    match state.services.find_payment_anywhere(&id).await {
        Ok(Some((payment, merchant))) => render(&payment, &merchant).into_response(),
        Ok(None) => not_found().await,
        Err(e) => {
            tracing::error!(error = %e, "receipt lookup failed");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                [(header::CONTENT_TYPE, "text/plain")],
                "error",
            )
                .into_response()
        }
    }
}

fn render(p: &Payment, merchant: &str) -> Html<String> {
    let card = p
        .payment_method
        .card
        .as_ref()
        .map(|c| format!("{} •••• {}", c.brand.as_str(), c.last4))
        .unwrap_or_default();
    let banner = if p.livemode {
        ""
    } else {
        "<p class=\"test\">TEST MODE</p>"
    };
    Html(format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>Receipt from {m}</title></head><body>{banner}\
         <h1>Receipt from {m}</h1><p class=\"amount\">{amount}</p><p>{desc}</p><p>{card}</p><p>Status: {status}</p>\
         <p>Date: {created}</p></body></html>",
        m = escape(merchant),
        amount = escape(&format_amount(p.amount, p.currency)),
        desc = escape(p.description.as_deref().unwrap_or("")),
        card = escape(&card),
        status = p.status.as_str(),
        created = p.created,
    ))
}
