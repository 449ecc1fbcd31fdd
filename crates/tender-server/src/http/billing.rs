//! Recurring billing's endpoints (CONTRACT §10): `/v2/products`, `/v2/prices`,
//! `/v2/subscriptions`, `/v2/invoices` and `/v2/test_helpers/test_clocks`. Each section parses
//! its bodies and queries into the commands of `tender_core::billing` (the `parse_*`
//! functions are what the fuzz targets call) and hands them over; nothing else happens here.

use serde_json::Value;
use tender_core::billing::catalog::{CreatePrice, CreateProduct, UpdatePrice, UpdateProduct};
use tender_core::billing::invoice::InvoiceStatus;
use tender_core::billing::model::MAX_ITEMS;
use tender_core::billing::subscription::{MissingPaymentMethod, SubscriptionStatus};
use tender_core::billing::subscriptions::{CreateSubscription, UpdateSubscription};
use tender_core::error::CoreError;
use tender_core::ids::{self, IdKind};
use tender_core::ids::{InvoiceId, PriceId, ProductId, SubscriptionId, TestClockId};
use tender_core::services::RequestContext;
use tender_core::store::{prices_filter, Field};

use super::params::{Params, Query};
use super::payments::parse_currency;
use super::{ok, ApiResult};
use crate::state::AppState;

use super::params::Listing;

/// A filter on an id: it must look like one of `kind` (else nothing could match, and the
/// value would reach a `LIKE` pattern).
fn id_filter(q: &Query, name: &str, kind: IdKind) -> Result<Option<String>, CoreError> {
    match q.get(name) {
        None => Ok(None),
        Some(v) if ids::looks_like(kind, v) => Ok(Some(v.to_string())),
        Some(v) => Err(CoreError::invalid(
            name,
            "parameter_invalid",
            format!(
                "{name} must be an id starting with {}: {v:?}.",
                kind.prefix()
            ),
        )),
    }
}

fn bool_filter(q: &Query, name: &str) -> Result<Option<String>, CoreError> {
    match q.get(name) {
        None => Ok(None),
        Some(v @ ("true" | "false")) => Ok(Some(v.to_string())),
        Some(v) => Err(CoreError::invalid(
            name,
            "parameter_invalid",
            format!("{name} must be true or false, not {v:?}."),
        )),
    }
}

// ---- Products ---------------------------------------------------------------------------------

/// The parameters of `create_product`.
pub const PRODUCT_FIELDS: &[&str] = &["name", "description", "active", "metadata"];

pub fn parse_create_product(body: Value) -> Result<CreateProduct, CoreError> {
    parse_create_product_from(Params::body(body, PRODUCT_FIELDS)?)
}

/// [`parse_create_product`] from parameters read in either dialect.
pub fn parse_create_product_from(mut p: Params) -> Result<CreateProduct, CoreError> {
    let name = p.string("name")?;
    Ok(CreateProduct {
        name: p.required("name", name)?,
        description: p.string("description")?.filter(|d| !d.is_empty()),
        active: p.boolean("active")?.unwrap_or(true),
        metadata: p.metadata()?.unwrap_or_default(),
    })
}

/// The parameters of `update_product`.
pub const PRODUCT_UPDATE_FIELDS: &[&str] = &["name", "description", "active", "metadata"];

pub fn parse_update_product(body: Value) -> Result<UpdateProduct, CoreError> {
    parse_update_product_from(Params::body(body, PRODUCT_UPDATE_FIELDS)?)
}

/// [`parse_update_product`] from parameters read in either dialect.
pub fn parse_update_product_from(mut p: Params) -> Result<UpdateProduct, CoreError> {
    Ok(UpdateProduct {
        name: p.string("name")?,
        description: p.clearable_string("description")?,
        active: p.boolean("active")?,
        metadata: p.metadata()?,
    })
}

pub fn parse_list_products(query: Option<&str>) -> Result<Listing, CoreError> {
    let q = Query::parse(query, &["active"])?;
    let params = q.list_params()?;
    let filters = bool_filter(&q, "active")?
        .map(|v| (Field::Active, v))
        .into_iter()
        .collect();
    Ok((params, filters))
}

pub(crate) async fn create_product(
    state: AppState,
    ctx: RequestContext,
    cmd: CreateProduct,
) -> ApiResult {
    ok(&state.services.billing().create_product(&ctx, cmd).await?)
}

pub(crate) async fn update_product(
    state: AppState,
    ctx: RequestContext,
    (id, cmd): (ProductId, UpdateProduct),
) -> ApiResult {
    ok(&state
        .services
        .billing()
        .update_product(&ctx, &id, cmd)
        .await?)
}

pub(crate) async fn delete_product(
    state: AppState,
    ctx: RequestContext,
    id: ProductId,
) -> ApiResult {
    ok(&state.services.billing().delete_product(&ctx, &id).await?)
}

