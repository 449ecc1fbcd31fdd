//! Connector use cases (CONTRACT §8): create, update, delete and list an account's connectors,
//! with their secrets sealed apart; the route a payment takes (enabled connectors by priority);
//! and a running connector for a `conn_` id, deleted ones included.
//!
//! Depends on the domain, the storage port and the connector port; the processors' HTTP
//! clients come from the [`ConnectorFactory`](crate::connectors::connector::ConnectorFactory).

use std::sync::Arc;

use serde_json::{json, Value};

use crate::auth::Scope;
use crate::connectors::connector::{
    Connector, ConnectorObject, ConnectorSettings, ConnectorStatus, ConnectorType,
};
use crate::connectors::Connectors;
use crate::documents::document::{from_body, to_body};
use crate::error::{CoreError, CoreResult, StoreError};
use crate::ids::{self, IdKind};
use crate::metadata;
use crate::services::RequestContext;
use crate::store::{Collection, Cursor, ListQuery};
use crate::task::TaskKind;
use crate::vault::Sealer;

/// Connectors an account may have in each mode.
pub const MAX_CONNECTORS: usize = 16;
/// Characters a connector's `webhook_secret` has at least after its `whsec_` prefix.
pub const MIN_WEBHOOK_SECRET: usize = 16;

/// `POST /connectors` and `POST /connectors/{id}`, as read from the body.
#[derive(Debug, Default)]
pub struct ConnectorFields {
    /// Creation only.
    pub kind: Option<String>,
    pub name: Option<Option<String>>,
    pub api_key: Option<crate::secret::Secret>,
    pub api_base: Option<String>,
    pub webhook_secret: Option<Option<crate::secret::Secret>>,
    pub priority: Option<i64>,
    pub raw_card_data: Option<bool>,
    /// Update only.
    pub disabled: Option<bool>,
    pub metadata: Option<Vec<(String, String)>>,
}

/// A connector a payment may be sent to: its object and what runs it.
#[derive(Clone)]
pub struct Routed {
    pub object: ConnectorObject,
    pub connector: Arc<dyn Connector>,
    /// A card number may be sent to it ([`ConnectorSettings::takes_cards`]).
    pub takes_cards: bool,
}

/// Who changes a connector. `raw_card_data` and `api_base` decide where card data goes, so
/// they are the operator's (CONTRACT §15): a merchant's key or dashboard session may not set
/// them unless the server was started with `--allow-connector-settings-via-api`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangedBy {
    /// The `tender connectors` CLI, run by whoever runs the server.
    Operator,
    /// An API key or a dashboard session of the account.
    Merchant,
}

