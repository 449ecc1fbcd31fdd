//! Login throttling, in this process's memory (a restart forgets; each node counts for itself).
//!
//! Failed password checks (logins, and the current password when changing it) are counted
//! per 15-minute window under three keys, each with its own limit:
//! - the e-mail from one client address ([`PER_EMAIL_AND_CLIENT`], 5): what a person who
//!   mistypes meets; the lock lasts [`LOCKOUT_SECS`];
//! - the e-mail from all addresses together ([`PER_EMAIL`], 50): a guesser spread over many
//!   addresses. Someone who knows an e-mail can no longer lock its owner out from their own
//!   address with five wrong guesses; they need fifty, from anywhere;
//! - the client address across e-mails ([`PER_CLIENT`], 30): a sprayer trying many e-mails (each
//!   guess costs an Argon2 run), who is then refused before any hashing.
//!
//! An attempt is reserved before the password is checked ([`LoginThrottle::begin`]) and counts
//! as pending until it is settled, so concurrent attempts cannot all pass the check before any
//! failure is recorded: at most the limit's worth of guesses are ever evaluated.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;

/// Failed logins for one e-mail from one client that lock that pair.
pub const PER_EMAIL_AND_CLIENT: u32 = 5;
/// Failed logins for one e-mail from anywhere that lock the e-mail.
pub const PER_EMAIL: u32 = 50;
/// Failed logins from one client address, whatever the e-mail, that lock the address.
pub const PER_CLIENT: u32 = 30;
/// How long failures are counted, and how long a lock lasts.
pub const LOCKOUT_SECS: i64 = 15 * 60;
/// Entries kept before stale ones are dropped.
const MAX_ENTRIES: usize = 10_000;

#[derive(Debug, Clone, Copy)]
struct Entry {
    failures: u32,
    /// Attempts reserved and not yet settled.
    pending: u32,
    first_failure: i64,
    locked_until: Option<i64>,
}

impl Entry {
    fn fresh(now: i64) -> Self {
        Self {
            failures: 0,
            pending: 0,
            first_failure: now,
            locked_until: None,
        }
    }
}

/// Failed login counts.
#[derive(Debug, Default)]
pub struct LoginThrottle {
    entries: Mutex<HashMap<String, Entry>>,
}

/// One reserved attempt; settle it with [`Attempt::failed`] or [`Attempt::succeeded`]. Dropped
/// unsettled (the request went away), it just frees its reservation.
pub struct Attempt<'a> {
    throttle: &'a LoginThrottle,
    keys: Vec<(String, u32)>,
    settled: bool,
}

fn keys(email: &str, client: Option<IpAddr>) -> Vec<(String, u32)> {
    let email = email.trim().to_lowercase();
    let mut keys = vec![(format!("e:{email}"), PER_EMAIL)];
    if let Some(ip) = client {
        keys.push((format!("e:{email}\n{ip}"), PER_EMAIL_AND_CLIENT));
        keys.push((format!("c:{ip}"), PER_CLIENT));
    } else {
        // No client address known (a test driving the router directly): the e-mail's own
        // small limit applies to everyone.
        keys.push((format!("e:{email}\n-"), PER_EMAIL_AND_CLIENT));
    }
    keys
}

impl LoginThrottle {
    fn entries(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        // A panic while holding the lock leaves plain counters behind: still usable.
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Reserves an attempt for `email` from `client`, or `Err(seconds)` to wait: a lock, or
    /// (1 s) so many attempts in flight that one more could pass the limit.
    pub fn begin(&self, email: &str, client: Option<IpAddr>, now: i64) -> Result<Attempt<'_>, i64> {
        let keys = keys(email, client);
        let mut entries = self.entries();
        if entries.len() + keys.len() > MAX_ENTRIES {
            prune(&mut entries, now, keys.len());
        }
        for (key, limit) in &keys {
            let entry = entries.entry(key.clone()).or_insert(Entry::fresh(now));
            let lock_over = entry.locked_until.is_some_and(|u| u <= now);
            if entry.pending == 0 && (lock_over || entry.first_failure + LOCKOUT_SECS <= now) {
                *entry = Entry::fresh(now);
            }
            if let Some(until) = entry.locked_until.filter(|u| *u > now) {
                return Err(until - now);
            }
            if entry.failures + entry.pending >= *limit {
                return Err(1);
            }
        }
        for (key, _) in &keys {
            if let Some(entry) = entries.get_mut(key) {
                entry.pending += 1;
            }
        }
        Ok(Attempt {
            throttle: self,
            keys,
            settled: false,
        })
    }
}

/// Drops entries that neither count nor lock anything any more; while there is still no `room`
/// (someone is spraying), the least telling ones: unlocked, with the oldest first failure.
fn prune(entries: &mut HashMap<String, Entry>, now: i64, room: usize) {
    entries.retain(|_, e| {
        e.pending > 0
            || e.first_failure + LOCKOUT_SECS > now
            || e.locked_until.is_some_and(|u| u > now)
    });
    while entries.len() + room > MAX_ENTRIES {
        let victim = entries
            .iter()
            .filter(|(_, e)| e.pending == 0)
            .min_by_key(|(_, e)| (e.locked_until.is_some(), e.first_failure))
            .map(|(k, _)| k.clone());
        match victim {
            Some(victim) => entries.remove(&victim),
            None => break,
        };
    }
}

