//! The hosted Checkout page (a session's `url`, CONTRACT §14), on the receipt host:
//!
//! - `GET /checkout/{session_id}`: who sells, the items with their quantities, the total
//!   formatted for the currency, an e-mail field (unless the shop gave one), the card fields
//!   and the button; a session already complete answers `303` to its `success_url` (with
//!   `{CHECKOUT_SESSION_ID}` replaced), an expired one says so (410).
//! - `POST /checkout/{session_id}`: the form, a plain HTML form posted to Tender's own origin
//!   with the page's one-time token: it works without JavaScript. Paid → `303` to
//!   `success_url`; 3-D Secure → `303` to Tender's authentication page, which returns here;
//!   declined → the page again with the bank's reason (402) and room for another card; the
//!   session's third decline ends its tries (429). The card number is never put back into the
//!   page. What guards it is the hosted invoice page's ([`super::guard`]): the `Origin`
//!   check, the token, the rate limits.

use axum::extract::{ConnectInfo, Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use maud::{html, Markup};
use tender_core::checkout::hosted::HostedCheckout;
use tender_core::checkout::pay::{CheckoutForm, Paid};
use tender_core::checkout::session::{CheckoutMode, CheckoutSession, CheckoutStatus, LineItem};
use tender_core::error::CoreError;
use tender_core::money::format_amount;

use super::card_form::{self, CardFields};
use super::{html_response, not_found, page_with, server_error};
use crate::state::AppState;

const STYLE: &str = "body{max-width:60rem}\
.checkout{display:grid;grid-template-columns:1fr 1fr;gap:2rem;align-items:start}\
.summary h1{font-size:1.1rem;margin:0 0 .25rem}.lines td{vertical-align:top}.qty{color:#666;font-size:.9rem}\
.total td{font-weight:600;border-bottom:none;padding-top:.8rem}\
button.pay{width:100%;margin:1.2rem 0 .5rem;padding:.8rem;font-size:1.05rem;font-weight:600}\
.secure{font-size:.85rem;color:#666;text-align:center}.cancel{display:inline-block;margin-top:.6rem;color:#3b5bdb}\
@media (max-width:720px){.checkout{grid-template-columns:1fr;gap:1rem}}";

/// What the page shows above its button, and what it keeps of what was typed.
#[derive(Default)]
struct Shown<'a> {
    /// Why the last try failed.
    notice: Option<&'a str>,
    /// The e-mail typed before (never the card).
    email: Option<&'a str>,
    /// The session takes no more tries: no form.
    closed: bool,
}

/// `every month`, `every 3 months`.
fn per(line: &LineItem) -> Option<String> {
    let r = line.price.recurring?;
    let unit = r.interval.as_str();
    Some(match r.interval_count {
        1 => format!("per {unit}"),
        n => format!("every {n} {unit}s"),
    })
}

fn summary(h: &HostedCheckout) -> Markup {
    let s = &h.session;
    let trial = s
        .subscription_data
        .as_ref()
        .and_then(|d| d.trial_period_days);
    html! {
        div.summary {
            @if let Some(m) = &h.merchant { p.muted { "Pay " (m) } }
            @match (s.mode, s.currency, s.amount_total) {
                (CheckoutMode::Setup, _, _) => {
                    h1 { "Save a card" }
                    p.muted { "Your card is saved for future payments. You are not charged now." }
                }
                (_, Some(currency), Some(total)) => {
                    p.amount { (format_amount(total, currency)) }
                    @if let Some(days) = trial {
                        p.muted { (days) " days free, then " (format_amount(total, currency)) " " (per(&s.line_items.data[0]).unwrap_or_default()) }
                    }
                    table.lines {
                        @for line in &s.line_items.data {
                            tr {
                                td {
                                    (line.description)
                                    @if line.quantity > 1 { br; span.qty { "Qty " (line.quantity) } }
                                    @if let Some(p) = per(line) { br; span.qty { "Billed " (p) } }
                                }
                                td { (format_amount(line.amount_total, line.currency)) }
                            }
                        }
                        tr.total {
                            td { @if trial.is_some() { "Total due today" } @else { "Total" } }
                            td { @if trial.is_some() { (format_amount(0, currency)) } @else { (format_amount(total, currency)) } }
                        }
                    }
                }
                _ => {}
            }
        }
    }
}

fn button_words(s: &CheckoutSession) -> String {
    match (s.mode, s.currency, s.amount_total) {
        (CheckoutMode::Setup, _, _) => "Save card".into(),
        (CheckoutMode::Subscription, _, _) => "Subscribe".into(),
        (_, Some(c), Some(total)) => format!("Pay {}", format_amount(total, c)),
        _ => "Pay".into(),
    }
}

