//! Black-box tests: the real application on port 0 over a fresh SQLite data dir, over HTTP.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod auth;
mod customers;
mod errors;
mod helpers;
mod idempotency;
mod lifecycle;
mod lists;
mod payments;
mod receiver;
mod refunds;
mod webhooks;
