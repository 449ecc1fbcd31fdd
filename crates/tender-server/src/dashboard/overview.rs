//! The overview, `/dashboard/overview` (where `/dashboard` leads): the last 30 days at a
//! glance — gross volume and net per currency, success rate, a daily chart drawn as SVG on the
//! server — and one search box that finds payments by id, customer e-mail (any case), card or
//! IBAN last four, amount, currency code or description.
//!
//! Both read the newest [`SCAN_LIMIT`] payments of the session's account and mode, newest first
//! in pages of 100 (the store has no full-text index); a search that reached that limit says so.
//! Depends on the services and the dashboard's layout only.

use std::collections::{BTreeMap, HashSet};

use axum::extract::{Query, State};
use axum::http::StatusCode;
use maud::{html, Markup, PreEscaped};
use serde::Deserialize;
use tender_core::money::Currency;
use tender_core::payments::payment::{Payment, PaymentStatus};
use tender_core::services::ListParams;
use tender_core::store::{Collection, CreatedRange};

use super::layout::{html_response, money, page, Notice, Section};
use super::payments::{parse_major, parse_page, payments_table};
use super::{see_other, DashboardState, PageResult, Session};

/// Payments read at most for the figures and a search.
pub const SCAN_LIMIT: usize = 5_000;
/// Days the figures and the chart cover.
const DAYS: i64 = 30;

#[derive(Deserialize)]
pub struct Search {
    q: Option<String>,
}

/// The newest payments, created at or after `since` when given, at most [`SCAN_LIMIT`]; and
/// whether the limit cut the scan short.
async fn recent_payments(
    state: &DashboardState,
    session: &Session,
    since: Option<i64>,
) -> Result<(Vec<Payment>, bool), super::DashError> {
    let mut out = Vec::new();
    let mut after = None;
    loop {
        let params = ListParams {
            limit: 100,
            starting_after: after.clone(),
            created: CreatedRange {
                gte: since,
                ..CreatedRange::default()
            },
            ..ListParams::default()
        };
        let raw = state
            .services()
            .list_raw(&session.scope(), Collection::Payments, &params, Vec::new())
            .await?;
        let page: Vec<Payment> = parse_page(&raw)?;
        after = page.last().map(|p| p.id.clone());
        out.extend(page);
        if !raw.has_more || after.is_none() {
            return Ok((out, false));
        }
        if out.len() >= SCAN_LIMIT {
            return Ok((out, true));
        }
    }
}

/// What a search term can mean, tried all at once: a payment whose id, customer's e-mail,
/// card or IBAN last four, amount (in its currency's major unit) or description matches.
fn matches(p: &Payment, term: &str, customers: &HashSet<String>) -> bool {
    let lower = term.to_lowercase();
    let last4 = p
        .payment_method
        .card
        .as_ref()
        .map(|c| c.last4.as_str())
        .or(p
            .payment_method
            .bank_transfer
            .as_ref()
            .map(|b| b.last4.as_str()));
    p.id == term
        || p.currency.code() == lower
        || p.customer
            .as_ref()
            .is_some_and(|c| customers.contains(c) || c == term)
        || (term.len() == 4 && last4 == Some(term))
        || parse_major(term, p.currency.exponent()) == Some(p.amount)
        || p.description
            .as_ref()
            .is_some_and(|d| !lower.is_empty() && d.to_lowercase().contains(&lower))
}

/// `GET /dashboard/overview[?q=…]`.
pub async fn overview(
    State(state): State<DashboardState>,
    session: Session,
    Query(search): Query<Search>,
) -> PageResult {
    let term = search.q.as_deref().map(str::trim).unwrap_or("");
    if term.starts_with("pay_") {
        if let Ok(p) = state
            .services()
            .payments()
            .get_payment(&session.scope(), term)
            .await
        {
            return Ok(see_other(&format!("/dashboard/payments/{}", p.id)));
        }
    }
    let now = state.services().now();
    let since = now - DAYS * 86_400;
    let body = if term.is_empty() {
        let (recent, truncated) = recent_payments(&state, &session, Some(since)).await?;
        figures(&recent, since, truncated)
    } else {
        // Customers with that e-mail (any case), whose payments match too.
        let mut customers = HashSet::new();
        if term.contains('@') {
            let raw = state
                .services()
                .list_raw(
                    &session.scope(),
                    Collection::Customers,
                    &ListParams {
                        limit: 100,
                        ..ListParams::default()
                    },
                    vec![tender_core::customers::service::email_filter(term)],
                )
                .await?;
            for c in parse_page::<serde_json::Value>(&raw)? {
                if let Some(id) = c["id"].as_str() {
                    customers.insert(id.to_string());
                }
            }
        }
        let (all, truncated) = recent_payments(&state, &session, None).await?;
        let found: Vec<Payment> = all
            .into_iter()
            .filter(|p| matches(p, term, &customers))
            .take(100)
            .collect();
        html! {
            section.card.table-card #results {
                h2 { "Payments matching “" (term) "”" }
                @if found.is_empty() {
                    (super::empty_state("No payment matches. Search by payment id, customer e-mail, card last four, amount (like 25.00) or description."))
                } @else {
                    (payments_table(&found))
                }
                @if truncated {
                    p.muted { "Only the newest " (SCAN_LIMIT) " payments were searched." }
                }
            }
        }
    };
    let body = html! {
        form.search method="get" action="/dashboard/overview" role="search" {
            label for="q" { "Search payments" }
            input #q type="search" name="q" value=(term) placeholder="pay_…, jenny@example.com, 4242, 25.00, order 1001";
            button type="submit" { "Search" }
        }
        (body)
    };
    Ok(html_response(
        StatusCode::OK,
        page(&session, Section::Overview, "Overview", &Notice::None, body),
    ))
}

