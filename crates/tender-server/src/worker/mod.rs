//! The webhook delivery worker: claim due deliveries by lease, POST each (signed, 10 s timeout,
//! no redirects, the mode's address rules enforced after DNS resolution), record the attempt.
//!
//! Sends run in a pool of [`IN_FLIGHT`] slots: the worker claims as slots free up and never
//! waits for the slowest send of a batch. Claims are fair (the store hands out each account's
//! oldest due delivery before anyone's second) and capped per account and mode
//! ([`PER_ACCOUNT`]) and per endpoint ([`PER_ENDPOINT`]) across all nodes, so one account's slow
//! or black-holed endpoints cannot hold up another account's webhooks, and one endpoint never
//! gets a flood of concurrent POSTs.
//!
//! No transaction is held across the HTTP call; a worker that dies leaves leases that expire,
//! and another worker (on any node) takes the deliveries over. Delivery is at least once.

pub(crate) mod client;

use std::sync::Arc;
use std::time::{Duration, Instant};

use tender_core::services::Services;
use tender_core::webhooks::address::webhook_address_allowed;
use tender_core::webhooks::deliveries::{AttemptResult, DeliveryTask};
use tender_core::webhooks::webhook::{standard_signature, tender_signature};
use tokio::sync::{watch, Semaphore};

pub use client::SystemResolver;

/// The header the signature goes in: `Tender-Signature`, or `Stripe-Signature` for an endpoint
/// made through `/v1` (the same scheme, which Stripe's libraries verify).
fn signature_header(dialect: tender_core::webhooks::webhook::EndpointDialect) -> &'static str {
    match dialect {
        tender_core::webhooks::webhook::EndpointDialect::Tender => "tender-signature",
        tender_core::webhooks::webhook::EndpointDialect::Stripe => "stripe-signature",
    }
}

/// Sends in flight at once on one node. Sends are asynchronous I/O, so a large pool costs
/// little; what matters is that it is much larger than [`PER_ACCOUNT`], so that several tenants
/// with slow endpoints together still leave room for everyone else.
pub const IN_FLIGHT: usize = 256;
/// Sends in flight at once for one account and mode, across nodes.
pub const PER_ACCOUNT: usize = 16;
/// Sends in flight at once to one endpoint, across nodes.
pub const PER_ENDPOINT: usize = 8;
/// How long an idle worker waits before looking again.
const IDLE_POLL: Duration = Duration::from_millis(50);
/// The receiver must answer within this.
pub const TIMEOUT: Duration = Duration::from_secs(10);
const USER_AGENT: &str = concat!("Tender-Webhooks/", env!("CARGO_PKG_VERSION"));

/// Sends webhooks for every account and mode of the store.
#[derive(Clone)]
pub struct WebhookWorker {
    services: Services,
    metrics: Arc<crate::metrics::Metrics>,
    /// Test mode: loopback and public addresses (private ones when the operator allows).
    test_client: reqwest::Client,
    /// Live mode: public addresses only.
    live_client: reqwest::Client,
    /// Signalled each time a send finishes and frees its slot.
    finished: Arc<tokio::sync::Notify>,
}

impl WebhookWorker {
    pub fn new(services: Services, metrics: Arc<crate::metrics::Metrics>) -> anyhow::Result<Self> {
        let private = services.config.allow_private_webhook_targets;
        Ok(Self {
            services,
            metrics,
            test_client: client::build(false, private)?,
            live_client: client::build(true, false)?,
            finished: Arc::new(tokio::sync::Notify::new()),
        })
    }

