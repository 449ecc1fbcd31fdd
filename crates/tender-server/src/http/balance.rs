//! `/v2/balance` and `/v2/balance_transactions` (CONTRACT §9): what the merchant is owed and
//! every movement of it. Reads only: transactions are written by the changes that cause them.

use tender_core::balance::transactions::TxnType;
use tender_core::error::CoreError;
use tender_core::money::Currency;
use tender_core::services::RequestContext;
use tender_core::store::Field;

use super::operation::ListRequest;
use super::params::{Listing, Query};
use super::{list_response, ok, ApiResult};
use crate::state::AppState;

pub(crate) async fn retrieve_balance(state: AppState, ctx: RequestContext, (): ()) -> ApiResult {
    ok(&state
        .services
        .balance()
        .retrieve_balance(ctx.scope())
        .await?)
}

/// `GET /balance`: takes no parameters.
pub fn parse_retrieve(query: Option<&str>) -> Result<(), CoreError> {
    Query::parse(query, &[])?;
    Ok(())
}

/// `GET /balance_transactions`: the query string → page and filters.
pub fn parse_list(query: Option<&str>) -> Result<Listing, CoreError> {
    let q = Query::parse(
        query,
        &[
            "type",
            "source",
            "payout",
            "currency",
            "available_on",
            "available_on[gt]",
            "available_on[gte]",
            "available_on[lt]",
            "available_on[lte]",
        ],
    )?;
    let mut params = q.list_params()?;
    params.available_on = q.range("available_on")?;
    let mut filters = Vec::new();
    if let Some(t) = q.get("type") {
        filters.push(type_filter(t)?);
    }
    if let Some(c) = q.get("currency") {
        filters.push(currency_filter(c)?);
    }
    for (name, field) in [("source", Field::Source), ("payout", Field::Payout)] {
        if let Some(v) = q.get(name) {
            filters.push((field, v.to_string()));
        }
    }
    Ok((params, filters))
}

/// The filter on a transaction `type`, in either dialect.
pub(crate) fn type_filter(t: &str) -> Result<(Field, String), CoreError> {
    let t = TxnType::parse(t).ok_or_else(|| {
        let all: Vec<&str> = TxnType::ALL.iter().map(|t| t.as_str()).collect();
        CoreError::invalid(
            "type",
            "parameter_invalid",
            format!("type must be one of {}.", all.join(", ")),
        )
    })?;
    Ok((Field::Type, t.as_str().to_string()))
}

/// The filter on a `currency` (either case), in either dialect.
pub(crate) fn currency_filter(c: &str) -> Result<(Field, String), CoreError> {
    let code = Currency::parse(&c.to_ascii_lowercase()).ok_or_else(|| {
        CoreError::invalid(
            "currency",
            "parameter_invalid",
            format!("Unsupported currency: {c}."),
        )
    })?;
    Ok((Field::Currency, code.code().to_string()))
}

pub(crate) async fn list_balance_transactions(
    state: AppState,
    ctx: RequestContext,
    req: ListRequest,
) -> ApiResult {
    let page = state
        .services
        .balance()
        .list_balance_transactions(ctx.scope(), &req.params, req.filters)
        .await?;
    Ok(list_response(&req.url, page))
}
