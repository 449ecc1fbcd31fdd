//! `/v1/balance`, `/v1/balance_transactions`, `/v1/payouts` and `/v1/disputes`: reads, and
//! the changes `/v2` allows (a payout's cancel, a dispute's evidence and close), with Stripe's
//! parameter names (a charge or PaymentIntent where `/v2` says payment).

use tender_core::error::CoreError;
use tender_core::ids::{kind, Id};
use tender_core::store::Field;
use tender_core::stripe::ids;

use super::billing::NONE;
use super::params::{form, list_form, list_request, referenced};
use crate::http::operation::{Input, ListRequest};

/// `GET /v1/balance_transactions`.
pub const LIST_TRANSACTIONS: &[&str] = &["type", "source", "payout", "currency"];
/// `GET /v1/payouts`.
pub const LIST_PAYOUTS: &[&str] = &["status"];
/// `GET /v1/disputes`.
pub const LIST_DISPUTES: &[&str] = &["charge", "payment_intent"];

pub fn parse_balance(mut i: Input) -> Result<(), CoreError> {
    form(&mut i, NONE).map(drop)
}

pub fn parse_list_transactions(mut i: Input) -> Result<ListRequest, CoreError> {
    let mut p = list_form(&mut i, LIST_TRANSACTIONS)?;
    let mut filters = Vec::new();
    if let Some(t) = p.string("type")? {
        filters.push(crate::http::balance::type_filter(&t)?);
    }
    if let Some(c) = p.string("currency")? {
        filters.push(crate::http::balance::currency_filter(&c)?);
    }
    if let Some(source) = p.string("source")? {
        filters.push((Field::Source, ids::tender(&source)));
    }
    if let Some(payout) = p.string("payout")? {
        filters.push((Field::Payout, payout));
    }
    list_request(&i, &mut p, filters)
}

pub fn parse_list_payouts(mut i: Input) -> Result<ListRequest, CoreError> {
    let mut p = list_form(&mut i, LIST_PAYOUTS)?;
    let mut filters = Vec::new();
    if let Some(s) = p.string("status")? {
        filters.push(crate::http::payouts::status_filter(&s)?);
    }
    list_request(&i, &mut p, filters)
}

pub fn parse_list_disputes(mut i: Input) -> Result<ListRequest, CoreError> {
    let mut p = list_form(&mut i, LIST_DISPUTES)?;
    let mut filters = Vec::new();
    for key in ["charge", "payment_intent"] {
        if let Some(id) = p.string(key)? {
            let payment: Id<kind::Payment> = referenced(id, key)?;
            filters.push((Field::Payment, payment.to_string()));
        }
    }
    list_request(&i, &mut p, filters)
}