impl Connectors<'_> {
    fn connector_sealer(&self) -> Sealer {
        Sealer::new(&self.config.vault_key, "connector settings")
    }

    fn seal_settings(&self, settings: &ConnectorSettings) -> CoreResult<String> {
        Ok(self.connector_sealer().seal(to_body(settings)?.as_bytes()))
    }

    /// The settings of connector `id` of `scope`, deleted connectors included.
    pub(crate) async fn connector_settings(
        &self,
        scope: &Scope,
        id: &str,
    ) -> CoreResult<ConnectorSettings> {
        let sealed = self.store.find_sealed(scope, id).await?.ok_or_else(|| {
            StoreError::Corrupt(format!("the settings of connector {id} are missing"))
        })?;
        let plain = self.connector_sealer().open(&sealed).map_err(|_| {
            StoreError::Corrupt(format!(
                "the settings of connector {id} cannot be opened with this vault key"
            ))
        })?;
        serde_json::from_slice(&plain)
            .map_err(|e| StoreError::Corrupt(format!("connector {id}: {e}")).into())
    }

    /// A running connector for `id` (a payment's `connector`), deleted or not.
    pub(crate) async fn connector(
        &self,
        scope: &Scope,
        id: &str,
    ) -> CoreResult<Arc<dyn Connector>> {
        let settings = self.connector_settings(scope, id).await?;
        Ok(self.connectors.build(id, &settings, scope.livemode()))
    }

    /// Refuses the operator's settings from a merchant (see [`ChangedBy`]), naming the
    /// parameter. Turning card data off is always allowed.
    fn check_changed_by(&self, fields: &ConnectorFields, by: ChangedBy) -> CoreResult<()> {
        if by == ChangedBy::Operator || self.config.connector_settings_via_api {
            return Ok(());
        }
        let refuse = |param: &'static str, what: &str| {
            Err(CoreError::invalid(
                param,
                "operator_only",
                format!(
                    "{param} is set by the operator of this Tender, not with an API key: it decides where card data goes. The operator runs `tender connectors update --connector <id> {what}` (or starts the server with --allow-connector-settings-via-api)."
                ),
            ))
        };
        if fields.raw_card_data == Some(true) && fields.kind.as_deref() != Some("simulator") {
            return refuse("raw_card_data", "--raw-card-data true");
        }
        if fields.api_base.is_some() {
            return refuse("api_base", "--api-base <origin>");
        }
        Ok(())
    }

    /// Every connector of the scope, in routing order: priority, then oldest first.
    async fn all_connectors(&self, scope: &Scope) -> CoreResult<Vec<ConnectorObject>> {
        let page = self
            .store
            .list_records(
                scope,
                Collection::Connectors,
                &ListQuery {
                    filters: Vec::new(),
                    created: Default::default(),
                    available_on: Default::default(),
                    cursor: Cursor::Newest,
                    limit: 100,
                },
            )
            .await?;
        let mut all = page
            .records
            .iter()
            .map(|r| from_body::<ConnectorObject>(&r.id, &r.body))
            .collect::<CoreResult<Vec<_>>>()?;
        // Newest first from the store; a stable sort keeps that order reversed within a priority.
        all.reverse();
        all.sort_by_key(|c| c.priority);
        Ok(all)
    }

    /// The enabled connectors a payment of `scope` goes to, first choice first; empty when the
    /// account configured none (its payments go to the built-in simulator, as before).
    pub(crate) async fn route(&self, scope: &Scope) -> CoreResult<Vec<Routed>> {
        let mut route = Vec::new();
        for object in self.all_connectors(scope).await? {
            if object.status != ConnectorStatus::Enabled {
                continue;
            }
            let settings = self.connector_settings(scope, &object.id).await?;
            let connector = self
                .connectors
                .build(&object.id, &settings, scope.livemode());
            route.push(Routed {
                object,
                connector,
                takes_cards: settings.takes_cards(),
            });
        }
        Ok(route)
    }

    /// 400 `connector_requires_token` when a card saved in Tender could not be charged later
    /// (CONTRACT §15): the account's payments go first to a connector that takes no card
    /// details, so a card saved in Tender is refused at once, never left to fail at its first
    /// invoice. A card the processor keeps ([`crate::payment_methods::processor`]) is the way
    /// there.
    pub(crate) async fn require_off_session_cards(
        &self,
        scope: &Scope,
        param: &'static str,
    ) -> CoreResult<()> {
        match self.route(scope).await?.first() {
            Some(first) if !first.takes_cards => Err(CoreError::invalid(
                param,
                "connector_requires_token",
                format!(
                    "A card saved in Tender could never be charged later: this account's payments go to connector {}, which takes no card details (the operator has not enabled raw_card_data for it). Keep the card at the processor instead: tokenise it there (Stripe.js) and POST /payment_methods {{type: \"connector_token\", connector_token, customer}}.",
                    first.object.id
                ),
            )),
            _ => Ok(()),
        }
    }

    /// Checks the fields of a connector of `kind` in `scope` (creation, or the result of an
    /// update), naming the parameter at fault.
    fn check_connector(
        &self,
        scope: &Scope,
        object: &ConnectorObject,
        settings: &ConnectorSettings,
    ) -> CoreResult<()> {
        crate::validate::check_text("name", object.name.as_deref(), 200)?;
        if !(0..=1_000_000).contains(&object.priority) {
            return Err(CoreError::invalid(
                "priority",
                "parameter_invalid",
                "priority must be between 0 and 1000000 (lower is tried first).",
            ));
        }
        match object.kind {
            ConnectorType::Simulator => {
                for (param, given) in [
                    ("api_key", settings.api_key.is_some()),
                    ("api_base", settings.api_base.is_some()),
                    ("webhook_secret", settings.webhook_secret.is_some()),
                ] {
                    if given {
                        return Err(CoreError::invalid(
                            param,
                            "parameter_unknown",
                            format!("{param} is not used by simulator connectors."),
                        ));
                    }
                }
            }
            ConnectorType::Stripe => check_stripe_settings(scope, settings)?,
        }
        if let Some(base) = &settings.api_base {
            check_api_base(base, scope.livemode())?;
            check_api_base_address(
                base,
                scope.livemode(),
                self.config.allow_private_webhook_targets,
            )?;
        }
        Ok(())
    }

    /// The connector `fields` describe, of `kind`, as shown and as kept sealed.
    fn new_connector(
        &self,
        scope: &Scope,
        kind: ConnectorType,
        fields: ConnectorFields,
    ) -> CoreResult<(ConnectorObject, ConnectorSettings)> {
        let raw_card_data = fields
            .raw_card_data
            .unwrap_or(kind == ConnectorType::Simulator);
        let settings = ConnectorSettings {
            kind,
            api_base: fields.api_base.clone(),
            api_key: fields.api_key.as_ref().map(|k| k.expose().to_string()),
            webhook_secret: fields
                .webhook_secret
                .clone()
                .flatten()
                .map(|s| s.expose().to_string()),
            // The simulator is in process: card data goes nowhere, so it takes cards unless
            // told otherwise. A processor gets them only when the operator says so.
            raw_card_data,
            cards_by_operator: raw_card_data,
        };
        let object = ConnectorObject {
            id: ids::generate(IdKind::Connector),
            object: "connector".into(),
            kind,
            name: fields.name.flatten(),
            status: if fields.disabled == Some(true) {
                ConnectorStatus::Disabled
            } else {
                ConnectorStatus::Enabled
            },
            priority: fields.priority.unwrap_or(0),
            api_base: settings
                .api_base
                .clone()
                .or_else(|| kind.default_api_base().map(str::to_string)),
            api_key_last4: settings.api_key.as_deref().map(last4),
            raw_card_data: settings.takes_cards(),
            livemode: scope.livemode(),
            created: self.now(),
            metadata: metadata::on_create(fields.metadata.unwrap_or_default())?,
        };
        Ok((object, settings))
    }

    /// `POST /connectors`.
    pub async fn create_connector(
        &self,
        ctx: &RequestContext,
        fields: ConnectorFields,
        by: ChangedBy,
    ) -> CoreResult<ConnectorObject> {
        let scope = ctx.scope();
        let kind = parse_kind(fields.kind.as_deref())?;
        // Checked against the parsed kind: a simulator's card data stays in the process.
        self.check_changed_by(
            &ConnectorFields {
                kind: Some(kind.as_str().into()),
                api_base: fields.api_base.clone(),
                raw_card_data: fields.raw_card_data,
                ..Default::default()
            },
            by,
        )?;
        let (object, settings) = self.new_connector(scope, kind, fields)?;
        self.check_connector(scope, &object, &settings)?;
        let limit = || {
            CoreError::invalid(
                "type",
                "connectors_limit",
                format!("An account can have at most {MAX_CONNECTORS} connectors per mode; delete one first."),
            )
        };
        if self.all_connectors(scope).await?.len() >= MAX_CONNECTORS {
            return Err(limit());
        }
        let mut ops = self.batch(ctx);
        ops.insert(&object)?
            .seal(&object.id, self.seal_settings(&settings)?)
            // The count above was read outside the batch: racing creations are held to the
            // limit here, in it (T3-L2).
            .require_at_most::<ConnectorObject>(None, MAX_CONNECTORS as i64, "connectors");
        if kind != ConnectorType::Simulator {
            // The processor pays out what it holds; Tender mirrors it (CONTRACT §15).
            ops.schedule(
                TaskKind::MirrorPayouts,
                &object.id,
                self.now() + crate::balance::processor_payouts::MIRROR_INTERVAL_SECS,
            );
        }
        let shown = crate::documents::document::to_value(&object)?;
        match self.commit(ctx, ops, Ok(&shown)).await {
            Err(CoreError::Store(StoreError::LimitReached(_))) => Err(limit()),
            other => other.map(|()| object),
        }
    }

    /// `POST /connectors/{id}`.
    pub async fn update_connector(
        &self,
        ctx: &RequestContext,
        id: &str,
        fields: ConnectorFields,
        by: ChangedBy,
    ) -> CoreResult<ConnectorObject> {
        let scope = ctx.scope();
        self.retry_on_conflict(|| async {
            let (before, version): (ConnectorObject, i64) = self
                .load(scope, Collection::Connectors, "connector", id)
                .await?;
            self.check_changed_by(
                &ConnectorFields {
                    kind: Some(before.kind.as_str().into()),
                    api_base: fields.api_base.clone(),
                    raw_card_data: fields.raw_card_data,
                    ..Default::default()
                },
                by,
            )?;
            let mut settings = self.connector_settings(scope, id).await?;
            let mut after = before.clone();
            if let Some(name) = &fields.name {
                after.name = name.clone();
            }
            if let Some(key) = &fields.api_key {
                settings.api_key = Some(key.expose().to_string());
                after.api_key_last4 = Some(last4(key.expose()));
            }
            if let Some(base) = &fields.api_base {
                settings.api_base = Some(base.clone());
                after.api_base = Some(base.clone());
            }
            if let Some(secret) = &fields.webhook_secret {
                settings.webhook_secret = secret.as_ref().map(|s| s.expose().to_string());
            }
            if let Some(priority) = fields.priority {
                after.priority = priority;
            }
            if let Some(raw) = fields.raw_card_data {
                settings.raw_card_data = raw;
                settings.cards_by_operator = raw;
            }
            after.raw_card_data = settings.takes_cards();
            if let Some(disabled) = fields.disabled {
                after.status = if disabled {
                    ConnectorStatus::Disabled
                } else {
                    ConnectorStatus::Enabled
                };
            }
            if let Some(input) = &fields.metadata {
                after.metadata = metadata::merge(&before.metadata, input.clone())?;
            }
            self.check_connector(scope, &after, &settings)?;
            let mut ops = self.batch(ctx);
            ops.update(&after, version)?
                .seal(&after.id, self.seal_settings(&settings)?);
            let shown = crate::documents::document::to_value(&after)?;
            self.commit(ctx, ops, Ok(&shown)).await?;
            Ok(after)
        })
        .await
    }

    /// `DELETE /connectors/{id}`: no longer routed to nor shown; its sealed settings stay, so
    /// its payments can still be captured, canceled, refunded and synced.
    pub async fn delete_connector(&self, ctx: &RequestContext, id: &str) -> CoreResult<Value> {
        self.retry_on_conflict(|| async {
            let (connector, version): (ConnectorObject, i64) = self
                .load(ctx.scope(), Collection::Connectors, "connector", id)
                .await?;
            let settings = self.connector_settings(ctx.scope(), id).await?;
            let deleted = json!({"id": connector.id, "object": "connector", "deleted": true});
            let mut ops = self.batch(ctx);
            ops.delete::<ConnectorObject>(&connector.id, version)
                // Deleting a document forgets what was sealed for it; the settings stay.
                .seal(&connector.id, self.seal_settings(&settings)?);
            self.commit(ctx, ops, Ok(&deleted)).await?;
            Ok(deleted)
        })
        .await
    }
}

