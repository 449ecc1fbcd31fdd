//! Customers: the `cus_` object and its use cases.

pub mod customer;
pub mod service;

crate::services::resource_handle!(
    /// Customer use cases: `Services` seen as this resource.
    Customers,
    customers
);
