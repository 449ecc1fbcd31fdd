//! Decline times by key over the last hour: the counts the card-testing guard reads. Pure
//! (the caller gives the time).

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use super::{MAX_LIMIT, WINDOW_SECS};

/// Keys kept at most before the expired ones are swept.
const MAX_KEYS: usize = 100_000;

/// Decline times by key, within the window.
#[derive(Debug, Default)]
pub struct Velocity {
    declines: Mutex<HashMap<String, VecDeque<i64>>>,
}

impl Velocity {
    /// Seconds until `key` may try again, when it had `limit` declines in the window before
    /// `now`; `None`: it may try.
    pub fn blocked(&self, key: &str, limit: u32, now: i64) -> Option<i64> {
        let mut all = self.declines.lock().ok()?;
        let times = all.get_mut(key)?;
        while times.front().is_some_and(|t| now - t >= WINDOW_SECS) {
            times.pop_front();
        }
        if times.len() < limit as usize {
            return None;
        }
        let oldest = *times.front()?;
        Some((oldest + WINDOW_SECS - now).max(1))
    }

    /// One decline of `key` at `now`: how many it has had in the window, this one included.
    pub fn record(&self, key: &str, now: i64) -> usize {
        let Ok(mut all) = self.declines.lock() else {
            return 0;
        };
        if all.len() >= MAX_KEYS {
            all.retain(|_, times| times.back().is_some_and(|t| now - t < WINDOW_SECS));
        }
        let times = all.entry(key.to_string()).or_default();
        while times.front().is_some_and(|t| now - t >= WINDOW_SECS) {
            times.pop_front();
        }
        times.push_back(now);
        // A key never needs more than the largest limit's worth of times.
        while times.len() > MAX_LIMIT as usize {
            times.pop_front();
        }
        times.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_blocked_at_its_limit_until_its_oldest_decline_is_an_hour_old() {
        let v = Velocity::default();
        for i in 0..10 {
            assert_eq!(v.blocked("k", 10, 100 + i), None);
            assert_eq!(v.record("k", 100 + i), i as usize + 1);
        }
        assert_eq!(v.blocked("k", 10, 200), Some(3600 - 100));
        assert_eq!(v.blocked("other", 10, 200), None);
        // Still blocked a second before the first decline is an hour old; free then.
        assert_eq!(v.blocked("k", 10, 100 + WINDOW_SECS - 1), Some(1));
        assert_eq!(v.blocked("k", 10, 100 + WINDOW_SECS), None);
    }
}
