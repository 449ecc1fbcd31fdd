//! Saved payment methods: the `pm_` object and its use cases ([`service`]), and cards a
//! connector's processor keeps ([`processor`]).

pub mod payment_method;
pub mod processor;
pub mod service;

crate::services::resource_handle!(
    /// Saved payment method use cases: `Services` seen as this resource.
    PaymentMethods,
    payment_methods
);
