//! The HTTP clients the worker sends with, and the resolvers behind the live-mode rules.

use std::net::SocketAddr;
use std::sync::Arc;

use async_trait::async_trait;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use tender_core::webhooks::address::webhook_address_allowed;
use tender_core::webhooks::address::HostResolver;

/// Plain DNS through the operating system, for the registration-time check.
pub struct SystemResolver;

#[async_trait]
impl HostResolver for SystemResolver {
    async fn resolve(&self, host: &str, port: u16) -> Result<Vec<std::net::IpAddr>, String> {
        tokio::net::lookup_host((host, port))
            .await
            .map(|addrs| addrs.map(|a| a.ip()).collect())
            .map_err(|e| e.to_string())
    }
}

/// A resolver that refuses names resolving to addresses the mode may not reach
/// ([`webhook_address_allowed`]), so an endpoint cannot be pointed (or re-pointed by DNS) at the
/// inside of the network: the check happens on the very addresses the connection uses.
struct FilteringResolver {
    live: bool,
    allow_private: bool,
}

impl Resolve for FilteringResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let (live, allow_private) = (self.live, self.allow_private);
        Box::pin(async move {
            let addrs: Vec<SocketAddr> =
                tokio::net::lookup_host((name.as_str(), 0)).await?.collect();
            if addrs.is_empty()
                || addrs
                    .iter()
                    .any(|a| !webhook_address_allowed(a.ip(), live, allow_private))
            {
                return Err("the endpoint resolves to an address webhooks may not reach".into());
            }
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

/// The client for one mode. Proxies from the environment are ignored: through a proxy the
/// resolver would see only the proxy's name, not the endpoint's.
pub fn build(live: bool, allow_private: bool) -> anyhow::Result<reqwest::Client> {
    build_filtered(live, allow_private, super::TIMEOUT, super::TIMEOUT)
}

/// A client for one mode that reaches only the addresses that mode may reach, with these
/// time-outs (the webhook worker's, or the connectors', whose processors are outside services
/// too).
pub fn build_filtered(
    live: bool,
    allow_private: bool,
    timeout: std::time::Duration,
    connect_timeout: std::time::Duration,
) -> anyhow::Result<reqwest::Client> {
    Ok(reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(timeout)
        .connect_timeout(connect_timeout)
        .pool_max_idle_per_host(32)
        .no_proxy()
        .dns_resolver(Arc::new(FilteringResolver {
            live,
            allow_private,
        }))
        .build()?)
}

/// The first `limit` bytes of a response body, as text.
pub async fn read_prefix(mut resp: reqwest::Response, limit: usize) -> String {
    let mut out = Vec::new();
    while out.len() < limit {
        match resp.chunk().await {
            Ok(Some(chunk)) => out.extend_from_slice(&chunk),
            _ => break,
        }
    }
    out.truncate(limit);
    String::from_utf8_lossy(&out).into_owned()
}

/// A short description of a network error for the attempt log.
pub fn describe(e: &reqwest::Error) -> String {
    if e.is_timeout() {
        "timed out after 10 s".into()
    } else if e.is_connect() {
        format!("connection failed: {}", tender_core::error::root_cause(e))
    } else {
        tender_core::error::root_cause(e)
    }
}
