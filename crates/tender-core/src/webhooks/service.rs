//! Webhook endpoint use cases: create, update, delete, and secrets sealed under the vault key
//! and rolled with a grace period. The deliveries to them are [`super::deliveries`]'.

use std::net::IpAddr;

use serde_json::{json, Value};

use crate::auth::Scope;
use crate::documents::document::{to_body, to_value};
use crate::error::{CoreError, CoreResult, StoreError};
use crate::event::EVENT_TYPES;
use crate::ids::{self, IdKind};
use crate::services::RequestContext;
use crate::store::{Collection, Cursor, ListQuery};
use crate::vault::Sealer;
use crate::webhooks::address::webhook_address_allowed;
use crate::webhooks::webhook::{
    generate_secret, EndpointDialect, EndpointStatus, SigningSecret, WebhookEndpoint,
};
use crate::webhooks::Webhooks;

/// Webhook endpoints an account may have in each mode (as Stripe): every event fans out to
/// each, so unbounded endpoints would let one account flood the delivery queue.
pub const MAX_ENDPOINTS: usize = 16;

/// Default seconds an old secret keeps signing after a roll.
pub const DEFAULT_ROLL_GRACE_SECS: i64 = 86_400;
pub const MAX_ROLL_GRACE_SECS: i64 = 604_800;

/// `POST /webhook_endpoints` and updates, parsed.
#[derive(Debug, Default)]
pub struct EndpointFields {
    /// Tender's or Stripe's (an endpoint created through `/v1`); set on create only.
    pub dialect: crate::webhooks::webhook::EndpointDialect,
    pub url: Option<String>,
    pub enabled_events: Option<Vec<String>>,
    pub description: Option<Option<String>>,
    pub disabled: Option<bool>,
}

/// An endpoint with its current secret: the only shape that ever shows the secret (in JSON,
/// once; `Debug` hides it).
#[derive(Clone, serde::Serialize)]
pub struct EndpointWithSecret {
    #[serde(flatten)]
    pub endpoint: WebhookEndpoint,
    pub secret: String,
}

impl std::fmt::Debug for EndpointWithSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EndpointWithSecret")
            .field("endpoint", &self.endpoint)
            .field("secret", &crate::secret::REDACTED)
            .finish()
    }
}

fn url_invalid(message: impl Into<String>) -> CoreError {
    CoreError::invalid("url", "url_invalid", message.into())
}

fn check_events(events: &[String], dialect: EndpointDialect) -> CoreResult<()> {
    if events.is_empty() {
        return Err(CoreError::invalid(
            "enabled_events",
            "parameter_invalid",
            "enabled_events needs at least one event type or \"*\".",
        ));
    }
    for e in events {
        let known = match dialect {
            EndpointDialect::Tender => EVENT_TYPES.contains(&e.as_str()),
            EndpointDialect::Stripe => crate::stripe::events::is_stripe_type(e),
        };
        if e != "*" && !known {
            return Err(CoreError::invalid(
                "enabled_events",
                "parameter_invalid",
                format!("Unknown event type: {e}."),
            ));
        }
    }
    Ok(())
}

/// The parts of [`Webhooks::check_endpoint_url`] that need no DNS: at most 2,048 bytes, a URL
/// with an http(s) scheme and a host; in live mode https only, and an IP-literal host must be an
/// address that mode may reach ([`webhook_address_allowed`], private ranges not opted in). A
/// domain host still has to be resolved and its addresses checked.
pub fn check_endpoint_url_syntax(raw: &str, livemode: bool) -> CoreResult<url::Url> {
    check_endpoint_url_rules(raw, livemode, false)
}

