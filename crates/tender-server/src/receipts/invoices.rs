//! The hosted invoice page (`hosted_invoice_url`, CONTRACT §10), on the receipt host:
//!
//! - `GET /invoices/{invoice_id}`: who bills, the lines with their periods, the total, what was
//!   paid, the status in the customer's words, the payments tried; for an open invoice, a pay
//!   button naming the card on file it charges, and a link to the same as a PDF
//!   ([`super::invoice_pdf`]).
//! - `POST /invoices/{invoice_id}/pay`: that button. It tries the invoice now, as
//!   `POST /invoices/{id}/pay` would, then shows the page again (303) — or, declined, the page
//!   with the bank's reason (402). It works without JavaScript. What guards it (CONTRACT §17):
//!   the page's one-time token (a form field; a press is one try, a second press of the same
//!   page answers as the first), the `Origin` check and the rate limits of [`super::guard`]
//!   (429 page); a press while the same page's try still runs is the 409 page, never a 500.

use axum::extract::{ConnectInfo, Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use maud::{html, Markup};
use tender_core::billing::hosted::HostedInvoice;
use tender_core::billing::invoice::InvoiceStatus;
use tender_core::clock::format_date;
use tender_core::error::CoreError;
use tender_core::money::format_amount;

use super::card_form::{self, CardFields};
use super::{html_response, not_found, page_with, server_error};
use crate::state::AppState;

/// The invoice's state in the words of the person who owes it.
pub(super) fn status_words(s: InvoiceStatus) -> &'static str {
    match s {
        InvoiceStatus::Draft => "Draft",
        InvoiceStatus::Open => "Due",
        InvoiceStatus::Paid => "Paid",
        InvoiceStatus::Uncollectible => "Unpaid",
        InvoiceStatus::Void => "Canceled",
    }
}

