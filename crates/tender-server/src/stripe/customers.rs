//! `/v1/customers`: Stripe's parameters read into `/v2`'s commands; `/v2`'s handlers run them.

use tender_core::customers::service::{email_filter, CustomerFields};
use tender_core::error::CoreError;
use tender_core::ids::CustomerId;

use super::params::{form, list_form, list_request, path_id};
use crate::http::customers::fields_from;
use crate::http::operation::{Input, ListRequest};

/// `POST /v1/customers`.
pub const CREATE: &[&str] = &[
    "email",
    "name",
    "phone",
    "address",
    "description",
    "metadata",
    "test_clock",
];
/// `POST /v1/customers/{id}`.
pub const UPDATE: &[&str] = &[
    "email",
    "name",
    "phone",
    "address",
    "description",
    "metadata",
    "invoice_settings",
];
/// `GET /v1/customers`.
pub const LIST: &[&str] = &["email"];

pub fn parse_create(mut i: Input) -> Result<CustomerFields, CoreError> {
    let mut p = form(&mut i, CREATE)?;
    let test_clock = p.string("test_clock")?;
    Ok(CustomerFields {
        test_clock,
        ..fields_from(&mut p)?
    })
}

pub fn parse_update(mut i: Input) -> Result<(CustomerId, CustomerFields), CoreError> {
    let id = path_id(&i)?;
    let mut p = form(&mut i, UPDATE)?;
    Ok((id, fields_from(&mut p)?))
}

/// A retrieve or a delete: the id, and no parameters.
pub fn parse_id(mut i: Input) -> Result<CustomerId, CoreError> {
    let id = path_id(&i)?;
    form(&mut i, &[])?;
    Ok(id)
}

pub fn parse_list(mut i: Input) -> Result<ListRequest, CoreError> {
    let mut p = list_form(&mut i, LIST)?;
    let filters = p
        .string("email")?
        .map(|e| email_filter(&e))
        .into_iter()
        .collect();
    list_request(&i, &mut p, filters)
}
