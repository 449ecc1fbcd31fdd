//! What stands in front of a hosted page's button that charges (CONTRACT §17): the `Origin`
//! check, and rate limits per page and per client address (defaults: 10 posts a minute per
//! page, 300 a minute per address). The one-time token is the core's
//! (`Billing::hosted_pay_token`).
//!
//! Counts are kept in this process, per fixed minute: a node that restarts forgets them, and
//! each node of a cluster counts its own (a client spread over N nodes gets N times the limit,
//! which the token and the per-invoice idempotency still hold to one charge per press).
//!
//! Depends on nothing of Tender's.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Posts a minute to one page at most.
pub const PER_PAGE: u32 = 10;
/// Posts a minute from one client address at most.
pub const PER_ADDRESS: u32 = 300;
const WINDOW: Duration = Duration::from_secs(60);
/// Entries kept at most before old windows are swept.
const MAX_ENTRIES: usize = 100_000;

/// Fixed-window counters by key.
#[derive(Default)]
pub struct Counters {
    windows: Mutex<HashMap<String, (Instant, u32)>>,
}

impl Counters {
    /// Counts one post under `key`; `Err(seconds)` to wait when `key` already had `limit` this
    /// minute.
    pub fn hit(&self, key: &str, limit: u32) -> Result<(), u64> {
        let Ok(mut windows) = self.windows.lock() else {
            return Ok(());
        };
        let now = Instant::now();
        if windows.len() >= MAX_ENTRIES {
            windows.retain(|_, (start, _)| now.duration_since(*start) < WINDOW);
        }
        let (start, count) = windows.entry(key.to_string()).or_insert((now, 0));
        if now.duration_since(*start) >= WINDOW {
            *start = now;
            *count = 0;
        }
        if *count >= limit {
            return Err((WINDOW - now.duration_since(*start)).as_secs().max(1));
        }
        *count += 1;
        Ok(())
    }

    /// Seconds to wait when `key` already had `limit` this minute, without counting.
    pub fn over(&self, key: &str, limit: u32) -> Option<u64> {
        let windows = self.windows.lock().ok()?;
        let (start, count) = windows.get(key)?;
        let elapsed = Instant::now().duration_since(*start);
        (elapsed < WINDOW && *count >= limit).then(|| (WINDOW - elapsed).as_secs().max(1))
    }
}

/// The limits of the receipt host's buttons.
#[derive(Default)]
pub struct Guard {
    pages: Counters,
    addresses: Counters,
}

impl Guard {
    /// Counts a post to page `page` from `address`; `Err(seconds)` when either is over its
    /// limit.
    pub fn post(&self, page: &str, address: Option<IpAddr>) -> Result<(), u64> {
        if let Some(ip) = address {
            self.addresses.hit(&ip.to_string(), PER_ADDRESS)?;
        }
        self.pages.hit(page, PER_PAGE)
    }

    /// Counts a visit from `address` against its limit alone (a payment link's page, which
    /// any number of customers may open).
    pub fn visit(&self, address: Option<IpAddr>) -> Result<(), u64> {
        match address {
            Some(ip) => self.addresses.hit(&ip.to_string(), PER_ADDRESS),
            None => Ok(()),
        }
    }
}

/// Whether a post comes from the receipt host's own page: a form posted from another site is
/// refused. `Sec-Fetch-Site` decides when the browser sends it (every current one does); else
/// `Origin`, when it names a site. The pages send `Referrer-Policy: no-referrer`, under which
/// Chromium sends even a same-origin form's `Origin` as `null`, so `null` alone proves nothing
/// either way; a client that sends neither (curl) still needs the page's token.
pub fn same_origin(origin: Option<&str>, fetch_site: Option<&str>, own_base: &str) -> bool {
    if let Some(site) = fetch_site {
        return site.eq_ignore_ascii_case("same-origin");
    }
    let Some(origin) = origin.filter(|o| *o != "null") else {
        return true;
    };
    let own = url::Url::parse(own_base).ok().map(|u| u.origin());
    let theirs = url::Url::parse(origin).ok().map(|u| u.origin());
    matches!((own, theirs), (Some(a), Some(b)) if a == b && a.is_tuple())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_takes_ten_posts_a_minute_and_an_address_three_hundred() {
        let guard = Guard::default();
        let ip: IpAddr = "192.0.2.7".parse().unwrap();
        for _ in 0..PER_PAGE {
            assert!(guard.post("in_a", Some(ip)).is_ok());
        }
        let wait = guard.post("in_a", Some(ip)).unwrap_err();
        assert!((1..=60).contains(&wait));
        // Other pages from the same address, up to the address's own limit.
        let mut taken = PER_PAGE + 1;
        let mut page = 0;
        while taken < PER_ADDRESS {
            page += 1;
            for _ in 0..PER_PAGE.min(PER_ADDRESS - taken) {
                assert!(guard.post(&format!("in_{page}"), Some(ip)).is_ok());
                taken += 1;
            }
        }
        assert!(guard.post("in_fresh", Some(ip)).is_err());
        assert!(guard
            .post("in_fresh", Some("192.0.2.8".parse().unwrap()))
            .is_ok());
    }

    #[test]
    fn only_the_receipt_hosts_own_origin_may_post() {
        let own = "http://127.0.0.1:4243";
        assert!(same_origin(None, None, own));
        assert!(same_origin(Some("http://127.0.0.1:4243"), None, own));
        assert!(!same_origin(Some("https://evil.example"), None, own));
        assert!(!same_origin(Some("http://127.0.0.1:4242"), None, own));
        // A browser's own word, whatever Origin says (null under no-referrer).
        assert!(same_origin(Some("null"), Some("same-origin"), own));
        assert!(!same_origin(Some("null"), Some("cross-site"), own));
        assert!(!same_origin(None, Some("same-site"), own));
    }
}
