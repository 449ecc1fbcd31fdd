//! `/v1/checkout/sessions`: Stripe's parameters read into `/v2`'s Checkout Session commands
//! ([`crate::http::checkout`]); the answers shown as `checkout.session` and `item` objects by
//! the gate. Cards only: `payment_method_types` may only name `card`; the page is Tender's
//! hosted one (`ui_mode=hosted_page`, or `hosted` as older API versions name it).

use tender_core::checkout::create::CreateCheckoutSession;
use tender_core::checkout::session::CheckoutStatus;
use tender_core::error::CoreError;
use tender_core::ids::{CheckoutSessionId, CustomerId};
use tender_core::store::Field;

use super::params::{form, list_form, list_request, path_id, referenced};
use super::payment_intents::parse_method_types;
use crate::http::checkout as v2;
use crate::http::operation::{Input, ListRequest};

/// `POST /v1/checkout/sessions`.
pub const CREATE: &[&str] = &[
    "mode",
    "line_items",
    "success_url",
    "cancel_url",
    "customer",
    "customer_email",
    "client_reference_id",
    "metadata",
    "allow_promotion_codes",
    "subscription_data",
    "payment_intent_data",
    "expires_at",
    "payment_method_types",
    "ui_mode",
];
/// `GET /v1/checkout/sessions`.
pub const LIST: &[&str] = &["customer", "status", "payment_intent", "subscription"];
/// `GET /v1/checkout/sessions/{id}/line_items`.
pub const LINE_ITEMS: &[&str] = &["limit", "starting_after", "ending_before"];

pub fn parse_create(mut i: Input) -> Result<CreateCheckoutSession, CoreError> {
    let mut p = form(&mut i, CREATE)?;
    parse_method_types(&mut p)?;
    match p.string("ui_mode")?.as_deref() {
        None | Some("hosted" | "hosted_page") => {}
        Some(other) => {
            return Err(CoreError::invalid(
                "ui_mode",
                "parameter_invalid",
                format!(
                "Tender's Checkout is a hosted page: ui_mode must be hosted_page, not {other:?}."
            ),
            ))
        }
    }
    if let Some(customer) = p.string("customer")? {
        let id: CustomerId = referenced(customer, "customer")?;
        p.insert_string("customer", id.into_string());
    }
    v2::parse_create_from(p)
}

pub fn parse_id(mut i: Input) -> Result<CheckoutSessionId, CoreError> {
    let id = path_id(&i)?;
    form(&mut i, &[])?;
    Ok(id)
}

/// The line items take a page's parameters; a session's lines are always one page.
pub fn parse_line_items(mut i: Input) -> Result<CheckoutSessionId, CoreError> {
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
    if let Some(customer) = p.string("customer")? {
        let customer: CustomerId = referenced(customer, "customer")?;
        filters.push((Field::Customer, customer.to_string()));
    }
    if let Some(status) = p.string("status")? {
        let status = CheckoutStatus::parse(&status)?;
        filters.push((Field::Status, status.as_str().to_string()));
    }
    if let Some(pi) = p.string("payment_intent")? {
        filters.push((Field::Payment, tender_core::stripe::ids::tender(&pi)));
    }
    if let Some(sub) = p.string("subscription")? {
        filters.push((Field::Subscription, sub));
    }
    list_request(&i, &mut p, filters)
}
