//! Customers: the list (filter by e-mail, paged) and the detail page with the customer's
//! payments and saved cards.

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use maud::html;
use serde::Deserialize;
use tender_core::customer::Customer;
use tender_core::payment::Payment;
use tender_core::payment_method::PaymentMethod;
use tender_core::service::{ListParams, RawPage};
use tender_core::store::{Collection, Field};

use super::layout::{self, html_response, page, pager, Notice, Section};
use super::payments::{blank_to_none, parse_page, payments_table};
use super::{user_message, DashboardState, PageResult, Session};

#[derive(Deserialize, Default)]
pub struct CustomerFilters {
    email: Option<String>,
    starting_after: Option<String>,
    ending_before: Option<String>,
}

/// `GET /dashboard/customers`.
pub async fn list_customers(
    State(state): State<DashboardState>,
    session: Session,
    Query(q): Query<CustomerFilters>,
) -> PageResult {
    let email = blank_to_none(q.email);
    let starting_after = blank_to_none(q.starting_after);
    let ending_before = blank_to_none(q.ending_before);
    let mut notice = Notice::None;
    let filters = email
        .iter()
        .map(|e| tender_core::service::customers::email_filter(e))
        .collect::<Vec<_>>();
    let params = ListParams {
        limit: super::PAGE_SIZE,
        starting_after: starting_after.clone(),
        ending_before: ending_before.clone(),
        ..ListParams::default()
    };
    let page_data = match state
        .services()
        .list_raw(&session.scope(), Collection::Customers, &params, filters)
        .await
    {
        Ok(p) => p,
        Err(e) => match user_message(&e) {
            Some(m) => {
                notice = Notice::Error(m);
                RawPage {
                    data: Vec::new(),
                    has_more: false,
                }
            }
            None => return Err(e.into()),
        },
    };
    let customers: Vec<Customer> = parse_page(&page_data)?;
    let email_value = email.as_deref().unwrap_or("");
    let body = html! {
        form.filters method="get" action="/dashboard/customers" {
            div.field {
                label for="email" { "E-mail" }
                input #email type="text" name="email" value=(email_value) placeholder="someone@example.com";
            }
            button type="submit" { "Filter" }
            @if email.is_some() { a href="/dashboard/customers" { "Clear" } }
        }
        section.card.table-card {
            @if customers.is_empty() {
                (super::empty_state("No customers match."))
            } @else {
                table #customers {
                    thead { tr { th { "Name" } th { "E-mail" } th { "Id" } th { "Created" } } }
                    tbody {
                        @for c in &customers {
                            tr {
                                td { a href=(format!("/dashboard/customers/{}", c.id)) { (c.name.as_deref().unwrap_or("(no name)")) } }
                                td { (c.email.as_deref().unwrap_or("")) }
                                td.mono.muted { (c.id) }
                                td.muted.date { (layout::when(c.created)) }
                            }
                        }
                    }
                }
            }
        }
        (pager(
            "/dashboard/customers",
            &[("email", email_value)],
            customers.first().map(|c| c.id.as_str()),
            customers.last().map(|c| c.id.as_str()),
            page_data.has_more,
            ending_before.is_some(),
            starting_after.is_some(),
        ))
    };
    Ok(html_response(
        StatusCode::OK,
        page(&session, Section::Customers, "Customers", &notice, body),
    ))
}

/// `GET /dashboard/customers/{id}`.
pub async fn retrieve_customer(
    State(state): State<DashboardState>,
    session: Session,
    Path(id): Path<String>,
) -> PageResult {
    let scope = session.scope();
    let services = state.services();
    let raw = services
        .retrieve_raw(&scope, Collection::Customers, "customer", &id)
        .await?;
    let c: Customer = parse_page(&RawPage {
        data: vec![raw],
        has_more: false,
    })?
    .pop()
    .ok_or(super::DashError::NotFound)?;
    let by_customer = vec![(Field::Customer, c.id.clone())];
    let payments_page = services
        .list_raw(
            &scope,
            Collection::Payments,
            &ListParams {
                limit: super::PAGE_SIZE,
                ..ListParams::default()
            },
            by_customer.clone(),
        )
        .await?;
    let payments: Vec<Payment> = parse_page(&payments_page)?;
    let cards_page = services
        .list_raw(
            &scope,
            Collection::PaymentMethods,
            &ListParams {
                limit: 100,
                ..ListParams::default()
            },
            by_customer,
        )
        .await?;
    let cards: Vec<PaymentMethod> = parse_page(&cards_page)?;
    let address = c.address.as_ref().map(|a| {
        [
            &a.line1,
            &a.line2,
            &a.postal_code,
            &a.city,
            &a.state,
            &a.country,
        ]
        .into_iter()
        .flatten()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ")
    });
    let title = c.name.clone().unwrap_or_else(|| "Customer".into());
    let body = html! {
        div.columns {
            div {
                section.card.table-card {
                    h2.pad { "Payments" }
                    @if payments.is_empty() {
                        (super::empty_state("No payments yet."))
                    } @else {
                        (payments_table(&payments))
                        @if payments_page.has_more {
                            p.small { a href=(format!("/dashboard/payments?customer={}", c.id)) { "All payments of this customer →" } }
                        }
                    }
                }
                section.card.table-card {
                    h2.pad { "Saved cards" }
                    @if cards.is_empty() {
                        (super::empty_state("No saved cards."))
                    } @else {
                        table #cards {
                            thead { tr { th { "Card" } th { "Expires" } th { "Funding" } th { "Country" } th { "Id" } } }
                            tbody {
                                @for pm in &cards {
                                    tr {
                                        td { (pm.card.brand.as_str()) " •••• " (pm.card.last4) }
                                        td { (format!("{:02}/{}", pm.card.exp_month, pm.card.exp_year)) }
                                        td { (pm.card.funding) }
                                        td { (pm.card.country) }
                                        td.mono.muted { (pm.id) }
                                    }
                                }
                            }
                        }
                    }
                }
            }
            section.card {
                h2 { "Details" }
                dl.props {
                    dt { "Customer id" } dd.mono { (c.id) }
                    dt { "Name" } dd #customer-name { (c.name.as_deref().unwrap_or("—")) }
                    dt { "E-mail" } dd { (c.email.as_deref().unwrap_or("—")) }
                    dt { "Phone" } dd { (c.phone.as_deref().unwrap_or("—")) }
                    @if let Some(a) = &address { dt { "Address" } dd { (a) } }
                    @if let Some(d) = &c.description { dt { "Description" } dd { (d) } }
                    dt { "Created" } dd { (layout::when(c.created)) }
                    @for (k, v) in c.metadata.iter() {
                        dt.mono { (k) } dd { (v) }
                    }
                }
            }
        }
    };
    Ok(html_response(
        StatusCode::OK,
        page(&session, Section::Customers, &title, &Notice::None, body),
    ))
}
