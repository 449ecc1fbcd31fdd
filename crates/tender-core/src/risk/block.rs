//! What a `risk.blocked` event tells (CONTRACT §14): which limit a client address, a card or a
//! Checkout Session reached, where, and until when further tries are refused. Kept in the
//! event only (the dashboard lists those events). Pure.

use serde::{Deserialize, Serialize};

/// Where the try was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Surface {
    /// The hosted Checkout page.
    CheckoutPage,
    /// The hosted invoice page's new card.
    InvoicePage,
    /// An intent confirmed by a browser with a publishable key (`tender.js`).
    Api,
}

/// The limit reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockReason {
    DeclinesPerAddress,
    DeclinesPerCard,
    DeclinesPerSession,
}

/// The object of a `risk.blocked` event (`rblk_…`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RiskBlock {
    pub id: String,
    pub object: String,
    pub reason: BlockReason,
    /// The limit that was reached.
    pub limit: u32,
    pub surface: Surface,
    /// The client address the declines came from (`null` when unknown).
    pub client_address: Option<String>,
    /// The card's keyed fingerprint, as its PaymentMethod shows it.
    pub card_fingerprint: String,
    /// What the blocked try was for: a `cs_…`, `in_…`, `pay_…` or `seti_…` id.
    pub reference: Option<String>,
    /// Until when tries from that address or with that card are refused; `null` for a Checkout
    /// Session, which takes no more.
    pub blocked_until: Option<i64>,
    pub livemode: bool,
    pub created: i64,
}
