//! Refunds: the `re_` object and its use cases.

pub mod refund;
pub mod service;
pub mod upstream;
