//! The Stripe-compatible API under `/v1` (CONTRACT §13): a shop's existing Stripe code runs
//! against Tender by changing only its SDK's base address. Over the same objects, ledger,
//! events and idempotency store as `/v2`: each operation reads Stripe's parameters into the
//! command `/v2` builds and runs `/v2`'s handler; the answer is shown in Stripe's shape on the
//! way out (`tender_core::stripe`).
//!
//! # Layout
//! - [`routes`]: THE `/v1` route table (method, path, parameters, parser, handler, shape of
//!   the answer, who may call); everything that needs the list of operations reads it.
//! - [`gate`]: the middleware (lookup, auth, rate limit, form parameters, `expand[]`,
//!   idempotency, `Stripe-Version`); [`answer`]: the `/v2` answer shown as Stripe's, with
//!   expansions and errors.
//! - [`form`]: bracket-notation form decoding; [`params`]: what every parser shares (form
//!   parameters, Stripe ids, list parameters); [`test_tokens`]: `pm_card_visa` and the rest.
//! - one module per resource with its parsers (and a handler where `/v2` has none):
//!   [`payment_intents`], [`charges`], [`customers`], [`payment_methods`],
//!   [`setup_intents`], [`refunds`], [`checkout`] (Checkout Sessions), [`payment_links`],
//!   [`billing`] (products, prices, subscriptions, invoices, test clocks), [`balance`]
//!   (balance, its transactions, payouts, disputes), [`webhooks`] (endpoints sent Stripe's
//!   events, and the events).
//!
//! Depends on `crate::http` (its handlers, parameter reader, error table and pipeline pieces)
//! and on the core; `crate::http` never depends on this module.

pub mod answer;
pub mod balance;
pub mod billing;
pub mod charges;
pub mod checkout;
pub mod customers;
pub mod form;
pub mod gate;
pub mod params;
pub mod payment_intents;
pub mod payment_links;
pub mod payment_methods;
pub mod refunds;
pub mod routes;
pub mod setup_intents;
pub mod test_tokens;
pub mod webhooks;

use axum::extract::OriginalUri;
use axum::http::{Method, StatusCode};
use axum::middleware;
use axum::response::Response;
use axum::Router;

use crate::state::AppState;

/// The `/v1` router.
pub fn router(state: AppState) -> Router {
    let api = routes::ROUTES
        .iter()
        .fold(Router::new(), |api, route| {
            api.route(route.path, route.method_router())
        })
        .fallback(unrecognized)
        .layer(middleware::from_fn_with_state(
            state.clone(),
            gate::stripe_gate,
        ))
        .with_state(state);
    Router::new().nest("/v1", api)
}

/// Stripe's 404 for a path `/v1` does not serve (the gate answers most of these first).
async fn unrecognized(method: Method, OriginalUri(uri): OriginalUri) -> Response {
    not_served(method.as_str(), uri.path())
}

/// Stripe's 404 for `method path`, naming Tender's own operation of that name if there is one
/// (`GET /v1/payments` is `GET /v2/payments`).
pub fn not_served(method: &str, path: &str) -> Response {
    let twin = path
        .strip_prefix("/v1")
        .map(|rest| format!("/v2{rest}"))
        .filter(|v2| crate::http::routes::resolve(method, v2).is_some());
    answer::stripe_json(
        StatusCode::NOT_FOUND,
        &tender_core::stripe::errors::unrecognized_url(method, path, twin.as_deref()),
    )
}
