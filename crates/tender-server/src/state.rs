//! What every handler shares.

use std::sync::Arc;

use tender_core::services::Services;

use crate::metrics::Metrics;
use crate::rate_limit::RateLimiter;

#[derive(Clone)]
pub struct AppState {
    pub services: Services,
    pub rate_limiter: Arc<RateLimiter>,
    pub metrics: Arc<Metrics>,
    /// Turns true when the server begins to stop: responses that never end on their own (the
    /// event stream) end then, so a stop is not held up for the grace period.
    pub stopping: tokio::sync::watch::Receiver<bool>,
    /// Slots of the open event streams ([`crate::streams`]).
    pub streams: Arc<crate::streams::StreamSlots>,
    /// Limits of the receipt host's buttons that charge ([`crate::receipts::guard`]).
    pub hosted_guard: Arc<crate::receipts::guard::Guard>,
    /// Refused processor webhooks per client address this minute
    /// ([`crate::http::connector_webhooks`]).
    pub webhook_refusals: Arc<crate::receipts::guard::Counters>,
}
