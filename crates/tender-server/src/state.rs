//! What every handler shares.

use std::sync::Arc;

use tender_core::service::Services;

use crate::metrics::Metrics;
use crate::rate_limit::RateLimiter;

#[derive(Clone)]
pub struct AppState {
    pub services: Services,
    pub rate_limiter: Arc<RateLimiter>,
    pub metrics: Arc<Metrics>,
}
