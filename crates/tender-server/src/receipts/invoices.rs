//! The hosted invoice page (`hosted_invoice_url`, CONTRACT §10), on the receipt host:
//!
//! - `GET /invoices/{invoice_id}`: who bills, the lines with their periods, the total, what was
//!   paid, the status in the customer's words, the payments tried; for an open invoice, a pay
//!   button naming the card on file it charges.
//! - `POST /invoices/{invoice_id}/pay`: that button. It tries the invoice now, as
//!   `POST /invoices/{id}/pay` would, then shows the page again (303) — or, declined, the page
//!   with the bank's reason (402). Like the 3-D Secure form, it works without JavaScript, and
//!   the unguessable invoice id in the URL is what stands between it and cross-site forgery;
//!   paying twice cannot charge twice (a paid invoice is no longer open).

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use maud::{html, Markup};
use tender_core::billing::InvoiceStatus;
use tender_core::clock::format_date;
use tender_core::error::CoreError;
use tender_core::money::format_amount;
use tender_core::service::billing::hosted::HostedInvoice;

use super::{html_response, not_found, page, server_error};
use crate::state::AppState;

/// The invoice's state in the words of the person who owes it.
fn status_words(s: InvoiceStatus) -> &'static str {
    match s {
        InvoiceStatus::Draft => "Draft",
        InvoiceStatus::Open => "Due",
        InvoiceStatus::Paid => "Paid",
        InvoiceStatus::Uncollectible => "Unpaid",
        InvoiceStatus::Void => "Canceled",
    }
}

/// The page; `notice` is a line above the pay button (why the last try failed).
fn render(h: &HostedInvoice, notice: Option<&str>) -> Markup {
    let inv = &h.invoice;
    let title = match &h.merchant {
        Some(m) => format!("Invoice from {m}"),
        None => "Invoice".to_string(),
    };
    let due = inv.amount_due - inv.amount_paid;
    page(
        &title,
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
                    tr { td { "Invoice number" } td { (inv.id) } }
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
                    @match &h.card {
                        Some(pm) => {
                            form method="post" action=(format!("/invoices/{}/pay", inv.id)) {
                                button.primary type="submit" {
                                    "Pay " (format_amount(due, inv.currency)) " with "
                                    (pm.card.brand.display_name()) " •••• " (pm.card.last4)
                                }
                            }
                        }
                        None => {
                            p.outcome { "There is no card on file to pay with. Please contact the merchant." }
                        }
                    }
                }
                @if let (Some(p), InvoiceStatus::Paid) = (&inv.payment, inv.status) {
                    p { a href=(format!("/{p}")) { "See the receipt" } }
                }
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
    match state.services.find_hosted_invoice(&id).await {
        Ok(Some(h)) => html_response(StatusCode::OK, render(&h, None)),
        Ok(None) => not_found().await,
        Err(e) => server_error(e),
    }
}

pub(super) async fn pay(State(state): State<AppState>, Path(id): Path<String>) -> Response {
    let request_id = crate::http::error::current_request_id();
    let (status, notice) = match state.services.pay_hosted_invoice(&id, request_id).await {
        Ok(Some(_)) => return Redirect::to(&format!("/invoices/{id}")).into_response(),
        Ok(None) => return not_found().await,
        Err(CoreError::Card { message, .. }) => (
            StatusCode::PAYMENT_REQUIRED,
            format!("Your card was declined: {message}"),
        ),
        // Paid, voided or written off meanwhile: the page says which.
        Err(e @ (CoreError::InvalidParam { .. } | CoreError::UnexpectedState { .. })) => (
            StatusCode::CONFLICT,
            format!("This invoice cannot be paid now: {e}"),
        ),
        Err(e) => return server_error(e),
    };
    match state.services.find_hosted_invoice(&id).await {
        Ok(Some(h)) => html_response(status, render(&h, Some(&notice))),
        Ok(None) => not_found().await,
        Err(e) => server_error(e),
    }
}
