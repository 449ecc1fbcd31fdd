//! Webhook endpoints (`we_`) and the delivery of events to them.
//!
//! - [`webhook`]: the endpoint type, signing, retry schedule, the fair claim; pure.
//! - [`address`]: where Tender may send a webhook (or a connector call); pure.
//! - [`service`]: endpoint use cases; [`deliveries`]: the delivery log, resend, and what the
//!   server's worker claims and records.

pub mod address;
pub mod deliveries;
pub mod service;
pub mod webhook;

crate::services::resource_handle!(
    /// Webhook endpoints, events and their deliveries: `Services` seen as this resource.
    Webhooks,
    webhooks
);
