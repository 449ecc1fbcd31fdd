//! [`IdempotencyHold`]: the idempotency key one request runs under and how far its record has
//! got, carried in the request's context from the HTTP layer to the batch that completes it.
//! The rules about keys are [`super::idempotency`]'s; this value depends on nothing.

use std::sync::atomic::{AtomicBool, Ordering};

/// The idempotency key of one request and how far its record has got.
#[derive(Debug)]
pub struct IdempotencyHold {
    /// The key as the client sent it (shown in events' `request.idempotency_key`).
    pub key: String,
    /// The key the record is stored under (`idempotency::stored_key`).
    pub stored: String,
    pub(crate) fingerprint: String,
    /// Unix seconds when the request began (the record's `created`).
    pub(crate) began: i64,
    /// The key was claimed before the work (`Services::claim_key`).
    pub(crate) claimed: AtomicBool,
    /// A committed batch holds the answer.
    pub(crate) completed: AtomicBool,
    /// Another request wrote the key first; this one's batch applied nothing.
    pub(crate) lost: AtomicBool,
}

impl IdempotencyHold {
    /// The hold of `key`, whose record is stored under `stored`.
    pub(crate) fn new(key: String, stored: String, fingerprint: String, began: i64) -> Self {
        Self {
            stored,
            key,
            fingerprint,
            began,
            claimed: AtomicBool::new(false),
            completed: AtomicBool::new(false),
            lost: AtomicBool::new(false),
        }
    }

    /// Whether a committed batch already stored the response under the key.
    pub fn is_completed(&self) -> bool {
        self.completed.load(Ordering::SeqCst)
    }

    /// Its batch committed: the request's answer is what it kept.
    pub(crate) fn complete(&self) {
        self.completed.store(true, Ordering::SeqCst);
    }

    /// Another request wrote the key first: this one answers what that one did.
    pub(crate) fn mark_lost(&self) {
        self.lost.store(true, Ordering::SeqCst);
    }

    pub(crate) fn is_claimed(&self) -> bool {
        self.claimed.load(Ordering::SeqCst)
    }
}
