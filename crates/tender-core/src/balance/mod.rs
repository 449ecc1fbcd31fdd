//! The merchant's money: the double-entry ledger (CONTRACT §9), pricing and fees, balance
//! transactions and the booking of every movement, payouts, disputes and the bookkeeper's report.
//!
//! - [`ledger`], [`fees`], [`transactions`], [`lifecycle`]: pure values and rules (postings
//!   that can only be built balanced, prices, the booking of each movement, the dispute and
//!   payout state machines).
//! - [`service`]: booking, availability, `GET /balance`, the backfill and the CSV report;
//!   [`payouts`], [`disputes`]: their objects and use cases; [`processor_disputes`],
//!   [`processor_payouts`]: disputes and payouts of a connector's processor, mirrored;
//!   [`destination`]: the account's default payout destination; [`verify`]: `tender ledger
//!   verify`.
//! - [`report`]: the bookkeeper's CSV, pure; [`reconcile`]: Tender's processor-held
//!   transactions beside the processor's own.

pub mod destination;
pub mod disputes;
pub mod fees;
pub mod ledger;
pub mod lifecycle;
pub mod payouts;
pub mod processor_disputes;
pub mod processor_payouts;
pub mod reconcile;
pub mod report;
pub mod service;
pub mod transactions;
pub mod verify;

crate::services::resource_handle!(
    /// The balance, its ledger, payouts and disputes: `Services` seen as this resource.
    BalanceBook,
    balance
);
