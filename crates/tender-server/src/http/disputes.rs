//! `/v2/disputes` (CONTRACT §9): retrieve, list, update (evidence, submit), close.

use axum::extract::{Path, RawQuery, State};
use serde_json::Value;
use tender_core::balance::disputes::Evidence;
use tender_core::balance::disputes::UpdateDispute;
use tender_core::error::CoreError;
use tender_core::ids::DisputeId;
use tender_core::services::ListParams;
use tender_core::store::{Collection, Field};

use super::params::{Params, Query};
use super::pipeline::{Ctx, JsonBody};
use super::{list_response, ok, raw_response, ApiResult};
use crate::state::AppState;

const EVIDENCE_FIELDS: [&str; 4] = [
    "customer_name",
    "customer_email_address",
    "product_description",
    "uncategorized_text",
];

/// `POST /disputes/{id}`: the body → the command.
pub fn parse_update(body: Value) -> Result<UpdateDispute, CoreError> {
    let mut p = Params::body(body, &["evidence", "metadata", "submit"])?;
    let evidence = match p.object("evidence", &EVIDENCE_FIELDS)? {
        None => None,
        Some(mut e) => Some(Evidence {
            customer_name: e.string("customer_name")?,
            customer_email_address: e.string("customer_email_address")?,
            product_description: e.string("product_description")?,
            uncategorized_text: e.string("uncategorized_text")?,
        }),
    };
    Ok(UpdateDispute {
        evidence,
        metadata: p.metadata()?,
        submit: p.boolean("submit")?.unwrap_or(false),
    })
}

/// `POST /disputes/{id}/close`: takes no parameters.
pub fn parse_close(body: Value) -> Result<(), CoreError> {
    Params::body(body, &[])?;
    Ok(())
}

/// `GET /disputes`: the query string → page and filters.
pub fn parse_list(query: Option<&str>) -> Result<(ListParams, Vec<(Field, String)>), CoreError> {
    let q = Query::parse(query, &["payment"])?;
    let params = q.list_params()?;
    let filters = q
        .get("payment")
        .map(|p| (Field::Payment, p.to_string()))
        .into_iter()
        .collect();
    Ok((params, filters))
}

pub(crate) async fn retrieve_dispute(
    State(state): State<AppState>,
    Ctx(ctx): Ctx,
    Path(id): Path<String>,
) -> ApiResult {
    let id = DisputeId::found(id)?;
    let body = state.services.retrieve(ctx.scope(), &id).await?;
    Ok(raw_response(body))
}

pub(crate) async fn update_dispute(
    State(state): State<AppState>,
    Ctx(ctx): Ctx,
    Path(id): Path<String>,
    JsonBody(body): JsonBody,
) -> ApiResult {
    let id = DisputeId::found(id)?;
    let cmd = parse_update(body)?;
    ok(&state.services.update_dispute(&ctx, &id, cmd).await?)
}

pub(crate) async fn close_dispute(
    State(state): State<AppState>,
    Ctx(ctx): Ctx,
    Path(id): Path<String>,
    JsonBody(body): JsonBody,
) -> ApiResult {
    let id = DisputeId::found(id)?;
    parse_close(body)?;
    ok(&state.services.close_dispute(&ctx, &id).await?)
}

pub(crate) async fn list_disputes(
    State(state): State<AppState>,
    Ctx(ctx): Ctx,
    RawQuery(q): RawQuery,
) -> ApiResult {
    let (params, filters) = parse_list(q.as_deref())?;
    let page = state
        .services
        .list_raw(ctx.scope(), Collection::Disputes, &params, filters)
        .await?;
    Ok(list_response("/v2/disputes", page))
}
