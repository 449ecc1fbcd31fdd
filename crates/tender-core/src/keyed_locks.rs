//! [`KeyedLocks`]: async locks of this node, one per key, made on first use. For work that must
//! take turns on one node (invoice numbers of one account, [`crate::billing::numbering`]);
//! between nodes the store's versions still decide.
//!
//! Depends on nothing of the crate.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// One async lock per key.
#[derive(Debug, Default)]
pub struct KeyedLocks {
    locks: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

impl KeyedLocks {
    /// Waits for `key`'s lock; it is held until the guard is dropped.
    pub async fn lock(&self, key: &str) -> tokio::sync::OwnedMutexGuard<()> {
        let lock = {
            let mut all = self.locks.lock().unwrap_or_else(|e| e.into_inner());
            all.entry(key.to_string()).or_default().clone()
        };
        lock.lock_owned().await
    }
}
