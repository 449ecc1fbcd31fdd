//! `/v2/payouts` (CONTRACT §9): create, retrieve, list, cancel.

use serde_json::Value;
use tender_core::balance::payouts::CreatePayout;
use tender_core::balance::payouts::PayoutStatus;
use tender_core::error::CoreError;
use tender_core::ids::PayoutId;
use tender_core::secret::Secret;
use tender_core::services::RequestContext;
use tender_core::store::Field;
use tender_core::validate::check_amount;

use super::params::{Listing, Params, Query};
use super::payments::parse_currency;
use super::{ok, ApiResult};
use crate::state::AppState;

/// `POST /payouts`: the body → the command.
pub fn parse_create(body: Value) -> Result<CreatePayout, CoreError> {
    let mut p = Params::body(
        body,
        &[
            "amount",
            "currency",
            "destination",
            "description",
            "metadata",
        ],
    )?;
    let (amount, currency) = parse_amount(&mut p)?;
    let destination = p.object("destination", &["iban", "account_holder_name"])?;
    let mut destination = p.required("destination", destination)?;
    let iban = destination.string("iban")?;
    let iban = destination.required("iban", iban)?;
    let holder = destination.string("account_holder_name")?;
    let holder = destination.required("account_holder_name", holder)?;
    Ok(CreatePayout {
        amount,
        currency,
        iban: Secret::new(iban),
        account_holder_name: holder,
        description: p.string("description")?,
        metadata: p.metadata()?.unwrap_or_default(),
    })
}

/// A payout's `amount` (required, checked against its currency) and `currency`, in either
/// dialect.
pub(crate) fn parse_amount(
    p: &mut Params,
) -> Result<(tender_core::money::Amount, tender_core::money::Currency), CoreError> {
    let amount = p.integer("amount")?;
    let amount = p.required("amount", amount)?;
    let currency = parse_currency(p)?;
    Ok((check_amount("amount", amount, currency)?, currency))
}

pub(crate) async fn create_payout(
    state: AppState,
    ctx: RequestContext,
    cmd: CreatePayout,
) -> ApiResult {
    ok(&state.services.balance().create_payout(&ctx, cmd).await?)
}

pub(crate) async fn cancel_payout(state: AppState, ctx: RequestContext, id: PayoutId) -> ApiResult {
    ok(&state.services.balance().cancel_payout(&ctx, &id).await?)
}

/// `POST /payouts/{id}/cancel`: takes no parameters.
/// `GET /payouts`: the query string → page and filters.
pub fn parse_list(query: Option<&str>) -> Result<Listing, CoreError> {
    let q = Query::parse(query, &["status"])?;
    let params = q.list_params()?;
    let mut filters = Vec::new();
    if let Some(s) = q.get("status") {
        filters.push(status_filter(s)?);
    }
    Ok((params, filters))
}

/// The filter on a payout `status`, in either dialect.
pub(crate) fn status_filter(s: &str) -> Result<(Field, String), CoreError> {
    let s = PayoutStatus::parse(s).ok_or_else(|| {
        CoreError::invalid(
            "status",
            "parameter_invalid",
            "status must be pending, in_transit, paid, failed or canceled.",
        )
    })?;
    Ok((Field::Status, s.as_str().to_string()))
}
