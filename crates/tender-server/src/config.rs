//! Server settings, filled by the binary from flags and `TENDER_*` variables.

use std::net::SocketAddr;
use std::path::PathBuf;

#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// API and dashboard address; port 0 picks a free port.
    pub listen: SocketAddr,
    /// Receipt host address.
    pub receipt_listen: SocketAddr,
    /// Public base of `receipt_url`; defaults to `http://` + the bound receipt address.
    pub receipt_base_url: Option<String>,
    pub data_dir: PathBuf,
    /// `sqlite://…` or `postgres://…`; `None` = SQLite in the data dir.
    pub database_url: Option<String>,
    /// Requests per second per account and mode; 0 disables.
    pub rate_limit: u32,
    /// Multiplies the webhook retry schedule.
    pub webhook_retry_scale: f64,
    /// Test-mode bank settlement delay in seconds.
    pub bank_settlement_delay: u64,
    /// 64 hex characters; `None` = read or create `vault.key` in the data dir (SQLite only).
    pub vault_key: Option<String>,
    /// Whether the dashboard is reached over TLS, so its cookies get `Secure`. Set it when
    /// serving TLS (or behind a TLS proxy); false while plain HTTP is served.
    pub secure_cookies: bool,
}

impl ServerConfig {
    /// Defaults of CONTRACT §0 (tests override the addresses with port 0).
    pub fn new(data_dir: PathBuf) -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 4242)),
            receipt_listen: SocketAddr::from(([127, 0, 0, 1], 4243)),
            receipt_base_url: None,
            data_dir,
            database_url: None,
            rate_limit: 100,
            webhook_retry_scale: 1.0,
            bank_settlement_delay: 10,
            vault_key: None,
            secure_cookies: false,
        }
    }
}