// ---- Prices -----------------------------------------------------------------------------------

/// The parameters of `create_price`.
pub const PRICE_FIELDS: &[&str] = &[
    "product",
    "currency",
    "unit_amount",
    "recurring",
    "active",
    "nickname",
    "lookup_key",
    "transfer_lookup_key",
    "metadata",
];

pub fn parse_create_price(body: Value) -> Result<CreatePrice, CoreError> {
    parse_create_price_from(Params::body(body, PRICE_FIELDS)?)
}

/// [`parse_create_price`] from parameters read in either dialect.
pub fn parse_create_price_from(mut p: Params) -> Result<CreatePrice, CoreError> {
    let product = p.string("product")?;
    let product = p.required("product", product)?;
    let currency = parse_currency(&mut p)?;
    let unit_amount = p.integer("unit_amount")?;
    let unit_amount = p.required("unit_amount", unit_amount)?;
    let recurring = match p.object("recurring", &["interval", "interval_count"])? {
        None => None,
        Some(mut r) => {
            let interval = r.string("interval")?;
            Some((
                r.required("interval", interval)?,
                r.integer("interval_count")?,
            ))
        }
    };
    Ok(CreatePrice {
        product,
        currency,
        unit_amount,
        recurring,
        active: p.boolean("active")?.unwrap_or(true),
        nickname: p.string("nickname")?.filter(|n| !n.is_empty()),
        lookup_key: p.string("lookup_key")?.filter(|k| !k.is_empty()),
        transfer_lookup_key: p.boolean("transfer_lookup_key")?.unwrap_or(false),
        metadata: p.metadata()?.unwrap_or_default(),
    })
}

/// The parameters of `update_price`.
pub const PRICE_UPDATE_FIELDS: &[&str] = &[
    "active",
    "nickname",
    "lookup_key",
    "transfer_lookup_key",
    "metadata",
];

pub fn parse_update_price(body: Value) -> Result<UpdatePrice, CoreError> {
    parse_update_price_from(Params::body(body, PRICE_UPDATE_FIELDS)?)
}

/// [`parse_update_price`] from parameters read in either dialect.
pub fn parse_update_price_from(mut p: Params) -> Result<UpdatePrice, CoreError> {
    Ok(UpdatePrice {
        active: p.boolean("active")?,
        nickname: p.clearable_string("nickname")?,
        lookup_key: p.clearable_string("lookup_key")?,
        transfer_lookup_key: p.boolean("transfer_lookup_key")?.unwrap_or(false),
        metadata: p.metadata()?,
    })
}

pub fn parse_list_prices(query: Option<&str>) -> Result<Listing, CoreError> {
    let q = Query::parse(
        query,
        &["product", "active", "type", "currency", "lookup_key"],
    )?;
    let params = q.list_params()?;
    let mut filters = Vec::new();
    if let Some(p) = id_filter(&q, "product", IdKind::Product)? {
        filters.push((Field::Product, p));
    }
    if let Some(a) = bool_filter(&q, "active")? {
        filters.push((Field::Active, a));
    }
    match q.get("type") {
        None => {}
        Some(t @ ("one_time" | "recurring")) => filters.push((Field::Type, t.to_string())),
        Some(t) => {
            return Err(CoreError::invalid(
                "type",
                "parameter_invalid",
                format!("type must be one_time or recurring, not {t:?}."),
            ))
        }
    }
    if let Some(c) = q.get("currency") {
        let currency = tender_core::money::Currency::parse(c).ok_or_else(|| {
            CoreError::invalid(
                "currency",
                "parameter_invalid",
                format!("Invalid currency: {c}."),
            )
        })?;
        filters.push((Field::Currency, currency.code().to_string()));
    }
    if let Some(k) = q.get("lookup_key") {
        filters.push(lookup_key_filter("lookup_key", k)?);
    }
    Ok((params, filters))
}

/// The filter on a price's `lookup_key`, in either dialect: at most as long as a key may be.
pub(crate) fn lookup_key_filter(param: &str, key: &str) -> Result<(Field, String), CoreError> {
    tender_core::validate::check_text(
        param,
        Some(key),
        tender_core::billing::catalog::LOOKUP_KEY_MAX_CHARS,
    )?;
    Ok((Field::LookupKey, key.to_string()))
}

pub(crate) async fn create_price(
    state: AppState,
    ctx: RequestContext,
    cmd: CreatePrice,
) -> ApiResult {
    ok(&state.services.billing().create_price(&ctx, cmd).await?)
}

pub(crate) async fn update_price(
    state: AppState,
    ctx: RequestContext,
    (id, cmd): (PriceId, UpdatePrice),
) -> ApiResult {
    ok(&state
        .services
        .billing()
        .update_price(&ctx, &id, cmd)
        .await?)
}

