//! Customers: the list (filter by e-mail in any case, paged) with a form for a new customer, and
//! the detail page with the customer's payments, saved cards and an edit form.

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use maud::{html, Markup};
use serde::Deserialize;
use tender_core::customers::customer::Customer;
use tender_core::payment_methods::payment_method::PaymentMethod;
use tender_core::payments::payment::Payment;
use tender_core::services::{ListParams, RawPage};
use tender_core::store::{Collection, Field};

use super::layout::{self, html_response, page, pager, Notice, Section};
use super::payments::{blank_to_none, parse_page, payments_table};
use super::{see_other, user_message, DashboardState, PageResult, Posted, Session};
use tender_core::customers::service::CustomerFields;

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
    let filters = email
        .iter()
        .map(|e| tender_core::customers::service::email_filter(e))
        .collect::<Vec<_>>();
    let params = ListParams {
        limit: super::PAGE_SIZE,
        starting_after: starting_after.clone(),
        ending_before: ending_before.clone(),
        ..ListParams::default()
    };
    let (customers, has_more, notice): (Vec<Customer>, _, _) =
        super::list_page(&state, &session, Collection::Customers, &params, filters).await?;
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
        section.card #new-customer {
            h2 { "New customer" }
            form method="post" action="/dashboard/customers" {
                (layout::csrf_field(&session))
                (customer_fields(None))
                button.primary type="submit" { "Create customer" }
            }
        }
        (pager(
            "/dashboard/customers",
            &[("email", email_value)],
            customers.first().map(|c| c.id.as_str()),
            customers.last().map(|c| c.id.as_str()),
            has_more,
            ending_before.is_some(),
            starting_after.is_some(),
        ))
    };
    Ok(html_response(
        StatusCode::OK,
        page(&session, Section::Customers, "Customers", &notice, body),
    ))
}

