//! Slots for the responses that never end on their own (`GET /v2/events/stream`, CONTRACT
//! §17): at most [`PER_SCOPE`] open per account and mode, and at most a quarter of the
//! listener's connection cap in all, so no tenant (nor all of them together) can hold every
//! connection slot and ordinary requests always have three quarters of them. A slot is given
//! back when its stream ends, however it ends ([`StreamSlot`]'s `Drop`).
//!
//! Depends on the core's `Scope` only.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tender_core::auth::Scope;

/// Open streams per account and mode at most.
pub const PER_SCOPE: usize = 5;

/// The open streams, per scope and in all.
pub struct StreamSlots {
    open: Mutex<HashMap<Scope, usize>>,
    total_cap: usize,
}

impl StreamSlots {
    /// Slots for a listener admitting `max_connections` connections.
    pub fn new(max_connections: usize) -> Self {
        Self {
            open: Mutex::new(HashMap::new()),
            total_cap: (max_connections / 4).max(1),
        }
    }

    /// A slot for a stream of `scope`, or `None` when the scope (or the listener) has no free
    /// one.
    pub fn open(self: &Arc<Self>, scope: &Scope) -> Option<StreamSlot> {
        let mut open = self.open.lock().ok()?;
        let total: usize = open.values().sum();
        let mine = open.get(scope).copied().unwrap_or(0);
        if mine >= PER_SCOPE || total >= self.total_cap {
            return None;
        }
        open.insert(scope.clone(), mine + 1);
        Some(StreamSlot {
            slots: Arc::clone(self),
            scope: scope.clone(),
        })
    }

    /// Streams open now, in all (for `/metrics`).
    pub fn count(&self) -> usize {
        self.open.lock().map(|o| o.values().sum()).unwrap_or(0)
    }
}

/// One open stream's slot, given back when dropped.
pub struct StreamSlot {
    slots: Arc<StreamSlots>,
    scope: Scope,
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        if let Ok(mut open) = self.slots.open.lock() {
            if let Some(n) = open.get_mut(&self.scope) {
                *n -= 1;
                if *n == 0 {
                    open.remove(&self.scope);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tender_core::auth::Mode;

    fn scope(account: &str) -> Scope {
        Scope {
            account: account.into(),
            mode: Mode::Test,
        }
    }

    #[test]
    fn five_per_scope_a_quarter_of_the_cap_in_all_and_given_back_on_drop() {
        let slots = Arc::new(StreamSlots::new(40));
        let a: Vec<_> = (0..PER_SCOPE)
            .map(|_| slots.open(&scope("a")).unwrap())
            .collect();
        assert!(slots.open(&scope("a")).is_none());
        let b: Vec<_> = (0..PER_SCOPE)
            .map(|_| slots.open(&scope("b")).unwrap())
            .collect();
        // 10 of 40 / 4: full for everyone.
        assert!(slots.open(&scope("c")).is_none());
        drop(a);
        assert_eq!(slots.count(), PER_SCOPE);
        assert!(slots.open(&scope("a")).is_some());
        drop(b);
        assert_eq!(slots.count(), 0);
    }
}
