//! A payment's page: its details, refunds and recent events, and what can be done to it now
//! (refund, capture, cancel; the actions themselves are [`super::payment_actions`]).

use super::auth::Done;
use super::layout::{
    self, badge, csrf_field, html_response, money, page, post_button, Notice, Section,
};
use super::payments::{method_summary, parse_page, PAYMENT_EVENT_TYPES};
use super::{DashError, DashboardState, PageResult, Session};
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use maud::{html, Markup};
use tender_core::payments::payment::{Payment, PaymentStatus};
use tender_core::refunds::refund::{Refund, RefundReason, RefundStatus};
use tender_core::services::ListParams;
use tender_core::store::{Collection, Field};

/// How many recent events of each type the detail page searches for the payment's own.
pub(crate) const EVENT_WINDOW: u32 = 100;
pub(crate) fn refund_status(r: &Refund) -> &'static str {
    match r.status {
        RefundStatus::Pending => "pending",
        RefundStatus::Succeeded => "succeeded",
        RefundStatus::Failed => "failed",
    }
}

pub(crate) fn reason_label(r: RefundReason) -> &'static str {
    match r {
        RefundReason::Duplicate => "duplicate",
        RefundReason::Fraudulent => "fraudulent",
        RefundReason::RequestedByCustomer => "requested by customer",
    }
}

/// The payment's events (about it or one of its refunds), newest first, found among the most
/// recent [`EVENT_WINDOW`] events of each type that can concern a payment. Events are not
/// indexed by object, so a payment with older events than that shows only the recent ones.
pub(crate) async fn payment_events(
    state: &DashboardState,
    session: &Session,
    payment_id: &str,
) -> Result<Vec<serde_json::Value>, DashError> {
    let params = ListParams {
        limit: EVENT_WINDOW,
        ..ListParams::default()
    };
    let mut found = Vec::new();
    for kind in PAYMENT_EVENT_TYPES {
        let raw = state
            .services()
            .list_raw(
                &session.scope(),
                Collection::Events,
                &params,
                vec![(Field::Type, kind.to_string())],
            )
            .await?;
        let events: Vec<serde_json::Value> = parse_page(&raw)?;
        found.extend(events.into_iter().filter(|e| {
            let object = &e["data"]["object"];
            object["id"] == payment_id || object["payment"] == payment_id
        }));
    }
    found.sort_by(|a, b| {
        let key =
            |e: &serde_json::Value| (e["created"].as_i64(), e["id"].as_str().map(String::from));
        key(b).cmp(&key(a))
    });
    Ok(found)
}

pub(super) async fn render_payment(
    state: &DashboardState,
    session: &Session,
    id: &str,
    status: StatusCode,
    notice: Notice,
) -> PageResult {
    let scope = session.scope();
    let p = state.services().payments().get_payment(&scope, id).await?;
    let refunds_page = state
        .services()
        .list_raw(
            &scope,
            Collection::Refunds,
            &ListParams {
                limit: 100,
                ..ListParams::default()
            },
            vec![(Field::Payment, p.id.clone())],
        )
        .await?;
    let refunds: Vec<Refund> = parse_page(&refunds_page)?;
    let events = payment_events(state, session, &p.id).await?;
    let body = html! {
        div.headline {
            span.amount { (money(p.amount, p.currency)) }
            (badge(p.status.as_str()))
            @if p.refunded { (badge("refunded")) }
            @else if p.amount_refunded > 0 { (badge("partially_refunded")) }
        }
        div.columns {
            div {
                (details_card(state, &p))
                (refunds_card(&refunds))
                (events_card(&events))
            }
            div {
                (actions_card(session, &p))
            }
        }
    };
    Ok(html_response(
        status,
        page(session, Section::Payments, "Payment", &notice, body),
    ))
}

