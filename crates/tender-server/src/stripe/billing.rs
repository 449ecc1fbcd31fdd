//! `/v1/products`, `/v1/prices`, `/v1/subscriptions`, `/v1/invoices` and
//! `/v1/test_helpers/test_clocks`: Stripe's parameters read by `/v2`'s own parsers (in form
//! mode) into the same commands; `/v2`'s handlers run them. Only the lists, whose parameters
//! arrive as a form here and as a query string there, are read here.

use tender_core::billing::catalog::{CreatePrice, CreateProduct};
use tender_core::billing::invoice::InvoiceStatus;
use tender_core::billing::subscription::SubscriptionStatus;
use tender_core::billing::subscriptions::{CreateSubscription, PaymentBehavior};
use tender_core::collection::prices_filter;
use tender_core::error::CoreError;
use tender_core::ids::{kind, Id, Kind};
use tender_core::services::RequestContext;
use tender_core::store::{Collection, Field};

use super::params::{form, list_form, list_request, path_id, referenced};
use crate::http::billing as v2;
use crate::http::operation::{Input, ListRequest};
use crate::http::params::Params;
use crate::http::ApiResult;
use crate::state::AppState;

/// `GET /v1/products`.
pub const LIST_PRODUCTS: &[&str] = &["active"];
/// `GET /v1/prices`.
pub const LIST_PRICES: &[&str] = &["product", "active", "type", "currency", "lookup_keys"];
/// `GET /v1/subscriptions`.
pub const LIST_SUBSCRIPTIONS: &[&str] = &["customer", "status", "price"];
/// `GET /v1/invoices`.
pub const LIST_INVOICES: &[&str] = &["customer", "subscription", "status"];
/// Parameters of an operation that takes none.
pub const NONE: &[&str] = &[];

/// A `/v2` parser of a body, run on this request's form parameters.
pub fn with<T>(
    mut i: Input,
    allowed: &[&str],
    parse: fn(Params) -> Result<T, CoreError>,
) -> Result<T, CoreError> {
    parse(form(&mut i, allowed)?)
}

/// The same, for an operation on the object of the path.
pub fn with_id<K: Kind, T>(
    mut i: Input,
    allowed: &[&str],
    parse: fn(Params) -> Result<T, CoreError>,
) -> Result<(Id<K>, T), CoreError> {
    let id = path_id(&i)?;
    Ok((id, parse(form(&mut i, allowed)?)?))
}

/// The object of the path, and no parameters.
pub fn id_alone<K: Kind>(mut i: Input) -> Result<Id<K>, CoreError> {
    let id = path_id(&i)?;
    form(&mut i, NONE)?;
    Ok(id)
}

fn boolean_filter(
    p: &mut Params,
    key: &str,
    field: Field,
) -> Result<Option<(Field, String)>, CoreError> {
    Ok(p.boolean(key)?.map(|b| (field, b.to_string())))
}

pub fn parse_list_products(mut i: Input) -> Result<ListRequest, CoreError> {
    let mut p = list_form(&mut i, LIST_PRODUCTS)?;
    let filters = boolean_filter(&mut p, "active", Field::Active)?
        .into_iter()
        .collect();
    list_request(&i, &mut p, filters)
}

/// `GET /v1/prices`, parsed: the list, and the lookup keys it is limited to (none: all).
#[derive(Debug)]
pub struct PriceList {
    list: ListRequest,
    lookup_keys: Vec<String>,
}

