//! Payments: the list (filters by status and customer, newest first, paged with
//! `starting_after` / `ending_before` links) and the detail page with its refunds, its events and
//! the refund / capture / cancel forms (their actions, each behind a confirmation page, are
//! [`super::payment_actions`]).

use axum::extract::{Query, State};
use axum::http::StatusCode;
use maud::{html, Markup};
use serde::Deserialize;
use tender_core::error::CoreError;
use tender_core::payments::payment::{Payment, PaymentStatus};
use tender_core::services::{ListParams, RawPage};
use tender_core::store::{Collection, Field};

use super::layout::{self, badge, html_response, money, page, pager, Notice, Section};
use super::{DashError, DashboardState, PageResult, Session};
use axum::response::IntoResponse;

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
    let zone = layout::viewer_zone();
    let day = |text: &str| {
        let mut parts = text.splitn(3, '-').map(|p| p.parse::<u32>().ok());
        let (y, m, d) = (parts.next()??, parts.next()??, parts.next()??);
        chrono::NaiveDate::from_ymd_opt(i32::try_from(y).ok()?, m, d)
    };
    let start = |date: chrono::NaiveDate| {
        use chrono::Datelike;
        layout::day_start(zone, date.year(), date.month(), date.day())
    };
    let mut created = tender_core::store::CreatedRange::default();
    if let Some(from) = from {
        created.gte = Some(start(day(from)?)?);
    }
    if let Some(to) = to {
        // The next day's start: a day of a summer-time change is 23 or 25 hours long.
        created.lt = Some(start(day(to)?.succ_opt()?)?);
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
pub(super) const PAYMENT_EVENT_TYPES: [&str; 5] = [
    "payment.succeeded",
    "payment.failed",
    "payment.canceled",
    "payment.updated",
    "refund.created",
];

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
