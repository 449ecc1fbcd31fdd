//! The payment detail page's actions: refund, capture, cancel. Each moves money only after a
//! confirmation page that states what will happen; the confirmed post calls the same use case
//! the API does and shows the payment again with a notice.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use maud::html;
use tender_core::error::CoreError;
use tender_core::ids::PaymentId;
use tender_core::payments::payment::{CancellationReason, Payment, PaymentStatus};
use tender_core::refunds::refund::RefundReason;
use tender_core::refunds::service::CreateRefund;

use super::layout::{csrf_field, html_response, page, Notice, Section};
use super::{DashboardState, PageResult, Posted, Session};
use axum::response::Response;
use tender_core::money::format_amount;

use super::payment_page::render_payment;
use super::payments::{method_summary, parse_major};

/// Redirects to the payment after a successful action, or shows it again with the reason the
/// action was refused.
async fn after_action<T>(
    state: &DashboardState,
    session: &Session,
    id: &str,
    result: Result<T, CoreError>,
    done: &str,
) -> PageResult {
    super::answer_action(
        result,
        &format!("/dashboard/payments/{id}?done={done}"),
        |notice| render_payment(state, session, id, StatusCode::BAD_REQUEST, notice),
    )
    .await
}

/// An optional amount field in the payment's currency.
fn amount_field(posted: &Posted, p: &Payment) -> Result<Option<i64>, CoreError> {
    match posted.fields.get("amount") {
        None => Ok(None),
        Some(text) => parse_major(text, p.currency.exponent())
            .map(Some)
            .ok_or_else(|| {
                CoreError::invalid(
                    "amount",
                    "amount_invalid",
                    format!(
                        "Enter the amount in {}, like {}.",
                        p.currency.code().to_uppercase(),
                        match p.currency.exponent() {
                            0 => "1200",
                            3 => "12.345",
                            _ => "12.34",
                        }
                    ),
                )
            }),
    }
}

/// Money moves only after a second, explicit step: a POST without `confirmed=yes` answers a
/// page that says exactly what will happen and carries the same fields to confirm with (no
/// JavaScript needed). `None` when the action was confirmed and may run.
fn confirmation(
    posted: &Posted,
    p: &Payment,
    action: &str,
    title: &str,
    what: String,
    button: &str,
) -> Option<Response> {
    if posted.fields.get("confirmed") == Some("yes") {
        return None;
    }
    let session = &posted.session;
    let keep: Vec<(&str, &str)> = ["amount", "reason"]
        .into_iter()
        .filter_map(|name| posted.fields.get(name).map(|v| (name, v)))
        .collect();
    let body = html! {
        section.card.confirm {
            p.lead { (what) }
            dl.props {
                dt { "Payment" } dd.mono { (p.id) }
                dt { "Amount" } dd { (format_amount(p.amount, p.currency)) }
                dt { "Payment method" } dd { (method_summary(p)) }
                @if let Some(c) = &p.customer { dt { "Customer" } dd.mono { (c) } }
                @if let Some(d) = &p.description { dt { "Description" } dd { (d) } }
            }
            form method="post" action=(format!("/dashboard/payments/{}/{action}", p.id)) {
                (csrf_field(session))
                @for (name, value) in &keep {
                    input type="hidden" name=(name) value=(value);
                }
                input type="hidden" name="confirmed" value="yes";
                button.primary.danger #confirm type="submit" { (button) }
                " "
                a href=(format!("/dashboard/payments/{}", p.id)) { "Go back" }
            }
        }
    };
    Some(html_response(
        StatusCode::OK,
        page(session, Section::Payments, title, &Notice::None, body),
    ))
}

