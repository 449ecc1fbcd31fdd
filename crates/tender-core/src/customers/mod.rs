//! Customers: the `cus_` object and its use cases.

pub mod customer;
pub mod service;
