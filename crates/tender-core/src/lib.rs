//! Tender's domain: everything about payments that is true whatever the transport or database.
//!
//! # Layout
//! Values with no resource and no I/O, at the top:
//! - [`ids`], [`money`], [`card`], [`validate`], [`secret`], [`metadata`], [`vault`]: values
//!   parsed at the boundary (prefixed ids, amounts and currencies, card numbers, e-mails, IBANs)
//!   and the keys that seal them.
//! - [`auth`]: key kinds, modes, the authenticated principal; [`clock`]: time as a dependency;
//!   [`keyed_locks`]: this node's async locks by key;
//!   [`event`]: the `evt_` object; [`error`]: `CoreError` and `StoreError`.
//! - [`collection`]: the collections and indexed fields of the store; [`store`]: the storage
//!   port, implemented by `tender-store`.
//!
//! One folder per resource, each holding its types, its state machine and its use cases:
//! - [`payments`], [`refunds`], [`customers`], [`payment_methods`], [`connectors`],
//!   [`webhooks`], [`balance`] (ledger, fees, balance transactions, payouts, disputes),
//!   [`billing`] (products, prices, subscriptions, invoices, test clocks), [`setup_intents`],
//!   [`checkout`] (Checkout Sessions and their hosted page), [`accounts`].
//! - A resource's use cases are methods of its handle, declared in its `mod.rs`
//!   ([`payments::Payments`], [`billing::Billing`]…) and reached from the services:
//!   `services.payments().capture_payment(..)`.
//!
//! And what every resource goes through:
//! - [`documents`]: how a document is kept and shown (idempotency, render).
//! - [`stripe`]: the Stripe dialect (`/v1`): Tender's objects in Stripe's shapes and ids.
//! - [`risk`]: the card-testing guard of the public card forms (declines per address and card).
//! - [`services`]: [`services::Services`] (what the use cases run on, and the one write
//!   path every handle shares), the request context and the shared read helpers;
//!   [`tasks`]: the runner of scheduled work.
//!
//! No HTTP, no SQL, no network I/O: `tender-server` and `tender-store` depend on this crate,
//! never the reverse.

// Stripe's shapes (`stripe/`) are `json!` literals of 40–50 fields.
#![recursion_limit = "256"]

pub mod accounts;
pub mod auth;
pub mod balance;
pub mod billing;
pub mod card;
pub mod checkout;
pub mod clock;
pub mod collection;
pub mod connectors;
pub mod customers;
pub mod documents;
pub mod error;
pub mod event;
pub mod ids;
pub mod keyed_locks;
pub mod metadata;
pub mod money;
pub mod payment_methods;
pub mod payments;
pub mod refunds;
pub mod risk;
pub mod secret;
pub mod services;
pub mod setup_intents;
pub mod store;
pub mod stripe;
pub mod task;
pub mod tasks;
pub mod validate;
pub mod vault;
pub mod webhooks;