/// `POST /dashboard/payments/{id}/refund` (`amount` optional: the rest of the payment), after
/// a confirmation page.
pub async fn refund_payment(
    State(state): State<DashboardState>,
    Path(id): Path<String>,
    posted: Posted,
) -> PageResult {
    let session = &posted.session;
    let p = state
        .services()
        .payments()
        .get_payment(&session.scope(), &id)
        .await?;
    let checked = amount_field(&posted, &p).and_then(|amount| {
        let reason = match posted.fields.get("reason") {
            None => None,
            Some(r) => Some(RefundReason::parse(r).ok_or_else(|| {
                CoreError::invalid("reason", "parameter_invalid", "Unknown refund reason.")
            })?),
        };
        Ok((amount, reason))
    });
    let left = p.amount_captured - p.amount_refunded;
    // Nothing to confirm when the refund cannot happen: the service says why straight away.
    let possible = p.status == PaymentStatus::Succeeded
        && matches!(&checked, Ok((amount, _)) if amount.unwrap_or(left) <= left && left > 0);
    if let (true, Ok((amount, _))) = (possible, &checked) {
        let what = format!(
            "Refund {} of this payment to the customer? This cannot be undone.",
            format_amount(amount.unwrap_or(left), p.currency)
        );
        if let Some(page) =
            confirmation(&posted, &p, "refund", "Confirm the refund", what, "Refund")
        {
            return Ok(page);
        }
    }
    let result = async {
        let (amount, reason) = checked?;
        state
            .services()
            .refunds()
            .create_refund(
                &session.ctx(),
                CreateRefund {
                    payment: p.id.clone(),
                    amount,
                    reason,
                    metadata: Vec::new(),
                },
            )
            .await
    }
    .await;
    after_action(&state, session, &id, result, "refunded").await
}

/// `POST /dashboard/payments/{id}/capture` (`amount` optional: all of it).
pub async fn capture_payment(
    State(state): State<DashboardState>,
    Path(id): Path<String>,
    posted: Posted,
) -> PageResult {
    let session = &posted.session;
    let p = state
        .services()
        .payments()
        .get_payment(&session.scope(), &id)
        .await?;
    let checked = amount_field(&posted, &p);
    let possible = p.status == PaymentStatus::RequiresCapture
        && matches!(&checked, Ok(amount) if amount.unwrap_or(p.amount) <= p.amount);
    if let (true, Ok(amount)) = (possible, &checked) {
        let what = format!(
            "Capture {} of this payment? The customer is charged; the rest of the authorisation is released.",
            format_amount(amount.unwrap_or(p.amount), p.currency)
        );
        if let Some(page) = confirmation(
            &posted,
            &p,
            "capture",
            "Confirm the capture",
            what,
            "Capture",
        ) {
            return Ok(page);
        }
    }
    let result = async {
        let amount = checked?;
        state
            .services()
            .payments()
            .capture_payment(&session.ctx(), &PaymentId::stored(&p.id), amount)
            .await
    }
    .await;
    after_action(&state, session, &id, result, "captured").await
}

/// `POST /dashboard/payments/{id}/cancel`.
pub async fn cancel_payment(
    State(state): State<DashboardState>,
    Path(id): Path<String>,
    posted: Posted,
) -> PageResult {
    let session = &posted.session;
    let p = state
        .services()
        .payments()
        .get_payment(&session.scope(), &id)
        .await?;
    let what = format!(
        "Cancel this payment of {}? The authorisation is released and the customer is not charged.",
        format_amount(p.amount, p.currency)
    );
    let possible = matches!(
        p.status,
        PaymentStatus::RequiresCapture | PaymentStatus::RequiresAction
    );
    if possible {
        if let Some(page) = confirmation(
            &posted,
            &p,
            "cancel",
            "Confirm the cancellation",
            what,
            "Cancel the payment",
        ) {
            return Ok(page);
        }
    }
    let result = state
        .services()
        .payments()
        .cancel_payment(
            &session.ctx(),
            &PaymentId::stored(&p.id),
            Some(CancellationReason::RequestedByCustomer),
        )
        .await;
    after_action(&state, session, &id, result, "canceled").await
}
