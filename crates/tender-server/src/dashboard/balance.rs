//! The money (CONTRACT §9): `/dashboard/balance` (pending and available per currency, a chart of
//! the last 30 days' gross volume and net drawn as SVG on the server, the latest balance
//! transactions, the CSV download of a period, payouts with a form to create one and a cancel
//! button while pending); disputes have their own pages ([`super::disputes`]).
//!
//! Every read and write goes through the same use cases as the API. Depends on the services and
//! the dashboard's layout only.

use std::collections::BTreeMap;

use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::IntoResponse;
use maud::{html, Markup, PreEscaped};
use serde::Deserialize;
use tender_core::balance::payouts::CreatePayout;
use tender_core::balance::payouts::{Payout, PayoutDestination};
use tender_core::balance::transactions::{BalanceTransaction, TxnType};
use tender_core::error::CoreError;
use tender_core::money::Currency;
use tender_core::secret::Secret;
use tender_core::services::ListParams;
use tender_core::store::{Collection, CreatedRange};

use super::auth::Done;
use super::layout::{
    badge, csrf_field, html_response, money, page, post_button, when, Notice, Section,
};
use super::payments::{parse_major, parse_page};
use super::{DashError, DashboardState, PageResult, Posted, Session};

/// Days the chart covers.
const DAYS: i64 = 30;
/// Balance transactions read at most for the chart.
const CHART_SCAN: usize = 5_000;

/// The newest `limit` documents of a collection.
pub(super) async fn newest<T: serde::de::DeserializeOwned>(
    state: &DashboardState,
    session: &Session,
    collection: Collection,
    limit: u32,
) -> Result<Vec<T>, DashError> {
    let raw = state
        .services()
        .list_raw(
            &session.scope(),
            collection,
            &ListParams {
                limit,
                ..ListParams::default()
            },
            Vec::new(),
        )
        .await?;
    parse_page(&raw)
}

/// The balance transactions created since `since`, newest first, at most [`CHART_SCAN`].
async fn transactions_since(
    state: &DashboardState,
    session: &Session,
    since: i64,
) -> Result<Vec<BalanceTransaction>, DashError> {
    let mut out = Vec::new();
    let mut after = None;
    loop {
        let params = ListParams {
            limit: 100,
            starting_after: after.clone(),
            created: CreatedRange {
                gte: Some(since),
                ..CreatedRange::default()
            },
            ..ListParams::default()
        };
        let raw = state
            .services()
            .list_raw(
                &session.scope(),
                Collection::BalanceTransactions,
                &params,
                Vec::new(),
            )
            .await?;
        let page: Vec<BalanceTransaction> = parse_page(&raw)?;
        after = page.last().map(|t| t.id.clone());
        out.extend(page);
        if !raw.has_more || after.is_none() || out.len() >= CHART_SCAN {
            return Ok(out);
        }
    }
}

/// Per day (index 0 = 29 days ago): gross volume (what charges captured) and net (every
/// transaction's `net`), in one currency.
fn daily(txns: &[BalanceTransaction], currency: Currency, since: i64) -> Vec<(i64, i64)> {
    let mut days = vec![(0i64, 0i64); DAYS as usize];
    for t in txns.iter().filter(|t| t.currency == currency) {
        let day = ((t.created - since) / 86_400).clamp(0, DAYS - 1) as usize;
        if t.kind == TxnType::Charge {
            days[day].0 = days[day].0.saturating_add(t.amount);
        }
        days[day].1 = days[day].1.saturating_add(t.net);
    }
    days
}

/// Two bars a day, gross and net, on one scale; net below the zero line when negative. Each
/// bar has a title with its value.
fn chart(days: &[(i64, i64)], currency: Currency) -> Markup {
    let (w, h, gap) = (9i64, 120i64, 6i64);
    let top = days.iter().map(|d| d.0.max(d.1)).max().unwrap_or(0).max(0);
    let bottom = days.iter().map(|d| d.1.min(0)).min().unwrap_or(0);
    let span = (top - bottom).max(1);
    let zero = top * h / span;
    let mut bars = String::new();
    for (i, (gross, net)) in days.iter().enumerate() {
        let ago = DAYS - 1 - i as i64;
        let x = i as i64 * (2 * w + gap);
        for (j, (v, class, what)) in [(*gross, "gross", "gross volume"), (*net, "net", "net")]
            .into_iter()
            .enumerate()
        {
            let height = (v.abs() * h / span).max(i64::from(v != 0) * 2);
            let y = if v >= 0 { zero - height } else { zero };
            let label =
                html! { (format!("{ago} days ago, {what}: {}", money(v, currency))) }.into_string();
            bars.push_str(&format!(
                r#"<rect class="{class}" x="{}" y="{y}" width="{w}" height="{height}"><title>{label}</title></rect>"#,
                x + j as i64 * w
            ));
        }
    }
    let width = DAYS * (2 * w + gap);
    html! {
        svg.chart #balance-chart viewBox=(format!("0 0 {width} {h}")) role="img" aria-label="Gross volume and net per day, last 30 days" preserveAspectRatio="none" {
            line x1="0" x2=(width) y1=(zero) y2=(zero) class="zero" {}
            (PreEscaped(bars))
        }
        p.legend.small { span.key.gross {} "Gross volume " span.key.net {} "Net (after fees, refunds, disputes)" }
    }
}

