//! Connectors: the port to payment processors, the `conn_` object, the simulator behind it,
//! and the route a payment takes.

pub mod connector;
pub mod service;
