//! Connectors (`conn_`, CONTRACT §8): Tender's way to payment processors.
//!
//! - [`connector`]: the port every processor implements, the `conn_` object, and how much of
//!   what a processor says is kept ([`connector::bounded`]).
//! - [`processor_books`]: what a processor books of its own (disputes, payouts) as the port
//!   reads it back.
//! - [`word`]: what a processor's answer may do ([`word::disbelieve`]).
//! - [`simulator`]: the connectors of a build without processor clients.
//! - [`service`]: connector use cases and the route a payment takes.

pub mod connector;
pub mod processor_books;
pub mod service;
pub mod simulator;
pub mod word;

crate::services::resource_handle!(
    /// Connector use cases and the route a payment takes: `Services` seen as this resource.
    Connectors,
    connectors
);
