//! The per-account-and-mode rate limit (CONTRACT §4.10): a token bucket per scope, per node.
//! Publishable-key requests have buckets of their own: such keys are public (in the merchant's
//! pages), and their traffic must not use up what the merchant's server may send.
//!
//! Buckets live in memory on each node (a cluster of N nodes admits up to N × the rate; see
//! docs/operations.md). The map is sharded so that requests of different accounts never wait on
//! one lock, and a lock is held only for the arithmetic of one bucket.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Mutex;
use std::time::Instant;

use tender_core::auth::{KeyKind, Scope};

const SHARDS: usize = 32;

struct Bucket {
    tokens: f64,
    updated: Instant,
}

/// Token buckets keyed by scope; `rate` 0 disables limiting.
pub struct RateLimiter {
    rate: f64,
    burst: f64,
    shards: Vec<Mutex<HashMap<(Scope, KeyKind), Bucket>>>,
}

impl RateLimiter {
    /// `rate` requests per second with a burst of twice that.
    pub fn new(rate: u32) -> Self {
        Self {
            rate: rate as f64,
            burst: 2.0 * rate as f64,
            shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
        }
    }

    /// Takes a token for `scope` and the kind of key used, or says how many whole seconds to
    /// wait.
    pub fn check(&self, scope: &Scope, kind: KeyKind) -> Result<(), u64> {
        if self.rate <= 0.0 {
            return Ok(());
        }
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        scope.hash(&mut hasher);
        kind.hash(&mut hasher);
        let shard = &self.shards[(hasher.finish() as usize) % SHARDS];
        let Ok(mut buckets) = shard.lock() else {
            return Ok(());
        };
        let now = Instant::now();
        let bucket = buckets.entry((scope.clone(), kind)).or_insert(Bucket {
            tokens: self.burst,
            updated: now,
        });
        let elapsed = now.duration_since(bucket.updated).as_secs_f64();
        bucket.tokens = (bucket.tokens + elapsed * self.rate).min(self.burst);
        bucket.updated = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            Ok(())
        } else {
            Err(((1.0 - bucket.tokens) / self.rate).ceil().max(1.0) as u64)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tender_core::auth::Mode;

    fn scope(account: &str, mode: Mode) -> Scope {
        Scope {
            account: account.into(),
            mode,
        }
    }

    #[test]
    fn burst_is_twice_the_rate_then_refused_with_retry_after() {
        let limiter = RateLimiter::new(5);
        let s = scope("acct_a", Mode::Test);
        for _ in 0..10 {
            assert!(limiter.check(&s, KeyKind::Secret).is_ok());
        }
        assert_eq!(limiter.check(&s, KeyKind::Secret), Err(1));
    }

    #[test]
    fn scopes_have_separate_buckets_and_zero_disables() {
        let limiter = RateLimiter::new(1);
        let test = scope("acct_a", Mode::Test);
        assert!(
            limiter.check(&test, KeyKind::Secret).is_ok()
                && limiter.check(&test, KeyKind::Secret).is_ok()
        );
        assert!(limiter.check(&test, KeyKind::Secret).is_err());
        assert!(limiter
            .check(&scope("acct_a", Mode::Live), KeyKind::Secret)
            .is_ok());
        assert!(limiter
            .check(&scope("acct_b", Mode::Test), KeyKind::Secret)
            .is_ok());
        // A publishable key's bucket is its own: it cannot drain the secret key's.
        assert!(limiter.check(&test, KeyKind::Publishable).is_ok());
        let off = RateLimiter::new(0);
        for _ in 0..10_000 {
            assert!(off.check(&test, KeyKind::Secret).is_ok());
        }
    }
}
