//! `/v2/events`: retrieve and list (filter `type`).

use axum::extract::{Path, RawQuery, State};
use tender_core::error::CoreError;
use tender_core::ids::IdKind;
use tender_core::service::ListParams;
use tender_core::store::{Collection, Field};

use super::params::{Params, Query};
use super::pipeline::{Ctx, JsonBody};
use super::{list_response, ok, path_id, raw_response, ApiResult};
use crate::state::AppState;

pub(crate) async fn list_deliveries(
    State(state): State<AppState>,
    Ctx(ctx): Ctx,
    Path(id): Path<String>,
    RawQuery(q): RawQuery,
) -> ApiResult {
    // One delivery per endpoint: nothing to page or filter, so any parameter is a mistake.
    if let Some((k, _)) = form_urlencoded::parse(q.unwrap_or_default().as_bytes()).next() {
        return Err(CoreError::invalid(
            k.to_string(),
            "parameter_unknown",
            format!("Received unknown parameter: {k}"),
        )
        .into());
    }
    let id = path_id(IdKind::Event, "event", id)?;
    let data = state
        .services
        .list_event_deliveries(ctx.scope(), &id)
        .await?;
    let url = format!("/v2/events/{id}/deliveries");
    ok(&serde_json::json!({"object": "list", "data": data, "has_more": false, "url": url}))
}

/// `POST /events/{id}/resend`: the body → the webhook endpoint id.
pub fn parse_resend(body: &serde_json::Value) -> Result<String, CoreError> {
    let mut p = Params::body(body.clone(), &["webhook_endpoint"])?;
    let endpoint = p.string("webhook_endpoint")?;
    p.required("webhook_endpoint", endpoint)
}

pub(crate) async fn resend_event(
    State(state): State<AppState>,
    Ctx(ctx): Ctx,
    Path(id): Path<String>,
    JsonBody(body): JsonBody,
) -> ApiResult {
    let id = path_id(IdKind::Event, "event", id)?;
    let endpoint = parse_resend(&body)?;
    ok(&state.services.resend_event(&ctx, &id, &endpoint).await?)
}

pub(crate) async fn retrieve_event(
    State(state): State<AppState>,
    Ctx(ctx): Ctx,
    Path(id): Path<String>,
) -> ApiResult {
    let id = path_id(IdKind::Event, "event", id)?;
    let body = state
        .services
        .retrieve_raw(ctx.scope(), Collection::Events, "event", &id)
        .await?;
    Ok(raw_response(body))
}

/// `GET /events`: the query string → page and filters.
pub fn parse_list(query: Option<&str>) -> Result<(ListParams, Vec<(Field, String)>), CoreError> {
    let q = Query::parse(query, &["type"])?;
    let params = q.list_params()?;
    let mut filters = Vec::new();
    if let Some(t) = q.get("type") {
        // Like `status` on payments: a value that can never match is a mistake worth naming.
        if !tender_core::event::EVENT_TYPES.contains(&t) {
            return Err(CoreError::invalid(
                "type",
                "parameter_invalid",
                format!("Unknown event type: {t}."),
            ));
        }
        filters.push((Field::Type, t.to_string()));
    }
    Ok((params, filters))
}

pub(crate) async fn list_events(
    State(state): State<AppState>,
    Ctx(ctx): Ctx,
    RawQuery(q): RawQuery,
) -> ApiResult {
    let (params, filters) = parse_list(q.as_deref())?;
    let page = state
        .services
        .list_raw(ctx.scope(), Collection::Events, &params, filters)
        .await?;
    Ok(list_response("/v2/events", page))
}
