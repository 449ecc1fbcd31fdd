//! Billing (CONTRACT §10): subscriptions (list by status; detail with items, periods, invoices
//! and a cancel button), invoices (list by status; detail with lines, every payment tried and
//! the hosted page's link) and products with their prices (list, new product, new price).
//!
//! Reads and writes go through the billing use cases with the session's context, as the API's
//! do; the pages share one sub-navigation ([`tabs`]).

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use maud::{html, Markup};
use serde::Deserialize;
use tender_core::billing::invoice::Invoice;
use tender_core::billing::model::Price;
use tender_core::billing::subscription::Subscription;
use tender_core::clock::format_date;
use tender_core::payments::payment::Payment;
use tender_core::services::{ListParams, RawPage};
use tender_core::store::{Collection, Field};

use super::layout::{self, badge, html_response, money, page, pager, Notice, Section};
use super::names::Names;
use super::payments::{blank_to_none, parse_page, payments_table};
use super::{answer_action, DashError, DashboardState, PageResult, Posted, Session};

/// The billing pages' own navigation.
pub(super) fn tabs(active: &str) -> Markup {
    let tab = |path: &str, label: &str| {
        html! { a href=(path) class=[(label == active).then_some("active")] { (label) } }
    };
    html! {
        nav.tabs {
            (tab("/dashboard/subscriptions", "Subscriptions"))
            (tab("/dashboard/invoices", "Invoices"))
            (tab("/dashboard/products", "Products"))
        }
    }
}

#[derive(Deserialize, Default)]
pub struct StatusFilter {
    status: Option<String>,
    starting_after: Option<String>,
    ending_before: Option<String>,
}

/// A page of `collection` with the filters, or the reason a filter was refused.
async fn list<T: serde::de::DeserializeOwned>(
    state: &DashboardState,
    session: &Session,
    collection: Collection,
    filters: Vec<(Field, String)>,
    q: &StatusFilter,
) -> Result<(Vec<T>, bool, Notice), DashError> {
    let params = ListParams {
        limit: super::PAGE_SIZE,
        starting_after: blank_to_none(q.starting_after.clone()),
        ending_before: blank_to_none(q.ending_before.clone()),
        ..ListParams::default()
    };
    super::list_page(state, session, collection, &params, filters).await
}

/// One document of `collection`, typed (404 page when it is not the session's).
async fn retrieve<T: serde::de::DeserializeOwned>(
    state: &DashboardState,
    session: &Session,
    collection: Collection,
    kind: &'static str,
    id: &str,
) -> Result<T, DashError> {
    let raw = state
        .services()
        .retrieve_raw(&session.scope(), collection, kind, id)
        .await?;
    parse_page(&RawPage {
        data: vec![raw],
        has_more: false,
    })?
    .pop()
    .ok_or(DashError::NotFound)
}

/// `amount / interval` of a price (`$15.00 / month`, `$5.00 every 3 months`, `$20.00 once`).
pub(super) fn price_label(p: &Price) -> String {
    let amount = money(p.unit_amount, p.currency);
    match &p.recurring {
        None => format!("{amount} once"),
        Some(r) if r.interval_count == 1 => format!("{amount} / {}", r.interval.as_str()),
        Some(r) => format!(
            "{amount} every {} {}s",
            r.interval_count,
            r.interval.as_str()
        ),
    }
}

fn status_select(current: &str, choices: &[&str]) -> Markup {
    html! {
        select #status name="status" {
            option value="" selected[current.is_empty()] { "Any" }
            @for c in choices {
                option value=(c) selected[current == *c] { (c.replace('_', " ")) }
            }
        }
    }
}

fn period(start: i64, end: i64) -> String {
    format!("{} – {}", format_date(start), format_date(end))
}

// ---- Subscriptions ---------------------------------------------------------------------------

