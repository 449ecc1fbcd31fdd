//! Payments: the list (filters by status and customer, newest first, paged with
//! `starting_after` / `ending_before` links) and the detail page with its refunds, its events and
//! the refund / capture / cancel forms (their actions, each behind a confirmation page, are
//! [`super::payment_actions`]).

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use maud::{html, Markup};
use serde::Deserialize;
use tender_core::error::CoreError;
use tender_core::payments::payment::{Payment, PaymentStatus};
use tender_core::refunds::refund::{Refund, RefundReason, RefundStatus};
use tender_core::services::{ListParams, RawPage};
use tender_core::store::{Collection, Field};

use super::auth::Done;
use super::layout::{
    self, badge, csrf_field, html_response, money, page, pager, post_button, Notice, Section,
};
use super::{DashError, DashboardState, PageResult, Session};
use axum::response::IntoResponse;

/// How many recent events of each type the detail page searches for the payment's own.
const EVENT_WINDOW: u32 = 100;

/// Documents of a raw page, typed.
pub fn parse_page<T: serde::de::DeserializeOwned>(page: &RawPage) -> Result<Vec<T>, DashError> {
    page.data
        .iter()
        .map(|body| {
            serde_json::from_str(body).map_err(|e| {
                DashError::Core(CoreError::Store(tender_core::error::StoreError::Corrupt(
                    e.to_string(),
                )))
            })
        })
        .collect()
}

/// Turns a user-typed amount in major units (`12.34`, `5`, `1000` for jpy) into minor units.
/// At most `exponent` fraction digits; no signs, separators or exponents.
pub fn parse_major(input: &str, exponent: u8) -> Option<i64> {
    let s = input.trim();
    let (whole, frac) = match s.split_once('.') {
        Some((w, f)) => (w, f),
        None => (s, ""),
    };
    let digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
    if (whole.is_empty() && frac.is_empty())
        || !digits(whole)
        || !digits(frac)
        || frac.len() > usize::from(exponent)
        || (s.contains('.') && frac.is_empty())
    {
        return None;
    }
    let scale = 10i64.checked_pow(u32::from(exponent))?;
    let whole: i64 = if whole.is_empty() {
        0
    } else {
        whole.parse().ok()?
    };
    let mut frac_value: i64 = if frac.is_empty() {
        0
    } else {
        frac.parse().ok()?
    };
    for _ in frac.len()..usize::from(exponent) {
        frac_value *= 10;
    }
    whole.checked_mul(scale)?.checked_add(frac_value)
}

/// Card brand and last four (or the bank account), for tables.
pub fn method_summary(p: &Payment) -> String {
    if let Some(c) = &p.payment_method.card {
        format!("{} •••• {}", c.brand.display_name(), c.last4)
    } else if let Some(b) = &p.payment_method.bank_transfer {
        format!("bank transfer •••• {}", b.last4)
    } else {
        p.payment_method.kind.clone()
    }
}

/// The payments table, shared with the customer page.
pub fn payments_table(payments: &[Payment]) -> Markup {
    html! {
        table.payments {
            thead { tr { th.num { "Amount" } th { "Status" } th { "Description" } th { "Method" } th { "Created" } } }
            tbody {
                @for p in payments {
                    tr {
                        td.num { a href=(format!("/dashboard/payments/{}", p.id)) { (money(p.amount, p.currency)) } }
                        td {
                            (badge(p.status.as_str()))
                            @if p.refunded { " " (badge("refunded")) }
                            @else if p.amount_refunded > 0 { " " (badge("partially_refunded")) }
                        }
                        td { (p.description.as_deref().unwrap_or("")) }
                        td.nowrap { (method_summary(p)) }
                        td.muted.date { (layout::when(p.created)) }
                    }
                }
            }
        }
    }
}

fn refund_status(r: &Refund) -> &'static str {
    match r.status {
        RefundStatus::Pending => "pending",
        RefundStatus::Succeeded => "succeeded",
        RefundStatus::Failed => "failed",
    }
}

fn reason_label(r: RefundReason) -> &'static str {
    match r {
        RefundReason::Duplicate => "duplicate",
        RefundReason::Fraudulent => "fraudulent",
        RefundReason::RequestedByCustomer => "requested by customer",
    }
}

pub(super) fn blank_to_none(v: Option<String>) -> Option<String> {
    v.map(|s| s.trim().to_string()).filter(|s| !s.is_empty())
}

#[derive(Deserialize, Default)]
pub struct PaymentFilters {
    status: Option<String>,
    customer: Option<String>,
    /// `YYYY-MM-DD`, first day shown (in the viewer's time zone).
    from: Option<String>,
    /// `YYYY-MM-DD`, last day shown.
    to: Option<String>,
    starting_after: Option<String>,
    ending_before: Option<String>,
}

