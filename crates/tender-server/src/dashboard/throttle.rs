//! Login throttling: after [`MAX_FAILURES`] failed logins for one e-mail within
//! [`LOCKOUT_SECS`], that e-mail cannot log in for [`LOCKOUT_SECS`] (even with the right
//! password). A success clears the count.
//!
//! The counts live in this process's memory: a restart forgets them, and several nodes count
//! separately (each node locks after five failures it saw). The price of per-e-mail locking is
//! that someone who knows an e-mail can keep its owner out; an operator can restart the node.

use std::collections::HashMap;
use std::sync::Mutex;

/// Failed logins that lock an e-mail.
pub const MAX_FAILURES: u32 = 5;
/// How long failures are counted, and how long a lock lasts.
pub const LOCKOUT_SECS: i64 = 15 * 60;
/// Entries kept before stale ones are dropped.
const MAX_ENTRIES: usize = 10_000;

#[derive(Debug, Clone, Copy)]
struct Entry {
    failures: u32,
    first_failure: i64,
    locked_until: Option<i64>,
}

/// Failed login counts per e-mail (lower-cased).
#[derive(Debug, Default)]
pub struct LoginThrottle {
    entries: Mutex<HashMap<String, Entry>>,
}

fn key(email: &str) -> String {
    email.trim().to_lowercase()
}

impl LoginThrottle {
    fn entries(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        // A panic while holding the lock leaves plain counters behind: still usable.
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `Err(seconds)` while `email` is locked: how long until it may try again.
    pub fn check(&self, email: &str, now: i64) -> Result<(), i64> {
        match self.entries().get(&key(email)).and_then(|e| e.locked_until) {
            Some(until) if until > now => Err(until - now),
            _ => Ok(()),
        }
    }

    /// Counts a failed login; returns whether the e-mail is now locked.
    pub fn record_failure(&self, email: &str, now: i64) -> bool {
        let mut entries = self.entries();
        let key = key(email);
        if entries.len() >= MAX_ENTRIES && !entries.contains_key(&key) {
            entries.retain(|_, e| {
                e.first_failure + LOCKOUT_SECS > now || e.locked_until.is_some_and(|u| u > now)
            });
            // Still full (someone is spraying e-mails): forget the least telling entry, an
            // unlocked one with the oldest first failure before any lock.
            if entries.len() >= MAX_ENTRIES {
                let victim = entries
                    .iter()
                    .min_by_key(|(_, e)| (e.locked_until.is_some(), e.first_failure))
                    .map(|(k, _)| k.clone());
                if let Some(victim) = victim {
                    entries.remove(&victim);
                }
            }
        }
        let entry = entries.entry(key).or_insert(Entry {
            failures: 0,
            first_failure: now,
            locked_until: None,
        });
        let lock_over = entry.locked_until.is_some_and(|u| u <= now);
        if lock_over || entry.first_failure + LOCKOUT_SECS <= now {
            *entry = Entry {
                failures: 0,
                first_failure: now,
                locked_until: None,
            };
        }
        entry.failures += 1;
        if entry.failures >= MAX_FAILURES {
            entry.locked_until = Some(now + LOCKOUT_SECS);
        }
        entry.locked_until.is_some()
    }

    /// Forgets the failures of an e-mail that just logged in.
    pub fn record_success(&self, email: &str) {
        self.entries().remove(&key(email));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn five_failures_lock_the_email_for_fifteen_minutes() {
        let t = LoginThrottle::default();
        for i in 0..4 {
            assert!(!t.record_failure("A@x.com", 100 + i));
            assert!(t.check("a@x.com", 100 + i).is_ok());
        }
        assert!(t.record_failure("a@x.com", 110));
        assert_eq!(t.check("a@x.com", 110), Err(LOCKOUT_SECS));
        assert!(t.check("other@x.com", 110).is_ok());
        assert!(t.check("a@x.com", 110 + LOCKOUT_SECS).is_ok());
        // After the lock, counting starts over.
        assert!(!t.record_failure("a@x.com", 110 + LOCKOUT_SECS));
    }

    #[test]
    fn failures_spread_beyond_the_window_do_not_lock() {
        let t = LoginThrottle::default();
        for i in 0..10 {
            assert!(!t.record_failure("a@x.com", i * LOCKOUT_SECS / 3));
        }
    }

    #[test]
    fn a_full_table_keeps_its_locks() {
        let t = LoginThrottle::default();
        for _ in 0..MAX_FAILURES {
            t.record_failure("target@x.com", 0);
        }
        for i in 0..MAX_ENTRIES + 10 {
            t.record_failure(&format!("spray{i}@x.com"), 1);
        }
        assert!(t.entries().len() <= MAX_ENTRIES);
        assert!(t.check("target@x.com", 2).is_err());
    }

    #[test]
    fn success_clears_the_count() {
        let t = LoginThrottle::default();
        for _ in 0..4 {
            t.record_failure("a@x.com", 0);
        }
        t.record_success("a@x.com");
        assert!(!t.record_failure("a@x.com", 1));
    }
}
