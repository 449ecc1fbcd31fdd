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
    /// Seconds before the first sync of a connector's payment or refund left unknown (then
    /// with backoff). Keep it above 45 s (three calls of 15 s).
    pub connector_sync_delay: u64,
    /// Seconds before a charge's money is available, in both modes; `None`: two days in live
    /// mode, 60 s in test mode (CONTRACT §9).
    pub balance_available_delay: Option<u64>,
    /// When a failed subscription invoice is tried again (`--dunning-days`, CONTRACT §10).
    pub dunning: tender_core::billing::invoice::Dunning,
    /// Seconds a node holds a background task it claimed (`--task-lease-secs`): the tasks of
    /// a node that died are taken over this long after it claimed them.
    pub task_lease_secs: u64,
    /// 64 hex characters; `None` = read or create `vault.key` in the data dir (SQLite only).
    pub vault_key: Option<String>,
    /// Whether the dashboard is reached over TLS, so its cookies get `Secure`. Set it when
    /// serving TLS (or behind a TLS proxy); false while plain HTTP is served.
    pub secure_cookies: bool,
    /// PEM certificate chain and key: both listeners serve HTTPS (TLS 1.2+).
    pub tls_cert: Option<PathBuf>,
    pub tls_key: Option<PathBuf>,
    /// A TLS-terminating proxy is in front: non-loopback plain HTTP is allowed.
    pub behind_tls_proxy: bool,
    /// Test-mode webhooks may reach private ranges (RFC 1918, unique-local).
    pub allow_private_webhook_targets: bool,
    /// A merchant's API key (and dashboard) may set a connector's `raw_card_data` and
    /// `api_base`, which decide where card data goes; otherwise only `tender connectors` may.
    pub allow_connector_settings_via_api: bool,
    /// Open connections per listener at most (plain HTTP).
    pub max_connections: usize,
    /// How long a request body may take to arrive (30 s; tests shorten it).
    pub body_timeout: std::time::Duration,
    /// Whether this node runs the scheduled background tasks (settlements, expiries, syncs,
    /// renewals, clock advances). True by default; false leaves them to the other nodes, or to
    /// a test that steps them itself with `Services::run_due_tasks`.
    pub run_tasks: bool,
    /// Whether this node runs the webhook delivery worker. True by default; false leaves
    /// deliveries to the other nodes, or to a test that steps them with
    /// [`crate::worker::WebhookWorker::deliver_due`].
    pub run_webhook_worker: bool,
    /// Connections of one address that may wait for their first request head at once (0: no
    /// limit); loopback peers are not counted unless `count_loopback_half_open`.
    pub max_half_open_per_address: usize,
    /// Count loopback peers too (tests; a server whose clients all come through a local proxy
    /// must not, or the proxy's address would be the one limited).
    pub count_loopback_half_open: bool,
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
            connector_sync_delay: tender_core::payments::upstream::FIRST_SYNC_SECS as u64,
            balance_available_delay: None,
            dunning: Default::default(),
            task_lease_secs: tender_core::task::TASK_LEASE_SECS as u64,
            vault_key: None,
            secure_cookies: false,
            tls_cert: None,
            tls_key: None,
            behind_tls_proxy: false,
            allow_private_webhook_targets: false,
            allow_connector_settings_via_api: false,
            max_connections: crate::connection::DEFAULT_MAX_CONNECTIONS,
            body_timeout: crate::connection::BODY_DEADLINE,
            run_tasks: true,
            run_webhook_worker: true,
            max_half_open_per_address: crate::connection::DEFAULT_MAX_HALF_OPEN_PER_ADDRESS,
            count_loopback_half_open: false,
        }
    }

    pub fn tls_enabled(&self) -> bool {
        self.tls_cert.is_some() && self.tls_key.is_some()
    }

    /// Plain HTTP is only for loopback: money and keys must not cross a network in clear.
    pub fn check_listen_rules(&self) -> anyhow::Result<()> {
        if self.tls_enabled() || self.behind_tls_proxy {
            return Ok(());
        }
        for addr in [self.listen, self.receipt_listen] {
            if !addr.ip().is_loopback() {
                anyhow::bail!(
                    "refusing to serve plain HTTP on non-loopback address {addr}: give --tls-cert/--tls-key, \
                     or --behind-tls-proxy if a TLS-terminating proxy is in front"
                );
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_loopback_plain_http_is_refused_unless_tls_or_a_proxy() {
        let mut c = ServerConfig::new("/tmp".into());
        assert!(c.check_listen_rules().is_ok());
        c.listen = "0.0.0.0:4242".parse().unwrap();
        assert!(c.check_listen_rules().is_err());
        c.behind_tls_proxy = true;
        assert!(c.check_listen_rules().is_ok());
        c.behind_tls_proxy = false;
        c.tls_cert = Some("c.pem".into());
        c.tls_key = Some("k.pem".into());
        assert!(c.check_listen_rules().is_ok());
    }
}
