//! Starting a real Tender for a test, shared by both harnesses (`tests/api/helpers.rs` for the
//! JSON API suites, `tests/common/mod.rs` for the dashboard and browser suites): the
//! application built on its configured store with a test clock, served on port 0, its
//! bootstrap account read back. Each harness adds its own client on top.

use std::sync::Arc;

use tender_core::accounts::AccountCreated;
use tender_core::clock::OffsetClock;
use tender_core::services::Services;
use tender_server::worker::WebhookWorker;
use tender_server::{Application, ServerConfig};

/// A running application.
pub struct Booted {
    pub base: String,
    pub receipt_base: String,
    pub account: AccountCreated,
    pub services: Services,
    pub clock: Arc<OffsetClock>,
    /// A webhook worker a test can step (when the server runs none itself).
    pub worker: WebhookWorker,
}

/// A configuration for a fresh store in `data_dir`, listening on port 0, with no rate limit
/// and webhook retries a thousand times sooner than in production.
pub fn test_config(data_dir: &std::path::Path) -> ServerConfig {
    let mut config = ServerConfig::new(data_dir.to_path_buf());
    config.listen = "127.0.0.1:0".parse().expect("addr");
    config.receipt_listen = "127.0.0.1:0".parse().expect("addr");
    config.rate_limit = 0;
    config.webhook_retry_scale = 0.001;
    config
}

/// Builds the application for `config` and serves it in the background.
pub async fn boot(config: ServerConfig) -> Booted {
    let clock = Arc::new(OffsetClock::new());
    let app = Application::build_with_clock(config, clock.clone())
        .await
        .expect("build");
    let booted = Booted {
        base: format!("http://{}", app.api_addr()),
        receipt_base: format!("http://{}", app.receipt_addr()),
        account: app
            .bootstrap
            .clone()
            .expect("a fresh store bootstraps an account"),
        services: app.services().clone(),
        clock,
        worker: app.webhook_worker().expect("webhook worker"),
    };
    tokio::spawn(app.run_until(std::future::pending()));
    booted
}