/// A payment's details: ids, amounts, method, customer, processor, failure, metadata.
pub(crate) fn details_card(state: &DashboardState, p: &Payment) -> Markup {
    html! {
        section.card {
            h2 { "Details" }
            dl.props {
                dt { "Payment id" } dd.mono #payment-id { (p.id) }
                dt { "Created" } dd { (layout::when(p.created)) }
                dt { "Captured" } dd { (money(p.amount_captured, p.currency)) }
                dt { "Refunded" } dd #amount-refunded { (money(p.amount_refunded, p.currency)) }
                dt { "Method" } dd { (method_summary(p)) }
                dt { "Customer" } dd {
                    @if let Some(c) = &p.customer {
                        a.mono href=(format!("/dashboard/customers/{c}")) { (c) }
                    } @else { span.muted { "—" } }
                }
                dt { "Description" } dd { (p.description.as_deref().unwrap_or("—")) }
                dt { "Processor" } dd #payment-connector {
                    @if let Some(c) = &p.connector {
                        span.mono { (c) }
                        @if let Some(r) = &p.connector_reference { " · " span.mono #connector-reference { (r) } }
                    } @else { span.muted { "Tender's simulator" } }
                }
                @if let Some(m) = &p.failure_message {
                    dt { "Failure" } dd { (m) @if let Some(c) = &p.decline_code { " (" (c) ")" } }
                }
                @if let Some(at) = p.canceled_at {
                    dt { "Canceled" } dd { (layout::when(at)) }
                }
                dt { "Receipt" } dd { a #receipt-link href=(state.services().renderer().receipt_url(&p.id)) { "View receipt" } }
                @for (k, v) in p.metadata.iter() {
                    dt.mono { (k) } dd { (v) }
                }
            }
        }
    }
}

/// A payment's refunds, newest first.
pub(crate) fn refunds_card(refunds: &[Refund]) -> Markup {
    html! {
        section.card {
            h2 { "Refunds" }
            @if refunds.is_empty() {
                (super::empty_state("No refunds."))
            } @else {
                table #refunds {
                    thead { tr { th.num { "Amount" } th { "Status" } th { "Reason" } th { "Created" } th { "Id" } } }
                    tbody {
                        @for r in refunds {
                            tr {
                                td.num { (money(r.amount, r.currency)) }
                                td { (badge(refund_status(r))) }
                                td { (r.reason.map(reason_label).unwrap_or("")) }
                                td.muted.date { (layout::when(r.created)) }
                                td.mono.muted { (r.id) }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// A payment's recent events, linked to their pages.
pub(crate) fn events_card(events: &[serde_json::Value]) -> Markup {
    html! {
        section.card {
            h2 { "Events" }
            @if events.is_empty() {
                (super::empty_state("No recent events."))
            } @else {
                table #events {
                    tbody {
                        @for e in events {
                            tr {
                                td { a.mono href=(format!("/dashboard/events/{}", e["id"].as_str().unwrap_or_default())) { (e["type"].as_str().unwrap_or_default()) } }
                                td.muted.date.num { (layout::when(e["created"].as_i64().unwrap_or_default())) }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// What can be done to a payment now: refund (what is left), capture, cancel.
pub(crate) fn actions_card(session: &Session, p: &Payment) -> Markup {
    let refundable = p.amount_captured - p.amount_refunded;
    let exponent = p.currency.exponent();
    let can_refund = p.status == PaymentStatus::Succeeded && refundable > 0;
    let can_capture = p.status == PaymentStatus::RequiresCapture;
    // A payment made through /v1 and not confirmed yet may be given up too.
    let can_cancel = matches!(
        p.status,
        PaymentStatus::RequiresCapture
            | PaymentStatus::RequiresAction
            | PaymentStatus::RequiresPaymentMethod
            | PaymentStatus::RequiresConfirmation
    );
    html! {
        section.card {
            h2 { "Actions" }
            @if can_refund {
                form #refund-form method="post" action=(format!("/dashboard/payments/{}/refund", p.id)) {
                    (csrf_field(session))
                    div.field {
                        label for="refund-amount" { "Refund amount" }
                        input #refund-amount type="text" name="amount" inputmode="decimal"
                            placeholder=(format!("all {}", money(refundable, p.currency)));
                    }
                    div.field {
                        label for="refund-reason" { "Reason" }
                        select #refund-reason name="reason" {
                            option value="" { "None given" }
                            option value="requested_by_customer" { "Requested by customer" }
                            option value="duplicate" { "Duplicate" }
                            option value="fraudulent" { "Fraudulent" }
                        }
                    }
                    button.primary type="submit" { "Refund" }
                }
            }
            @if can_capture {
                form #capture-form method="post" action=(format!("/dashboard/payments/{}/capture", p.id)) {
                    (csrf_field(session))
                    div.field {
                        label for="capture-amount" { "Capture amount" }
                        input #capture-amount type="text" name="amount" inputmode="decimal"
                            placeholder=(format!("all {}", money(p.amount, p.currency)));
                    }
                    button.primary type="submit" { "Capture" }
                }
            }
            @if can_cancel {
                p { (post_button(session, &format!("/dashboard/payments/{}/cancel", p.id), "Cancel payment", "danger")) }
            }
            @if !(can_refund || can_capture || can_cancel) {
                p.muted { "Nothing to do: this payment's status is " (p.status.as_str().replace('_', " ")) @if p.refunded { " and it is fully refunded" } "." }
            }
            @if exponent == 0 {
                p.muted.small { (p.currency.code().to_uppercase()) " has no minor unit." }
            }
        }
    }
}

/// `GET /dashboard/payments/{id}`.
pub async fn retrieve_payment(
    State(state): State<DashboardState>,
    session: Session,
    Path(id): Path<String>,
    Query(q): Query<Done>,
) -> PageResult {
    let notice = match q.done.as_deref() {
        Some("refunded") => Notice::Success("Refund created.".into()),
        Some("captured") => Notice::Success("Payment captured.".into()),
        Some("canceled") => Notice::Success("Payment canceled.".into()),
        _ => Notice::None,
    };
    render_payment(&state, &session, &id, StatusCode::OK, notice).await
}
