//! `/v2/connectors` (CONTRACT §8): create, retrieve, update, delete and list the processors an
//! account's payments go to. Secrets (`api_key`, `webhook_secret`) are write-only.

use serde_json::Value;
use tender_core::connectors::service::{ChangedBy, ConnectorFields};
use tender_core::error::CoreError;
use tender_core::ids::ConnectorId;
use tender_core::secret::Secret;
use tender_core::services::RequestContext;

use super::params::Params;
use super::{ok, ApiResult};
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
    state: AppState,
    ctx: RequestContext,
    fields: ConnectorFields,
) -> ApiResult {
    ok(&state
        .services
        .connectors()
        .create_connector(&ctx, fields, ChangedBy::Merchant)
        .await?)
}

pub(crate) async fn update_connector(
    state: AppState,
    ctx: RequestContext,
    (id, fields): (ConnectorId, ConnectorFields),
) -> ApiResult {
    ok(&state
        .services
        .connectors()
        .update_connector(&ctx, &id, fields, ChangedBy::Merchant)
        .await?)
}

pub(crate) async fn delete_connector(
    state: AppState,
    ctx: RequestContext,
    id: ConnectorId,
) -> ApiResult {
    ok(&state
        .services
        .connectors()
        .delete_connector(&ctx, &id)
        .await?)
}
