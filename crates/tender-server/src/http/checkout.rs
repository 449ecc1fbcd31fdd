//! `/v2/checkout_sessions`: create, retrieve, list (by customer, status, payment intent or
//! subscription), the line items, expire. The parsers read a [`Params`] of either dialect, so
//! `/v1/checkout/sessions` runs the same code ([`crate::stripe::checkout`]).

use serde_json::{json, Value};
use tender_core::checkout::create::{CreateCheckoutSession, LineItemInput, PriceData};
use tender_core::checkout::session::{CheckoutMode, CheckoutStatus, MAX_LINE_ITEMS};
use tender_core::error::CoreError;
use tender_core::ids::{CheckoutSessionId, CustomerId};
use tender_core::payments::payment::CaptureMethod;
use tender_core::services::RequestContext;
use tender_core::store::Field;

use super::params::{Listing, Params, Query};
use super::payments::parse_currency;
use super::{ok, ApiResult};
use crate::state::AppState;

/// The parameters of `POST /checkout_sessions`.
pub const CREATE_FIELDS: &[&str] = &[
    "mode",
    "line_items",
    "success_url",
    "cancel_url",
    "customer",
    "customer_email",
    "client_reference_id",
    "metadata",
    "allow_promotion_codes",
    "subscription_data",
    "payment_intent_data",
    "expires_at",
];

/// The filters of `GET /checkout_sessions`.
pub const LIST_FILTERS: &[&str] = &["customer", "status", "payment_intent", "subscription"];

pub fn parse_create(body: Value) -> Result<CreateCheckoutSession, CoreError> {
    parse_create_from(Params::body(body, CREATE_FIELDS)?)
}

/// [`parse_create`] from parameters of either dialect.
pub fn parse_create_from(mut p: Params) -> Result<CreateCheckoutSession, CoreError> {
    let mode = p.string("mode")?;
    let mode = CheckoutMode::parse(&p.required("mode", mode)?)?;
    let success_url = p.string("success_url")?;
    let success_url = p.required("success_url", success_url)?;
    let line_items = match p.objects(
        "line_items",
        &["price", "price_data", "quantity"],
        MAX_LINE_ITEMS,
    )? {
        Some(lines) => lines
            .into_iter()
            .map(parse_line)
            .collect::<Result<Vec<_>, _>>()?,
        None => Vec::new(),
    };
    let trial_period_days = match p.object("subscription_data", &["trial_period_days"])? {
        Some(mut d) => d.integer("trial_period_days")?,
        None => None,
    };
    let capture_method = match p.object("payment_intent_data", &["capture_method"])? {
        Some(mut d) => parse_capture(&mut d)?,
        None => CaptureMethod::Automatic,
    };
    Ok(CreateCheckoutSession {
        mode,
        line_items,
        success_url,
        cancel_url: p.string("cancel_url")?,
        customer: p
            .string("customer")?
            .map(|c| CustomerId::referenced(c, "customer"))
            .transpose()?,
        customer_email: p.string("customer_email")?,
        client_reference_id: p.string("client_reference_id")?,
        metadata: p.metadata()?.unwrap_or_default(),
        allow_promotion_codes: p.boolean("allow_promotion_codes")?.unwrap_or(false),
        trial_period_days,
        capture_method,
        expires_at: p.integer("expires_at")?,
        payment_link: None,
    })
}

fn parse_capture(d: &mut Params) -> Result<CaptureMethod, CoreError> {
    match d.string("capture_method")?.as_deref() {
        None | Some("automatic") | Some("automatic_async") => Ok(CaptureMethod::Automatic),
        Some("manual") => Ok(CaptureMethod::Manual),
        Some(other) => Err(CoreError::invalid(
            d.name("capture_method"),
            "parameter_invalid",
            format!("capture_method must be automatic or manual, not {other:?}."),
        )),
    }
}

/// `line_items[n]`: `price` or `price_data`, and `quantity`.
fn parse_line(mut line: Params) -> Result<LineItemInput, CoreError> {
    let price_data = match line.object(
        "price_data",
        &[
            "currency",
            "unit_amount",
            "product",
            "product_data",
            "recurring",
        ],
    )? {
        Some(mut d) => {
            let currency = parse_currency(&mut d)?;
            let unit_amount = d.integer("unit_amount")?;
            let unit_amount = d.required("unit_amount", unit_amount)?;
            let product_name = match d.object("product_data", &["name"])? {
                Some(mut pd) => {
                    let name = pd.string("name")?;
                    Some(pd.required("name", name)?)
                }
                None => None,
            };
            let recurring = match d.object("recurring", &["interval", "interval_count"])? {
                Some(mut r) => {
                    let interval = r.string("interval")?;
                    Some((
                        r.required("interval", interval)?,
                        r.integer("interval_count")?,
                    ))
                }
                None => None,
            };
            Some(PriceData {
                currency,
                unit_amount,
                product: d.string("product")?,
                product_name,
                recurring,
            })
        }
        None => None,
    };
    Ok(LineItemInput {
        price: line.string("price")?,
        price_data,
        quantity: line.integer("quantity")?,
    })
}

pub(crate) async fn create_checkout_session(
    state: AppState,
    ctx: RequestContext,
    cmd: CreateCheckoutSession,
) -> ApiResult {
    ok(&state
        .services
        .checkout()
        .create_checkout_session(&ctx, cmd)
        .await?)
}

/// `GET /checkout_sessions/{id}`: the session, completed first if its payment went through
/// away from its page.
pub(crate) async fn retrieve_checkout_session(
    state: AppState,
    ctx: RequestContext,
    id: CheckoutSessionId,
) -> ApiResult {
    ok(&state
        .services
        .checkout()
        .checkout_session(&ctx, &id)
        .await?)
}

pub(crate) async fn expire_checkout_session(
    state: AppState,
    ctx: RequestContext,
    id: CheckoutSessionId,
) -> ApiResult {
    ok(&state
        .services
        .checkout()
        .expire_checkout_session(&ctx, &id)
        .await?)
}

/// `GET /checkout_sessions/{id}/line_items`: the session's lines, one page (a session has at
/// most [`MAX_LINE_ITEMS`]).
pub(crate) async fn list_line_items(
    state: AppState,
    ctx: RequestContext,
    id: CheckoutSessionId,
) -> ApiResult {
    let session = state
        .services
        .checkout()
        .checkout_session(&ctx, &id)
        .await?;
    ok(&json!({
        "object": "list",
        "url": format!("/v2/checkout_sessions/{id}/line_items"),
        "has_more": false,
        "data": session.line_items.data,
    }))
}

/// `GET /checkout_sessions`: the query string → page and filters.
pub fn parse_list(query: Option<&str>) -> Result<Listing, CoreError> {
    let q = Query::parse(query, LIST_FILTERS)?;
    let params = q.list_params()?;
    let mut filters = Vec::new();
    if let Some(status) = q.get("status") {
        filters.push((
            Field::Status,
            CheckoutStatus::parse(status)?.as_str().to_string(),
        ));
    }
    for (name, field) in [
        ("customer", Field::Customer),
        ("payment_intent", Field::Payment),
        ("subscription", Field::Subscription),
    ] {
        if let Some(v) = q.get(name) {
            filters.push((field, tender_core::stripe::ids::tender(v)));
        }
    }
    Ok((params, filters))
}
