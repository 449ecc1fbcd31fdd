//! Payments: the `pay_` object and its state machine, how one is created (card, saved method,
//! processor token, bank transfer), the built-in acquirer, the connector path and 3-D Secure.
//!
//! May depend on the values at the crate's top, the storage port, `documents`, `connectors`,
//! `customers`, `payment_methods` and `balance`; nothing here is imported by those, except the
//! `Payment` type itself.

pub mod acquirer;
pub mod create;
pub mod lifecycle;
pub mod payment;
pub mod receipt;
pub mod three_d_secure;
pub mod upstream;
pub mod upstream_sync;