/// `GET /dashboard/payments`.
pub async fn list_payments(
    State(state): State<DashboardState>,
    session: Session,
    Query(q): Query<PaymentFilters>,
) -> PageResult {
    let status = blank_to_none(q.status);
    let customer = blank_to_none(q.customer);
    let starting_after = blank_to_none(q.starting_after);
    let ending_before = blank_to_none(q.ending_before);
    let mut notice = Notice::None;
    let mut filters = Vec::new();
    match status.as_deref().map(PaymentStatus::parse) {
        Some(Some(s)) => filters.push((Field::Status, s.as_str().to_string())),
        Some(None) => notice = Notice::Error("Unknown status.".into()),
        None => {}
    }
    if let Some(c) = &customer {
        filters.push((Field::Customer, c.clone()));
    }
    let from = blank_to_none(q.from);
    let to = blank_to_none(q.to);
    let created = days(from.as_deref(), to.as_deref()).unwrap_or_else(|| {
        notice = Notice::Error("Dates are written YYYY-MM-DD.".into());
        Default::default()
    });
    let params = ListParams {
        limit: super::PAGE_SIZE,
        starting_after: starting_after.clone(),
        ending_before: ending_before.clone(),
        created,
        ..ListParams::default()
    };
    let (payments, has_more, refused): (Vec<Payment>, _, _) =
        super::list_page(&state, &session, Collection::Payments, &params, filters).await?;
    if let Notice::Error(_) = refused {
        notice = refused;
    }
    let status_value = status.as_deref().unwrap_or("");
    let customer_value = customer.as_deref().unwrap_or("");
    let from_value = from.as_deref().unwrap_or("");
    let to_value = to.as_deref().unwrap_or("");
    let body = html! {
        (filter_form([status_value, customer_value, from_value, to_value]))
        section.card.table-card {
            @if payments.is_empty() {
                (super::empty_state("No payments match."))
            } @else {
                (payments_table(&payments))
            }
        }
        (pager(
            "/dashboard/payments",
            &[("status", status_value), ("customer", customer_value), ("from", from_value), ("to", to_value)],
            payments.first().map(|p| p.id.as_str()),
            payments.last().map(|p| p.id.as_str()),
            has_more,
            ending_before.is_some(),
            starting_after.is_some(),
        ))
    };
    Ok(html_response(
        StatusCode::OK,
        page(&session, Section::Payments, "Payments", &notice, body),
    ))
}

/// The days `from` and `to` (`YYYY-MM-DD`, in the viewer's time zone; `to` included) as a range
/// of creation times; `None` when one is not a date.
fn days(from: Option<&str>, to: Option<&str>) -> Option<tender_core::store::CreatedRange> {
    let offset = i64::from(layout::viewer_offset()) * 60;
    let day_start = |text: &str| {
        let mut parts = text.splitn(3, '-').map(|p| p.parse::<u32>().ok());
        let (y, m, d) = (parts.next()??, parts.next()??, parts.next()??);
        tender_core::clock::unix_from_civil(i32::try_from(y).ok()?, m, d).map(|t| t - offset)
    };
    let mut created = tender_core::store::CreatedRange::default();
    if let Some(from) = from {
        created.gte = Some(day_start(from)?);
    }
    if let Some(to) = to {
        created.lt = Some(day_start(to)? + 86_400);
    }
    Some(created)
}

/// The payments list's filters: status, customer, from and to, as given.
fn filter_form([status_value, customer_value, from_value, to_value]: [&str; 4]) -> Markup {
    html! {
    form.filters method="get" action="/dashboard/payments" {
        div.field {
            label for="status" { "Status" }
            select #status name="status" {
                option value="" { "Any status" }
                @for s in PaymentStatus::ALL {
                    option value=(s.as_str()) selected[s.as_str() == status_value] { (s.as_str().replace('_', " ")) }
                }
            }
        }
        div.field {
            label for="customer" { "Customer" }
            input #customer type="text" name="customer" value=(customer_value) placeholder="cus_…";
        }
        div.field {
            label for="from" { "From" }
            input #from type="date" name="from" value=(from_value);
        }
        div.field {
            label for="to" { "To" }
            input #to type="date" name="to" value=(to_value);
        }
        button type="submit" { "Filter" }
        @if [status_value, customer_value, from_value, to_value].iter().any(|v| !v.is_empty()) {
            a href="/dashboard/payments" { "Clear" }
        }
        a.export href="/dashboard/payments.csv" download { "Export CSV" }
    }
    }
}

