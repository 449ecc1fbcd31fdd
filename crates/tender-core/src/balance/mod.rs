//! The merchant's money: the double-entry ledger (CONTRACT §9), pricing and fees, balance
//! transactions and the booking of every movement, payouts, disputes and the bookkeeper's report.

pub mod disputes;
pub mod fees;
pub mod ledger;
pub mod payouts;
pub mod report;
pub mod service;
pub mod transactions;
