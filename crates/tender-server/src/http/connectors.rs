//! `/v2/connectors` (CONTRACT §8): create, retrieve, update, delete and list the processors an
//! account's payments go to. Secrets (`api_key`, `webhook_secret`) are write-only.

use axum::extract::{Path, RawQuery, State};
use serde_json::Value;
use tender_core::connectors::service::{ChangedBy, ConnectorFields};
use tender_core::error::CoreError;
use tender_core::ids::ConnectorId;
use tender_core::secret::Secret;
use tender_core::services::ListParams;
use tender_core::store::Collection;

use super::params::{Params, Query};
use super::pipeline::{Ctx, JsonBody};
use super::{list_response, ok, raw_response, ApiResult};
use crate::state::AppState;

/// `POST /connectors` (`update` false) and `POST /connectors/{id}` (true): the body → the
/// fields (no store involved; the service checks them against the connector's type).
pub fn parse_fields(body: Value, update: bool) -> Result<ConnectorFields, CoreError> {
    const COMMON: [&str; 8] = [
        "name",
        "api_key",
        "api_base",
        "webhook_secret",
        "priority",
        "raw_card_data",
        "metadata",
        "disabled",
    ];
    let allowed: Vec<&str> = if update {
        COMMON.to_vec()
    } else {
        std::iter::once("type")
            .chain(COMMON.into_iter().filter(|k| *k != "disabled"))
            .collect()
    };
    let mut p = Params::body(body, &allowed)?;
    Ok(ConnectorFields {
        kind: if update { None } else { p.string("type")? },
        name: p.clearable_string("name")?,
        api_key: p.string("api_key")?.map(Secret::new),
        api_base: p.string("api_base")?,
        webhook_secret: p
            .clearable_string("webhook_secret")?
            .map(|s| s.map(Secret::new)),
        priority: p.integer("priority")?,
        raw_card_data: p.boolean("raw_card_data")?,
        disabled: if update { p.boolean("disabled")? } else { None },
        metadata: p.metadata()?,
    })
}

pub(crate) async fn create_connector(
    State(state): State<AppState>,
    Ctx(ctx): Ctx,
    JsonBody(body): JsonBody,
) -> ApiResult {
    let fields = parse_fields(body, false)?;
    ok(&state
        .services
        .create_connector(&ctx, fields, ChangedBy::Merchant)
        .await?)
}

pub(crate) async fn retrieve_connector(
    State(state): State<AppState>,
    Ctx(ctx): Ctx,
    Path(id): Path<String>,
) -> ApiResult {
    let id = ConnectorId::found(id)?;
    let body = state.services.retrieve(ctx.scope(), &id).await?;
    Ok(raw_response(body))
}

pub(crate) async fn update_connector(
    State(state): State<AppState>,
    Ctx(ctx): Ctx,
    Path(id): Path<String>,
    JsonBody(body): JsonBody,
) -> ApiResult {
    let id = ConnectorId::found(id)?;
    let fields = parse_fields(body, true)?;
    ok(&state
        .services
        .update_connector(&ctx, &id, fields, ChangedBy::Merchant)
        .await?)
}

pub(crate) async fn delete_connector(
    State(state): State<AppState>,
    Ctx(ctx): Ctx,
    Path(id): Path<String>,
    JsonBody(body): JsonBody,
) -> ApiResult {
    let id = ConnectorId::found(id)?;
    super::webhook_endpoints::parse_delete(body)?;
    ok(&state.services.delete_connector(&ctx, &id).await?)
}

/// `GET /connectors`: the query string → page.
pub fn parse_list(query: Option<&str>) -> Result<ListParams, CoreError> {
    Query::parse(query, &[])?.list_params()
}

pub(crate) async fn list_connectors(
    State(state): State<AppState>,
    Ctx(ctx): Ctx,
    RawQuery(q): RawQuery,
) -> ApiResult {
    let params = parse_list(q.as_deref())?;
    let page = state
        .services
        .list_raw(ctx.scope(), Collection::Connectors, &params, Vec::new())
        .await?;
    Ok(list_response("/v2/connectors", page))
}
