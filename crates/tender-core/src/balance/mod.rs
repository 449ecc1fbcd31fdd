//! The merchant's money: the double-entry ledger (CONTRACT §9), pricing and fees, balance
//! transactions and the booking of every movement, payouts, disputes and the bookkeeper's report.
//!
//! - [`ledger`], [`fees`], [`transactions`]: pure values and rules (postings that can only be
//!   built balanced, prices, the booking of each movement).
//! - [`service`]: booking, availability, `GET /balance`, the backfill and the CSV report;
//!   [`payouts`], [`disputes`]: their objects and use cases; [`destination`]: the account's
//!   default payout destination; [`verify`]: `tender ledger verify`.
//! - [`report`]: the bookkeeper's CSV, pure; [`reconcile`]: Tender's processor-held
//!   transactions beside the processor's own.

pub mod destination;
pub mod disputes;
pub mod fees;
pub mod ledger;
pub mod payouts;
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
