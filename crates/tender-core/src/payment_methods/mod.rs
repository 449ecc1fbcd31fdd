//! Saved payment methods: the `pm_` object and its use cases.

pub mod payment_method;
pub mod service;
