//! What every handler shares.

use std::sync::Arc;

use tender_core::services::Services;

use crate::metrics::Metrics;
use crate::rate_limit::RateLimiter;

/// What every handler shares: one `Arc`, so the clone each extractor and middleware makes of
/// the state is one reference count, not one per field (a profile of `GET /v2/payments/{id}`
/// showed the field-by-field clone and drop at about a tenth of the server's CPU).
#[derive(Clone)]
pub struct AppState(Arc<Shared>);

impl AppState {
    pub fn new(shared: Shared) -> Self {
        Self(Arc::new(shared))
    }
}

impl std::ops::Deref for AppState {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.0
    }
}

/// The parts of [`AppState`].
pub struct Shared {
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
