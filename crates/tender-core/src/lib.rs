//! Tender's domain: everything about payments that is true whatever the transport or database.
//!
//! # Layout
//! - [`ids`], [`money`], [`card`], [`validate`], [`secret`], [`metadata`]: values parsed at the
//!   boundary (prefixed ids, amounts and currencies, card numbers, e-mails, IBANs).
//! - [`payment`] (with the state machine), [`customer`], [`refund`], [`event`]: the resources,
//!   in their stored form; [`render`]: what the API shows of them.
//! - [`auth`]: key kinds, modes, the authenticated principal.
//! - [`idempotency`]: every rule about idempotency keys: claims, replays, keyed fingerprints.
//! - [`acquirer`]: the built-in simulator's test-card table (CONTRACT §4.2).
//! - [`connector`]: the port to payment processors, the `conn_` object, the simulator behind it.
//! - [`clock`]: time as a dependency.
//! - [`ledger`]: the double-entry ledger's accounts and balanced postings (CONTRACT §9);
//!   [`fees`]: an account's pricing and the fee of each movement; [`balance`]: what the
//!   merchant sees of it (balance transactions, payouts, disputes) and the booking of each
//!   movement; [`report`]: the balance transactions of a period as a bookkeeper's CSV.
//! - [`store`]: the storage port, implemented by `tender-store`.
//! - [`service`]: the use cases, one transaction each.
//! - [`error`]: `CoreError` and `StoreError`.
//!
//! No HTTP, no SQL, no network I/O: `tender-server` and `tender-store` depend on this crate,
//! never the reverse.

pub mod acquirer;
pub mod auth;
pub mod balance;
pub mod billing;
pub mod card;
pub mod clock;
pub mod connector;
pub mod customer;
pub mod error;
pub mod event;
pub mod fees;
pub mod idempotency;
pub mod ids;
pub mod ledger;
pub mod metadata;
pub mod money;
pub mod payment;
pub mod payment_method;
pub mod refund;
pub mod render;
pub mod report;
pub mod secret;
pub mod service;
pub mod store;
pub mod validate;
pub mod vault;
pub mod webhook;
