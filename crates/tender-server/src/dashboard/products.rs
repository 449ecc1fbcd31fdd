//! Products and their prices (CONTRACT §10): `/dashboard/products` lists them with a form for a
//! new product and one for a new price on each.
//!
//! Writes go through the billing use cases with the session's context, as the API's do; the page
//! shares billing's sub-navigation.

use super::billing::{price_label, tabs};
use super::layout::{self, badge, html_response, page, Notice, Section};
use super::payments::{parse_major, parse_page};
use super::{answer_action, DashboardState, PageResult, Posted, Session};
use axum::extract::{Query, State};
use axum::http::StatusCode;
use maud::{html, Markup};
use std::collections::BTreeMap;
use tender_core::billing::catalog::{CreatePrice, CreateProduct};
use tender_core::billing::model::{Price, Product};
use tender_core::error::CoreError;
use tender_core::money::Currency;
use tender_core::services::ListParams;
use tender_core::store::Collection;

/// `GET /dashboard/products`.
pub async fn list_products(
    State(state): State<DashboardState>,
    session: Session,
    Query(q): Query<super::auth::Done>,
) -> PageResult {
    let notice = match q.done.as_deref() {
        Some("product") => Notice::Success("Product created.".into()),
        Some("price") => Notice::Success("Price created.".into()),
        _ => Notice::None,
    };
    render_products(
        &state,
        &session,
        StatusCode::OK,
        notice,
        &super::Fields::default(),
    )
    .await
}

async fn render_products(
    state: &DashboardState,
    session: &Session,
    status: StatusCode,
    notice: Notice,
    form: &super::Fields,
) -> PageResult {
    let all = ListParams {
        limit: 100,
        ..ListParams::default()
    };
    let scope = session.scope();
    let products: Vec<Product> = parse_page(
        &state
            .services()
            .list_raw(&scope, Collection::Products, &all, Vec::new())
            .await?,
    )?;
    let prices: Vec<Price> = parse_page(
        &state
            .services()
            .list_raw(&scope, Collection::Prices, &all, Vec::new())
            .await?,
    )?;
    let mut by_product: BTreeMap<&str, Vec<&Price>> = BTreeMap::new();
    for p in &prices {
        by_product.entry(p.product.as_str()).or_default().push(p);
    }
    let v = |name: &str| form.get(name).unwrap_or("").to_string();
    let body = html! {
        (tabs("Products"))
        section.card.table-card {
            @if products.is_empty() {
                (super::empty_state("No products yet."))
            } @else {
                table #products {
                    thead { tr { th { "Product" } th { "Prices" } th { "Id" } th { "Created" } } }
                    tbody {
                        @for p in &products {
                            tr {
                                td { (p.name) @if !p.active { " " (badge("archived")) } }
                                td {
                                    @for price in by_product.get(p.id.as_str()).into_iter().flatten() {
                                        div.price { (price_label(price)) " " span.mono.muted { (price.id) } }
                                    }
                                }
                                td.mono.muted { (p.id) }
                                td.muted.date { (layout::when(p.created)) }
                            }
                        }
                    }
                }
            }
        }
        div.columns {
            section.card #new-product {
                h2 { "New product" }
                form method="post" action="/dashboard/products" {
                    (layout::csrf_field(session))
                    div.field { label for="p-name" { "Name" } input #p-name type="text" name="name" maxlength="250" required value=(v("name")); }
                    div.field { label for="p-description" { "Description" } input #p-description type="text" name="description" maxlength="5000" value=(v("description")); }
                    button.primary type="submit" { "Create product" }
                }
            }
            (new_price_form(session, &products, form))
        }
    };
    Ok(html_response(
        status,
        page(session, Section::Billing, "Products", &notice, body),
    ))
}

/// The form for a new price of one of the active products, filled with what was posted.
fn new_price_form(session: &Session, products: &[Product], form: &super::Fields) -> Markup {
    let v = |name: &str| form.get(name).unwrap_or("").to_string();
    html! {
        section.card #new-price {
            h2 { "New price" }
            @if products.is_empty() {
                p.small { "Create a product first." }
            } @else {
                form method="post" action="/dashboard/prices" {
                    (layout::csrf_field(session))
                    div.field {
                        label for="pr-product" { "Product" }
                        select #pr-product name="product" {
                            @for p in products.iter().filter(|p| p.active) {
                                option value=(p.id) selected[v("product") == p.id] { (p.name) }
                            }
                        }
                    }
                    div.field { label for="pr-amount" { "Amount" } input #pr-amount type="text" name="amount" inputmode="decimal" placeholder="15.00" required value=(v("amount")); }
                    div.field { label for="pr-currency" { "Currency" } input #pr-currency type="text" name="currency" maxlength="3" value=(form.get("currency").unwrap_or("usd")); }
                    div.field {
                        label for="pr-interval" { "Billed" }
                        select #pr-interval name="interval" {
                            @for (value, label) in [("month", "Monthly"), ("year", "Yearly"), ("week", "Weekly"), ("day", "Daily"), ("", "Once")] {
                                option value=(value) selected[form.raw("interval") == Some(value)] { (label) }
                            }
                        }
                    }
                    button.primary type="submit" { "Create price" }
                }
            }
        }
    }
}

/// `POST /dashboard/products`.
pub async fn create_product(State(state): State<DashboardState>, posted: Posted) -> PageResult {
    let cmd = CreateProduct {
        name: posted.fields.get("name").unwrap_or("").to_string(),
        description: posted.fields.get("description").map(str::to_string),
        active: true,
        metadata: Vec::new(),
    };
    let result = state
        .services()
        .billing()
        .create_product(&posted.session.ctx(), cmd)
        .await;
    answer_action(result, "/dashboard/products?done=product", |notice| {
        render_products(
            &state,
            &posted.session,
            StatusCode::BAD_REQUEST,
            notice,
            &posted.fields,
        )
    })
    .await
}

/// `POST /dashboard/prices`: the amount is typed in major units of the currency.
pub async fn create_price(State(state): State<DashboardState>, posted: Posted) -> PageResult {
    let f = &posted.fields;
    let result = match parse_price(f) {
        Ok(cmd) => {
            state
                .services()
                .billing()
                .create_price(&posted.session.ctx(), cmd)
                .await
        }
        Err(e) => Err(e),
    };
    answer_action(result, "/dashboard/products?done=price", |notice| {
        render_products(&state, &posted.session, StatusCode::BAD_REQUEST, notice, f)
    })
    .await
}

fn parse_price(f: &super::Fields) -> Result<CreatePrice, CoreError> {
    let currency_code = f.get("currency").unwrap_or("usd").to_ascii_lowercase();
    let currency = Currency::parse(&currency_code).ok_or_else(|| {
        CoreError::invalid(
            "currency",
            "parameter_invalid",
            format!("Unknown currency: {currency_code}."),
        )
    })?;
    let unit_amount = f
        .get("amount")
        .and_then(|a| parse_major(a, currency.exponent()))
        .ok_or_else(|| {
            CoreError::invalid(
                "unit_amount",
                "parameter_invalid",
                format!(
                    "Enter the amount in {}, like 15 or 15.00.",
                    currency_code.to_uppercase()
                ),
            )
        })?;
    Ok(CreatePrice {
        product: f.get("product").unwrap_or("").to_string(),
        currency,
        unit_amount,
        recurring: f.get("interval").map(|i| (i.to_string(), None)),
        active: true,
        nickname: None,
        lookup_key: None,
        transfer_lookup_key: false,
        metadata: Vec::new(),
    })
}