pub fn parse_list_prices(mut i: Input) -> Result<PriceList, CoreError> {
    let mut p = list_form(&mut i, LIST_PRICES)?;
    let lookup_keys = p.strings("lookup_keys", 10)?.unwrap_or_default();
    for key in &lookup_keys {
        v2::lookup_key_filter("lookup_keys", key)?;
    }
    let mut filters = Vec::new();
    if let Some(product) = p.string("product")? {
        let product: Id<kind::Product> = referenced(product, "product")?;
        filters.push((Field::Product, product.to_string()));
    }
    filters.extend(boolean_filter(&mut p, "active", Field::Active)?);
    match p.string("type")?.as_deref() {
        None => {}
        Some(t @ ("one_time" | "recurring")) => filters.push((Field::Type, t.to_string())),
        Some(_) => {
            return Err(CoreError::invalid(
                "type",
                "parameter_invalid",
                "type must be one_time or recurring.",
            ))
        }
    }
    if let Some(c) = p.string("currency")? {
        filters.push(crate::http::balance::currency_filter(&c)?);
    }
    Ok(PriceList {
        list: list_request(&i, &mut p, filters)?,
        lookup_keys,
    })
}

/// `GET /v1/prices`: with `lookup_keys[]`, the price of each key (a key names at most one
/// price) that passes the other filters, newest first.
pub(crate) async fn list_prices(state: AppState, ctx: RequestContext, req: PriceList) -> ApiResult {
    let list = req.list;
    if req.lookup_keys.is_empty() {
        return crate::http::operation::list::<kind::Price>(state, ctx, list).await;
    }
    let mut found: Vec<(i64, String)> = Vec::new();
    for key in req.lookup_keys {
        let mut filters = list.filters.clone();
        filters.push((Field::LookupKey, key));
        let page = state
            .services
            .list_raw(ctx.scope(), Collection::Prices, &list.params, filters)
            .await?;
        for raw in page.data {
            let created = serde_json::from_str::<serde_json::Value>(&raw)
                .ok()
                .and_then(|v| v["created"].as_i64())
                .unwrap_or_default();
            if !found.iter().any(|(_, r)| *r == raw) {
                found.push((created, raw));
            }
        }
    }
    found.sort_by_key(|(created, _)| std::cmp::Reverse(*created));
    let limit = list.params.limit as usize;
    let has_more = found.len() > limit;
    let data = found.into_iter().take(limit).map(|(_, raw)| raw).collect();
    Ok(crate::http::list_response(
        &list.url,
        tender_core::services::RawPage { data, has_more },
    ))
}

pub fn parse_list_subscriptions(mut i: Input) -> Result<ListRequest, CoreError> {
    let mut p = list_form(&mut i, LIST_SUBSCRIPTIONS)?;
    let mut filters = Vec::new();
    if let Some(c) = p.string("customer")? {
        let c: Id<kind::Customer> = referenced(c, "customer")?;
        filters.push((Field::Customer, c.to_string()));
    }
    // `all`: every status, which is also what a list without `status` shows.
    if let Some(s) = p.string("status")?.filter(|s| s != "all") {
        let status = SubscriptionStatus::parse(&s).ok_or_else(|| {
            CoreError::invalid(
                "status",
                "parameter_invalid",
                format!("Unknown subscription status: {s}."),
            )
        })?;
        filters.push((Field::Status, status.as_str().to_string()));
    }
    if let Some(price) = p.string("price")? {
        let price: Id<kind::Price> = referenced(price, "price")?;
        filters.push((Field::Prices, prices_filter(&price)));
    }
    list_request(&i, &mut p, filters)
}

pub fn parse_list_invoices(mut i: Input) -> Result<ListRequest, CoreError> {
    let mut p = list_form(&mut i, LIST_INVOICES)?;
    let mut filters = Vec::new();
    if let Some(c) = p.string("customer")? {
        let c: Id<kind::Customer> = referenced(c, "customer")?;
        filters.push((Field::Customer, c.to_string()));
    }
    if let Some(s) = p.string("subscription")? {
        let s: Id<kind::Subscription> = referenced(s, "subscription")?;
        filters.push((Field::Subscription, s.to_string()));
    }
    if let Some(s) = p.string("status")? {
        let status = InvoiceStatus::parse(&s).ok_or_else(|| {
            CoreError::invalid(
                "status",
                "parameter_invalid",
                format!("Unknown invoice status: {s}."),
            )
        })?;
        filters.push((Field::Status, status.as_str().to_string()));
    }
    list_request(&i, &mut p, filters)
}

