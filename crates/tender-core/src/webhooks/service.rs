//! Webhook use cases: endpoint management (with sealed, rollable secrets), the delivery log and
//! resend, and the two halves of one delivery attempt that the worker runs around its HTTP call:
//! [`Services::claim_due_deliveries`] and [`Services::finish_delivery`]. No transaction is open
//! while the worker talks to the receiver: the claim is a lease that expires if the worker dies.

use std::net::IpAddr;

use serde_json::{json, Value};

use crate::auth::Scope;
use crate::documents::document::{from_body, to_body, to_value};
use crate::error::{CoreError, CoreResult, StoreError};
use crate::event::EVENT_TYPES;
use crate::ids::{self, IdKind};
use crate::services::{RequestContext, Services};
use crate::store::{Collection, Cursor, DeliveryAttemptRecord, DeliveryRecord, ListQuery};
use crate::vault::Sealer;
use crate::webhooks::webhook::{
    generate_secret, retry_delay_ms, webhook_address_allowed, EndpointStatus, SigningSecret,
    WebhookEndpoint, DISABLE_AFTER_SECS,
};

/// Webhook endpoints an account may have in each mode (as Stripe): every event fans out to
/// each, so unbounded endpoints would let one account flood the delivery queue.
pub const MAX_ENDPOINTS: usize = 16;

/// How long a worker may hold a delivery before another may take it over: the 10 s receiver
/// timeout plus room to record the attempt. A crashed worker's deliveries wait this long; a live
/// but stalled one may, rarely, see its delivery sent twice (delivery is at least once).
pub const DELIVERY_LEASE_MS: i64 = 20_000;
/// Default seconds an old secret keeps signing after a roll.
pub const DEFAULT_ROLL_GRACE_SECS: i64 = 86_400;
pub const MAX_ROLL_GRACE_SECS: i64 = 604_800;

