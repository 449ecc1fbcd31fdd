//! The receipt host (a separate listener, no login: payment ids are unguessable).
//!
//! - `GET /{payment_id}`: the receipt — merchant, amount formatted for the currency, date,
//!   description, card or bank account, status, refunds; a `TEST MODE` banner in test mode.
//! - `GET|POST /authenticate/{payment_id}/{token}`: the 3-D Secure page. It works without
//!   JavaScript: a form posts `outcome=complete|fail` back to the same URL. The unguessable
//!   token in the URL is what makes the form safe from cross-site forgery (an attacker cannot
//!   know the URL), and it is forgotten once used.
//! - `GET /invoices/{invoice_id}` and its pay button: the hosted invoice page ([`invoices`]);
//!   `GET /invoices/{invoice_id}/pdf`: the same as a PDF ([`invoice_pdf`]).
//! - `GET|POST /checkout/{session_id}`: the hosted Checkout page, its confirmation page, and
//!   `GET /pay/{link_id}`, a Payment Link's address ([`checkout`]).
//!
//! HTML comes from `maud` templates, which escape every value.

use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::get;
use axum::{Form, Router};
use maud::{html, Markup, DOCTYPE};
use serde::Deserialize;
use tender_core::clock::format_utc;
use tender_core::money::format_amount;
use tender_core::payments::payment::Payment;
use tender_core::payments::receipt::Receipt;

use crate::state::AppState;

mod card_form;
mod checkout;
pub mod guard;
mod invoice_pdf;
mod invoices;

pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/{payment_id}", get(receipt))
        .route("/invoices/{invoice_id}", get(invoices::invoice_page))
        .route("/invoices/{invoice_id}/pdf", get(invoice_pdf::invoice_pdf))
        .route(
            "/invoices/{invoice_id}/pay",
            axum::routing::post(invoices::pay),
        )
        .route(
            "/checkout/{session_id}",
            get(checkout::checkout_page).post(checkout::pay),
        )
        .route("/checkout/{session_id}/done", get(checkout::done_page))
        .route("/pay/{link_id}", get(checkout::payment_link))
        .route(
            "/authenticate/{payment_id}/{token}",
            get(authentication_page).post(authenticate),
        )
        .fallback(not_found)
        .with_state(state)
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;color:#1a1a2e}\
.card{border:1px solid #ddd;border-radius:12px;padding:1.5rem;box-shadow:0 1px 3px rgba(0,0,0,.06)}\
.amount{font-size:2rem;font-weight:600;margin:.5rem 0}.muted{color:#666}.test{background:#fff3cd;color:#7a5b00;\
padding:.4rem .8rem;border-radius:6px;font-weight:600;letter-spacing:.05em;display:inline-block}\
table{width:100%;border-collapse:collapse}td{padding:.35rem 0;border-bottom:1px solid #eee}td:last-child{text-align:right}\
button{font-size:1rem;padding:.6rem 1.2rem;border-radius:8px;border:1px solid #888;margin-right:.5rem;cursor:pointer}\
button.primary{background:#3b5bdb;color:#fff;border-color:#3b5bdb}.outcome{font-weight:600}\
@media (max-width:420px){body{margin:1rem auto}.card{padding:1rem}.amount{font-size:1.6rem}td{font-size:.9rem}button{width:100%;margin:.3rem 0}}";

fn page(title: &str, body: Markup) -> Markup {
    page_with(title, "", body)
}

/// [`page`] with `extra` style after the shared one.
fn page_with(title: &str, extra: &str, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) }
                style { (STYLE) (maud::PreEscaped(extra)) }
            }
            body { (body) }
        }
    }
}

/// The receipt host's pages: no third-party anything (CSP: nothing but the page's own inline
/// style, no framing, no `<base>`), no sniffing, no referrer to the links customers follow,
/// never cached (CONTRACT §14, §17).
pub const CONTENT_SECURITY_POLICY: &str =
    "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'";

fn html_response(status: StatusCode, markup: Markup) -> Response {
    let mut resp = framable_response(status, markup, "'none'");
    resp.headers_mut()
        .insert("x-frame-options", header::HeaderValue::from_static("DENY"));
    resp
}