/// The balance per currency: what Tender holds, and what processors hold.
fn stats(balance: &tender_core::balance::service::Balance) -> Markup {
    html! {
        div.stats #balance {
            @if balance.available.is_empty() {
                section.card.stat { p.muted { "Balance" } p.figure { "—" } p.muted { "Nothing booked yet." } }
            }
            @for (a, p) in balance.available.iter().zip(&balance.pending) {
                section.card.stat {
                    p.muted { "Available, " (a.currency.code().to_uppercase()) }
                    p.figure.available { (money(a.amount, a.currency)) }
                    p.muted { "Pending " span.pending { (money(p.amount, p.currency)) } }
                }
            }
            @for (a, p) in balance.processors.available.iter().zip(&balance.processors.pending) {
                section.card.stat.processors {
                    p.muted { "At your processors, " (a.currency.code().to_uppercase()) }
                    p.figure { (money(a.amount, a.currency)) }
                    p.muted { "Pending " (money(p.amount, p.currency)) ". They pay it out, not Tender." }
                }
            }
        }
    }
}

pub(super) fn txn_table(txns: &[BalanceTransaction]) -> Markup {
    html! {
        table #transactions {
            thead { tr { th { "Type" } th.num { "Amount" } th.num { "Fee" } th.num { "Net" } th { "Status" } th { "Held by" } th { "Available on" } th { "Source" } th { "Created" } } }
            tbody {
                @for t in txns {
                    tr {
                        td { (t.kind.as_str()) br; span.mono.muted.small { (t.id) } }
                        td.num { (money(t.amount, t.currency)) }
                        td.num { (money(t.fee, t.currency)) }
                        td.num { (money(t.net, t.currency)) }
                        td { (badge(t.status.as_str())) }
                        td.small { @match &t.connector {
                            Some(c) => a.mono href=(format!("/dashboard/connectors#{c}")) { (c) },
                            None => "Tender",
                        } }
                        td.date { (when(t.available_on)) }
                        td.mono.small {
                            @if t.source.starts_with("pay_") {
                                a href=(format!("/dashboard/payments/{}", t.source)) { (t.source) }
                            } @else if t.source.starts_with("dp_") {
                                a href=(format!("/dashboard/disputes/{}", t.source)) { (t.source) }
                            } @else { (t.source) }
                        }
                        td.date { (when(t.created)) }
                    }
                }
            }
        }
    }
}

fn payouts_table(session: &Session, payouts: &[Payout]) -> Markup {
    html! {
        table #payouts {
            thead { tr { th.num { "Amount" } th { "Status" } th { "To" } th { "Arrives" } th { "Created" } th {} } }
            tbody {
                @for p in payouts {
                    tr {
                        td.num { (money(p.amount, p.currency)) br; span.mono.muted.small { (p.id) } }
                        td { (badge(p.status.as_str())) @if let Some(code) = &p.failure_code { br; span.small { (code) } } }
                        td {
                            @match (&p.destination, &p.connector) {
                                (Some(d), _) => { (d.account_holder_name) br; span.mono.small { (d.country) " …" (d.last4) } }
                                (None, Some(connector)) => { "Paid out by the processor" br; span.mono.small { (connector) " " (p.connector_reference.as_deref().unwrap_or_default()) } }
                                (None, None) => { "—" }
                            }
                        }
                        td.date { (when(p.arrival_date)) }
                        td.date { (when(p.created)) }
                        td.actions {
                            @if p.status == tender_core::balance::payouts::PayoutStatus::Pending && p.connector.is_none() {
                                (post_button(session, &format!("/dashboard/payouts/{}/cancel", p.id), "Cancel", "small danger"))
                            }
                        }
                    }
                }
            }
        }
    }
}

fn payout_form(session: &Session, currencies: &[Currency]) -> Markup {
    html! {
        form #create-payout method="post" action="/dashboard/payouts" {
            (csrf_field(session))
            div.field {
                label for="amount" { "Amount" }
                input #amount type="text" name="amount" inputmode="decimal" placeholder="100.00" required;
            }
            div.field {
                label for="currency" { "Currency" }
                select #currency name="currency" {
                    @for c in currencies { option value=(c.code()) { (c.code().to_uppercase()) } }
                    @if currencies.is_empty() { option value="usd" { "USD" } }
                }
            }
            div.field {
                label for="iban" { "IBAN" }
                input #iban type="text" name="iban" autocomplete="off" placeholder="DE89 3704 0044 0532 0130 00" required;
            }
            div.field {
                label for="account_holder_name" { "Account holder" }
                input #account_holder_name type="text" name="account_holder_name" maxlength="200" required;
            }
            button.primary type="submit" { "Pay out" }
        }
    }
}

