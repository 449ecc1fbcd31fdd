//! `/v1/webhook_endpoints` and `/v1/events`. An endpoint created here is a Stripe endpoint: it
//! listens to Stripe's event names and is sent Stripe's event shape signed in
//! `Stripe-Signature` (`tender_core::stripe::events`); one created through `/v2` keeps Tender's.
//! Both receive every change. Events are listed and retrieved under Stripe's names: under the
//! name asked for (`type`, `types[]`), else each under its first name.

use tender_core::error::CoreError;
use tender_core::ids::{kind, Id, WebhookEndpointId};
use tender_core::services::RequestContext;
use tender_core::store::{Collection, Field};
use tender_core::stripe::events;
use tender_core::webhooks::service::EndpointFields;
use tender_core::webhooks::webhook::EndpointDialect;

use super::params::{form, list_form, list_request, path_id};
use crate::http::operation::{Input, ListRequest};
use crate::http::params::Params;
use crate::http::ApiResult;
use crate::state::AppState;

/// `POST /v1/webhook_endpoints`.
pub const CREATE: &[&str] = &["url", "enabled_events", "description"];
/// `POST /v1/webhook_endpoints/{id}`.
pub const UPDATE: &[&str] = &["url", "enabled_events", "description", "disabled"];
/// `GET /v1/events`.
pub const LIST_EVENTS: &[&str] = &["type", "types"];

/// Most event names an endpoint may list.
const MAX_EVENTS: usize = 100;

fn fields(p: &mut Params, allow_disabled: bool) -> Result<EndpointFields, CoreError> {
    Ok(EndpointFields {
        dialect: EndpointDialect::Stripe,
        enabled_events: p.strings("enabled_events", MAX_EVENTS)?,
        url: p.string("url")?,
        description: p.clearable_string("description")?,
        disabled: if allow_disabled {
            p.boolean("disabled")?
        } else {
            None
        },
    })
}

pub fn parse_create(mut i: Input) -> Result<EndpointFields, CoreError> {
    fields(&mut form(&mut i, CREATE)?, false)
}

pub fn parse_update(mut i: Input) -> Result<(WebhookEndpointId, EndpointFields), CoreError> {
    let id = path_id(&i)?;
    Ok((id, fields(&mut form(&mut i, UPDATE)?, true)?))
}

/// The events asked for: a Stripe name (or several naming one Tender type), as the Tender type
/// to filter on and the name to show them under.
#[derive(Debug)]
pub struct EventList {
    request: ListRequest,
    name: Option<String>,
}

pub fn parse_list_events(mut i: Input) -> Result<EventList, CoreError> {
    let mut p = list_form(&mut i, LIST_EVENTS)?;
    let mut names = p.strings("types", 20)?.unwrap_or_default();
    names.extend(p.string("type")?);
    let mut tender = Vec::new();
    for name in &names {
        if !events::is_stripe_type(name) {
            return Err(CoreError::invalid(
                "type",
                "parameter_invalid",
                format!("Unknown event type: {name}."),
            ));
        }
        tender.extend(events::tender_types(name));
    }
    tender.dedup();
    if tender.len() > 1 {
        return Err(CoreError::invalid(
            "types",
            "parameter_invalid",
            "Tender filters events by one type at a time: give names that stand for the same change (payment_intent.succeeded and charge.succeeded), or list them one by one.",
        ));
    }
    let filters = tender
        .first()
        .map(|t| (Field::Type, t.to_string()))
        .into_iter()
        .collect();
    Ok(EventList {
        request: list_request(&i, &mut p, filters)?,
        name: names.into_iter().next(),
    })
}

/// An event in Stripe's shape: under `name` if it has that name, else under its first.
fn shown(
    state: &AppState,
    raw: &str,
    name: Option<&str>,
) -> Result<Option<serde_json::Value>, CoreError> {
    let v2: serde_json::Value =
        serde_json::from_str(raw).map_err(|e| CoreError::internal("read an event", e))?;
    let shapes = state.services.stripe_shapes();
    let kind = v2["type"].as_str().unwrap_or_default();
    let named = name.and_then(|n| events::name_for(kind, &[n.to_string()]));
    Ok(match named {
        Some((name, shape)) => Some(events::event(&shapes, &v2, name, shape)),
        None => events::listed(&shapes, &v2),
    })
}

pub(crate) async fn list_events(state: AppState, ctx: RequestContext, req: EventList) -> ApiResult {
    let page = state
        .services
        .list_raw(
            ctx.scope(),
            Collection::Events,
            &req.request.params,
            req.request.filters,
        )
        .await?;
    let mut data = Vec::with_capacity(page.data.len());
    for raw in &page.data {
        data.extend(shown(&state, raw, req.name.as_deref())?);
    }
    crate::http::ok(&serde_json::json!({
        "object": "list",
        "data": data,
        "has_more": page.has_more,
        "url": req.request.url,
    }))
}

/// The event of the path, and which of its Stripe names it is asked under (`evt_X_k`: the
/// k-th).
pub fn parse_event(mut i: Input) -> Result<(Id<kind::Event>, usize), CoreError> {
    let id = path_id(&i)?;
    form(&mut i, &[])?;
    Ok((id, events::parse_stripe_id(&i.id).1))
}

pub(crate) async fn retrieve_event(
    state: AppState,
    ctx: RequestContext,
    (id, k): (Id<kind::Event>, usize),
) -> ApiResult {
    let raw = state.services.retrieve(ctx.scope(), &id).await?;
    let kind = serde_json::from_str::<serde_json::Value>(&raw)
        .map_err(|e| CoreError::internal("read an event", e))?["type"]
        .as_str()
        .map(str::to_string)
        .unwrap_or_default();
    let name = match k {
        0 => None,
        k => Some(
            events::name_at(&kind, k).ok_or_else(|| CoreError::NotFound {
                kind: "event",
                id: id.to_string(),
            })?,
        ),
    };
    match shown(&state, &raw, name.map(|n| n.0))? {
        Some(event) => crate::http::ok(&event),
        None => Err(CoreError::NotFound {
            kind: "event",
            id: id.to_string(),
        }
        .into()),
    }
}