fn check_endpoint_url_rules(
    raw: &str,
    livemode: bool,
    allow_private: bool,
) -> CoreResult<url::Url> {
    if raw.len() > 2048 {
        return Err(url_invalid("URLs can be at most 2048 characters."));
    }
    let url = url::Url::parse(raw).map_err(|e| match e {
        url::ParseError::RelativeUrlWithoutBase => url_invalid(
            "The URL has no scheme: write it in full, starting with https:// (or http:// in test mode).",
        ),
        e => url_invalid(format!("Invalid URL: {e}.")),
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(url_invalid("Webhook URLs must use http or https."));
    }
    let Some(host) = url.host() else {
        return Err(url_invalid("Webhook URLs need a host."));
    };
    if livemode && url.scheme() != "https" {
        return Err(url_invalid("Live-mode webhook URLs must use https."));
    }
    match host {
        url::Host::Ipv4(ip) => check_addresses(vec![IpAddr::V4(ip)], livemode, allow_private)?,
        url::Host::Ipv6(ip) => check_addresses(vec![IpAddr::V6(ip)], livemode, allow_private)?,
        url::Host::Domain(name) if crate::webhooks::address::is_metadata_host(name) => {
            return Err(url_invalid(
                "Webhook URLs may not name a cloud metadata service.",
            ))
        }
        url::Host::Domain(_) => {}
    }
    Ok(url)
}

/// An endpoint's addresses: at least one, each one the mode may reach.
fn check_addresses(addresses: Vec<IpAddr>, livemode: bool, allow_private: bool) -> CoreResult<()> {
    if addresses.is_empty()
        || addresses
            .into_iter()
            .any(|ip| !webhook_address_allowed(ip, livemode, allow_private))
    {
        return Err(url_invalid(if livemode {
            "Live-mode webhook URLs must not point at loopback, private, link-local or multicast addresses."
        } else {
            "Test-mode webhook URLs may point at public addresses and loopback; link-local (cloud metadata), multicast and reserved addresses are refused, and private ranges need the server's --allow-private-webhook-targets."
        }));
    }
    Ok(())
}

impl Webhooks<'_> {
    fn secret_sealer(&self) -> Sealer {
        Sealer::new(&self.config.vault_key, "webhook endpoint secrets")
    }

    fn seal_secrets(&self, secrets: &[SigningSecret]) -> CoreResult<String> {
        Ok(self.secret_sealer().seal(to_body(&secrets)?.as_bytes()))
    }

    pub(crate) fn open_secrets(&self, sealed: &str) -> CoreResult<Vec<SigningSecret>> {
        let plain = self.secret_sealer().open(sealed).map_err(|_| {
            StoreError::Corrupt("webhook secrets cannot be opened with this vault key".into())
        })?;
        serde_json::from_slice(&plain).map_err(|e| StoreError::Corrupt(e.to_string()).into())
    }

    /// The URL rules: http(s) with a host; in live mode https only and no address that
    /// resolves to a loopback, private, link-local or multicast network.
    ///
    /// In test mode a name that does not resolve now is accepted (local development is often
    /// offline); the worker's resolver applies the same rules at every delivery.
    pub async fn check_endpoint_url(&self, scope: &Scope, raw: &str) -> CoreResult<String> {
        let (live, private) = (scope.livemode(), self.config.allow_private_webhook_targets);
        let url = check_endpoint_url_rules(raw, live, private)?;
        if let Some(url::Host::Domain(name)) = url.host() {
            let resolved = self
                .resolver
                .resolve(name, url.port_or_known_default().unwrap_or(443))
                .await;
            match resolved {
                Ok(addresses) => check_addresses(addresses, live, private)?,
                Err(e) if live => {
                    return Err(url_invalid(format!("The host could not be resolved: {e}.")))
                }
                Err(_) => {}
            }
        }
        Ok(url.to_string())
    }

    /// `POST /webhook_endpoints`.
    pub async fn create_endpoint(
        &self,
        ctx: &RequestContext,
        fields: EndpointFields,
    ) -> CoreResult<EndpointWithSecret> {
        let scope = ctx.scope();
        let raw_url = fields.url.ok_or_else(|| {
            CoreError::invalid("url", "parameter_missing", "Missing required param: url.")
        })?;
        let url = self.check_endpoint_url(scope, &raw_url).await?;
        let existing = self
            .store
            .list_records(
                scope,
                Collection::WebhookEndpoints,
                &ListQuery {
                    filters: Vec::new(),
                    created: Default::default(),
                    available_on: Default::default(),
                    cursor: Cursor::Newest,
                    limit: MAX_ENDPOINTS as u32,
                },
            )
            .await?;
        if existing.records.len() >= MAX_ENDPOINTS {
            return Err(CoreError::invalid(
                "url",
                "webhook_endpoints_limit",
                format!("An account can have at most {MAX_ENDPOINTS} webhook endpoints per mode; delete one first."),
            ));
        }
        let events = fields.enabled_events.ok_or_else(|| {
            CoreError::invalid(
                "enabled_events",
                "parameter_missing",
                "Missing required param: enabled_events.",
            )
        })?;
        check_events(&events, fields.dialect)?;
        crate::validate::check_text(
            "description",
            fields.description.as_ref().and_then(|d| d.as_deref()),
            1000,
        )?;
        let endpoint = WebhookEndpoint {
            id: ids::generate(IdKind::WebhookEndpoint),
            object: "webhook_endpoint".into(),
            url,
            enabled_events: events,
            description: fields.description.flatten(),
            status: if fields.disabled == Some(true) {
                EndpointStatus::Disabled
            } else {
                EndpointStatus::Enabled
            },
            livemode: scope.livemode(),
            created: self.now(),
            dialect: fields.dialect,
        };
        let secret = generate_secret();
        let shown = EndpointWithSecret {
            endpoint: endpoint.clone(),
            secret: secret.clone(),
        };
        let mut ops = self.batch(ctx);
        ops.insert(&endpoint)?.seal(
            &endpoint.id,
            self.seal_secrets(&[SigningSecret {
                secret,
                expires_at: None,
            }])?,
        );
        self.commit(ctx, ops, Ok(&to_value(&shown)?)).await?;
        Ok(shown)
    }

    /// `POST /webhook_endpoints/{id}`.
    pub async fn update_endpoint(
        &self,
        ctx: &RequestContext,
        id: &str,
        fields: EndpointFields,
    ) -> CoreResult<WebhookEndpoint> {
        let url = match &fields.url {
            Some(raw) => Some(self.check_endpoint_url(ctx.scope(), raw).await?),
            None => None,
        };
        // An update keeps the endpoint's dialect; its events are checked in it, below.
        crate::validate::check_text(
            "description",
            fields.description.as_ref().and_then(|d| d.as_deref()),
            1000,
        )?;
        self.retry_on_conflict(|| async {
            let (mut endpoint, version): (WebhookEndpoint, i64) = self
                .load(
                    ctx.scope(),
                    Collection::WebhookEndpoints,
                    "webhook_endpoint",
                    id,
                )
                .await?;
            if let Some(url) = &url {
                endpoint.url = url.clone();
            }
            if let Some(events) = &fields.enabled_events {
                check_events(events, endpoint.dialect)?;
                endpoint.enabled_events = events.clone();
            }
            if let Some(d) = &fields.description {
                endpoint.description = d.clone();
            }
            if let Some(disabled) = fields.disabled {
                endpoint.status = if disabled {
                    EndpointStatus::Disabled
                } else {
                    EndpointStatus::Enabled
                };
            }
            let mut ops = self.batch(ctx);
            ops.update(&endpoint, version)?;
            self.commit(ctx, ops, Ok(&to_value(&endpoint)?)).await?;
            Ok(endpoint)
        })
        .await
    }

    /// `DELETE /webhook_endpoints/{id}`.
    pub async fn delete_endpoint(&self, ctx: &RequestContext, id: &str) -> CoreResult<Value> {
        self.retry_on_conflict(|| async {
            let (endpoint, version): (WebhookEndpoint, i64) = self
                .load(
                    ctx.scope(),
                    Collection::WebhookEndpoints,
                    "webhook_endpoint",
                    id,
                )
                .await?;
            let deleted = json!({"id": endpoint.id, "object": "webhook_endpoint", "deleted": true});
            let mut ops = self.batch(ctx);
            ops.delete::<WebhookEndpoint>(&endpoint.id, version);
            self.commit(ctx, ops, Ok(&deleted)).await?;
            Ok(deleted)
        })
        .await
    }

    /// `POST /webhook_endpoints/{id}/roll_secret`: a new secret; the old one keeps signing for
    /// `expires_in` seconds.
    pub async fn roll_endpoint_secret(
        &self,
        ctx: &RequestContext,
        id: &str,
        expires_in: Option<i64>,
    ) -> CoreResult<EndpointWithSecret> {
        let grace = expires_in.unwrap_or(DEFAULT_ROLL_GRACE_SECS);
        if !(0..=MAX_ROLL_GRACE_SECS).contains(&grace) {
            return Err(CoreError::invalid(
                "expires_in",
                "parameter_invalid",
                format!("expires_in must be between 0 and {MAX_ROLL_GRACE_SECS} seconds."),
            ));
        }
        self.retry_on_conflict(|| async {
            let scope = ctx.scope();
            let (endpoint, version): (WebhookEndpoint, i64) = self
                .load(scope, Collection::WebhookEndpoints, "webhook_endpoint", id)
                .await?;
            let now = self.now();
            let sealed = self.store.find_sealed(scope, id).await?.unwrap_or_default();
            let mut secrets: Vec<SigningSecret> = if sealed.is_empty() {
                Vec::new()
            } else {
                self.open_secrets(&sealed)?
            };
            secrets.retain(|s| s.expires_at.is_none_or(|at| at > now));
            for s in secrets.iter_mut() {
                if s.expires_at.is_none() {
                    s.expires_at = Some(now + grace);
                }
            }
            if grace == 0 {
                secrets.clear();
            }
            let secret = generate_secret();
            secrets.insert(
                0,
                SigningSecret {
                    secret: secret.clone(),
                    expires_at: None,
                },
            );
            let shown = EndpointWithSecret {
                endpoint: endpoint.clone(),
                secret,
            };
            // Re-writing the document with its version makes concurrent rolls conflict and retry.
            let mut ops = self.batch(ctx);
            ops.update(&endpoint, version)?
                .seal(&endpoint.id, self.seal_secrets(&secrets)?);
            self.commit(ctx, ops, Ok(&to_value(&shown)?)).await?;
            Ok(shown)
        })
        .await
    }
}
