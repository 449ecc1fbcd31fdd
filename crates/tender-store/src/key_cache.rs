//! A short-lived cache of API keys by hash, shared by both backends' `find_api_key`.
//!
//! Every API request authenticates, and without this each one costs a database round trip
//! (on SQLite a hop to the blocking pool as well) for a row that almost never changes. Found
//! keys are kept for [`TTL`]; a miss is never cached (so a key made on another node works at
//! once, and random keys cannot fill the map). This store's own key writes (insert, update:
//! roll, revoke) clear the cache, so on one node a revocation takes effect immediately; another
//! node sharing the database sees it within [`TTL`].

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tender_core::store::ApiKeyRecord;

/// How long a found key is trusted without asking the database again.
pub const TTL: Duration = Duration::from_secs(5);
/// Entries kept at most; the map is emptied when full (keys in use come straight back).
const MAX_ENTRIES: usize = 10_000;

#[derive(Default)]
pub(crate) struct KeyCache {
    entries: Mutex<HashMap<String, (Instant, ApiKeyRecord)>>,
}

impl KeyCache {
    pub(crate) fn get(&self, key_hash: &str) -> Option<ApiKeyRecord> {
        let entries = self.entries.lock().ok()?;
        let (at, record) = entries.get(key_hash)?;
        (at.elapsed() < TTL).then(|| record.clone())
    }

    pub(crate) fn put(&self, record: &ApiKeyRecord) {
        if let Ok(mut entries) = self.entries.lock() {
            if entries.len() >= MAX_ENTRIES {
                entries.clear();
            }
            entries.insert(record.key_hash.clone(), (Instant::now(), record.clone()));
        }
    }

    /// Forgets everything (after any change to a key).
    pub(crate) fn clear(&self) {
        if let Ok(mut entries) = self.entries.lock() {
            entries.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tender_core::auth::{KeyKind, Mode};

    fn record(hash: &str) -> ApiKeyRecord {
        ApiKeyRecord {
            id: "key_1".into(),
            account: "acct_1".into(),
            mode: Mode::Test,
            kind: KeyKind::Secret,
            key_hash: hash.into(),
            public_value: None,
            last4: "abcd".into(),
            created: 0,
            expires_at: None,
            revoked: false,
        }
    }

    #[test]
    fn a_cached_key_is_returned_until_cleared() {
        let cache = KeyCache::default();
        assert!(cache.get("h").is_none());
        cache.put(&record("h"));
        assert_eq!(cache.get("h").map(|r| r.key_hash), Some("h".to_string()));
        cache.clear();
        assert!(cache.get("h").is_none());
    }
}
