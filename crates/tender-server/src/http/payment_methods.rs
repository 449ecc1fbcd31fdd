//! `/v2/payment_methods`: tokenise a card (the one operation a publishable key may call),
//! retrieve, attach, detach, list by customer.

use serde_json::Value;
use tender_core::auth::KeyKind;
use tender_core::card::CardInput;
use tender_core::error::CoreError;
use tender_core::ids::{CustomerId, PaymentMethodId};
use tender_core::services::RequestContext;
use tender_core::store::Field;

use super::params::{Listing, Params, Query};
use super::payments::parse_card;
use super::{ok, ApiResult};
use crate::state::AppState;

/// What `POST /payment_methods` makes: a card for Tender's vault, or a processor's own
/// payment method kept at the processor for a customer (CONTRACT §15).
#[derive(Debug)]
pub enum NewPaymentMethod {
    Card(CardInput),
    AtProcessor { token: String, customer: CustomerId },
}

/// `POST /payment_methods`: the body → what to make and its metadata (no store involved).
pub fn parse_create(body: Value) -> Result<(NewPaymentMethod, Vec<(String, String)>), CoreError> {
    let mut p = Params::body(
        body,
        &["type", "card", "connector_token", "customer", "metadata"],
    )?;
    let kind = p.string("type")?;
    let kind = p.required("type", kind)?;
    let made = match kind.as_str() {
        "card" => NewPaymentMethod::Card(parse_card(&mut p)?),
        "connector_token" => {
            let token = p.string("connector_token")?;
            let token = p.required("connector_token", token)?;
            if token.is_empty() || token.chars().count() > 255 {
                return Err(CoreError::invalid(
                    "connector_token",
                    "parameter_invalid",
                    "connector_token must be 1 to 255 characters.",
                ));
            }
            let customer = p.string("customer")?;
            let customer = CustomerId::referenced(p.required("customer", customer)?, "customer")?;
            NewPaymentMethod::AtProcessor { token, customer }
        }
        _ => {
            return Err(CoreError::invalid(
                "type",
                "parameter_invalid",
                "type must be card or connector_token.",
            ))
        }
    };
    let metadata = p.metadata()?.unwrap_or_default();
    Ok((made, metadata))
}

pub(crate) async fn create_payment_method(
    state: AppState,
    ctx: RequestContext,
    (made, metadata): (NewPaymentMethod, Vec<(String, String)>),
) -> ApiResult {
    let methods = state.services.payment_methods();
    match made {
        NewPaymentMethod::Card(card) => ok(&methods.create_payment_method(&ctx, card, metadata).await?),
        NewPaymentMethod::AtProcessor { .. } if ctx.principal.key_kind == KeyKind::Publishable => {
            Err(CoreError::invalid(
                "type",
                "parameter_invalid",
                "A processor's payment method is kept for a customer with a secret key, from the shop's server.",
            )
            .into())
        }
        NewPaymentMethod::AtProcessor { token, customer } => ok(&methods
            .save_at_processor(&ctx, &token, &customer, metadata)
            .await?),
    }
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
