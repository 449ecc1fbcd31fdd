//! Refunds: the `re_` object and its use cases.

pub mod refund;
pub mod service;
pub mod upstream;

crate::services::resource_handle!(
    /// Refund use cases: `Services` seen as this resource.
    Refunds,
    refunds
);