/// `GET /dashboard/subscriptions`.
pub async fn list_subscriptions(
    State(state): State<DashboardState>,
    session: Session,
    Query(q): Query<StatusFilter>,
) -> PageResult {
    let status = blank_to_none(q.status.clone()).unwrap_or_default();
    let filters = if status.is_empty() {
        Vec::new()
    } else {
        vec![(Field::Status, status.clone())]
    };
    let (subs, has_more, notice): (Vec<Subscription>, _, _) =
        list(&state, &session, Collection::Subscriptions, filters, &q).await?;
    let shown: Vec<&Subscription> = subs.iter().collect();
    let who: Vec<&str> = subs.iter().map(|s| s.customer.as_str()).collect();
    let names = Names::load(&state, &session, &who, &shown).await;
    let body = html! {
        (tabs("Subscriptions"))
        form.filters method="get" action="/dashboard/subscriptions" {
            div.field {
                label for="status" { "Status" }
                (status_select(&status, &["trialing", "active", "past_due", "unpaid", "incomplete", "incomplete_expired", "canceled"]))
            }
            button type="submit" { "Filter" }
        }
        section.card.table-card {
            @if subs.is_empty() {
                (super::empty_state("No subscriptions match."))
            } @else {
                table #subscriptions {
                    thead { tr { th { "Customer" } th { "Status" } th { "Plan" } th { "Current period" } th { "Id" } } }
                    tbody {
                        @for s in &subs {
                            tr {
                                td { a href=(format!("/dashboard/customers/{}", s.customer)) { (names.customer(&s.customer)) } }
                                td { (badge(s.status.as_str())) }
                                td { a href=(format!("/dashboard/subscriptions/{}", s.id)) { (plan(s, &names)) } }
                                td.muted { (period(s.current_period_start, s.current_period_end)) }
                                td.mono.muted { (s.id) }
                            }
                        }
                    }
                }
            }
        }
        (pager(
            "/dashboard/subscriptions",
            &[("status", status.as_str())],
            subs.first().map(|s| s.id.as_str()),
            subs.last().map(|s| s.id.as_str()),
            has_more,
            q.ending_before.is_some(),
            q.starting_after.is_some(),
        ))
    };
    Ok(html_response(
        StatusCode::OK,
        page(&session, Section::Billing, "Subscriptions", &notice, body),
    ))
}

/// What a subscription bills, in one line (`Coffee Club · 15.00 USD / month`,
/// `2 × Seats · 5.00 USD / month`).
fn plan(s: &Subscription, names: &Names) -> String {
    s.items
        .data
        .iter()
        .map(|i| {
            let what = match names.product(&i.price.product) {
                Some(name) => format!("{name} · {}", price_label(&i.price)),
                None => price_label(&i.price),
            };
            if i.quantity == 1 {
                what
            } else {
                format!("{} × {what}", i.quantity)
            }
        })
        .collect::<Vec<_>>()
        .join(" + ")
}

/// `GET /dashboard/subscriptions/{id}`.
pub async fn retrieve_subscription(
    State(state): State<DashboardState>,
    session: Session,
    Path(id): Path<String>,
    Query(q): Query<super::auth::Done>,
) -> PageResult {
    let notice = match q.done.as_deref() {
        Some("canceled") => Notice::Success("Subscription canceled.".into()),
        _ => Notice::None,
    };
    render_subscription(&state, &session, &id, StatusCode::OK, notice).await
}

