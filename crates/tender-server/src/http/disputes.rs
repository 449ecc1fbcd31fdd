//! `/v2/disputes` (CONTRACT §9): retrieve, list, update (evidence, submit), close.

use serde_json::Value;
use tender_core::balance::disputes::Evidence;
use tender_core::balance::disputes::UpdateDispute;
use tender_core::error::CoreError;
use tender_core::ids::DisputeId;
use tender_core::services::RequestContext;
use tender_core::store::Field;

use super::params::{Listing, Params, Query};
use super::{ok, ApiResult};
use crate::state::AppState;

const EVIDENCE_FIELDS: [&str; 4] = [
    "customer_name",
    "customer_email_address",
    "product_description",
    "uncategorized_text",
];

/// `POST /disputes/{id}`: the body → the command.
/// The parameters of `update`.
pub const UPDATE_FIELDS: &[&str] = &["evidence", "metadata", "submit"];

pub fn parse_update(body: Value) -> Result<UpdateDispute, CoreError> {
    parse_update_from(Params::body(body, UPDATE_FIELDS)?)
}

/// [`parse_update`] from parameters read in either dialect.
pub fn parse_update_from(mut p: Params) -> Result<UpdateDispute, CoreError> {
    let evidence = match p.object("evidence", &EVIDENCE_FIELDS)? {
        None => None,
        Some(mut e) => Some(Evidence {
            customer_name: e.string("customer_name")?,
            customer_email_address: e.string("customer_email_address")?,
            product_description: e.string("product_description")?,
            uncategorized_text: e.string("uncategorized_text")?,
        }),
    };
    Ok(UpdateDispute {
        evidence,
        metadata: p.metadata()?,
        submit: p.boolean("submit")?.unwrap_or(false),
    })
}

/// `POST /disputes/{id}/close`: takes no parameters.
/// `GET /disputes`: the query string → page and filters.
pub fn parse_list(query: Option<&str>) -> Result<Listing, CoreError> {
    let q = Query::parse(query, &["payment"])?;
    let params = q.list_params()?;
    let filters = q
        .get("payment")
        .map(|p| (Field::Payment, p.to_string()))
        .into_iter()
        .collect();
    Ok((params, filters))
}

pub(crate) async fn update_dispute(
    state: AppState,
    ctx: RequestContext,
    (id, cmd): (DisputeId, UpdateDispute),
) -> ApiResult {
    ok(&state
        .services
        .balance()
        .update_dispute(&ctx, &id, cmd)
        .await?)
}

pub(crate) async fn close_dispute(
    state: AppState,
    ctx: RequestContext,
    id: DisputeId,
) -> ApiResult {
    ok(&state.services.balance().close_dispute(&ctx, &id).await?)
}
