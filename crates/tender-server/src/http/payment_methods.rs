//! `/v2/payment_methods`: tokenise a card (the one operation a publishable key may call),
//! retrieve, attach, detach, list by customer.

use serde_json::Value;
use tender_core::card::CardInput;
use tender_core::error::CoreError;
use tender_core::ids::{CustomerId, PaymentMethodId};
use tender_core::services::RequestContext;
use tender_core::store::Field;

use super::params::{Listing, Params, Query};
use super::payments::parse_card;
use super::{ok, ApiResult};
use crate::state::AppState;

/// `POST /payment_methods`: the body → the card and metadata (no store involved).
pub fn parse_create(body: Value) -> Result<(CardInput, Vec<(String, String)>), CoreError> {
    let mut p = Params::body(body, &["type", "card", "metadata"])?;
    let kind = p.string("type")?;
    let kind = p.required("type", kind)?;
    if kind != "card" {
        return Err(CoreError::invalid(
            "type",
            "parameter_invalid",
            "Only card payment methods can be created.",
        ));
    }
    let card = parse_card(&mut p)?;
    let metadata = p.metadata()?.unwrap_or_default();
    Ok((card, metadata))
}

pub(crate) async fn create_payment_method(
    state: AppState,
    ctx: RequestContext,
    (card, metadata): (CardInput, Vec<(String, String)>),
) -> ApiResult {
    ok(&state
        .services
        .payment_methods()
        .create_payment_method(&ctx, card, metadata)
        .await?)
}

/// `POST /payment_methods/{id}/attach`: the body → the customer id.
pub fn parse_attach(body: Value) -> Result<CustomerId, CoreError> {
    let mut p = Params::body(body, &["customer"])?;
    let customer = p.string("customer")?;
    CustomerId::referenced(p.required("customer", customer)?, "customer")
}

pub(crate) async fn attach_payment_method(
    state: AppState,
    ctx: RequestContext,
    (id, customer): (PaymentMethodId, CustomerId),
) -> ApiResult {
    ok(&state
        .services
        .payment_methods()
        .attach_payment_method(&ctx, &id, &customer)
        .await?)
}

/// `POST /payment_methods/{id}/detach`: the body must be empty (`{}`).
pub(crate) async fn detach_payment_method(
    state: AppState,
    ctx: RequestContext,
    id: PaymentMethodId,
) -> ApiResult {
    ok(&state
        .services
        .payment_methods()
        .detach_payment_method(&ctx, &id)
        .await?)
}

/// `GET /payment_methods`: the query string → page and the (required) customer.
pub fn parse_list(query: Option<&str>) -> Result<Listing, CoreError> {
    let q = Query::parse(query, &["customer", "type"])?;
    let params = q.list_params()?;
    let customer = q.get("customer").map(str::to_string);
    let customer = Params::body(serde_json::json!({}), &[])?.required("customer", customer)?;
    if let Some(t) = q.get("type") {
        if t != "card" {
            return Err(CoreError::invalid(
                "type",
                "parameter_invalid",
                "type must be card.",
            ));
        }
    }
    Ok((params, vec![(Field::Customer, customer)]))
}