/// Per-currency totals of the last 30 days.
#[derive(Default)]
struct Totals {
    gross: i64,
    refunded: i64,
    count: usize,
    /// Gross volume per day, index 0 = 29 days ago.
    daily: [i64; DAYS as usize],
}

fn figures(payments: &[Payment], since: i64, truncated: bool) -> Markup {
    let mut per_currency: BTreeMap<&'static str, (Currency, Totals)> = BTreeMap::new();
    let (mut succeeded, mut failed) = (0usize, 0usize);
    for p in payments {
        match p.status {
            PaymentStatus::Failed => failed += 1,
            PaymentStatus::Succeeded => {
                succeeded += 1;
                let (_, t) = per_currency
                    .entry(p.currency.code())
                    .or_insert_with(|| (p.currency, Totals::default()));
                t.gross = t.gross.saturating_add(p.amount_captured);
                t.refunded = t.refunded.saturating_add(p.amount_refunded);
                t.count += 1;
                let day = ((p.created - since) / 86_400).clamp(0, DAYS - 1) as usize;
                t.daily[day] = t.daily[day].saturating_add(p.amount_captured);
            }
            _ => {}
        }
    }
    let rate = if succeeded + failed == 0 {
        "—".to_string()
    } else {
        format!(
            "{:.1} %",
            100.0 * succeeded as f64 / (succeeded + failed) as f64
        )
    };
    // The chart shows the currency with the most volume.
    let main = per_currency
        .values()
        .max_by_key(|(_, t)| t.gross)
        .map(|(c, t)| (*c, t.daily));
    html! {
        div.stats {
            section.card.stat { p.muted { "Payments, last 30 days" } p.figure #payment-count { (payments.len()) } }
            section.card.stat { p.muted { "Success rate" } p.figure #success-rate { (rate) } }
            @for (currency, t) in per_currency.values() {
                section.card.stat {
                    p.muted { "Gross volume, " (currency.code().to_uppercase()) }
                    p.figure { (money(t.gross, *currency)) }
                    p.muted { "Net of refunds " (money(t.gross - t.refunded, *currency)) " · " (t.count) " paid" }
                }
            }
        }
        @if let Some((currency, daily)) = main {
            section.card {
                h2 { "Gross volume per day, " (currency.code().to_uppercase()) }
                (chart(&daily, currency))
            }
        } @else {
            (super::empty_state("No successful payment in the last 30 days yet."))
        }
        @if truncated {
            p.muted { "The figures cover the newest " (SCAN_LIMIT) " payments of the period." }
        }
    }
}

/// Thirty bars, scaled to the largest day; an `<svg>` with a title per bar for its value.
fn chart(daily: &[i64; DAYS as usize], currency: Currency) -> Markup {
    let (w, h, gap) = (20i64, 120i64, 4i64);
    let max = daily.iter().copied().max().unwrap_or(0).max(1);
    let mut bars = String::new();
    for (i, v) in daily.iter().enumerate() {
        let height = (v * h / max).max(if *v > 0 { 2 } else { 0 });
        let x = i as i64 * (w + gap);
        let label =
            maud::html! { (format!("{} days ago: {}", DAYS - 1 - i as i64, money(*v, currency))) }
                .into_string();
        bars.push_str(&format!(
            r#"<rect x="{x}" y="{}" width="{w}" height="{height}" rx="2"><title>{label}</title></rect>"#,
            h - height
        ));
    }
    let width = DAYS * (w + gap);
    html! {
        svg.chart #volume-chart viewBox=(format!("0 0 {width} {h}")) role="img" aria-label="Gross volume per day, last 30 days" preserveAspectRatio="none" {
            (PreEscaped(bars))
        }
    }
}
