//! Deliveries of events to webhook endpoints: the list of an event's attempts, a resend, and what
//! the worker claims and records (each attempt, the retry schedule, an endpoint disabled after
//! failing for [`crate::webhooks::webhook::DISABLE_AFTER_SECS`]). The sending itself is the
//! server's (`worker/`): it runs [`Webhooks::claim_due_deliveries`] and
//! [`Webhooks::finish_delivery`] around its HTTP call, and no transaction is open while it talks to
//! the receiver: the claim is a lease that expires if the worker dies.

use serde_json::{json, Value};

use crate::auth::Scope;
use crate::documents::document::from_body;
use crate::error::{CoreError, CoreResult};
use crate::ids::{self, IdKind};
use crate::services::RequestContext;
use crate::store::{Collection, DeliveryAttemptRecord, DeliveryRecord};
use crate::webhooks::webhook::{
    retry_delay_ms, EndpointDialect, EndpointStatus, WebhookEndpoint, DISABLE_AFTER_SECS,
};
use crate::webhooks::Webhooks;

/// How long a worker may hold a delivery before another may take it over: the 10 s receiver
/// timeout plus room to record the attempt. A crashed worker's deliveries wait this long; a live
/// but stalled one may, rarely, see its delivery sent twice (delivery is at least once).
pub const DELIVERY_LEASE_MS: i64 = 20_000;

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
    /// The wire `body` is in, and so the signature header it is signed in.
    pub dialect: EndpointDialect,
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

impl Webhooks<'_> {
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
            let dialect = endpoint.as_ref().map(|e| e.dialect).unwrap_or_default();
            let enabled = endpoint
                .as_ref()
                .map(|e| e.enabled_events.clone())
                .unwrap_or_default();
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
            // The payload is the event as the API shows it, rendered at each attempt: in Stripe's
            // shape and name for an endpoint made through `/v1`.
            let body = self
                .renderer()
                .document(Collection::Events, &c.event_id, c.event_body)?;
            let body = match dialect {
                EndpointDialect::Tender => body,
                EndpointDialect::Stripe => self.stripe_body(&body, &enabled, &c.variant)?,
            };
            tasks.push(DeliveryTask {
                delivery_id: c.id,
                scope: c.scope,
                event_id: c.event_id,
                endpoint_id: c.endpoint_id,
                url,
                body,
                secrets,
                dialect,
                attempts_made: c.attempts_made,
                failing_since: c.endpoint_failing_since,
            });
        }
        Ok(tasks)
    }

    /// The event `body` (its `/v2` JSON) as a Stripe endpoint listening to `enabled` gets it
    /// under the name `variant` (`""`: the first it listens to).
    fn stripe_body(&self, body: &str, enabled: &[String], variant: &str) -> CoreResult<String> {
        let v2: Value = serde_json::from_str(body)
            .map_err(|e| CoreError::internal("read a rendered event", e))?;
        let kind = v2["type"].as_str().unwrap_or_default();
        // Matched by the endpoint's index, so a name exists; the first one, if not.
        let (name, shape) = crate::stripe::events::names_of(kind)
            .find(|(n, _)| *n == variant)
            .or_else(|| crate::stripe::events::name_for(kind, enabled))
            .or_else(|| crate::stripe::events::name_for(kind, &["*".to_string()]))
            .ok_or_else(|| {
                CoreError::internal(
                    "name an event for Stripe",
                    std::io::Error::other(kind.to_string()),
                )
            })?;
        let event = crate::stripe::events::event(&self.stripe_shapes(), &v2, name, shape);
        serde_json::to_string(&event).map_err(|e| CoreError::internal("write a Stripe event", e))
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