/// A list that takes no filters (test clocks, webhook endpoints).
pub fn parse_list_clocks(mut i: Input) -> Result<ListRequest, CoreError> {
    let mut p = list_form(&mut i, NONE)?;
    list_request(&i, &mut p, Vec::new())
}

/// `POST /v1/prices`: `/v2`'s parameters, and `product_data[name]` instead of `product`.
pub const CREATE_PRICE: &[&str] = &[
    "product",
    "product_data",
    "currency",
    "unit_amount",
    "recurring",
    "active",
    "nickname",
    "lookup_key",
    "transfer_lookup_key",
    "metadata",
];

/// A price, with the product to create first when it came as `product_data`.
#[derive(Debug)]
pub struct NewPrice {
    product: Option<CreateProduct>,
    price: CreatePrice,
}

pub fn parse_create_price(mut i: Input) -> Result<NewPrice, CoreError> {
    let mut p = form(&mut i, CREATE_PRICE)?;
    let product = match p.object("product_data", &["name", "metadata"])? {
        Some(mut data) if !p.has("product") => {
            let name = data.string("name")?;
            let name = data.required("name", name)?;
            // Read back by `/v2`'s parser as the product it will name.
            p.insert_string("product", String::new());
            Some(CreateProduct {
                name,
                description: None,
                active: true,
                metadata: data.metadata()?.unwrap_or_default(),
            })
        }
        Some(_) => {
            return Err(CoreError::invalid(
                "product_data",
                "parameter_invalid",
                "Give product or product_data, not both.",
            ))
        }
        None => None,
    };
    Ok(NewPrice {
        product,
        price: v2::parse_create_price_from(p)?,
    })
}

/// `POST /v1/prices`: the product of `product_data` is created first (outside the request's
/// idempotency key, which the price's own write completes).
pub(crate) async fn create_price(state: AppState, ctx: RequestContext, cmd: NewPrice) -> ApiResult {
    let mut price = cmd.price;
    if let Some(product) = cmd.product {
        let mut creating = ctx.clone();
        creating.idempotency = None;
        let made = state
            .services
            .billing()
            .create_product(&creating, product)
            .await?;
        price.product = made.id;
    }
    v2::create_price(state, ctx, price).await
}

/// `POST /v1/subscriptions`: `/v2`'s parameters and `payment_behavior`.
pub const CREATE_SUBSCRIPTION: &[&str] = &[
    "customer",
    "items",
    "default_payment_method",
    "trial_period_days",
    "cancel_at_period_end",
    "metadata",
    "payment_behavior",
    "trial_settings",
];

/// `payment_behavior` on `POST /v1/subscriptions`: `allow_incomplete` (the default) tries the
/// first invoice at once and leaves the subscription `incomplete` if that fails;
/// `error_if_incomplete` tries it too and, declined, ends the subscription at once
/// (`incomplete_expired`, its invoice void) and answers 402 with the decline;
/// `default_incomplete` leaves the invoice to an intent the customer confirms
/// (`latest_invoice.confirmation_secret`).
pub fn parse_create_subscription(mut i: Input) -> Result<CreateSubscription, CoreError> {
    let mut p = form(&mut i, CREATE_SUBSCRIPTION)?;
    let behavior = match p.string("payment_behavior")?.as_deref() {
        None | Some("allow_incomplete") => PaymentBehavior::ChargeNow,
        Some("default_incomplete") => PaymentBehavior::DefaultIncomplete,
        Some("error_if_incomplete") => PaymentBehavior::ErrorIfIncomplete,
        Some(other) => {
            return Err(CoreError::invalid(
                "payment_behavior",
                "parameter_invalid",
                format!("payment_behavior {other} is not supported: Tender takes allow_incomplete and error_if_incomplete (the first invoice charged now) and default_incomplete (paid by the customer through latest_invoice.confirmation_secret)."),
            ))
        }
    };
    let mut cmd = v2::parse_create_subscription_from(p)?;
    cmd.payment_behavior = behavior;
    Ok(cmd)
}