async fn render_subscription(
    state: &DashboardState,
    session: &Session,
    id: &str,
    status: StatusCode,
    notice: Notice,
) -> PageResult {
    let s: Subscription = retrieve(
        state,
        session,
        Collection::Subscriptions,
        "subscription",
        id,
    )
    .await?;
    let (invoices, more, _): (Vec<Invoice>, _, _) = list(
        state,
        session,
        Collection::Invoices,
        vec![(Field::Subscription, s.id.clone())],
        &StatusFilter::default(),
    )
    .await?;
    let names = Names::load(state, session, &[s.customer.as_str()], &[&s]).await;
    let body = html! {
        (tabs("Subscriptions"))
        div.columns {
            section.card.table-card {
                h2.pad { "Invoices" }
                @if invoices.is_empty() {
                    (super::empty_state("No invoices yet (the trial is running)."))
                } @else {
                    (invoices_table(&invoices, &names, false))
                    @if more {
                        p.small { a href=(format!("/dashboard/invoices?subscription={}", s.id)) { "Older invoices →" } }
                    }
                }
            }
            section.card {
                h2 { "Details" }
                dl.props {
                    dt { "Subscription id" } dd.mono { (s.id) }
                    dt { "Status" } dd #subscription-status { (badge(s.status.as_str())) }
                    dt { "Customer" } dd { a href=(format!("/dashboard/customers/{}", s.customer)) { (names.customer(&s.customer)) } }
                    dt { "Plan" } dd { (plan(&s, &names)) }
                    dt { "Current period" } dd { (period(s.current_period_start, s.current_period_end)) }
                    @if let (Some(a), Some(b)) = (s.trial_start, s.trial_end) {
                        dt { "Trial" } dd { (period(a, b)) }
                    }
                    @if s.cancel_at_period_end && !s.status.is_ended() {
                        dt { "Ends" } dd { "at the end of the current period" }
                    }
                    @if let Some(t) = s.ended_at { dt { "Ended" } dd { (layout::when(t)) } }
                    @if let Some(c) = &s.test_clock { dt { "Test clock" } dd.mono { (c) } }
                    dt { "Created" } dd { (layout::when(s.created)) }
                    @for (k, v) in s.metadata.iter() {
                        dt.mono { (k) } dd { (v) }
                    }
                }
                @if !s.status.is_ended() {
                    h2 { "Cancel" }
                    p.small { "Ends the subscription now: no more invoices, and its open invoice is no longer tried." }
                    (layout::post_button(session, &format!("/dashboard/subscriptions/{}/cancel", s.id), "Cancel subscription", "danger"))
                }
            }
        }
    };
    Ok(html_response(
        status,
        page(session, Section::Billing, &plan(&s, &names), &notice, body),
    ))
}

/// `POST /dashboard/subscriptions/{id}/cancel`.
pub async fn cancel_subscription(
    State(state): State<DashboardState>,
    Path(id): Path<String>,
    posted: Posted,
) -> PageResult {
    let result = state
        .services()
        .billing()
        .cancel_subscription(&posted.session.ctx(), &id)
        .await;
    answer_action(
        result,
        &format!("/dashboard/subscriptions/{id}?done=canceled"),
        |notice| {
            render_subscription(
                &state,
                &posted.session,
                &id,
                StatusCode::BAD_REQUEST,
                notice,
            )
        },
    )
    .await
}

// ---- Invoices --------------------------------------------------------------------------------

/// Invoices, with their customer when `with_customer` (a subscription's page names it once).
fn invoices_table(invoices: &[Invoice], names: &Names, with_customer: bool) -> Markup {
    html! {
        table.invoices {
            thead { tr { th { "Number" } th { "Amount" } th { "Status" } th { "Period" } th { "Tries" } @if with_customer { th { "Customer" } } th { "Id" } } }
            tbody {
                @for i in invoices {
                    tr {
                        td.mono.nowrap { (i.number.as_deref().unwrap_or("—")) }
                        td.nowrap { a href=(format!("/dashboard/invoices/{}", i.id)) { (money(i.amount_due, i.currency)) } }
                        td { (badge(i.status.as_str())) }
                        td.muted { (period(i.period_start, i.period_end)) }
                        td { (i.attempt_count) }
                        @if with_customer {
                            td { a href=(format!("/dashboard/customers/{}", i.customer)) { (names.customer(&i.customer)) } }
                        }
                        td.mono.muted { (i.id) }
                    }
                }
            }
        }
    }
}

#[derive(Deserialize, Default)]
pub struct InvoiceFilters {
    status: Option<String>,
    subscription: Option<String>,
    starting_after: Option<String>,
    ending_before: Option<String>,
}

