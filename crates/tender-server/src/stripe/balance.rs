//! `/v1/balance`, `/v1/balance_transactions`, `/v1/payouts` and `/v1/disputes`: reads, and
//! the changes `/v2` allows (a payout's cancel, a dispute's evidence and close), with Stripe's
//! parameter names (a charge or PaymentIntent where `/v2` says payment).

use tender_core::balance::payouts::PayoutStatus;
use tender_core::balance::transactions::TxnType;
use tender_core::error::CoreError;
use tender_core::ids::{kind, Id};
use tender_core::money::Currency;
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
        let t = TxnType::parse(&t).ok_or_else(|| {
            let all: Vec<&str> = TxnType::ALL.iter().map(|t| t.as_str()).collect();
            CoreError::invalid(
                "type",
                "parameter_invalid",
                format!("type must be one of {}.", all.join(", ")),
            )
        })?;
        filters.push((Field::Type, t.as_str().to_string()));
    }
    if let Some(c) = p.string("currency")? {
        let c = Currency::parse(&c.to_ascii_lowercase()).ok_or_else(|| {
            CoreError::invalid(
                "currency",
                "parameter_invalid",
                format!("Unsupported currency: {c}."),
            )
        })?;
        filters.push((Field::Currency, c.code().to_string()));
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
        let s = PayoutStatus::parse(&s).ok_or_else(|| {
            CoreError::invalid(
                "status",
                "parameter_invalid",
                "status must be pending, in_transit, paid, failed or canceled.",
            )
        })?;
        filters.push((Field::Status, s.as_str().to_string()));
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