/// The last four characters of a secret (what the API shows of it).
fn last4(secret: &str) -> String {
    let chars: Vec<char> = secret.chars().collect();
    chars[chars.len().saturating_sub(4)..].iter().collect()
}

/// `api_base` is the processor's origin: `scheme://host[:port]`, no path, query or fragment;
/// `https` in live mode.
pub fn check_api_base(raw: &str, livemode: bool) -> CoreResult<()> {
    let invalid = |why: &str| {
        CoreError::invalid(
            "api_base",
            "url_invalid",
            format!("api_base must be the processor's origin, scheme://host[:port] without a path ({why})."),
        )
    };
    let url = url::Url::parse(raw).map_err(|_| invalid("not an absolute URL"))?;
    match url.scheme() {
        "https" => {}
        "http" if !livemode => {}
        "http" => return Err(invalid("live mode needs https")),
        _ => return Err(invalid("the scheme must be http or https")),
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(invalid("no host"));
    }
    if url.path() != "/" || url.query().is_some() || url.fragment().is_some() {
        return Err(invalid("it has a path, query or fragment"));
    }
    if !url.username().is_empty() || url.password().is_some() || raw.len() > 2048 {
        return Err(invalid("credentials do not belong in it"));
    }
    Ok(())
}

/// An `api_base` that is an address literal must be one the mode may reach (the webhooks'
/// rule: never link-local or metadata addresses; live mode public addresses only; test mode also
/// loopback, and private ranges when the operator allowed them). Names are checked on the
/// addresses they resolve to, at every call.
fn check_api_base_address(raw: &str, livemode: bool, allow_private: bool) -> CoreResult<()> {
    let literal = url::Url::parse(raw).ok().and_then(|u| match u.host() {
        Some(url::Host::Ipv4(ip)) => Some(std::net::IpAddr::V4(ip)),
        Some(url::Host::Ipv6(ip)) => Some(std::net::IpAddr::V6(ip)),
        _ => None,
    });
    let named = url::Url::parse(raw)
        .ok()
        .and_then(|u| u.host_str().map(str::to_string));
    if named
        .as_deref()
        .is_some_and(crate::webhooks::address::is_metadata_host)
    {
        return Err(CoreError::invalid(
            "api_base",
            "url_invalid",
            "api_base may not name a cloud metadata service.",
        ));
    }
    match literal {
        Some(ip) if !crate::webhooks::address::webhook_address_allowed(ip, livemode, allow_private) => {
            Err(CoreError::invalid(
                "api_base",
                "url_invalid",
                format!("api_base may not point at {ip}: connectors of this mode may not reach that address."),
            ))
        }
        _ => Ok(()),
    }
}

