//! Connectors (`conn_`, CONTRACT §8): Tender's way to payment processors.
//!
//! - [`connector`]: the port every processor implements, the `conn_` object, and the rules
//!   that bound what a processor says ([`connector::disbelieve`], [`connector::bounded`]).
//! - [`simulator`]: the connectors of a build without processor clients.
//! - [`service`]: connector use cases and the route a payment takes.

pub mod connector;
pub mod service;
pub mod simulator;

crate::services::resource_handle!(
    /// Connector use cases and the route a payment takes: `Services` seen as this resource.
    Connectors,
    connectors
);
