//! `/v2/payment_methods`: tokenise a card (the one operation a publishable key may call),
//! retrieve, attach, detach, list by customer.

use axum::extract::{Path, RawQuery, State};
use serde_json::Value;
use tender_core::card::CardInput;
use tender_core::error::CoreError;
use tender_core::ids::{CustomerId, PaymentMethodId};
use tender_core::services::ListParams;
use tender_core::store::{Collection, Field};

use super::params::{Params, Query};
use super::payments::parse_card;
use super::pipeline::{Ctx, JsonBody};
use super::{list_response, ok, raw_response, ApiResult};
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
    State(state): State<AppState>,
    Ctx(ctx): Ctx,
    JsonBody(body): JsonBody,
) -> ApiResult {
    let (card, metadata) = parse_create(body)?;
    ok(&state
        .services
        .create_payment_method(&ctx, card, metadata)
        .await?)
}

pub(crate) async fn retrieve_payment_method(
    State(state): State<AppState>,
    Ctx(ctx): Ctx,
    Path(id): Path<String>,
) -> ApiResult {
    let id = PaymentMethodId::found(id)?;
    let body = state.services.retrieve(ctx.scope(), &id).await?;
    Ok(raw_response(body))
}

/// `POST /payment_methods/{id}/attach`: the body → the customer id.
pub fn parse_attach(body: Value) -> Result<CustomerId, CoreError> {
    let mut p = Params::body(body, &["customer"])?;
    let customer = p.string("customer")?;
    CustomerId::referenced(p.required("customer", customer)?, "customer")
}

pub(crate) async fn attach_payment_method(
    State(state): State<AppState>,
    Ctx(ctx): Ctx,
    Path(id): Path<String>,
    JsonBody(body): JsonBody,
) -> ApiResult {
    let id = PaymentMethodId::found(id)?;
    let customer = parse_attach(body)?;
    ok(&state
        .services
        .attach_payment_method(&ctx, &id, &customer)
        .await?)
}

/// `POST /payment_methods/{id}/detach`: the body must be empty (`{}`).
pub fn parse_detach(body: Value) -> Result<(), CoreError> {
    Params::body(body, &[]).map(drop)
}

pub(crate) async fn detach_payment_method(
    State(state): State<AppState>,
    Ctx(ctx): Ctx,
    Path(id): Path<String>,
    JsonBody(body): JsonBody,
) -> ApiResult {
    let id = PaymentMethodId::found(id)?;
    parse_detach(body)?;
    ok(&state.services.detach_payment_method(&ctx, &id).await?)
}

/// `GET /payment_methods`: the query string → page and the (required) customer.
pub fn parse_list(query: Option<&str>) -> Result<(ListParams, String), CoreError> {
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
    Ok((params, customer))
}

pub(crate) async fn list_payment_methods(
    State(state): State<AppState>,
    Ctx(ctx): Ctx,
    RawQuery(q): RawQuery,
) -> ApiResult {
    let (params, customer) = parse_list(q.as_deref())?;
    let page = state
        .services
        .list_raw(
            ctx.scope(),
            Collection::PaymentMethods,
            &params,
            vec![(Field::Customer, customer)],
        )
        .await?;
    Ok(list_response("/v2/payment_methods", page))
}
