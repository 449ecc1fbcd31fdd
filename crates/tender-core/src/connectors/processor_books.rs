//! What a processor keeps of its own, read back through the port (CONTRACT §15): the disputes
//! a cardholder's bank opened there and the payouts it sent to the merchant's bank, each with
//! the processor's balance transactions, the bookings reconciliation reads back ([`Booked`]),
//! and the cards it keeps for a customer ([`SavedCard`]). Tender mirrors the books; it never
//! acts on them itself.
//!
//! Pure data; depends on the payment's [`ProcessorSettlement`] and the dispute and payout
//! statuses.

use crate::balance::lifecycle::{DisputeStatus, PayoutStatus};
use crate::payments::payment::ProcessorSettlement;

/// A booking to read back from a processor, for reconciliation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Booked<'a> {
    /// The balance transaction of that id (a capture's, as [`ProcessorSettlement::reference`]).
    Transaction(&'a str),
    /// The balance transaction of the refund of that id (a Stripe `re_…`).
    Refund(&'a str),
    /// The balance transaction number `index` (oldest first) of the dispute `reference`.
    Dispute { reference: &'a str, index: usize },
    /// The balance transaction of the payout `reference` (`failure`: of its return).
    Payout { reference: &'a str, failure: bool },
}

/// A dispute the processor holds of one of its payments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpstreamDispute {
    /// The processor's id of it (a Stripe `dp_…`).
    pub reference: String,
    pub amount: i64,
    /// Lower-case ISO 4217, as the processor wrote it.
    pub currency: String,
    /// The processor's reason (`fraudulent`…), bounded.
    pub reason: String,
    pub status: DisputeStatus,
    /// The evidence deadline (Unix seconds), when there is one.
    pub due_by: Option<i64>,
    /// Its balance transactions, oldest first: the withdrawal and its fee, then any
    /// reinstatement.
    pub transactions: Vec<ProcessorSettlement>,
}

/// A payout the processor sent (or is sending) from the merchant's balance there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpstreamPayout {
    /// The processor's id of it (a Stripe `po_…`).
    pub reference: String,
    pub amount: i64,
    /// Lower-case ISO 4217, as the processor wrote it.
    pub currency: String,
    pub status: PayoutStatus,
    pub arrival_date: i64,
    pub created: i64,
    /// The processor's failure code and message, bounded.
    pub failure_code: Option<String>,
    pub failure_message: Option<String>,
}

/// A card the processor now keeps for later payments, attached to its customer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SavedCard {
    /// The processor's customer (a Stripe `cus_…`).
    pub customer: String,
    /// The processor's reusable payment method (a Stripe `pm_…`).
    pub payment_method: String,
    /// What the processor says of the card, bounded: brand, last four, expiry, country and
    /// funding (`None` when it does not say).
    pub brand: String,
    pub last4: String,
    pub exp_month: u8,
    pub exp_year: u16,
    pub country: Option<String>,
    pub funding: Option<String>,
    /// The processor's fingerprint of the card number, when it gives one.
    pub fingerprint: Option<String>,
}
