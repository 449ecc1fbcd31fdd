//! `/v1/refunds`: Stripe's parameters read into `/v2`'s commands (a refund names its
//! payment by `payment_intent` or `charge`, which are the same payment).

use tender_core::error::CoreError;
use tender_core::ids::RefundId;
use tender_core::refunds::service::CreateRefund;
use tender_core::store::Field;
use tender_core::stripe::ids;

use super::params::{form, list_form, list_request, path_id};
use crate::http::operation::{Input, ListRequest};
use crate::http::params::Params;

/// `POST /v1/refunds`.
pub const CREATE: &[&str] = &["payment_intent", "charge", "amount", "reason", "metadata"];
/// `POST /v1/refunds/{id}`.
pub const UPDATE: &[&str] = &["metadata"];
/// `GET /v1/refunds`.
pub const LIST: &[&str] = &["payment_intent", "charge"];

/// The payment named by `payment_intent` or `charge` (one of them, or both naming the same).
fn payment(p: &mut Params, required: bool) -> Result<Option<String>, CoreError> {
    let intent = p.string("payment_intent")?.map(|id| ids::tender(&id));
    let charge = p.string("charge")?.map(|id| ids::tender(&id));
    match (intent, charge) {
        (Some(a), Some(b)) if a != b => Err(CoreError::invalid(
            "charge",
            "parameter_invalid",
            "charge and payment_intent name different payments: give one.",
        )),
        (Some(a), _) | (None, Some(a)) => Ok(Some(a)),
        (None, None) if required => Err(CoreError::invalid(
            "payment_intent",
            "parameter_missing",
            "Missing required param: payment_intent (or charge).",
        )),
        (None, None) => Ok(None),
    }
}

pub fn parse_create(mut i: Input) -> Result<CreateRefund, CoreError> {
    let mut p = form(&mut i, CREATE)?;
    let payment = payment(&mut p, true)?.unwrap_or_default();
    let amount = p.integer("amount")?;
    let reason = crate::http::refunds::parse_reason(&mut p)?;
    Ok(CreateRefund {
        payment,
        amount,
        reason,
        metadata: p.metadata()?.unwrap_or_default(),
    })
}

pub fn parse_update(mut i: Input) -> Result<(RefundId, Vec<(String, String)>), CoreError> {
    let id = path_id(&i)?;
    let mut p = form(&mut i, UPDATE)?;
    Ok((id, p.metadata()?.unwrap_or_default()))
}

pub fn parse_id(mut i: Input) -> Result<RefundId, CoreError> {
    let id = path_id(&i)?;
    form(&mut i, &[])?;
    Ok(id)
}

pub fn parse_list(mut i: Input) -> Result<ListRequest, CoreError> {
    let mut p = list_form(&mut i, LIST)?;
    let filters = payment(&mut p, false)?
        .map(|pay| (Field::Payment, pay))
        .into_iter()
        .collect();
    list_request(&i, &mut p, filters)
}
