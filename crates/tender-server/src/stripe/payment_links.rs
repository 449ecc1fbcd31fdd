//! `/v1/payment_links`: Stripe's parameters read into `/v2`'s Payment Link commands
//! ([`crate::http::payment_links`]); answered as `payment_link` and `item` objects by the gate.

use tender_core::checkout::links::{CreatePaymentLink, UpdatePaymentLink};
use tender_core::error::CoreError;
use tender_core::ids::PaymentLinkId;
use tender_core::store::Field;

use super::checkout::LINE_ITEMS;
use super::params::{form, list_form, list_request, path_id};
use super::payment_intents::parse_method_types;
use crate::http::operation::{Input, ListRequest};
use crate::http::payment_links as v2;

/// `POST /v1/payment_links`.
pub const CREATE: &[&str] = &[
    "line_items",
    "after_completion",
    "allow_promotion_codes",
    "metadata",
    "payment_method_types",
];
/// `POST /v1/payment_links/{id}`.
pub const UPDATE: &[&str] = &["active", "after_completion", "metadata"];
/// `GET /v1/payment_links`.
pub const LIST: &[&str] = &["active"];

pub fn parse_create(mut i: Input) -> Result<CreatePaymentLink, CoreError> {
    let mut p = form(&mut i, CREATE)?;
    parse_method_types(&mut p)?;
    v2::parse_create_from(p)
}

pub fn parse_update(mut i: Input) -> Result<(PaymentLinkId, UpdatePaymentLink), CoreError> {
    let id = path_id(&i)?;
    let p = form(&mut i, UPDATE)?;
    Ok((id, v2::parse_update_from(p)?))
}

pub fn parse_id(mut i: Input) -> Result<PaymentLinkId, CoreError> {
    let id = path_id(&i)?;
    form(&mut i, &[])?;
    Ok(id)
}

/// The line items take a page's parameters; a link's lines are always one page.
pub fn parse_line_items(mut i: Input) -> Result<PaymentLinkId, CoreError> {
    let id = path_id(&i)?;
    let mut p = form(&mut i, LINE_ITEMS)?;
    p.integer("limit")?;
    p.string("starting_after")?;
    p.string("ending_before")?;
    Ok(id)
}

pub fn parse_list(mut i: Input) -> Result<ListRequest, CoreError> {
    let mut p = list_form(&mut i, LIST)?;
    let mut filters = Vec::new();
    if let Some(active) = p.boolean("active")? {
        filters.push((Field::Active, active.to_string()));
    }
    list_request(&i, &mut p, filters)
}
