//! Refunds: the `re_` object and its use cases.
//!
//! - [`refund`]: the object and its states; [`service`]: refunds asked of Tender;
//!   [`upstream`]: sending them to a connector's processor; [`processor`]: refunds made at the
//!   processor itself, found by watching the payments it holds.

pub mod processor;
pub mod refund;
pub mod service;
pub mod upstream;

crate::services::resource_handle!(
    /// Refund use cases: `Services` seen as this resource.
    Refunds,
    refunds
);
