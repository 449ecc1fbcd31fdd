//! The black-box suite of `tests/api` run against PostgreSQL: the same test modules, with
//! every test's application on a fresh schema (see `tests/api/pg.rs` for when it skips).

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../api/abuse.rs"]
mod abuse;
#[path = "../api/auth.rs"]
mod auth;
#[path = "../api/balance.rs"]
mod balance;
#[path = "../api/billing.rs"]
mod billing;
#[path = "../support/boot.rs"]
mod boot;
#[path = "../api/card_testing.rs"]
mod card_testing;
#[path = "../api/checkout.rs"]
mod checkout;
#[path = "../api/connectors.rs"]
mod connectors;
#[path = "../api/cors.rs"]
mod cors;
#[path = "../api/customers.rs"]
mod customers;
#[path = "../api/disputes.rs"]
mod disputes;
#[path = "../api/errors.rs"]
mod errors;
#[path = "../api/helpers.rs"]
mod helpers;
#[path = "../api/idempotency.rs"]
mod idempotency;
#[path = "../api/invoice_once.rs"]
mod invoice_once;
#[path = "../api/ledger_property.rs"]
mod ledger_property;
#[path = "../api/lifecycle.rs"]
mod lifecycle;
#[path = "../api/lists.rs"]
mod lists;
#[path = "../support/localstripe.rs"]
mod localstripe;
#[path = "../api/messages.rs"]
mod messages;
#[path = "../api/outage.rs"]
mod outage;
#[path = "../api/payment_links.rs"]
mod payment_links;
#[path = "../api/payments.rs"]
mod payments;
#[path = "../api/pg.rs"]
mod pg;
#[path = "../api/processor_books.rs"]
mod processor_books;
#[path = "../api/processor_cards.rs"]
mod processor_cards;
#[path = "../api/processor_word.rs"]
mod processor_word;
#[path = "../api/receiver.rs"]
mod receiver;
#[path = "../api/refunds.rs"]
mod refunds;
#[path = "../api/security.rs"]
mod security;
#[path = "../api/setup_intents.rs"]
mod setup_intents;
#[path = "../api/stream.rs"]
mod stream;
#[path = "../api/stripe.rs"]
mod stripe;
#[path = "../api/stripe_catalog.rs"]
mod stripe_catalog;
#[path = "../api/stripe_checkout.rs"]
mod stripe_checkout;
#[path = "../api/stripe_events.rs"]
mod stripe_events;
#[path = "../api/stripe_pause.rs"]
mod stripe_pause;
#[path = "../api/stripe_payouts.rs"]
mod stripe_payouts;
#[path = "../api/stripe_shapes.rs"]
mod stripe_shapes;
#[path = "../api/stripe_subscriptions.rs"]
mod stripe_subscriptions;
#[path = "../api/tender_js.rs"]
mod tender_js;
#[path = "../api/webhooks.rs"]
mod webhooks;

pub const BACKEND: helpers::Backend = helpers::Backend::Postgres;
