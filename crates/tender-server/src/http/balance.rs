//! `/v2/balance` and `/v2/balance_transactions` (CONTRACT §9): what the merchant is owed and
//! every movement of it. Reads only: transactions are written by the changes that cause them.

use axum::extract::{Path, RawQuery, State};
use tender_core::balance::transactions::TxnType;
use tender_core::error::CoreError;
use tender_core::ids::BalanceTransactionId;
use tender_core::money::Currency;
use tender_core::services::ListParams;
use tender_core::store::Field;

use super::params::Query;
use super::pipeline::Ctx;
use super::{list_response, ok, raw_response, ApiResult};
use crate::state::AppState;

pub(crate) async fn retrieve_balance(
    State(state): State<AppState>,
    Ctx(ctx): Ctx,
    RawQuery(q): RawQuery,
) -> ApiResult {
    parse_retrieve(q.as_deref())?;
    ok(&state.services.balance(ctx.scope()).await?)
}

/// `GET /balance`: takes no parameters.
pub fn parse_retrieve(query: Option<&str>) -> Result<(), CoreError> {
    Query::parse(query, &[])?;
    Ok(())
}

/// `GET /balance_transactions`: the query string → page and filters.
pub fn parse_list(query: Option<&str>) -> Result<(ListParams, Vec<(Field, String)>), CoreError> {
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
        let t = TxnType::parse(t).ok_or_else(|| {
            let all: Vec<&str> = TxnType::ALL.iter().map(|t| t.as_str()).collect();
            CoreError::invalid(
                "type",
                "parameter_invalid",
                format!("type must be one of {}.", all.join(", ")),
            )
        })?;
        filters.push((Field::Type, t.as_str().to_string()));
    }
    if let Some(c) = q.get("currency") {
        let c = Currency::parse(&c.to_ascii_lowercase()).ok_or_else(|| {
            CoreError::invalid(
                "currency",
                "parameter_invalid",
                format!("Unsupported currency: {c}."),
            )
        })?;
        filters.push((Field::Currency, c.code().to_string()));
    }
    for (name, field) in [("source", Field::Source), ("payout", Field::Payout)] {
        if let Some(v) = q.get(name) {
            filters.push((field, v.to_string()));
        }
    }
    Ok((params, filters))
}

pub(crate) async fn list_balance_transactions(
    State(state): State<AppState>,
    Ctx(ctx): Ctx,
    RawQuery(q): RawQuery,
) -> ApiResult {
    let (params, filters) = parse_list(q.as_deref())?;
    let page = state
        .services
        .list_balance_transactions(ctx.scope(), &params, filters)
        .await?;
    Ok(list_response("/v2/balance_transactions", page))
}

pub(crate) async fn retrieve_balance_transaction(
    State(state): State<AppState>,
    Ctx(ctx): Ctx,
    Path(id): Path<String>,
) -> ApiResult {
    let id = BalanceTransactionId::found(id)?;
    let body = state.services.retrieve(ctx.scope(), &id).await?;
    Ok(raw_response(body))
}
