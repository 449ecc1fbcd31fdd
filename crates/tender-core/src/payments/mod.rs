//! Payments: the `pay_` object and everything that happens to one.
//!
//! - [`payment`]: the type, its statuses and its state machine ([`payment::authorised`],
//!   [`payment::transition`]); pure.
//! - [`create`]: `POST /payments`, one branch per kind of payment method, each ending in
//!   [`authorise`] (a card: at the processors or the built-in acquirer); [`cards`]: validating,
//!   describing, claiming and saving the card; [`record`]: the batch that records a new
//!   payment, and the bank-transfer start; [`intents`]: payments created first and confirmed
//!   later (Stripe's PaymentIntent flow); [`kept`]: a card a connector's processor keeps.
//! - [`acquirer`]: the built-in simulator's test cards; [`three_d_secure`]: Tender's own
//!   authentication page.
//! - [`upstream`]: the connector path (record, commit, call, finish); [`upstream_lifecycle`]:
//!   the processor's word applied, captures and voids upstream; [`upstream_sync`]: the sync task
//!   and the processor's webhook.
//! - [`lifecycle`]: update, capture, cancel and the tasks that expire or settle a payment;
//!   [`receipt`]: what a receipt page shows.
//!
//! May depend on the values at the crate's top, the storage port, `documents`, `connectors`,
//! `customers`, `payment_methods` and `balance`; those use only the `Payment` type from here.

pub mod acquirer;
pub mod authorise;
pub mod cards;
pub mod create;
pub mod intents;
pub mod kept;
pub mod lifecycle;
pub mod payment;
pub mod receipt;
pub mod record;
pub mod three_d_secure;
pub mod upstream;
pub mod upstream_lifecycle;
pub mod upstream_sync;

crate::services::resource_handle!(
    /// A payment's use cases (create, update, capture, cancel, the connector path, receipts):
    /// `Services` seen as this resource.
    Payments,
    payments
);