// ---- Subscriptions ----------------------------------------------------------------------------

/// The parameters of `create_subscription`.
pub const SUBSCRIPTION_FIELDS: &[&str] = &[
    "customer",
    "items",
    "default_payment_method",
    "trial_period_days",
    "cancel_at_period_end",
    "metadata",
    "trial_settings",
];

pub fn parse_create_subscription(body: Value) -> Result<CreateSubscription, CoreError> {
    parse_create_subscription_from(Params::body(body, SUBSCRIPTION_FIELDS)?)
}

/// [`parse_create_subscription`] from parameters read in either dialect.
pub fn parse_create_subscription_from(mut p: Params) -> Result<CreateSubscription, CoreError> {
    let customer = p.string("customer")?;
    let customer = p.required("customer", customer)?;
    let given = p.objects("items", &["price", "quantity"], MAX_ITEMS)?;
    let mut items = Vec::new();
    for mut item in p.required("items", given)? {
        let price = item.string("price")?;
        items.push((item.required("price", price)?, item.integer("quantity")?));
    }
    Ok(CreateSubscription {
        customer,
        items,
        default_payment_method: p.string("default_payment_method")?,
        trial_period_days: p.integer("trial_period_days")?,
        cancel_at_period_end: p.boolean("cancel_at_period_end")?.unwrap_or(false),
        metadata: p.metadata()?.unwrap_or_default(),
        payment_behavior: Default::default(),
        missing_payment_method: parse_trial_settings(&mut p)?,
    })
}

/// `trial_settings[end_behavior][missing_payment_method]`: what a trial that ends without a
/// card to charge does (`create_invoice`, the default; `pause`; `cancel`).
fn parse_trial_settings(p: &mut Params) -> Result<MissingPaymentMethod, CoreError> {
    let Some(mut settings) = p.object("trial_settings", &["end_behavior"])? else {
        return Ok(MissingPaymentMethod::default());
    };
    let Some(mut end) = settings.object("end_behavior", &["missing_payment_method"])? else {
        return Ok(MissingPaymentMethod::default());
    };
    let name = "trial_settings[end_behavior][missing_payment_method]";
    match end.string("missing_payment_method")? {
        None => Ok(MissingPaymentMethod::default()),
        Some(m) => MissingPaymentMethod::parse(&m).ok_or_else(|| {
            CoreError::invalid(
                name,
                "parameter_invalid",
                format!("{name} must be create_invoice, pause or cancel, not {m:?}."),
            )
        }),
    }
}

/// The parameters of `update_subscription`.
pub const SUBSCRIPTION_UPDATE_FIELDS: &[&str] =
    &["cancel_at_period_end", "default_payment_method", "metadata"];

pub fn parse_update_subscription(body: Value) -> Result<UpdateSubscription, CoreError> {
    parse_update_subscription_from(Params::body(body, SUBSCRIPTION_UPDATE_FIELDS)?)
}

/// [`parse_update_subscription`] from parameters read in either dialect.
pub fn parse_update_subscription_from(mut p: Params) -> Result<UpdateSubscription, CoreError> {
    Ok(UpdateSubscription {
        cancel_at_period_end: p.boolean("cancel_at_period_end")?,
        default_payment_method: p.string("default_payment_method")?,
        metadata: p.metadata()?,
    })
}

pub fn parse_list_subscriptions(query: Option<&str>) -> Result<Listing, CoreError> {
    let q = Query::parse(query, &["customer", "status", "price"])?;
    let params = q.list_params()?;
    let mut filters = Vec::new();
    if let Some(c) = q.get("customer") {
        filters.push((Field::Customer, c.to_string()));
    }
    if let Some(s) = q.get("status") {
        let status = SubscriptionStatus::parse(s).ok_or_else(|| {
            CoreError::invalid(
                "status",
                "parameter_invalid",
                format!("Unknown subscription status: {s}."),
            )
        })?;
        filters.push((Field::Status, status.as_str().to_string()));
    }
    if let Some(price) = id_filter(&q, "price", IdKind::Price)? {
        filters.push((Field::Prices, prices_filter(&price)));
    }
    Ok((params, filters))
}

pub(crate) async fn create_subscription(
    state: AppState,
    ctx: RequestContext,
    cmd: CreateSubscription,
) -> ApiResult {
    ok(&state
        .services
        .billing()
        .create_subscription(&ctx, cmd)
        .await?)
}

pub(crate) async fn update_subscription(
    state: AppState,
    ctx: RequestContext,
    (id, cmd): (SubscriptionId, UpdateSubscription),
) -> ApiResult {
    ok(&state
        .services
        .billing()
        .update_subscription(&ctx, &id, cmd)
        .await?)
}