/// `POST /webhook_endpoints` and updates, parsed.
#[derive(Debug, Default)]
pub struct EndpointFields {
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

/// A leased delivery, ready to send.
#[derive(Debug, Clone)]
pub struct DeliveryTask {
    pub delivery_id: String,
    pub scope: Scope,
    pub event_id: String,
    pub endpoint_id: String,
    /// `None`: the endpoint is gone or disabled, so the delivery fails without a call.
    pub url: Option<String>,
    pub body: String,
    /// Live signing secrets, newest first.
    pub secrets: Vec<String>,
    attempts_made: usize,
    failing_since: Option<i64>,
}

/// What one HTTP attempt produced.
#[derive(Debug, Clone, Default)]
pub struct AttemptResult {
    /// `None` on a network error or timeout.
    pub response_status: Option<u16>,
    pub error: Option<String>,
    pub duration_ms: i64,
    /// The first KiB of the response body.
    pub response_body: String,
    /// The receiver's `Retry-After`, in seconds, on a 429 or 503.
    pub retry_after_secs: Option<i64>,
}

fn url_invalid(message: impl Into<String>) -> CoreError {
    CoreError::invalid("url", "url_invalid", message.into())
}

fn check_events(events: &[String]) -> CoreResult<()> {
    if events.is_empty() {
        return Err(CoreError::invalid(
            "enabled_events",
            "parameter_invalid",
            "enabled_events needs at least one event type or \"*\".",
        ));
    }
    for e in events {
        if e != "*" && !EVENT_TYPES.contains(&e.as_str()) {
            return Err(CoreError::invalid(
                "enabled_events",
                "parameter_invalid",
                format!("Unknown event type: {e}."),
            ));
        }
    }
    Ok(())
}

/// A delivery as the API shows it.
pub fn delivery_json(d: &DeliveryRecord) -> Value {
    let attempts: Value = serde_json::from_str(&d.attempts).unwrap_or_else(|_| json!([]));
    json!({
        "id": d.id,
        "object": "webhook_delivery",
        "event": d.event_id,
        "webhook_endpoint": d.endpoint_id,
        "status": d.status,
        "next_attempt_at": if d.status == "pending" { d.next_attempt_at_ms.map(|ms| ms / 1000) } else { None },
        "attempts": attempts,
    })
}

/// The parts of [`Services::check_endpoint_url`] that need no DNS: at most 2,048 bytes, a URL
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
        url::Host::Domain(name) if crate::webhooks::webhook::is_metadata_host(name) => {
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

impl Services {
    fn secret_sealer(&self) -> Sealer {
        Sealer::new(&self.config.vault_key, "webhook endpoint secrets")
    }

    fn seal_secrets(&self, secrets: &[SigningSecret]) -> CoreResult<String> {
        Ok(self.secret_sealer().seal(to_body(&secrets)?.as_bytes()))
    }

    fn open_secrets(&self, sealed: &str) -> CoreResult<Vec<SigningSecret>> {
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
        check_events(&events)?;
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
        if let Some(events) = &fields.enabled_events {
            check_events(events)?;
        }
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

    /// `GET /events/{id}/deliveries`.
    pub async fn list_event_deliveries(
        &self,
        scope: &Scope,
        event_id: &str,
    ) -> CoreResult<Vec<Value>> {
        self.retrieve_raw(scope, Collection::Events, "event", event_id)
            .await?;
        Ok(self
            .store
            .list_deliveries(scope, event_id)
            .await?
            .iter()
            .map(delivery_json)
            .collect())
    }

    /// `POST /events/{id}/resend`: that endpoint's delivery, due now.
    pub async fn resend_event(
        &self,
        ctx: &RequestContext,
        event_id: &str,
        endpoint_id: &str,
    ) -> CoreResult<Value> {
        let scope = ctx.scope();
        self.retrieve_raw(scope, Collection::Events, "event", event_id)
            .await?;
        if !ids::looks_like(IdKind::WebhookEndpoint, endpoint_id)
            || self
                .store
                .find_record(scope, Collection::WebhookEndpoints, endpoint_id)
                .await?
                .is_none()
        {
            return Err(CoreError::missing_reference(
                "webhook_endpoint",
                "webhook_endpoint",
                endpoint_id,
            ));
        }
        let record = self
            .store
            .schedule_delivery(scope, event_id, endpoint_id, self.clock.now_millis())
            .await?;
        let out = delivery_json(&record);
        // Resend is itself idempotent by nature; keep the answer under the key if one was sent.
        if ctx.idempotency.is_some() {
            self.commit(ctx, self.batch(ctx), Ok(&out)).await?;
        }
        Ok(out)
    }

    /// Leases up to `limit` due deliveries for this worker, fairly across accounts and within
    /// the in-flight caps (see [`crate::store::QueueStore::claim_deliveries`]), and opens what it
    /// needs to send them.
    pub async fn claim_due_deliveries(
        &self,
        limit: usize,
        per_account: usize,
        per_endpoint: usize,
    ) -> CoreResult<Vec<DeliveryTask>> {
        let now_ms = self.clock.now_millis();
        let claimed = self
            .store
            .claim_deliveries(crate::store::DeliveryClaim {
                now_ms,
                lease_until_ms: now_ms + DELIVERY_LEASE_MS,
                limit,
                per_account,
                per_endpoint,
            })
            .await?;
        let now = self.now();
        let mut tasks = Vec::with_capacity(claimed.len());
        for c in claimed {
            let endpoint: Option<WebhookEndpoint> = match &c.endpoint_body {
                Some(body) => Some(from_body(&c.endpoint_id, body)?),
                None => None,
            };
            let url = endpoint
                .filter(|e| e.status == EndpointStatus::Enabled)
                .map(|e| e.url);
            let secrets = match &c.endpoint_secrets {
                Some(sealed) => self
                    .open_secrets(sealed)?
                    .into_iter()
                    .filter(|s| s.expires_at.is_none_or(|at| at > now))
                    .map(|s| s.secret)
                    .collect(),
                None => Vec::new(),
            };
            // The payload is the event as the API shows it, rendered at each attempt.
            let body = self
                .renderer()
                .document(Collection::Events, &c.event_id, c.event_body)?;
            tasks.push(DeliveryTask {
                delivery_id: c.id,
                scope: c.scope,
                event_id: c.event_id,
                endpoint_id: c.endpoint_id,
                url,
                body,
                secrets,
                attempts_made: c.attempts_made,
                failing_since: c.endpoint_failing_since,
            });
        }
        Ok(tasks)
    }

    /// Records an attempt and decides what comes next: done, a retry per the schedule (or the
    /// receiver's Retry-After), or failure; disables the endpoint on 410 or after 5 days of
    /// failing everything.
    pub async fn finish_delivery(
        &self,
        task: &DeliveryTask,
        result: AttemptResult,
    ) -> CoreResult<()> {
        let now = self.now();
        let now_ms = self.clock.now_millis();
        let attempt = json!({
            "attempted_at": now,
            "response_status": result.response_status,
            "error": result.error,
            "duration_ms": result.duration_ms,
            "response_body": result.response_body,
        });
        let status = result.response_status.unwrap_or(0);
        let succeeded = (200..300).contains(&status);
        let failing_since = if succeeded {
            None
        } else {
            Some(task.failing_since.unwrap_or(now))
        };
        let gone = status == 410;
        let too_long = failing_since.is_some_and(|since| now - since >= DISABLE_AFTER_SECS);
        let retry_after = if status == 429 || status == 503 {
            result.retry_after_secs
        } else {
            None
        };
        let (delivery_status, next) = if succeeded {
            ("succeeded", None)
        } else if gone || too_long || task.url.is_none() {
            ("failed", None)
        } else {
            match retry_delay_ms(
                task.attempts_made + 1,
                self.config.webhook_retry_scale,
                retry_after,
            ) {
                Some(delay) => ("pending", Some(now_ms + delay)),
                None => ("failed", None),
            }
        };
        self.store
            .record_delivery_attempt(DeliveryAttemptRecord {
                delivery_id: task.delivery_id.clone(),
                endpoint_id: task.endpoint_id.clone(),
                attempt: attempt.to_string(),
                status: delivery_status.into(),
                next_attempt_at_ms: next,
                endpoint_failing_since: failing_since,
            })
            .await?;
        if (gone || too_long) && task.url.is_some() {
            self.disable_endpoint(&task.scope, &task.endpoint_id)
                .await?;
        }
        Ok(())
    }

    async fn disable_endpoint(&self, scope: &Scope, id: &str) -> CoreResult<()> {
        self.retry_on_conflict(|| async {
            let Some(record) = self
                .store
                .find_record(scope, Collection::WebhookEndpoints, id)
                .await?
            else {
                return Ok(());
            };
            let mut endpoint: WebhookEndpoint = from_body(id, &record.body)?;
            endpoint.status = EndpointStatus::Disabled;
            let mut ops = self.background(scope);
            ops.update(&endpoint, record.version)?;
            self.commit_background(ops).await?;
            tracing::info!(endpoint = id, "webhook endpoint disabled");
            Ok(())
        })
        .await
    }
}
