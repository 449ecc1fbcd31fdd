//! `/v2/payment_methods`: tokenise a card (the one operation a publishable key may call),
//! retrieve, attach, detach, list by customer.

use axum::extract::{Path, RawQuery, State};
use axum::routing::{get, post};
use axum::Router;
use tender_core::ids::IdKind;
use tender_core::store::{Collection, Field};

use super::params::{Params, Query};
use super::payments::parse_card;
use super::pipeline::{Ctx, JsonBody};
use super::{list_response, ok, path_id, raw_response, ApiResult};
use crate::state::AppState;

pub fn router() -> Router<AppState> {
    Router::new()
        .route(
            "/payment_methods",
            post(create_payment_method).get(list_payment_methods),
        )
        .route("/payment_methods/{id}", get(retrieve_payment_method))
        .route("/payment_methods/{id}/attach", post(attach_payment_method))
        .route("/payment_methods/{id}/detach", post(detach_payment_method))
}

async fn create_payment_method(
    State(state): State<AppState>,
    Ctx(ctx): Ctx,
    JsonBody(body): JsonBody,
) -> ApiResult {
    let mut p = Params::body((*body).clone(), &["type", "card", "metadata"])?;
    let kind = p.string("type")?;
    let kind = p.required("type", kind)?;
    if kind != "card" {
        return Err(tender_core::error::CoreError::invalid(
            "type",
            "parameter_invalid",
            "Only card payment methods can be created.",
        )
        .into());
    }
    let card = parse_card(&mut p)?;
    let metadata = p.metadata()?.unwrap_or_default();
    ok(&state
        .services
        .create_payment_method(&ctx, card, metadata)
        .await?)
}

async fn retrieve_payment_method(
    State(state): State<AppState>,
    Ctx(ctx): Ctx,
    Path(id): Path<String>,
) -> ApiResult {
    let id = path_id(IdKind::PaymentMethod, "payment_method", id)?;
    let body = state
        .services
        .retrieve_raw(
            ctx.scope(),
            Collection::PaymentMethods,
            "payment_method",
            &id,
        )
        .await?;
    Ok(raw_response(body))
}

async fn attach_payment_method(
    State(state): State<AppState>,
    Ctx(ctx): Ctx,
    Path(id): Path<String>,
    JsonBody(body): JsonBody,
) -> ApiResult {
    let id = path_id(IdKind::PaymentMethod, "payment_method", id)?;
    let mut p = Params::body((*body).clone(), &["customer"])?;
    let customer = p.string("customer")?;
    let customer = p.required("customer", customer)?;
    ok(&state
        .services
        .attach_payment_method(&ctx, &id, &customer)
        .await?)
}

async fn detach_payment_method(
    State(state): State<AppState>,
    Ctx(ctx): Ctx,
    Path(id): Path<String>,
    JsonBody(body): JsonBody,
) -> ApiResult {
    let id = path_id(IdKind::PaymentMethod, "payment_method", id)?;
    Params::body((*body).clone(), &[])?;
    ok(&state.services.detach_payment_method(&ctx, &id).await?)
}

async fn list_payment_methods(
    State(state): State<AppState>,
    Ctx(ctx): Ctx,
    RawQuery(q): RawQuery,
) -> ApiResult {
    let q = Query::parse(q.as_deref(), &["customer", "type"])?;
    let params = q.list_params()?;
    let customer = q.get("customer").map(str::to_string);
    let customer = Params::body(serde_json::json!({}), &[])?.required("customer", customer)?;
    if let Some(t) = q.get("type") {
        if t != "card" {
            return Err(tender_core::error::CoreError::invalid(
                "type",
                "parameter_invalid",
                "type must be card.",
            )
            .into());
        }
    }
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