/// The page; `notice` is a line above the pay button (why the last try failed); `token` the
/// one-time token its button sends.
fn render(h: &HostedInvoice, notice: Option<&str>, token: &str) -> Markup {
    let inv = &h.invoice;
    let title = match &h.merchant {
        Some(m) => format!("Invoice from {m}"),
        None => "Invoice".to_string(),
    };
    let due = inv.amount_due - inv.amount_paid;
    page_with(
        &title,
        &format!(
            "{}button.pay{{width:100%;margin:1rem 0 .5rem;padding:.8rem;font-weight:600}}",
            card_form::STYLE
        ),
        html! {
            @if !inv.livemode { p.test { "TEST MODE" } }
            div.card {
                @if let Some(m) = &h.merchant {
                    p.muted { "Invoice from" }
                    h1 { (m) }
                } @else {
                    h1 { "Invoice" }
                }
                p.amount { (format_amount(inv.amount_due, inv.currency)) }
                table {
                    tr { td { "Invoice number" } td #invoice-number { (inv.number.as_deref().unwrap_or(&inv.id)) } }
                    tr { td { "Period" } td { (format_date(inv.period_start)) " – " (format_date(inv.period_end)) } }
                    tr { td { "Status" } td.status { (status_words(inv.status)) } }
                }
                h2 { "Items" }
                table.lines {
                    @for line in &inv.lines.data {
                        tr {
                            td {
                                (line.description)
                                br;
                                span.muted { (format_date(line.period.start)) " – " (format_date(line.period.end)) }
                            }
                            td { (format_amount(line.amount, inv.currency)) }
                        }
                    }
                    tr.total { td { strong { "Total" } } td { strong { (format_amount(inv.amount_due, inv.currency)) } } }
                    tr { td { "Paid" } td.paid { (format_amount(inv.amount_paid, inv.currency)) } }
                    @if inv.status == InvoiceStatus::Open {
                        tr { td { strong { "Amount due" } } td.due { strong { (format_amount(due, inv.currency)) } } }
                    }
                }
                @if inv.attempt_count > 0 && inv.status != InvoiceStatus::Paid {
                    p.muted { "Payment tried " (inv.attempt_count) @if inv.attempt_count == 1 { " time" } @else { " times" } "." }
                }
                @if let Some(n) = notice { p.outcome.notice { (n) } }
                @if inv.status == InvoiceStatus::Open {
                    @if let Some(pm) = &h.card {
                        form method="post" action=(format!("/invoices/{}/pay", inv.id)) {
                            input type="hidden" name="token" value=(token);
                            button.primary type="submit" {
                                "Pay " (format_amount(due, inv.currency)) " with "
                                (pm.card.brand.display_name()) " •••• " (pm.card.last4)
                            }
                        }
                        h2 { "Or pay with another card" }
                    }
                    form #new-card method="post" action=(format!("/invoices/{}/pay", inv.id)) {
                        input type="hidden" name="token" value=(token);
                        (card_form::fields(true))
                        button.primary.pay type="submit" { "Pay " (format_amount(due, inv.currency)) }
                    }
                    p.muted { "A new card is saved with the merchant, as a card on file is." }
                }
                @if let (Some(p), InvoiceStatus::Paid) = (&inv.payment, inv.status) {
                    p { a href=(format!("/{p}")) { "See the receipt" } }
                }
                p { a #invoice-pdf href=(format!("/invoices/{}/pdf", inv.id)) { "Download the invoice (PDF)" } }
                @if let Some(email) = &h.merchant_email {
                    p.muted { "Questions? Write to " a href=(format!("mailto:{email}")) { (email) } "." }
                }
            }
        },
    )
}

pub(super) async fn invoice_page(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Response {
    show(&state, &id, StatusCode::OK, None).await
}

/// The page with a fresh token, answering `status` with `notice` above the button.
async fn show(state: &AppState, id: &str, status: StatusCode, notice: Option<&str>) -> Response {
    match state.services.billing().find_hosted_invoice(id).await {
        Ok(Some(h)) => {
            let token = state.services.billing().hosted_pay_token(&h.invoice.id);
            html_response(status, render(&h, notice, &token))
        }
        Ok(None) => not_found().await,
        Err(e) => server_error(e),
    }
}

#[derive(Default, serde::Deserialize)]
pub(super) struct PayForm {
    token: Option<String>,
    /// A new card typed on the page; none: the card on file.
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
    let client_ip = peer.map(|axum::Extension(ConnectInfo(addr))| addr.ip());
    let client = client_ip.map(|ip| ip.to_string());
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if !super::guard::same_origin(
        header("origin"),
        header("sec-fetch-site"),
        &state.services.config.receipt_base,
    ) {
        return show(
            &state,
            &id,
            StatusCode::FORBIDDEN,
            Some("This form can only be sent from this page."),
        )
        .await;
    }
    if let Err(wait) = state.hosted_guard.post(&id, client_ip) {
        let mut resp = show(
            &state,
            &id,
            StatusCode::TOO_MANY_REQUESTS,
            Some(&format!(
                "Too many attempts. Please wait {wait} seconds and try again."
            )),
        )
        .await;
        if let Ok(v) = axum::http::HeaderValue::from_str(&wait.to_string()) {
            resp.headers_mut()
                .insert(axum::http::header::RETRY_AFTER, v);
        }
        return resp;
    }
    let form = form.map(|f| f.0).unwrap_or_default();
    let card = form.card.given().then(|| form.card.card());
    let request_id = crate::http::error::current_request_id();
    let (status, notice) = match state
        .services
        .billing()
        .pay_hosted_invoice(
            &id,
            form.token.as_deref(),
            card,
            client.as_deref(),
            request_id,
        )
        .await
    {
        Ok(Some(_)) => return Redirect::to(&format!("/invoices/{id}")).into_response(),
        Ok(None) => return not_found().await,
        Err(e) => match refusal(e) {
            Ok(refused) => refused,
            Err(e) => return server_error(e),
        },
    };
    show(&state, &id, status, Some(&notice)).await
}

/// A press's error as the page's status and words; `Err` for a failure of Tender's own.
fn refusal(e: CoreError) -> Result<(StatusCode, String), CoreError> {
    Ok(match e {
        CoreError::Card { message, .. } => (
            StatusCode::PAYMENT_REQUIRED,
            format!("Your card was declined: {message}"),
        ),
        // The same page's press is still being tried (a double press): the page, not an error.
        CoreError::IdempotencyInProgress => (
            StatusCode::CONFLICT,
            "A payment of this invoice is in progress; refresh this page in a moment.".into(),
        ),
        CoreError::InvalidParam {
            code: "token_invalid",
            message,
            ..
        } => (StatusCode::BAD_REQUEST, message.into_owned()),
        CoreError::Blocked { message, .. } => (StatusCode::TOO_MANY_REQUESTS, message.into_owned()),
        // Paid, voided or written off meanwhile: the page says which.
        e @ (CoreError::InvalidParam { .. } | CoreError::UnexpectedState { .. }) => (
            StatusCode::CONFLICT,
            format!("This invoice cannot be paid now: {e}"),
        ),
        other => return Err(other),
    })
}