/// A Stripe connector's settings: a secret or restricted key of the scope's mode, and a
/// webhook signing secret long enough that no one can guess it.
fn check_stripe_settings(scope: &Scope, settings: &ConnectorSettings) -> CoreResult<()> {
    let key = settings.api_key.as_deref().ok_or_else(|| {
        CoreError::invalid(
            "api_key",
            "parameter_missing",
            "Missing required param: api_key (the Stripe secret key).",
        )
    })?;
    let mode = if scope.livemode() { "live" } else { "test" };
    let well_formed = ["sk_", "rk_"].iter().any(|p| {
        key.strip_prefix(p)
            .and_then(|rest| rest.strip_prefix(mode))
            .is_some_and(|rest| {
                rest.starts_with('_')
                    && rest.len() > 1
                    && rest.len() <= 250
                    && rest.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
            })
    });
    if !well_formed {
        return Err(CoreError::invalid(
            "api_key",
            "parameter_invalid",
            format!(
                "api_key must be a Stripe {mode}-mode secret or restricted key (sk_{mode}_… or rk_{mode}_…): a {mode}-mode connector talks to Stripe's {mode} environment."
            ),
        ));
    }
    if let Some(secret) = &settings.webhook_secret {
        // A secret is what comes after its prefix: at least 16 characters of it
        // (Stripe's have 32), or anyone could sign the connector's webhooks.
        let body = secret.strip_prefix("whsec_").unwrap_or_default();
        if !(MIN_WEBHOOK_SECRET..=244).contains(&body.len()) {
            return Err(CoreError::invalid(
                "webhook_secret",
                "parameter_invalid",
                format!("webhook_secret must be the endpoint's signing secret: whsec_ and at least {MIN_WEBHOOK_SECRET} more characters."),
            ));
        }
    }
    Ok(())
}