/// The editable fields of a customer, filled with `c`'s values when given.
fn customer_fields(c: Option<&Customer>) -> maud::Markup {
    let v = |f: fn(&Customer) -> Option<&String>| c.and_then(f).map(String::as_str).unwrap_or("");
    html! {
        div.field { label for="c-name" { "Name" } input #c-name type="text" name="name" maxlength="5000" value=(v(|c| c.name.as_ref())); }
        div.field { label for="c-email" { "E-mail" } input #c-email type="email" name="email" maxlength="512" value=(v(|c| c.email.as_ref())); }
        div.field { label for="c-phone" { "Phone" } input #c-phone type="tel" name="phone" placeholder="+14155550100" value=(v(|c| c.phone.as_ref())); }
        div.field { label for="c-description" { "Description" } input #c-description type="text" name="description" maxlength="1000" value=(v(|c| c.description.as_ref())); }
    }
}

/// The posted customer fields; a blank field clears the value.
fn posted_fields(posted: &Posted) -> CustomerFields {
    let field = |name| Some(posted.fields.get(name).map(str::to_string));
    CustomerFields {
        name: field("name"),
        email: field("email"),
        phone: field("phone"),
        description: field("description"),
        ..CustomerFields::default()
    }
}

/// `POST /dashboard/customers`: a new customer, then its page.
pub async fn create_customer(State(state): State<DashboardState>, posted: Posted) -> PageResult {
    match state
        .services()
        .customers()
        .create_customer(&posted.session.ctx(), posted_fields(&posted))
        .await
    {
        Ok(c) => Ok(see_other(&format!(
            "/dashboard/customers/{}?done=created",
            c.id
        ))),
        Err(e) => match user_message(&e) {
            Some(m) => Ok(html_response(
                StatusCode::BAD_REQUEST,
                page(
                    &posted.session,
                    Section::Customers,
                    "New customer",
                    &Notice::Error(m),
                    html! {
                        section.card {
                            form method="post" action="/dashboard/customers" {
                                (layout::csrf_field(&posted.session))
                                (customer_fields(None))
                                button.primary type="submit" { "Create customer" }
                            }
                        }
                    },
                ),
            )),
            None => Err(e.into()),
        },
    }
}

/// `POST /dashboard/customers/{id}`: the edit form.
pub async fn update_customer(
    State(state): State<DashboardState>,
    Path(id): Path<String>,
    posted: Posted,
) -> PageResult {
    match state
        .services()
        .customers()
        .update_customer(&posted.session.ctx(), &id, posted_fields(&posted))
        .await
    {
        Ok(c) => Ok(see_other(&format!(
            "/dashboard/customers/{}?done=updated",
            c.id
        ))),
        Err(e @ tender_core::error::CoreError::NotFound { .. }) => Err(e.into()),
        Err(e) => match user_message(&e) {
            Some(m) => {
                render_customer(
                    &state,
                    &posted.session,
                    &id,
                    StatusCode::BAD_REQUEST,
                    Notice::Error(m),
                )
                .await
            }
            None => Err(e.into()),
        },
    }
}

/// A customer's saved cards.
fn cards_card(cards: &[PaymentMethod]) -> Markup {
    html! {
        section.card.table-card {
            h2.pad { "Saved cards" }
            @if cards.is_empty() {
                (super::empty_state("No saved cards."))
            } @else {
                table #cards {
                    thead { tr { th { "Card" } th { "Expires" } th { "Funding" } th { "Country" } th { "Id" } } }
                    tbody {
                        @for pm in cards {
                            tr {
                                td { (pm.card.brand.display_name()) " •••• " (pm.card.last4) }
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
}

/// A customer's details, and the form that edits them.
fn details_card(session: &Session, c: &Customer) -> Markup {
    html! {
        section.card {
            h2 { "Details" }
            dl.props {
                dt { "Customer id" } dd.mono { (c.id) }
                dt { "Name" } dd #customer-name { (c.name.as_deref().unwrap_or("—")) }
                dt { "E-mail" } dd { (c.email.as_deref().unwrap_or("—")) }
                dt { "Phone" } dd { (c.phone.as_deref().unwrap_or("—")) }
                @if let Some(a) = address_line(c) { dt { "Address" } dd { (a) } }
                @if let Some(d) = &c.description { dt { "Description" } dd { (d) } }
                dt { "Created" } dd { (layout::when(c.created)) }
                @for (k, v) in c.metadata.iter() {
                    dt.mono { (k) } dd { (v) }
                }
            }
            h2 { "Edit" }
            form #edit-customer method="post" action=(format!("/dashboard/customers/{}", c.id)) {
                (layout::csrf_field(session))
                (customer_fields(Some(c)))
                button.primary type="submit" { "Save" }
            }
        }
    }
}

/// A customer's address on one line, the parts given joined by commas.
fn address_line(c: &Customer) -> Option<String> {
    c.address.as_ref().map(|a| {
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
    })
}

/// `GET /dashboard/customers/{id}`.
pub async fn retrieve_customer(
    State(state): State<DashboardState>,
    session: Session,
    Path(id): Path<String>,
    Query(q): Query<super::auth::Done>,
) -> PageResult {
    let notice = match q.done.as_deref() {
        Some("created") => Notice::Success("Customer created.".into()),
        Some("updated") => Notice::Success("Customer updated.".into()),
        _ => Notice::None,
    };
    render_customer(&state, &session, &id, StatusCode::OK, notice).await
}

async fn render_customer(
    state: &DashboardState,
    session: &Session,
    id: &str,
    status: StatusCode,
    notice: Notice,
) -> PageResult {
    let scope = session.scope();
    let services = state.services();
    let raw = services
        .retrieve_raw(&scope, Collection::Customers, "customer", id)
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
                (cards_card(&cards))
            }
            (details_card(session, &c))
        }
    };
    Ok(html_response(
        status,
        page(session, Section::Customers, &title, &notice, body),
    ))
}