/// `POST /subscriptions/{id}/resume`: a paused subscription starts a new period now.
pub(crate) async fn resume_subscription(
    state: AppState,
    ctx: RequestContext,
    id: SubscriptionId,
) -> ApiResult {
    ok(&state
        .services
        .billing()
        .resume_subscription(&ctx, &id)
        .await?)
}

pub(crate) async fn cancel_subscription(
    state: AppState,
    ctx: RequestContext,
    id: SubscriptionId,
) -> ApiResult {
    ok(&state
        .services
        .billing()
        .cancel_subscription(&ctx, &id)
        .await?)
}

// ---- Invoices ---------------------------------------------------------------------------------

/// `POST /invoices/{id}/pay`: an optional card of the invoice's customer.
/// The parameters of `pay_invoice`.
pub const PAY_INVOICE_FIELDS: &[&str] = &["payment_method"];

pub fn parse_pay_invoice(body: Value) -> Result<Option<String>, CoreError> {
    parse_pay_invoice_from(Params::body(body, PAY_INVOICE_FIELDS)?)
}

/// [`parse_pay_invoice`] from parameters read in either dialect.
pub fn parse_pay_invoice_from(mut p: Params) -> Result<Option<String>, CoreError> {
    p.string("payment_method")
}

pub fn parse_list_invoices(query: Option<&str>) -> Result<Listing, CoreError> {
    let q = Query::parse(query, &["customer", "subscription", "status"])?;
    let params = q.list_params()?;
    let mut filters = Vec::new();
    if let Some(c) = q.get("customer") {
        filters.push((Field::Customer, c.to_string()));
    }
    if let Some(s) = q.get("subscription") {
        filters.push((Field::Subscription, s.to_string()));
    }
    if let Some(s) = q.get("status") {
        let status = InvoiceStatus::parse(s).ok_or_else(|| {
            CoreError::invalid(
                "status",
                "parameter_invalid",
                format!("Unknown invoice status: {s}."),
            )
        })?;
        filters.push((Field::Status, status.as_str().to_string()));
    }
    Ok((params, filters))
}

pub(crate) async fn pay_invoice(
    state: AppState,
    ctx: RequestContext,
    (id, pm): (InvoiceId, Option<String>),
) -> ApiResult {
    ok(&state.services.billing().pay_invoice(&ctx, &id, pm).await?)
}

pub(crate) async fn void_invoice(state: AppState, ctx: RequestContext, id: InvoiceId) -> ApiResult {
    ok(&state.services.billing().void_invoice(&ctx, &id).await?)
}

// ---- Test clocks ------------------------------------------------------------------------------

/// `POST /test_helpers/test_clocks`: `(frozen_time, name)`.
/// The parameters of `create_clock`.
pub const CLOCK_FIELDS: &[&str] = &["frozen_time", "name"];

pub fn parse_create_clock(body: Value) -> Result<(i64, Option<String>), CoreError> {
    parse_create_clock_from(Params::body(body, CLOCK_FIELDS)?)
}

/// [`parse_create_clock`] from parameters read in either dialect.
pub fn parse_create_clock_from(mut p: Params) -> Result<(i64, Option<String>), CoreError> {
    let frozen = p.integer("frozen_time")?;
    Ok((p.required("frozen_time", frozen)?, p.string("name")?))
}

/// `POST /test_helpers/test_clocks/{id}/advance`: the new `frozen_time`.
/// The parameters of `advance_clock`.
pub const ADVANCE_FIELDS: &[&str] = &["frozen_time"];

pub fn parse_advance_clock(body: Value) -> Result<i64, CoreError> {
    parse_advance_clock_from(Params::body(body, ADVANCE_FIELDS)?)
}

/// [`parse_advance_clock`] from parameters read in either dialect.
pub fn parse_advance_clock_from(mut p: Params) -> Result<i64, CoreError> {
    let frozen = p.integer("frozen_time")?;
    p.required("frozen_time", frozen)
}

/// `GET /test_helpers/test_clocks`: a page, no filters.
pub(crate) async fn create_test_clock(
    state: AppState,
    ctx: RequestContext,
    (frozen, name): (i64, Option<String>),
) -> ApiResult {
    ok(&state
        .services
        .billing()
        .create_test_clock(&ctx, frozen, name)
        .await?)
}

pub(crate) async fn advance_test_clock(
    state: AppState,
    ctx: RequestContext,
    (id, frozen): (TestClockId, i64),
) -> ApiResult {
    ok(&state
        .services
        .billing()
        .advance_test_clock(&ctx, &id, frozen)
        .await?)
}

pub(crate) async fn delete_test_clock(
    state: AppState,
    ctx: RequestContext,
    id: TestClockId,
) -> ApiResult {
    ok(&state
        .services
        .billing()
        .delete_test_clock(&ctx, &id)
        .await?)
}