/// The `type` of a new connector.
fn parse_kind(raw: Option<&str>) -> CoreResult<ConnectorType> {
    let raw = raw.ok_or_else(|| {
        CoreError::invalid("type", "parameter_missing", "Missing required param: type.")
    })?;
    ConnectorType::parse(raw).ok_or_else(|| {
        CoreError::invalid(
            "type",
            "parameter_invalid",
            format!("Unknown connector type '{raw}': use simulator or stripe."),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_base_is_an_origin() {
        assert!(check_api_base("https://api.stripe.com", true).is_ok());
        assert!(check_api_base("http://127.0.0.1:12111", false).is_ok());
        assert!(check_api_base("http://127.0.0.1:12111/", false).is_ok());
        for bad in [
            "api.stripe.com",
            "ftp://api.stripe.com",
            "https://api.stripe.com/v1",
            "https://api.stripe.com?x=1",
            "https://user:pw@api.stripe.com",
            "not a url",
        ] {
            assert!(check_api_base(bad, false).is_err(), "{bad}");
        }
        assert!(check_api_base("http://api.stripe.com", true).is_err());
        assert!(check_api_base_address("http://127.0.0.1:12111", false, false).is_ok());
        assert!(check_api_base_address("http://169.254.169.254", false, true).is_err());
        assert!(check_api_base_address("http://10.1.2.3", false, false).is_err());
        assert!(check_api_base_address("http://10.1.2.3", false, true).is_ok());
        assert!(check_api_base_address("https://127.0.0.1", true, false).is_err());
    }

    #[test]
    fn last4_of_a_key() {
        assert_eq!(last4("sk_test_abcdef"), "cdef");
        assert_eq!(last4("ab"), "ab");
    }
}