    /// Runs until `stop` turns true (or its sender is gone), then lets the sends in flight
    /// finish and record their attempts, so a clean stop leaves nothing it claimed behind.
    pub async fn run(self, mut stop: watch::Receiver<bool>) {
        let slots = Arc::new(Semaphore::new(IN_FLIGHT));
        loop {
            if *stop.borrow() {
                break;
            }
            match self.claim_and_send(&slots).await {
                Ok(n) if n > 0 => continue,
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(error = %tender_core::error::error_chain(&e), "webhook worker step failed")
                }
            }
            // Nothing to claim now: look again when a send finishes (its endpoint or account
            // may have been at its cap) or after the idle poll.
            tokio::select! {
                _ = tokio::time::sleep(IDLE_POLL) => {}
                _ = self.finished.notified() => {}
                changed = stop.changed() => if changed.is_err() { break },
            }
        }
        let _ = slots.acquire_many(IN_FLIGHT as u32).await;
    }

    /// Sends every delivery due now, one after another, round after round while a round sent
    /// any (at most 50 rounds); returns how many it sent. What the running worker does, as a
    /// step a test takes instead of waiting for it (a server with `run_webhook_worker` off).
    pub async fn deliver_due(&self) -> Result<usize, tender_core::error::CoreError> {
        let mut sent = 0;
        for _ in 0..50 {
            let tasks = self
                .services
                .webhooks()
                .claim_due_deliveries(IN_FLIGHT, PER_ACCOUNT, PER_ENDPOINT)
                .await?;
            if tasks.is_empty() {
                break;
            }
            sent += tasks.len();
            for task in tasks {
                let result = self.send(&task).await;
                self.observe(&task, &result);
                self.services
                    .webhooks()
                    .finish_delivery(&task, result)
                    .await?;
            }
        }
        Ok(sent)
    }

    /// Claims as many due deliveries as there are free slots and starts sending each; returns
    /// how many it started (0 when nothing is due or no slot is free).
    pub async fn claim_and_send(
        &self,
        slots: &Arc<Semaphore>,
    ) -> Result<usize, tender_core::error::CoreError> {
        let free = slots.available_permits();
        if free == 0 {
            return Ok(0);
        }
        let tasks = self
            .services
            .webhooks()
            .claim_due_deliveries(free, PER_ACCOUNT, PER_ENDPOINT)
            .await?;
        let n = tasks.len();
        for task in tasks {
            // This loop is the only taker of slots, so each claimed task has one.
            let Ok(permit) = Arc::clone(slots).try_acquire_owned() else {
                break;
            };
            let worker = self.clone();
            tokio::spawn(async move {
                let _permit = permit;
                let result = worker.send(&task).await;
                worker.observe(&task, &result);
                if let Err(e) = worker
                    .services
                    .webhooks()
                    .finish_delivery(&task, result)
                    .await
                {
                    tracing::warn!(error = %tender_core::error::error_chain(&e), delivery = %task.delivery_id, "recording a webhook attempt failed");
                }
                drop(_permit);
                worker.finished.notify_one();
            });
        }
        Ok(n)
    }

    fn observe(&self, task: &DeliveryTask, result: &AttemptResult) {
        let outcome = match result.response_status {
            Some(s) if (200..300).contains(&s) => "succeeded",
            Some(_) => "http_error",
            None => "network_error",
        };
        self.metrics.webhook_attempt(outcome);
        if outcome == "succeeded" {
            let created = serde_json::from_str::<serde_json::Value>(&task.body)
                .ok()
                .and_then(|v| v["created"].as_i64());
            if let Some(created) = created {
                let latency =
                    (self.services.clock.now_millis() - created * 1000).max(0) as f64 / 1000.0;
                self.metrics.delivery_latency.observe(latency);
            }
        }
    }

    async fn send(&self, task: &DeliveryTask) -> AttemptResult {
        let Some(url) = &task.url else {
            return AttemptResult {
                error: Some("the endpoint was deleted or disabled".into()),
                ..AttemptResult::default()
            };
        };
        let live = task.scope.livemode();
        let private = self.services.config.allow_private_webhook_targets;
        if let Err(e) = check_url(url, live, private) {
            return AttemptResult {
                error: Some(e),
                ..AttemptResult::default()
            };
        }
        let now = self.services.now();
        let secrets: Vec<&str> = task.secrets.iter().map(String::as_str).collect();
        let body = task.body.as_bytes();
        let client = if live {
            &self.live_client
        } else {
            &self.test_client
        };
        let started = Instant::now();
        let response = client
            .post(url)
            .header("content-type", "application/json")
            .header("user-agent", USER_AGENT)
            .header(
                signature_header(task.dialect),
                tender_signature(&secrets, now, body),
            )
            .header("webhook-id", &task.event_id)
            .header("webhook-timestamp", now.to_string())
            .header(
                "webhook-signature",
                standard_signature(&secrets, &task.event_id, now, body),
            )
            .body(task.body.clone())
            .send()
            .await;
        let duration_ms = started.elapsed().as_millis() as i64;
        match response {
            Ok(resp) => {
                let status = resp.status().as_u16();
                let retry_after_secs = resp
                    .headers()
                    .get("retry-after")
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.trim().parse::<i64>().ok());
                let response_body = client::read_prefix(resp, 1024).await;
                let error = if (300..400).contains(&status) {
                    Some("redirects are not followed".to_string())
                } else {
                    None
                };
                AttemptResult {
                    response_status: Some(status),
                    error,
                    duration_ms,
                    response_body,
                    retry_after_secs,
                }
            }
            Err(e) => AttemptResult {
                error: Some(client::describe(&e)),
                duration_ms,
                ..AttemptResult::default()
            },
        }
    }
}

/// Live URLs must be https; an IP-literal host must be an address the mode may reach (names
/// are checked by the client's resolver after resolution).
fn check_url(url: &str, live: bool, allow_private: bool) -> Result<(), String> {
    let parsed = url::Url::parse(url).map_err(|e| format!("invalid URL: {e}"))?;
    if live && parsed.scheme() != "https" {
        return Err("live-mode webhooks must use https".into());
    }
    let ip = match parsed.host() {
        Some(url::Host::Ipv4(ip)) => Some(std::net::IpAddr::V4(ip)),
        Some(url::Host::Ipv6(ip)) => Some(std::net::IpAddr::V6(ip)),
        _ => None,
    };
    if ip.is_some_and(|ip| !webhook_address_allowed(ip, live, allow_private)) {
        return Err("the endpoint address is not one webhooks may reach".into());
    }
    Ok(())
}