impl Attempt<'_> {
    /// The password was wrong; returns whether this locked the e-mail (or the client).
    pub fn failed(mut self, now: i64) -> bool {
        self.settled = true;
        let mut entries = self.throttle.entries();
        let mut locked = false;
        for (key, limit) in &self.keys {
            let entry = entries.entry(key.clone()).or_insert(Entry::fresh(now));
            entry.pending = entry.pending.saturating_sub(1);
            entry.failures += 1;
            if entry.failures >= *limit {
                entry.locked_until = Some(now + LOCKOUT_SECS);
                locked = true;
            }
        }
        locked
    }

    /// The password was right: the e-mail's failures are forgotten (not the client's).
    pub fn succeeded(mut self) {
        self.settled = true;
        let mut entries = self.throttle.entries();
        for (key, _) in &self.keys {
            if key.starts_with("e:") {
                entries.remove(key);
            } else if let Some(entry) = entries.get_mut(key) {
                entry.pending = entry.pending.saturating_sub(1);
            }
        }
    }
}

impl Drop for Attempt<'_> {
    fn drop(&mut self) {
        if self.settled {
            return;
        }
        let mut entries = self.throttle.entries();
        for (key, _) in &self.keys {
            if let Some(entry) = entries.get_mut(key) {
                entry.pending = entry.pending.saturating_sub(1);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(last: u8) -> Option<IpAddr> {
        Some(IpAddr::from([10, 0, 0, last]))
    }

    fn fail(t: &LoginThrottle, email: &str, client: Option<IpAddr>, now: i64) -> bool {
        t.begin(email, client, now).expect("not locked").failed(now)
    }

    #[test]
    fn five_failures_lock_the_email_from_that_client_for_fifteen_minutes() {
        let t = LoginThrottle::default();
        for i in 0..4 {
            assert!(!fail(&t, "A@x.com", ip(1), 100 + i));
        }
        assert!(fail(&t, "a@x.com", ip(1), 110));
        assert_eq!(t.begin("a@x.com", ip(1), 110).err(), Some(LOCKOUT_SECS));
        // The owner, elsewhere, is not locked out; another e-mail from the client neither.
        assert!(t.begin("a@x.com", ip(2), 110).is_ok());
        assert!(t.begin("other@x.com", ip(1), 110).is_ok());
        assert!(t.begin("a@x.com", ip(1), 110 + LOCKOUT_SECS).is_ok());
    }

    #[test]
    fn concurrent_attempts_never_evaluate_more_guesses_than_the_limit() {
        let t = LoginThrottle::default();
        let reserved: Vec<_> = (0..40)
            .filter_map(|_| t.begin("a@x.com", ip(1), 0).ok())
            .collect();
        assert_eq!(reserved.len(), PER_EMAIL_AND_CLIENT as usize);
        let locked: Vec<bool> = reserved.into_iter().map(|a| a.failed(0)).collect();
        assert_eq!(locked.last(), Some(&true));
        assert!(t.begin("a@x.com", ip(1), 1).is_err());
    }

    #[test]
    fn an_abandoned_attempt_frees_its_reservation() {
        let t = LoginThrottle::default();
        for _ in 0..10 {
            drop(t.begin("a@x.com", ip(1), 0).unwrap());
        }
        assert!(t.begin("a@x.com", ip(1), 0).is_ok());
    }

    #[test]
    fn a_distributed_guesser_locks_the_email_and_a_sprayer_its_address() {
        let t = LoginThrottle::default();
        for i in 0..PER_EMAIL {
            let _ = t
                .begin("a@x.com", ip((i / 4) as u8), 0)
                .map(|a| a.failed(0));
        }
        assert!(t.begin("a@x.com", ip(200), 0).is_err());
        let t = LoginThrottle::default();
        for i in 0..PER_CLIENT {
            assert!(t.begin(&format!("u{i}@x.com"), ip(1), 0).is_ok_and(|a| {
                a.failed(0);
                true
            }));
        }
        assert!(t.begin("fresh@x.com", ip(1), 0).is_err());
        assert!(t.begin("fresh@x.com", ip(2), 0).is_ok());
    }

    #[test]
    fn failures_spread_beyond_the_window_do_not_lock() {
        let t = LoginThrottle::default();
        for i in 0..10 {
            assert!(!fail(&t, "a@x.com", ip(1), i * LOCKOUT_SECS / 3));
        }
    }

    #[test]
    fn a_full_table_keeps_its_locks() {
        let t = LoginThrottle::default();
        for _ in 0..PER_EMAIL_AND_CLIENT {
            fail(&t, "target@x.com", ip(1), 0);
        }
        for i in 0..MAX_ENTRIES + 10 {
            let _ = t
                .begin(&format!("spray{i}@x.com"), None, 1)
                .map(|a| a.failed(1));
        }
        assert!(t.entries().len() <= MAX_ENTRIES);
        assert!(t.begin("target@x.com", ip(1), 2).is_err());
    }

    #[test]
    fn success_clears_the_emails_count() {
        let t = LoginThrottle::default();
        for _ in 0..4 {
            fail(&t, "a@x.com", ip(1), 0);
        }
        t.begin("a@x.com", ip(1), 1).unwrap().succeeded();
        assert!(!fail(&t, "a@x.com", ip(1), 1));
    }
}