/// The account's default destination (where `POST /v1/payouts` pays out) and the form that
/// sets it.
fn destination_form(session: &Session, current: Option<&PayoutDestination>) -> Markup {
    html! {
        p.muted #default-destination {
            @match current {
                Some(d) => { "Payouts made through the Stripe-compatible API go to " (d.account_holder_name) ", " (d.country) " …" (d.last4) "." }
                None => { "None yet: payouts made through the Stripe-compatible API (POST /v1/payouts) are refused until one is set." }
            }
        }
        form #set-destination method="post" action="/dashboard/payout_destination" {
            (csrf_field(session))
            div.field {
                label for="default_iban" { "IBAN" }
                input #default_iban type="text" name="iban" autocomplete="off" required;
            }
            div.field {
                label for="default_holder" { "Account holder" }
                input #default_holder type="text" name="account_holder_name" maxlength="200" required;
            }
            button type="submit" { "Save as default" }
        }
    }
}

async fn render_balance(
    state: &DashboardState,
    session: &Session,
    status: StatusCode,
    notice: Notice,
) -> PageResult {
    let services = state.services();
    let balance = services
        .balance()
        .retrieve_balance(&session.scope())
        .await?;
    let now = services.now();
    let since = now - DAYS * 86_400;
    let recent = transactions_since(state, session, since).await?;
    let latest: Vec<BalanceTransaction> =
        newest(state, session, Collection::BalanceTransactions, 20).await?;
    let payouts: Vec<Payout> = newest(state, session, Collection::Payouts, 20).await?;
    let currencies: Vec<Currency> = balance.available.iter().map(|a| a.currency).collect();
    let destination = services
        .balance()
        .shown_payout_destination(&session.scope().account)
        .await?;
    // The chart shows the currency with the most gross volume in the period.
    let mut gross: BTreeMap<&'static str, (Currency, i64)> = BTreeMap::new();
    for t in recent.iter().filter(|t| t.kind == TxnType::Charge) {
        let slot = &mut gross.entry(t.currency.code()).or_insert((t.currency, 0)).1;
        // Saturating: a ledger damaged past i64 still shows its page.
        *slot = slot.saturating_add(t.amount);
    }
    let main = gross.values().max_by_key(|(_, g)| *g).map(|(c, _)| *c);
    let body = html! {
        (stats(&balance))
        @if let Some(currency) = main {
            section.card {
                h2 { "Gross volume and net per day, " (currency.code().to_uppercase()) ", last 30 days" }
                (chart(&daily(&recent, currency, since), currency))
            }
        }
        section.card.table-card {
            h2.pad { "Latest balance transactions" }
            @if latest.is_empty() {
                (super::empty_state("No balance transactions yet: they appear when a payment captures."))
            } @else {
                (txn_table(&latest))
            }
            (export_form(now, since))
        }
        section.card.table-card {
            h2.pad { "Payouts" }
            @if payouts.is_empty() {
                (super::empty_state("No payouts yet."))
            } @else {
                (payouts_table(session, &payouts))
            }
        }
        section.card {
            h2 { "Pay out the available balance" }
            (payout_form(session, &currencies))
        }
        section.card {
            h2 { "Default payout destination" }
            (destination_form(session, destination.as_ref()))
        }
    };
    Ok(html_response(
        status,
        page(session, Section::Balance, "Balance", &notice, body),
    ))
}

/// The form that downloads the balance transactions of a period as CSV, from 30 days before
/// `now` (`since`) to tomorrow, in UTC.
fn export_form(now: i64, since: i64) -> Markup {
    let today = tender_core::clock::format_local(now, 0)[..10].to_string();
    let month_ago = tender_core::clock::format_local(since, 0)[..10].to_string();
    let tomorrow = tender_core::clock::format_local(now + 86_400, 0)[..10].to_string();
    html! {
        form.inline.pad #export method="get" action="/dashboard/balance.csv" {
            label for="from" { "CSV from " }
            input #from type="date" name="from" value=(month_ago);
            label for="to" { " to (excluded) " }
            input #to type="date" name="to" value=(tomorrow);
            button type="submit" { "Download" }
            span.muted.small { " Dates in UTC; today is " (today) "." }
        }
    }
}

