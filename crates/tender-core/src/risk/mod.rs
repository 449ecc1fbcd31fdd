//! The card-testing guard of the public card surfaces (CONTRACT §14): the hosted Checkout
//! page, the hosted invoice page's new card and the intents a browser confirms with a
//! publishable key — where stolen cards are tried one after another. Declines are counted per
//! account and mode, per client address and per card (its keyed fingerprint, never the number),
//! over the last hour; at the account's limits, further tries from that address or with that
//! card are refused before any card is sent to the bank.
//!
//! | count | limit (account setting, default) | refusal |
//! |---|---|---|
//! | declines from one client address | `declines_per_address`, 10 an hour | 429 `card_testing_blocked` (the page's 429), until the oldest decline is an hour old |
//! | declines of one card | `declines_per_card`, 10 an hour | the same |
//! | declines in one Checkout Session | `declines_per_session`, 3 | 429 `checkout_attempts_exhausted`: the session takes no more |
//!
//! The decline that reaches a limit is told once, as a `risk.blocked` event carrying a
//! [`block::RiskBlock`] (`radar.early_fraud_warning.created` in `/v1`); the dashboard lists
//! them. Counts are kept in this process, in wall-clock time: a node that restarts forgets
//! them, and each node of a cluster counts its own (as the hosted pages' rate limits do).
//! Depends on the card's fingerprint, the account's settings and the services' clocks.
//!
//! - [`velocity`]: the counts (pure); [`block`]: the event's object (pure); [`guard`]: the
//!   checks a try makes.

pub mod block;
pub mod guard;
pub mod velocity;

use crate::auth::Scope;
pub use block::{BlockReason, Surface};

/// The window the declines are counted over.
pub const WINDOW_SECS: i64 = 3600;
/// The largest limit an account may set.
pub const MAX_LIMIT: u32 = 1000;

/// One try at a public card surface: the keys its declines are counted under, their limits,
/// and what a block would say of it.
#[derive(Debug, Clone)]
pub struct Attempt {
    scope: Scope,
    surface: Surface,
    /// The client's address, as the block tells it.
    client: Option<String>,
    fingerprint: String,
    /// What the try was for (a session, an invoice, a payment or setup intent).
    reference: Option<String>,
    address_key: Option<String>,
    card_key: String,
    per_address: u32,
    per_card: u32,
}