/// The page: the summary beside the form (above it on a phone).
fn render(h: &HostedCheckout, shown: &Shown, token: &str) -> Markup {
    let s = &h.session;
    let title = match &h.merchant {
        Some(m) => format!("Checkout · {m}"),
        None => "Checkout".into(),
    };
    page_with(
        &title,
        &format!("{}{STYLE}", card_form::STYLE),
        html! {
            @if !s.livemode { p.test { "TEST MODE" } }
            div.checkout {
                (summary(h))
                div.card {
                    @if shown.closed {
                        @if let Some(n) = shown.notice { p.outcome.notice role="alert" { (n) } }
                    } @else {
                        form method="post" action=(format!("/checkout/{}", s.id)) autocomplete="on" {
                            input type="hidden" name="token" value=(token);
                            @if let Some(email) = &s.customer_email {
                                p.muted { "E-mail: " (email) }
                            } @else if s.customer.is_none() {
                                label for="email" { "E-mail" }
                                input #email type="email" name="email" autocomplete="email" required value=[shown.email];
                            }
                            (card_form::fields(true))
                            @if let Some(n) = shown.notice { p.outcome.notice role="alert" { (n) } }
                            button.primary.pay type="submit" { (button_words(s)) }
                        }
                        p.secure { "Card details go to the payment service, not to the shop." }
                    }
                    @if let Some(url) = &s.cancel_url {
                        a.cancel href=(url) { "← Back to the shop" }
                    }
                }
            }
        },
    )
}

/// A session's `success_url` with its id in place of `{CHECKOUT_SESSION_ID}`.
fn success_url(s: &CheckoutSession) -> String {
    s.success_url
        .replace("{CHECKOUT_SESSION_ID}", &s.id)
        .replace("%7BCHECKOUT_SESSION_ID%7D", &s.id)
}

