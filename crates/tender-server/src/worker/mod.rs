//! The webhook delivery worker: claim due deliveries by lease, POST each (signed, 10 s timeout,
//! no redirects, live-mode address rules enforced after DNS resolution), record the attempt.
//!
//! No transaction is held across the HTTP call; a worker that dies leaves leases that expire,
//! and another worker (on any node) takes the deliveries over. Delivery is at least once.

mod client;

use std::sync::Arc;
use std::time::{Duration, Instant};

use tender_core::service::webhooks::{AttemptResult, DeliveryTask};
use tender_core::service::Services;
use tender_core::webhook::{is_forbidden_address, standard_signature, tender_signature};
use tokio::sync::watch;

pub use client::SystemResolver;

/// Deliveries claimed per step; they are sent concurrently.
const BATCH: usize = 64;
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
    /// Test mode: plain DNS, localhost allowed.
    test_client: reqwest::Client,
    /// Live mode: the resolver drops forbidden addresses.
    live_client: reqwest::Client,
}

impl WebhookWorker {
    pub fn new(services: Services, metrics: Arc<crate::metrics::Metrics>) -> anyhow::Result<Self> {
        Ok(Self {
            services,
            metrics,
            test_client: client::build(false)?,
            live_client: client::build(true)?,
        })
    }

    /// Runs until `stop` turns true.
    pub async fn run(self, mut stop: watch::Receiver<bool>) {
        loop {
            if *stop.borrow() {
                return;
            }
            match self.step().await {
                Ok(0) => {}
                Ok(_) => continue,
                Err(e) => tracing::warn!(error = %e, "webhook worker step failed"),
            }
            tokio::select! {
                _ = tokio::time::sleep(IDLE_POLL) => {}
                _ = stop.changed() => {}
            }
        }
    }

    /// Claims and sends one batch; returns how many deliveries it attempted.
    pub async fn step(&self) -> Result<usize, tender_core::error::CoreError> {
        let tasks = self.services.claim_due_deliveries(BATCH).await?;
        let n = tasks.len();
        let sends = tasks.into_iter().map(|task| {
            let worker = self.clone();
            tokio::spawn(async move {
                let result = worker.send(&task).await;
                worker.observe(&task, &result);
                if let Err(e) = worker.services.finish_delivery(&task, result).await {
                    tracing::warn!(error = %e, delivery = %task.delivery_id, "recording a webhook attempt failed");
                }
            })
        });
        for handle in sends.collect::<Vec<_>>() {
            let _ = handle.await;
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
        if live {
            if let Err(e) = check_live_url(url) {
                return AttemptResult {
                    error: Some(e),
                    ..AttemptResult::default()
                };
            }
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
            .header("tender-signature", tender_signature(&secrets, now, body))
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

/// Live URLs: https, and an IP-literal host must be a public address (names are checked by the
/// live client's resolver after resolution).
fn check_live_url(url: &str) -> Result<(), String> {
    let parsed = url::Url::parse(url).map_err(|e| format!("invalid URL: {e}"))?;
    if parsed.scheme() != "https" {
        return Err("live-mode webhooks must use https".into());
    }
    let ip = match parsed.host() {
        Some(url::Host::Ipv4(ip)) => Some(std::net::IpAddr::V4(ip)),
        Some(url::Host::Ipv6(ip)) => Some(std::net::IpAddr::V6(ip)),
        _ => None,
    };
    if ip.is_some_and(is_forbidden_address) {
        return Err("the endpoint address is not allowed in live mode".into());
    }
    Ok(())
}

/// Makes sure a shared resolver type is constructible by callers.
pub fn system_resolver() -> Arc<SystemResolver> {
    Arc::new(SystemResolver)
}
