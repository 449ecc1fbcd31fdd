//! Webhook endpoints: the `we_` object, signing, the outbox's delivery rules, and their use cases.

pub mod service;
pub mod webhook;