/// [`html_response`] for a page `tender.js` shows over a shop's page (the 3-D Secure page):
/// framable by `ancestors` (the account's shop origins, else any page), as the card field is.
fn framable_response(status: StatusCode, markup: Markup, ancestors: &str) -> Response {
    let mut resp = (status, Html(markup.into_string())).into_response();
    let csp = CONTENT_SECURITY_POLICY.replace(
        "frame-ancestors 'none'",
        &format!("frame-ancestors {ancestors}"),
    );
    let headers = resp.headers_mut();
    headers.insert(
        header::CACHE_CONTROL,
        header::HeaderValue::from_static("no-store"),
    );
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        header::HeaderValue::from_str(&csp)
            .unwrap_or(header::HeaderValue::from_static(CONTENT_SECURITY_POLICY)),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        header::HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        header::HeaderValue::from_static("no-referrer"),
    );
    resp
}

async fn not_found() -> Response {
    html_response(
        StatusCode::NOT_FOUND,
        page(
            "Not found",
            html! { div.card { h1 { "Not found" } p.muted { "There is no receipt at this address." } } },
        ),
    )
}

fn server_error(e: impl std::fmt::Display) -> Response {
    tracing::error!(error = %e, "receipt host failed");
    html_response(
        StatusCode::INTERNAL_SERVER_ERROR,
        page(
            "Error",
            html! { div.card { h1 { "Something went wrong" } p.muted { "Please try again later." } } },
        ),
    )
}

fn method_line(p: &Payment) -> String {
    if let Some(c) = &p.payment_method.card {
        format!("{} •••• {}", c.brand.display_name(), c.last4)
    } else if let Some(b) = &p.payment_method.bank_transfer {
        format!("Bank transfer ({}) •••• {}", b.country, b.last4)
    } else {
        String::new()
    }
}

/// The payment's state in the words of the person who paid.
fn status_words(p: &Payment) -> &'static str {
    use tender_core::payments::payment::PaymentStatus as S;
    match p.status {
        S::Succeeded if p.refunded => "Refunded",
        S::Succeeded if p.amount_refunded > 0 => "Partly refunded",
        S::Succeeded => "Paid",
        S::Failed => "Failed",
        S::Canceled => "Canceled",
        S::Processing => "Processing",
        S::RequiresCapture => "Authorised, not yet charged",
        S::RequiresAction => "Waiting for your confirmation",
        S::RequiresPaymentMethod | S::RequiresConfirmation => "Not yet paid",
    }
}

/// A line under the amount that says plainly what happened to the customer's money.
fn outcome_line(p: &Payment) -> Option<String> {
    use tender_core::payments::payment::PaymentStatus as S;
    match p.status {
        S::Failed => Some("This payment failed. You were not charged.".into()),
        S::Canceled => Some("This payment was canceled. You were not charged.".into()),
        S::RequiresCapture => Some("Your card was authorised; nothing has been taken yet.".into()),
        S::Succeeded if p.amount_refunded > 0 => Some(format!(
            "Charged in the end: {} ({} refunded).",
            format_amount(p.amount_captured - p.amount_refunded, p.currency),
            format_amount(p.amount_refunded, p.currency)
        )),
        _ => None,
    }
}

/// The receipt markup (also used by tests through the HTTP route).
fn render_receipt(r: &Receipt) -> Markup {
    let p = &r.payment;
    let title = match &r.merchant {
        Some(m) => format!("Receipt from {m}"),
        None => "Receipt".to_string(),
    };
    // The amount taken: what was captured once a payment succeeded, else what was asked.
    let shown = if p.amount_captured > 0 {
        p.amount_captured
    } else {
        p.amount
    };
    page(
        &title,
        html! {
            @if !p.livemode { p.test { "TEST MODE" } }
            div.card {
                @if let Some(m) = &r.merchant {
                    p.muted { "Receipt from" }
                    h1 { (m) }
                } @else {
                    h1 { "Receipt" }
                }
                p.amount { (format_amount(shown, p.currency)) }
                @if let Some(line) = outcome_line(p) { p.outcome { (line) } }
                table {
                    tr { td { "Date" } td { (format_utc(p.created)) } }
                    @if let Some(d) = &p.description { tr { td { "Description" } td { (d) } } }
                    tr { td { "Payment method" } td { (method_line(p)) } }
                    tr { td { "Status" } td.status { (status_words(p)) } }
                    tr { td { "Receipt number" } td { (p.id) } }
                }
                @if !r.refunds.is_empty() {
                    h2 { "Refunds" }
                    table.refunds {
                        @for refund in &r.refunds {
                            tr {
                                td { (format_utc(refund.created)) }
                                td { "−" (format_amount(refund.amount, refund.currency)) }
                            }
                        }
                    }
                }
                @if let Some(email) = &r.merchant_email {
                    p.muted { "Questions? Write to " a href=(format!("mailto:{email}")) { (email) } "." }
                }
            }
        },
    )
}