/// `POST /v1/subscriptions/{id}/resume`: a new period from now (`billing_cycle_anchor=now`,
/// the default; `unchanged` would prorate, which comes with plan changes). With the anchor
/// now Stripe makes no prorations, so `proration_behavior` changes nothing and is accepted.
pub const RESUME_SUBSCRIPTION: &[&str] = &["billing_cycle_anchor", "proration_behavior"];

pub fn parse_resume_subscription(mut i: Input) -> Result<Id<kind::Subscription>, CoreError> {
    let id = path_id(&i)?;
    let mut p = form(&mut i, RESUME_SUBSCRIPTION)?;
    match p.string("billing_cycle_anchor")?.as_deref() {
        None | Some("now") => {}
        Some(other) => {
            return Err(CoreError::invalid(
                "billing_cycle_anchor",
                "parameter_invalid",
                format!("billing_cycle_anchor {other} is not supported: Tender resumes with a new period from now (now)."),
            ))
        }
    }
    match p.string("proration_behavior")?.as_deref() {
        None | Some("create_prorations" | "always_invoice" | "none") => Ok(id),
        Some(other) => Err(CoreError::invalid(
            "proration_behavior",
            "parameter_invalid",
            format!("proration_behavior must be create_prorations, always_invoice or none, not {other:?}."),
        )),
    }
}

/// `POST /v1/invoices/create_preview`: the subscription whose next invoice is previewed (and
/// its customer, checked when given). Proration and the other previews (`subscription_details`,
/// a customer's invoice items) come with plan changes.
pub const CREATE_PREVIEW: &[&str] = &["subscription", "customer"];

/// The subscription and customer of a preview.
pub struct Preview {
    subscription: Id<kind::Subscription>,
    customer: Option<Id<kind::Customer>>,
}

pub fn parse_create_preview(mut i: Input) -> Result<Preview, CoreError> {
    let mut p = form(&mut i, CREATE_PREVIEW)?;
    let subscription = p.string("subscription")?;
    let subscription = referenced(p.required("subscription", subscription)?, "subscription")?;
    let customer = match p.string("customer")? {
        Some(c) => Some(referenced(c, "customer")?),
        None => None,
    };
    Ok(Preview {
        subscription,
        customer,
    })
}

pub(crate) async fn create_preview(
    state: AppState,
    ctx: RequestContext,
    preview: Preview,
) -> ApiResult {
    let invoice = state
        .services
        .billing()
        .preview_invoice(&ctx, &preview.subscription, preview.customer.as_deref())
        .await?;
    crate::http::ok(&invoice)
}

/// `POST /v1/invoices/{id}/finalize`.
pub(crate) async fn finalize_invoice(
    state: AppState,
    ctx: RequestContext,
    id: Id<kind::Invoice>,
) -> ApiResult {
    crate::http::ok(&state.services.billing().finalize_invoice(&ctx, &id).await?)
}

/// `/v2`'s parsers, for the rows of the route table.
pub mod parsers {
    pub use super::v2::{
        parse_advance_clock_from as advance_clock, parse_create_clock_from as create_clock,
        parse_create_price_from as create_price, parse_create_product_from as create_product,
        parse_create_subscription_from as create_subscription,
        parse_pay_invoice_from as pay_invoice, parse_update_price_from as update_price,
        parse_update_product_from as update_product,
        parse_update_subscription_from as update_subscription, ADVANCE_FIELDS, CLOCK_FIELDS,
        PAY_INVOICE_FIELDS, PRICE_FIELDS, PRICE_UPDATE_FIELDS, PRODUCT_FIELDS,
        PRODUCT_UPDATE_FIELDS, SUBSCRIPTION_FIELDS, SUBSCRIPTION_UPDATE_FIELDS,
    };
}
