//! `tender connectors list|create|update|delete`: the operator's hand on an account's processors;
//! only here may a connector be given card data (`raw_card_data`) or another `api_base`.

use super::accounts::{mode, resolve_account};
use super::services;
use crate::{ConnectorScope, ConnectorSettingsArgs, ConnectorsCommand};
use anyhow::Context;
use tender_core::auth::KeyKind;
use tender_core::connectors::service::ChangedBy;
use tender_core::services::Services;

/// The context a connector command acts in: a secret key of that account and mode.
async fn connector_ctx(
    services: &Services,
    scope: &ConnectorScope,
) -> anyhow::Result<tender_core::services::RequestContext> {
    let account = resolve_account(services, &scope.account).await?;
    Ok(tender_core::services::RequestContext {
        principal: tender_core::auth::Principal {
            scope: tender_core::auth::Scope {
                account,
                mode: mode(scope.mode),
            },
            key_kind: KeyKind::Secret,
        },
        request_id: tender_core::ids::generate(tender_core::ids::IdKind::Request),
        idempotency: None,
        client: None,
    })
}

/// The use case's fields from the flags; secrets from the environment or a file.
fn connector_fields(
    settings: ConnectorSettingsArgs,
) -> anyhow::Result<tender_core::connectors::service::ConnectorFields> {
    let api_key = match (&settings.api_key_env, &settings.api_key_file) {
        (_, Some(path)) => Some(
            std::fs::read_to_string(path)
                .with_context(|| format!("reading the API key file {}", path.display()))?
                .trim()
                .to_string(),
        ),
        (Some(key), None) => Some(key.trim().to_string()),
        (None, None) => None,
    };
    Ok(tender_core::connectors::service::ConnectorFields {
        name: settings.name.map(Some),
        api_key: api_key.map(tender_core::secret::Secret::new),
        api_base: settings.api_base,
        webhook_secret: settings
            .webhook_secret_env
            .map(|s| Some(tender_core::secret::Secret::new(s))),
        priority: settings.priority,
        raw_card_data: settings.raw_card_data,
        ..Default::default()
    })
}

pub async fn connectors(command: ConnectorsCommand) -> anyhow::Result<()> {
    // A refused setting is the operator's mistake: say it in the API's words, exit non-zero.
    let refused = |e: tender_core::error::CoreError| anyhow::anyhow!("{e}");
    match command {
        ConnectorsCommand::List { scope, store } => {
            let services = services(&store).await?;
            let ctx = connector_ctx(&services, &scope).await?;
            let page = services
                .list_raw(
                    ctx.scope(),
                    tender_core::store::Collection::Connectors,
                    &tender_core::services::ListParams {
                        limit: 100,
                        ..Default::default()
                    },
                    Vec::new(),
                )
                .await
                .map_err(refused)?;
            for doc in page.data {
                println!("{doc}");
            }
        }
        ConnectorsCommand::Create {
            scope,
            kind,
            settings,
            store,
        } => {
            let services = services(&store).await?;
            let ctx = connector_ctx(&services, &scope).await?;
            let mut fields = connector_fields(settings)?;
            fields.kind = Some(kind);
            let created = services
                .connectors()
                .create_connector(&ctx, fields, ChangedBy::Operator)
                .await
                .map_err(refused)?;
            println!("{}", serde_json::to_string(&created)?);
        }
        ConnectorsCommand::Update {
            scope,
            connector,
            settings,
            disabled,
            store,
        } => {
            let services = services(&store).await?;
            let ctx = connector_ctx(&services, &scope).await?;
            let mut fields = connector_fields(settings)?;
            fields.disabled = disabled;
            let updated = services
                .connectors()
                .update_connector(&ctx, &connector, fields, ChangedBy::Operator)
                .await
                .map_err(refused)?;
            println!("{}", serde_json::to_string(&updated)?);
        }
        ConnectorsCommand::Delete {
            scope,
            connector,
            store,
        } => {
            let services = services(&store).await?;
            let ctx = connector_ctx(&services, &scope).await?;
            let deleted = services
                .connectors()
                .delete_connector(&ctx, &connector)
                .await
                .map_err(refused)?;
            println!("{}", serde_json::to_string(&deleted)?);
        }
    }
    Ok(())
}