/// `GET /dashboard/invoices`.
pub async fn list_invoices(
    State(state): State<DashboardState>,
    session: Session,
    Query(q): Query<InvoiceFilters>,
) -> PageResult {
    let status = blank_to_none(q.status).unwrap_or_default();
    let subscription = blank_to_none(q.subscription).unwrap_or_default();
    let mut filters = Vec::new();
    if !status.is_empty() {
        filters.push((Field::Status, status.clone()));
    }
    if !subscription.is_empty() {
        filters.push((Field::Subscription, subscription.clone()));
    }
    let paging = StatusFilter {
        status: None,
        starting_after: q.starting_after,
        ending_before: q.ending_before,
    };
    let (invoices, has_more, notice): (Vec<Invoice>, _, _) =
        list(&state, &session, Collection::Invoices, filters, &paging).await?;
    let who: Vec<&str> = invoices.iter().map(|i| i.customer.as_str()).collect();
    let names = Names::load(&state, &session, &who, &[]).await;
    let body = html! {
        (tabs("Invoices"))
        form.filters method="get" action="/dashboard/invoices" {
            div.field {
                label for="status" { "Status" }
                (status_select(&status, &["open", "paid", "uncollectible", "void"]))
            }
            @if !subscription.is_empty() { input type="hidden" name="subscription" value=(subscription); }
            button type="submit" { "Filter" }
        }
        section.card.table-card {
            @if invoices.is_empty() {
                (super::empty_state("No invoices match."))
            } @else {
                (invoices_table(&invoices, &names, true))
            }
        }
        (pager(
            "/dashboard/invoices",
            &[("status", status.as_str()), ("subscription", subscription.as_str())],
            invoices.first().map(|i| i.id.as_str()),
            invoices.last().map(|i| i.id.as_str()),
            has_more,
            paging.ending_before.is_some(),
            paging.starting_after.is_some(),
        ))
    };
    Ok(html_response(
        StatusCode::OK,
        page(&session, Section::Billing, "Invoices", &notice, body),
    ))
}

/// `GET /dashboard/invoices/{id}`: the invoice, its lines and every payment tried.
pub async fn retrieve_invoice(
    State(state): State<DashboardState>,
    session: Session,
    Path(id): Path<String>,
) -> PageResult {
    let i: Invoice = retrieve(&state, &session, Collection::Invoices, "invoice", &id).await?;
    let mut tries: Vec<Payment> = Vec::new();
    for p in i.payments.iter().rev() {
        tries.push(
            state
                .services()
                .payments()
                .get_payment(&session.scope(), p)
                .await?,
        );
    }
    let names = Names::load(&state, &session, &[i.customer.as_str()], &[]).await;
    let body = html! {
        (tabs("Invoices"))
        div.columns {
            div {
                section.card.table-card {
                    h2.pad { "Lines" }
                    table #lines {
                        thead { tr { th { "Description" } th { "Period" } th { "Amount" } } }
                        tbody {
                            @for l in &i.lines.data {
                                tr {
                                    td { (l.description) }
                                    td.muted { (period(l.period.start, l.period.end)) }
                                    td { (money(l.amount, i.currency)) }
                                }
                            }
                            tr { td { strong { "Total" } } td {} td { strong { (money(i.amount_due, i.currency)) } } }
                        }
                    }
                }
                section.card.table-card #tries {
                    h2.pad { "Payments tried (" (i.attempt_count) ")" }
                    @if tries.is_empty() {
                        (super::empty_state("No payment tried yet."))
                    } @else {
                        (payments_table(&tries))
                    }
                }
            }
            section.card {
                h2 { "Details" }
                dl.props {
                    @if let Some(n) = &i.number { dt { "Number" } dd.mono #invoice-number { (n) } }
                    dt { "Invoice id" } dd.mono { (i.id) }
                    dt { "Status" } dd #invoice-status { (badge(i.status.as_str())) }
                    dt { "Amount due" } dd { (money(i.amount_due, i.currency)) }
                    dt { "Amount paid" } dd { (money(i.amount_paid, i.currency)) }
                    dt { "Customer" } dd { a href=(format!("/dashboard/customers/{}", i.customer)) { (names.customer(&i.customer)) } }
                    @if let Some(s) = &i.subscription {
                        dt { "Subscription" } dd { a href=(format!("/dashboard/subscriptions/{s}")) { (s) } }
                    }
                    dt { "Period" } dd { (period(i.period_start, i.period_end)) }
                    @if let Some(t) = i.next_payment_attempt { dt { "Next try" } dd { (layout::when(t)) } }
                    dt { "Hosted page" } dd { a href=(i.hosted_invoice_url) { "Open the customer's page" } }
                    dt { "Created" } dd { (layout::when(i.created)) }
                }
            }
        }
    };
    Ok(html_response(
        StatusCode::OK,
        page(
            &session,
            Section::Billing,
            &match &i.number {
                Some(n) => format!("Invoice {n} · {}", money(i.amount_due, i.currency)),
                None => format!("Invoice {}", money(i.amount_due, i.currency)),
            },
            &Notice::None,
            body,
        ),
    ))
}
