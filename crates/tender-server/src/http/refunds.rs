//! `/v2/refunds`: create, retrieve, update (metadata), list.

use serde_json::Value;
use tender_core::error::CoreError;
use tender_core::ids::RefundId;
use tender_core::refunds::refund::RefundReason;
use tender_core::refunds::service::CreateRefund;
use tender_core::services::RequestContext;
use tender_core::store::Field;

use super::params::{Listing, Params, Query};
use super::{ok, ApiResult};
use crate::state::AppState;

/// `reason`, in either dialect.
pub(crate) fn parse_reason(p: &mut Params) -> Result<Option<RefundReason>, CoreError> {
    p.string("reason")?
        .map(|r| {
            RefundReason::parse(&r).ok_or_else(|| {
                CoreError::invalid(
                    "reason",
                    "parameter_invalid",
                    "reason must be duplicate, fraudulent or requested_by_customer.",
                )
            })
        })
        .transpose()
}

/// `POST /refunds`: the body → the command (no store involved).
pub fn parse_create(body: Value) -> Result<CreateRefund, CoreError> {
    let mut p = Params::body(body, &["payment", "amount", "reason", "metadata"])?;
    let payment = p.string("payment")?;
    let payment = p.required("payment", payment)?;
    let amount = p.integer("amount")?;
    let reason = parse_reason(&mut p)?;
    let metadata = p.metadata()?.unwrap_or_default();
    Ok(CreateRefund {
        payment,
        amount,
        reason,
        metadata,
    })
}

pub(crate) async fn create_refund(
    state: AppState,
    ctx: RequestContext,
    cmd: CreateRefund,
) -> ApiResult {
    ok(&state.services.refunds().create_refund(&ctx, cmd).await?)
}

/// `POST /refunds/{id}`: the body → the metadata changes.
pub fn parse_update(body: Value) -> Result<Vec<(String, String)>, CoreError> {
    let mut p = Params::body(body, &["metadata"])?;
    Ok(p.metadata()?.unwrap_or_default())
}

pub(crate) async fn update_refund(
    state: AppState,
    ctx: RequestContext,
    (id, metadata): (RefundId, Vec<(String, String)>),
) -> ApiResult {
    ok(&state
        .services
        .refunds()
        .update_refund(&ctx, &id, metadata)
        .await?)
}

/// `GET /refunds`: the query string → page and filters.
pub fn parse_list(query: Option<&str>) -> Result<Listing, CoreError> {
    let q = Query::parse(query, &["payment"])?;
    let params = q.list_params()?;
    let filters = q
        .get("payment")
        .map(|e| (Field::Payment, e.to_string()))
        .into_iter()
        .collect();
    Ok((params, filters))
}
