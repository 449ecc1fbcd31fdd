//! Tender's edge: everything that does I/O with the outside world.
//!
//! # Layout
//! - [`startup`]: `Application::build` (bind listeners, port 0 allowed, open the store,
//!   bootstrap the first account) and `run_until` (serve, background jobs, graceful stop).
//! - [`config`]: the settings the binary fills from flags and `TENDER_*` variables.
//! - [`http`]: the JSON API under `/v2`.
//! - [`stripe`]: the Stripe-compatible API under `/v1`, over `http`'s operations.
//! - [`dashboard`]: the account holders' HTML pages under `/dashboard` (session cookie, CSRF).
//! - [`receipts`]: the receipt host.
//! - [`elements`]: `tender.js` and its card field, beside `/v1`.
//! - [`worker`]: webhook delivery (lease, sign, POST, record, reschedule).
//! - [`rate_limit`], [`vault`], [`state`]: per-scope token buckets, the vault key, shared state.
//!
//! Depends on `tender-core` (domain and use cases) and `tender-store` (backends).

pub mod config;
pub mod connection;
pub mod connectors;
pub mod dashboard;
pub mod elements;
pub mod health;
pub mod http;
pub mod metrics;
pub mod rate_limit;
pub mod receipts;
pub mod startup;
pub mod state;
pub mod streams;
pub mod stripe;
pub mod tls;
pub mod vault;
pub mod worker;

pub use config::ServerConfig;
pub use startup::Application;