/// `GET /dashboard/payments.csv`: every payment of the account and mode (the newest
/// [`super::overview::SCAN_LIMIT`] at most), one row each, for a spreadsheet. Every cell is
/// quoted; a cell that a spreadsheet would read as a formula (`=`, `+`, `-`, `@` first) gets a
/// leading `'`.
pub async fn export_payments(State(state): State<DashboardState>, session: Session) -> PageResult {
    fn cell(value: &str) -> String {
        let safe = if value.starts_with(['=', '+', '-', '@', '\t', '\r']) {
            format!("'{value}")
        } else {
            value.to_string()
        };
        format!("\"{}\"", safe.replace('"', "\"\""))
    }
    let mut out = String::from(
        "id,created_utc,amount,currency,status,amount_captured,amount_refunded,customer,description,payment_method\r\n",
    );
    let mut after: Option<String> = None;
    let mut rows = 0usize;
    loop {
        let params = ListParams {
            limit: 100,
            starting_after: after.clone(),
            ..ListParams::default()
        };
        let raw = state
            .services()
            .list_raw(&session.scope(), Collection::Payments, &params, Vec::new())
            .await?;
        let payments: Vec<Payment> = parse_page(&raw)?;
        for p in &payments {
            let exp = p.currency.exponent();
            let major = |minor: i64| tender_core::money::format_major(minor, exp);
            let fields = [
                p.id.clone(),
                tender_core::clock::format_utc(p.created),
                major(p.amount),
                p.currency.code().to_string(),
                p.status.as_str().to_string(),
                major(p.amount_captured),
                major(p.amount_refunded),
                p.customer.clone().unwrap_or_default(),
                p.description.clone().unwrap_or_default(),
                method_summary(p),
            ];
            let line: Vec<String> = fields.iter().map(|f| cell(f)).collect();
            out.push_str(&line.join(","));
            out.push_str("\r\n");
        }
        rows += payments.len();
        after = payments.last().map(|p| p.id.clone());
        if !raw.has_more || after.is_none() || rows >= super::overview::SCAN_LIMIT {
            break;
        }
    }
    let mode = session.mode().as_str();
    let mut resp = (StatusCode::OK, out).into_response();
    let headers = resp.headers_mut();
    headers.insert(
        axum::http::header::CONTENT_TYPE,
        axum::http::HeaderValue::from_static("text/csv; charset=utf-8"),
    );
    if let Ok(v) = axum::http::HeaderValue::from_str(&format!(
        "attachment; filename=\"tender-payments-{mode}.csv\""
    )) {
        headers.insert(axum::http::header::CONTENT_DISPOSITION, v);
    }
    Ok(resp)
}

/// The event types that can concern a payment.
const PAYMENT_EVENT_TYPES: [&str; 5] = [
    "payment.succeeded",
    "payment.failed",
    "payment.canceled",
    "payment.updated",
    "refund.created",
];

/// The payment's events (about it or one of its refunds), newest first, found among the most
/// recent [`EVENT_WINDOW`] events of each type that can concern a payment. Events are not
/// indexed by object, so a payment with older events than that shows only the recent ones.
async fn payment_events(
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
fn details_card(state: &DashboardState, p: &Payment) -> Markup {
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
fn refunds_card(refunds: &[Refund]) -> Markup {
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
fn events_card(events: &[serde_json::Value]) -> Markup {
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
fn actions_card(session: &Session, p: &Payment) -> Markup {
    let refundable = p.amount_captured - p.amount_refunded;
    let exponent = p.currency.exponent();
    let can_refund = p.status == PaymentStatus::Succeeded && refundable > 0;
    let can_capture = p.status == PaymentStatus::RequiresCapture;
    let can_cancel = matches!(
        p.status,
        PaymentStatus::RequiresCapture | PaymentStatus::RequiresAction
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
                p.muted { "Nothing to do: this payment is " (p.status.as_str().replace('_', " ")) @if p.refunded { " and fully refunded" } "." }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_major_reads_amounts_for_the_currency_exponent() {
        assert_eq!(parse_major("12.34", 2), Some(1234));
        assert_eq!(parse_major("12.3", 2), Some(1230));
        assert_eq!(parse_major("12", 2), Some(1200));
        assert_eq!(parse_major(" 0.05 ", 2), Some(5));
        assert_eq!(parse_major(".5", 2), Some(50));
        assert_eq!(parse_major("500", 0), Some(500));
        assert_eq!(parse_major("1.234", 3), Some(1234));
    }

    #[test]
    fn parse_major_refuses_what_is_not_a_plain_amount() {
        for bad in [
            "", ".", "12.", "1.234", "-5", "+5", "1,000", "1e3", "abc", "5.5.5",
        ] {
            assert_eq!(parse_major(bad, 2), None, "{bad:?}");
        }
        assert_eq!(parse_major("5.5", 0), None);
        assert_eq!(parse_major("99999999999999999999", 2), None);
    }
}
