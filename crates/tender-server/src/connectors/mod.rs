//! The processors' HTTP clients behind the connector port ([`tender_core::connectors::connector`]): the
//! factory the server gives the use cases, and one module per processor ([`stripe`]).
//!
//! One HTTP client per mode (rustls, a connection pool, no proxy from the environment, no
//! redirects) is shared by every connector; each connector built from its settings is a cheap
//! handle. The clients reach only the addresses webhooks of the mode may reach
//! ([`tender_core::webhooks::address::webhook_address_allowed`], checked on the resolved addresses and on
//! address literals): a merchant's `api_base` cannot turn Tender into a probe of the network it
//! runs in. Depends on the connector port and `reqwest`.

pub mod stripe;

use std::sync::Arc;
use std::time::Duration;

use tender_core::connectors::connector::{
    Connector, ConnectorFactory, ConnectorSettings, ConnectorType,
};
use tender_core::connectors::simulator::{SimulatedConnector, Unreachable};
use tender_core::webhooks::address::webhook_address_allowed;

/// How long a processor may take to answer one call. A payment makes at most three calls, so a
/// request waits at most 45 s for its processor: under the first sync of a payment left
/// unknown ([`tender_core::payments::upstream::FIRST_SYNC_SECS`]), so a sync rarely meets a
/// request still waiting (and when it does, the processor decides: see
/// `tender_core::payments::upstream`).
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(15);
/// How long connecting may take; a connection that was never made sent nothing.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Builds the connectors of every kind this server knows.
pub struct ServerConnectors {
    test_client: reqwest::Client,
    live_client: reqwest::Client,
    allow_private: bool,
    simulator: Arc<SimulatedConnector>,
}

impl ServerConnectors {
    /// `allow_private`: test-mode connectors may reach private ranges
    /// (`--allow-private-webhook-targets`, the same rule as webhooks').
    pub fn new(allow_private: bool) -> anyhow::Result<Self> {
        let client = |live| {
            crate::worker::client::build_filtered(
                live,
                allow_private && !live,
                REQUEST_TIMEOUT,
                CONNECT_TIMEOUT,
            )
        };
        Ok(Self {
            test_client: client(false)?,
            live_client: client(true)?,
            allow_private,
            simulator: Arc::new(SimulatedConnector::new()),
        })
    }
}

impl ConnectorFactory for ServerConnectors {
    fn build(&self, id: &str, settings: &ConnectorSettings, livemode: bool) -> Arc<dyn Connector> {
        let base = settings
            .api_base
            .as_deref()
            .or(settings.kind.default_api_base())
            .unwrap_or_default();
        // An address literal is never resolved: check it here.
        let literal = url::Url::parse(base).ok().and_then(|u| match u.host() {
            Some(url::Host::Ipv4(ip)) => Some(std::net::IpAddr::V4(ip)),
            Some(url::Host::Ipv6(ip)) => Some(std::net::IpAddr::V6(ip)),
            _ => None,
        });
        if let Some(ip) = literal {
            if !webhook_address_allowed(ip, livemode, self.allow_private) {
                return Arc::new(Unreachable(format!(
                    "api_base {ip} is an address connectors of this mode may not reach"
                )));
            }
        }
        match settings.kind {
            ConnectorType::Simulator => self.simulator.clone(),
            ConnectorType::Stripe => Arc::new(stripe::Stripe::new(
                if livemode {
                    self.live_client.clone()
                } else {
                    self.test_client.clone()
                },
                id,
                base,
                settings.api_key.clone().unwrap_or_default(),
                settings.webhook_secret.clone(),
            )),
        }
    }
}