/// `GET /dashboard/balance`.
pub async fn balance_page(
    State(state): State<DashboardState>,
    session: Session,
    Query(q): Query<Done>,
) -> PageResult {
    let notice = match q.done.as_deref() {
        Some("paid_out") => Notice::Success("Payout created.".into()),
        Some("destination") => Notice::Success("The default payout destination is saved.".into()),
        Some("canceled") => {
            Notice::Success("The payout was canceled; its money is back in the balance.".into())
        }
        _ => Notice::None,
    };
    render_balance(&state, &session, StatusCode::OK, notice).await
}

#[derive(Deserialize)]
pub struct Period {
    from: Option<String>,
    to: Option<String>,
}

/// `GET /dashboard/balance.csv?from=YYYY-MM-DD&to=YYYY-MM-DD`: what `tender reports balance`
/// writes, for `[from, to)` (UTC days).
pub async fn export_balance(
    State(state): State<DashboardState>,
    session: Session,
    Query(q): Query<Period>,
) -> PageResult {
    let day = |s: &Option<String>| {
        s.as_deref()
            .and_then(tender_core::balance::report::parse_day)
    };
    let (Some(from), Some(to)) = (day(&q.from), day(&q.to)) else {
        return render_balance(
            &state,
            &session,
            StatusCode::BAD_REQUEST,
            Notice::Error("Choose both dates (YYYY-MM-DD).".into()),
        )
        .await;
    };
    if to <= from {
        return render_balance(
            &state,
            &session,
            StatusCode::BAD_REQUEST,
            Notice::Error("The end date must be after the start date.".into()),
        )
        .await;
    }
    let csv = state
        .services()
        .balance()
        .balance_report(&session.scope(), from, to)
        .await?;
    let name = format!(
        "attachment; filename=\"balance-{}-{}.csv\"",
        q.from.as_deref().unwrap_or_default(),
        q.to.as_deref().unwrap_or_default()
    );
    let mut resp = (StatusCode::OK, csv).into_response();
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/csv; charset=utf-8"),
    );
    if let Ok(v) = HeaderValue::from_str(&name) {
        h.insert(header::CONTENT_DISPOSITION, v);
    }
    Ok(resp)
}

fn payout_command(posted: &Posted) -> Result<CreatePayout, CoreError> {
    let currency = posted
        .fields
        .get("currency")
        .and_then(Currency::parse)
        .ok_or_else(|| CoreError::invalid("currency", "parameter_invalid", "Choose a currency."))?;
    let amount = posted
        .fields
        .get("amount")
        .and_then(|a| parse_major(a, currency.exponent()))
        .ok_or_else(|| {
            CoreError::invalid(
                "amount",
                "parameter_invalid",
                "Write the amount like 100.00.",
            )
        })?;
    let amount = tender_core::validate::check_amount("amount", amount, currency)?;
    Ok(CreatePayout {
        amount,
        currency,
        iban: Secret::from(posted.fields.get("iban").unwrap_or_default()),
        account_holder_name: posted
            .fields
            .get("account_holder_name")
            .unwrap_or_default()
            .to_string(),
        description: None,
        metadata: Vec::new(),
    })
}

async fn after_payout(
    state: &DashboardState,
    session: &Session,
    result: Result<Payout, CoreError>,
    done: &str,
) -> PageResult {
    super::answer_action(
        result,
        &format!("/dashboard/balance?done={done}"),
        |notice| render_balance(state, session, StatusCode::BAD_REQUEST, notice),
    )
    .await
}

/// `POST /dashboard/payouts`.
pub async fn create_payout(State(state): State<DashboardState>, posted: Posted) -> PageResult {
    let result = match payout_command(&posted) {
        Ok(cmd) => {
            state
                .services()
                .balance()
                .create_payout(&posted.session.ctx(), cmd)
                .await
        }
        Err(e) => Err(e),
    };
    after_payout(&state, &posted.session, result, "paid_out").await
}

/// `POST /dashboard/payouts/{id}/cancel`.
pub async fn cancel_payout(
    State(state): State<DashboardState>,
    Path(id): Path<String>,
    posted: Posted,
) -> PageResult {
    let result = state
        .services()
        .balance()
        .cancel_payout(&posted.session.ctx(), &id)
        .await;
    after_payout(&state, &posted.session, result, "canceled").await
}

/// `POST /dashboard/payout_destination`: the account's default destination.
pub async fn set_payout_destination(
    State(state): State<DashboardState>,
    posted: Posted,
) -> PageResult {
    let field = |name: &str| posted.fields.get(name).unwrap_or_default().to_string();
    let result = state
        .services()
        .balance()
        .set_payout_destination(
            &posted.session.scope().account,
            Secret::new(field("iban")),
            &field("account_holder_name"),
        )
        .await;
    super::answer_action(result, "/dashboard/balance?done=destination", |notice| {
        render_balance(&state, &posted.session, StatusCode::BAD_REQUEST, notice)
    })
    .await
}