async fn receipt(State(state): State<AppState>, Path(id): Path<String>) -> Response {
    match state.services.payments().find_receipt(&id).await {
        Ok(Some(r)) => html_response(StatusCode::OK, render_receipt(&r)),
        Ok(None) => not_found().await,
        Err(e) => server_error(e),
    }
}

async fn authentication_page(
    State(state): State<AppState>,
    Path((id, token)): Path<(String, String)>,
) -> Response {
    match state
        .services
        .payments()
        .find_authentication(&id, &token)
        .await
    {
        Ok(Some((scope, p, _))) => framable_response(
            StatusCode::OK,
            page(
                "Confirm your payment",
                html! {
                    @if !p.livemode { p.test { "TEST MODE" } }
                    div.card {
                        h1 { "Confirm your payment" }
                        p.amount { (format_amount(p.amount, p.currency)) }
                        p { (method_line(&p)) }
                        p.muted { "Your bank asks you to confirm this payment." }
                        form method="post" {
                            button.primary type="submit" name="outcome" value="complete" { "Complete authentication" }
                            button type="submit" name="outcome" value="fail" { "Fail authentication" }
                        }
                    }
                },
            ),
            &crate::elements::ancestors(&state, &scope.account).await,
        ),
        Ok(None) => already_confirmed_or_missing(&state, &id, &token).await,
        Err(e) => server_error(e),
    }
}

/// A 3-D Secure link that no longer works: if it is a link that was used, say the payment was
/// already confirmed and point at the receipt (changing nothing); otherwise the page is unknown.
async fn already_confirmed_or_missing(state: &AppState, id: &str, token: &str) -> Response {
    match state
        .services
        .payments()
        .used_authentication(id, token)
        .await
    {
        Ok(Some(p)) => html_response(
            StatusCode::OK,
            page(
                "Payment already confirmed",
                html! {
                    div.card {
                        h1 { "This payment was already confirmed" }
                        p { "This link has been used. Status: " span.status { (status_words(&p)) } "." }
                        p { a href=(format!("/{}", p.id)) { "See the receipt" } }
                    }
                },
            ),
        ),
        Ok(None) => not_found().await,
        Err(e) => server_error(e),
    }
}

#[derive(Deserialize)]
struct Outcome {
    outcome: String,
}

async fn authenticate(
    State(state): State<AppState>,
    Path((id, token)): Path<(String, String)>,
    form: Result<Form<Outcome>, axum::extract::rejection::FormRejection>,
) -> Response {
    let success = match form.as_ref().ok().map(|f| f.outcome.as_str()) {
        Some("complete") => true,
        Some("fail") => false,
        _ => {
            return html_response(
                StatusCode::BAD_REQUEST,
                page(
                    "Bad request",
                    html! { div.card { h1 { "Choose complete or fail." } } },
                ),
            )
        }
    };
    // The answer shows where the page was: over the shop's page when tender.js opened it.
    let ancestors = match state
        .services
        .payments()
        .find_authentication(&id, &token)
        .await
    {
        Ok(Some((scope, _, _))) => crate::elements::ancestors(&state, &scope.account).await,
        _ => "'none'".to_string(),
    };
    match state
        .services
        .payments()
        .complete_authentication(&id, &token, success)
        .await
    {
        Ok(Some(p)) => {
            if let Some(url) = return_url(&p) {
                return Redirect::to(&url).into_response();
            }
            framable_response(
                StatusCode::OK,
                page(
                    "Payment confirmed",
                    html! {
                        div.card {
                            h1 { @if success { "Authentication complete" } @else { "Authentication failed" } }
                            p { "Payment status: " span.status { (status_words(&p)) } }
                            p.muted { "You can close this window." }
                        }
                    },
                ),
                &ancestors,
            )
        }
        Ok(None) => already_confirmed_or_missing(&state, &id, &token).await,
        Err(e) => server_error(e),
    }
}

/// Where to send the customer after authentication: the payment's `return_url` with the
/// payment id appended, if one was given.
fn return_url(p: &Payment) -> Option<String> {
    let url = p.return_url.as_ref()?;
    let mut u = url::Url::parse(url).ok()?;
    u.query_pairs_mut().append_pair("payment", &p.id);
    Some(u.to_string())
}
