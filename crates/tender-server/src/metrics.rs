//! Prometheus metrics (`GET /metrics`): one registry per application instance (no global
//! state), encoded in the OpenMetrics text format that Prometheus scrapes.
//!
//! - `tender_http_requests` / `tender_http_request_duration_seconds`: by route template,
//!   method and status (route templates, not raw paths, so ids never become labels).
//! - `tender_payments`: payments created, by resulting status.
//! - `tender_webhook_attempts` / `tender_webhook_delivery_latency_seconds`: by outcome, and
//!   from the event's creation to its successful delivery.
//! - `tender_webhook_queue_depth`, `tender_db_connections`: read from the store at scrape time.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;
use tender_core::services::Services;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RequestLabels {
    pub route: String,
    pub method: String,
    pub status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RouteLabels {
    pub route: String,
    pub method: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct OutcomeLabels {
    pub outcome: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ConnectionLabels {
    pub state: String,
}

pub struct Metrics {
    registry: Registry,
    pub requests: Family<RequestLabels, Counter>,
    pub request_duration: Family<RouteLabels, Histogram>,
    pub payments: Family<OutcomeLabels, Counter>,
    pub webhook_attempts: Family<OutcomeLabels, Counter>,
    pub delivery_latency: Histogram,
    queue_depth: Gauge<i64, std::sync::atomic::AtomicI64>,
    connections: Family<ConnectionLabels, Gauge<i64, std::sync::atomic::AtomicI64>>,
}

fn latency_histogram() -> Histogram {
    // 0.5 ms … ~16 s
    Histogram::new(exponential_buckets(0.0005, 2.0, 16))
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("tender");
        let requests = Family::<RequestLabels, Counter>::default();
        let request_duration =
            Family::<RouteLabels, Histogram>::new_with_constructor(latency_histogram);
        let payments = Family::<OutcomeLabels, Counter>::default();
        let webhook_attempts = Family::<OutcomeLabels, Counter>::default();
        let delivery_latency = Histogram::new(exponential_buckets(0.005, 2.0, 20));
        let queue_depth = Gauge::<i64, std::sync::atomic::AtomicI64>::default();
        let connections =
            Family::<ConnectionLabels, Gauge<i64, std::sync::atomic::AtomicI64>>::default();
        registry.register(
            "http_requests",
            "API requests by route, method and status",
            requests.clone(),
        );
        registry.register(
            "http_request_duration_seconds",
            "API request latency by route and method",
            request_duration.clone(),
        );
        registry.register(
            "payments",
            "Payments created, by resulting status",
            payments.clone(),
        );
        registry.register(
            "webhook_attempts",
            "Webhook delivery attempts by outcome",
            webhook_attempts.clone(),
        );
        registry.register(
            "webhook_delivery_latency_seconds",
            "Time from an event's creation to its successful delivery",
            delivery_latency.clone(),
        );
        registry.register(
            "webhook_queue_depth",
            "Pending webhook deliveries",
            queue_depth.clone(),
        );
        registry.register(
            "db_connections",
            "Database connections by state",
            connections.clone(),
        );
        Self {
            registry,
            requests,
            request_duration,
            payments,
            webhook_attempts,
            delivery_latency,
            queue_depth,
            connections,
        }
    }

    /// Refreshes the gauges read from the store, then encodes everything.
    pub async fn render(&self, services: &Services) -> String {
        match services.store.count_pending_deliveries().await {
            Ok(n) => {
                self.queue_depth.set(n as i64);
            }
            Err(e) => {
                tracing::warn!(error = %tender_core::error::error_chain(&e), "queue depth unavailable")
            }
        }
        let (in_use, idle) = services.store.pool_status();
        self.connections
            .get_or_create(&ConnectionLabels {
                state: "in_use".into(),
            })
            .set(in_use as i64);
        self.connections
            .get_or_create(&ConnectionLabels {
                state: "idle".into(),
            })
            .set(idle as i64);
        let mut out = String::new();
        if let Err(e) = prometheus_client::encoding::text::encode(&mut out, &self.registry) {
            tracing::warn!(error = %e, "encoding metrics failed");
        }
        out
    }

    /// `method` is mapped onto a fixed set first ([`method_label`]): hyper accepts any token
    /// as a method, and a label per made-up method would let anyone grow `/metrics` without bound.
    pub fn observe_request(&self, route: &str, method: &str, status: u16, seconds: f64) {
        let method = method_label(method);
        self.requests
            .get_or_create(&RequestLabels {
                route: route.into(),
                method: method.into(),
                status,
            })
            .inc();
        self.request_duration
            .get_or_create(&RouteLabels {
                route: route.into(),
                method: method.into(),
            })
            .observe(seconds);
    }

    pub fn payment_created(&self, status: &str) {
        self.payments
            .get_or_create(&OutcomeLabels {
                outcome: status.into(),
            })
            .inc();
    }

    pub fn webhook_attempt(&self, outcome: &str) {
        self.webhook_attempts
            .get_or_create(&OutcomeLabels {
                outcome: outcome.into(),
            })
            .inc();
    }
}

/// The label for a request method: the standard methods as they are, anything else `other`.
pub fn method_label(method: &str) -> &'static str {
    const KNOWN: [&str; 9] = [
        "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE", "CONNECT",
    ];
    KNOWN.into_iter().find(|m| *m == method).unwrap_or("other")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn made_up_methods_share_one_label() {
        assert_eq!(method_label("POST"), "POST");
        assert_eq!(method_label("DELETE"), "DELETE");
        assert_eq!(method_label("post"), "other");
        assert_eq!(method_label(&"M".repeat(4000)), "other");
    }
}