pub(super) async fn checkout_page(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Response {
    show(&state, &id, StatusCode::OK, Shown::default()).await
}

/// The page for session `id` with a fresh token; a complete session sends the customer on.
async fn show(state: &AppState, id: &str, status: StatusCode, shown: Shown<'_>) -> Response {
    let h = match state.services.checkout().find_hosted_checkout(id).await {
        Ok(Some(h)) => h,
        Ok(None) => return not_found().await,
        Err(e) => return server_error(e),
    };
    match h.session.status {
        CheckoutStatus::Complete => Redirect::to(&success_url(&h.session)).into_response(),
        CheckoutStatus::Expired => html_response(
            StatusCode::GONE,
            super::page(
                "Checkout expired",
                html! {
                    div.card {
                        h1 { "This checkout has expired" }
                        p.muted { "Nothing was charged. Please start again from the shop." }
                        @if let Some(url) = &h.session.cancel_url { p { a href=(url) { "Back to the shop" } } }
                    }
                },
            ),
        ),
        CheckoutStatus::Open => {
            let closed = h.exhausted;
            let shown = match closed {
                true => Shown {
                    notice: Some(tender_core::checkout::pay::too_many_declines_words()),
                    closed,
                    ..shown
                },
                false => shown,
            };
            let token = state.services.page_token(&h.session.id);
            html_response(status, render(&h, &shown, &token))
        }
    }
}

/// `GET /pay/{link_id}`: a Payment Link's address. Each visit opens a fresh session and sends
/// the customer to its page; an inactive link says it is no longer available (410). Visits
/// count against the address's rate limit (each makes a session).
pub(super) async fn payment_link(
    State(state): State<AppState>,
    Path(id): Path<String>,
    peer: Option<axum::Extension<ConnectInfo<std::net::SocketAddr>>>,
) -> Response {
    if let Err(wait) = state
        .hosted_guard
        .visit(peer.map(|axum::Extension(ConnectInfo(addr))| addr.ip()))
    {
        let words = format!("Too many visits. Please wait {wait} seconds and try again.");
        return message_page(StatusCode::TOO_MANY_REQUESTS, "Please wait", &words);
    }
    let request_id = crate::http::error::current_request_id();
    match state
        .services
        .checkout()
        .open_payment_link(&id, request_id)
        .await
    {
        Ok(Some(session)) => Redirect::to(session.url.as_deref().unwrap_or("/")).into_response(),
        Ok(None) => not_found().await,
        Err(CoreError::InvalidParam {
            code: "payment_link_inactive",
            message,
            ..
        }) => message_page(StatusCode::GONE, "No longer available", &message),
        Err(e) => server_error(e),
    }
}

/// `GET /checkout/{session_id}/done`: Tender's confirmation page (a payment link's
/// `hosted_confirmation`); a session not complete yet goes back to its page.
pub(super) async fn done_page(State(state): State<AppState>, Path(id): Path<String>) -> Response {
    let h = match state.services.checkout().find_hosted_checkout(&id).await {
        Ok(Some(h)) => h,
        Ok(None) => return not_found().await,
        Err(e) => return server_error(e),
    };
    let s = &h.session;
    if s.status != CheckoutStatus::Complete {
        return Redirect::to(&format!("/checkout/{}", s.id)).into_response();
    }
    let headline = match s.mode {
        CheckoutMode::Payment => "Payment received",
        CheckoutMode::Subscription => "You are subscribed",
        CheckoutMode::Setup => "Your card is saved",
    };
    html_response(
        StatusCode::OK,
        super::page(
            headline,
            html! {
                @if !s.livemode { p.test { "TEST MODE" } }
                div.card {
                    @if let Some(m) = &h.merchant { p.muted { (m) } }
                    h1 #done { (headline) }
                    @if let (Some(c), Some(total)) = (s.currency, s.amount_total) { p.amount { (format_amount(total, c)) } }
                    p { (h.confirmation.as_deref().unwrap_or("Thank you.")) }
                    @if let Some(p) = &s.payment_intent { p { a href=(format!("/{p}")) { "See the receipt" } } }
                }
            },
        ),
    )
}

fn message_page(status: StatusCode, title: &str, words: &str) -> Response {
    html_response(
        status,
        super::page(
            title,
            html! { div.card { h1 { (title) } p.muted { (words) } } },
        ),
    )
}

#[derive(Default, serde::Deserialize)]
pub(super) struct PayForm {
    token: Option<String>,
    email: Option<String>,
    #[serde(flatten)]
    card: CardFields,
}

pub(super) async fn pay(
    State(state): State<AppState>,
    Path(id): Path<String>,
    peer: Option<axum::Extension<ConnectInfo<std::net::SocketAddr>>>,
    headers: HeaderMap,
    form: Result<axum::Form<PayForm>, axum::extract::rejection::FormRejection>,
) -> Response {
    let client = peer
        .as_ref()
        .map(|axum::Extension(ConnectInfo(addr))| addr.ip().to_string());
    if let Some(refused) = guard(&state, &id, peer, &headers).await {
        return refused;
    }
    let form = form.map(|f| f.0).unwrap_or_default();
    let email = form.email.clone();
    let checkout_form = CheckoutForm {
        email: form.email,
        card: form.card.card(),
        token: form.token,
        client,
    };
    let request_id = crate::http::error::current_request_id();
    let result = state
        .services
        .checkout()
        .pay_checkout_session(&id, checkout_form, request_id)
        .await;
    let (status, notice) = match result {
        Ok(Some(Paid::Complete(s))) => return Redirect::to(&success_url(&s)).into_response(),
        Ok(Some(Paid::Authenticate(url))) => return Redirect::to(&url).into_response(),
        Ok(Some(Paid::Open(_))) => (StatusCode::OK, None),
        Ok(None) => return not_found().await,
        Err(e) => match refusal(e) {
            Ok(refused) => refused,
            Err(e) => return server_error(e),
        },
    };
    let shown = Shown {
        notice: notice.as_deref(),
        email: email.as_deref(),
        closed: false,
    };
    show(&state, &id, status, shown).await
}

/// The page refusing a form from another site, or over the rate limits; `None`: go on.
async fn guard(
    state: &AppState,
    id: &str,
    peer: Option<axum::Extension<ConnectInfo<std::net::SocketAddr>>>,
    headers: &HeaderMap,
) -> Option<Response> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if !super::guard::same_origin(
        header("origin"),
        header("sec-fetch-site"),
        &state.services.config.receipt_base,
    ) {
        let notice = "This form can only be sent from this page.";
        let shown = Shown {
            notice: Some(notice),
            ..Shown::default()
        };
        return Some(show(state, id, StatusCode::FORBIDDEN, shown).await);
    }
    if let Err(wait) = state
        .hosted_guard
        .post(id, peer.map(|axum::Extension(ConnectInfo(addr))| addr.ip()))
    {
        let notice = format!("Too many attempts. Please wait {wait} seconds and try again.");
        let mut resp = show(
            state,
            id,
            StatusCode::TOO_MANY_REQUESTS,
            Shown {
                notice: Some(&notice),
                ..Shown::default()
            },
        )
        .await;
        if let Ok(v) = axum::http::HeaderValue::from_str(&wait.to_string()) {
            resp.headers_mut()
                .insert(axum::http::header::RETRY_AFTER, v);
        }
        return Some(resp);
    }
    None
}

/// A try's error as the page's status and words; `Err` for a failure of Tender's own.
fn refusal(e: CoreError) -> Result<(StatusCode, Option<String>), CoreError> {
    Ok(match e {
        CoreError::Card { message, .. } => {
            (StatusCode::PAYMENT_REQUIRED, Some(message.into_owned()))
        }
        CoreError::IdempotencyInProgress => (
            StatusCode::CONFLICT,
            Some("Your payment is in progress; refresh this page in a moment.".into()),
        ),
        CoreError::Blocked { message, .. } => {
            (StatusCode::TOO_MANY_REQUESTS, Some(message.into_owned()))
        }
        CoreError::InvalidParam {
            code: "checkout_session_unexpected_state",
            message,
            ..
        } => (StatusCode::CONFLICT, Some(message.into_owned())),
        CoreError::InvalidParam { message, .. } => {
            (StatusCode::BAD_REQUEST, Some(message.into_owned()))
        }
        CoreError::UnexpectedState { message } => (StatusCode::CONFLICT, Some(message)),
        other => return Err(other),
    })
}
