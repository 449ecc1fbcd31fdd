//! `/v2/webhook_endpoints`: create (the secret shown once), retrieve, update, delete, list,
//! roll the secret.

use serde_json::Value;
use tender_core::error::CoreError;
use tender_core::ids::WebhookEndpointId;
use tender_core::services::RequestContext;
use tender_core::webhooks::service::EndpointFields;

use super::params::Params;
use super::{ok, ApiResult};
use crate::state::AppState;

fn parse_events(p: &mut Params) -> Result<Option<Vec<String>>, CoreError> {
    match p.peek("enabled_events").cloned() {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(items)) => {
            let _ = p.string("enabled_events").ok();
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                match item {
                    Value::String(s) => out.push(s),
                    _ => {
                        return Err(CoreError::invalid(
                            "enabled_events",
                            "parameter_invalid",
                            "enabled_events must be a list of event types.",
                        ))
                    }
                }
            }
            Ok(Some(out))
        }
        Some(_) => Err(CoreError::invalid(
            "enabled_events",
            "parameter_invalid",
            "enabled_events must be a list of event types.",
        )),
    }
}

/// `POST /webhook_endpoints` (`allow_disabled` false) and `POST /webhook_endpoints/{id}`
/// (true): the body → the fields (no store involved; the URL is checked by the service).
pub fn parse_fields(body: Value, allow_disabled: bool) -> Result<EndpointFields, CoreError> {
    let allowed: &[&str] = if allow_disabled {
        &["url", "enabled_events", "description", "disabled"]
    } else {
        &["url", "enabled_events", "description"]
    };
    let mut p = Params::body(body, allowed)?;
    Ok(EndpointFields {
        dialect: Default::default(),
        enabled_events: parse_events(&mut p)?,
        url: p.string("url")?,
        description: p.clearable_string("description")?,
        disabled: if allow_disabled {
            p.boolean("disabled")?
        } else {
            None
        },
    })
}

pub(crate) async fn create_endpoint(
    state: AppState,
    ctx: RequestContext,
    fields: EndpointFields,
) -> ApiResult {
    ok(&state
        .services
        .webhooks()
        .create_endpoint(&ctx, fields)
        .await?)
}

pub(crate) async fn update_endpoint(
    state: AppState,
    ctx: RequestContext,
    (id, fields): (WebhookEndpointId, EndpointFields),
) -> ApiResult {
    ok(&state
        .services
        .webhooks()
        .update_endpoint(&ctx, &id, fields)
        .await?)
}

/// `DELETE`: a body, if any, must be empty (`{}`) like every other unknown parameter.
pub(crate) async fn delete_endpoint(
    state: AppState,
    ctx: RequestContext,
    id: WebhookEndpointId,
) -> ApiResult {
    ok(&state.services.webhooks().delete_endpoint(&ctx, &id).await?)
}

/// `POST /webhook_endpoints/{id}/roll_secret`: the body → how long the old secret lives.
pub fn parse_roll_secret(body: Value) -> Result<Option<i64>, CoreError> {
    Params::body(body, &["expires_in"])?.integer("expires_in")
}

pub(crate) async fn roll_secret(
    state: AppState,
    ctx: RequestContext,
    (id, expires_in): (WebhookEndpointId, Option<i64>),
) -> ApiResult {
    ok(&state
        .services
        .webhooks()
        .roll_endpoint_secret(&ctx, &id, expires_in)
        .await?)
}
