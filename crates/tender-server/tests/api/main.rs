//! Black-box tests: the real application on port 0 over a fresh SQLite data dir, over HTTP.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod abuse;
mod auth;
mod balance;
mod billing;
#[path = "../support/boot.rs"]
mod boot;
mod card_testing;
mod checkout;
mod connectors;
mod cors;
mod customers;
mod disputes;
mod errors;
mod helpers;
mod idempotency;
mod invoice_once;
mod ledger_property;
mod lifecycle;
mod lists;
#[path = "../support/localstripe.rs"]
mod localstripe;
mod messages;
mod payment_links;
mod payments;
mod pg;
mod processor_books;
mod processor_cards;
mod processor_word;
mod receiver;
mod refunds;
mod security;
mod setup_intents;
mod stream;
mod stripe;
mod stripe_catalog;
mod stripe_checkout;
mod stripe_events;
mod stripe_pause;
mod stripe_payouts;
mod stripe_shapes;
mod stripe_subscriptions;
mod tender_js;
mod webhooks;

/// This binary runs the suite on SQLite; `tests/api_pg` runs the same modules on PostgreSQL.
pub const BACKEND: helpers::Backend = helpers::Backend::Sqlite;
