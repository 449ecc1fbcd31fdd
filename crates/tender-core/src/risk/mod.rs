//! The card-testing guard of the public card forms (CONTRACT §14): the hosted Checkout page
//! and the hosted invoice page's new card, where stolen cards are tried one after another.
//! Declines are counted per account and mode, per client address and per card (its keyed
//! fingerprint, never the number), over the last hour; at the limit, further tries from that
//! address or with that card are refused before any card is sent to the bank.
//!
//! | count | limit | refusal |
//! |---|---|---|
//! | declines from one client address | [`DECLINES_PER_ADDRESS`] an hour | the page's 429, until the oldest decline is an hour old |
//! | declines of one card | [`DECLINES_PER_CARD`] an hour | the same |
//! | declines in one Checkout Session | 3 (`checkout::session::DECLINES_PER_SESSION`) | the session takes no more |
//!
//! Counts are kept in this process, in wall-clock time: a node that restarts forgets them, and
//! each node of a cluster counts its own (as the hosted pages' rate limits do). Depends on
//! the card's fingerprint and the services' clocks.
//!
//! - [`velocity`]: the counts (pure); [`guard`]: the checks the hosted pages' tries make.

pub mod guard;
pub mod velocity;

/// Declines from one client address an hour, at most.
pub const DECLINES_PER_ADDRESS: u32 = 10;
/// Declines of one card an hour, at most.
pub const DECLINES_PER_CARD: u32 = 10;
/// The window the declines are counted over.
pub const WINDOW_SECS: i64 = 3600;

/// One try at a public card form: the keys its declines are counted under.
#[derive(Debug, Clone)]
pub struct Attempt {
    address: Option<String>,
    card: String,
}
