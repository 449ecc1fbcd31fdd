//! `/v1/balance`, `/v1/balance_transactions`, `/v1/payouts` and `/v1/disputes`: reads, and
//! the changes `/v2` allows (a payout, its cancel, a dispute's evidence and close), with
//! Stripe's parameter names (a charge or PaymentIntent where `/v2` says payment). Stripe's
//! payout names no bank account: it goes to the account's default destination
//! (`tender_core::balance::destination`), else 400.

use tender_core::balance::payouts::CreatePayout;
use tender_core::error::CoreError;
use tender_core::ids::{kind, Id};
use tender_core::money::{Amount, Currency};
use tender_core::services::RequestContext;
use tender_core::store::Field;
use tender_core::stripe::ids;

use super::billing::NONE;
use super::params::{form, list_form, list_request, referenced};
use crate::http::operation::{Input, ListRequest};
use crate::http::ApiResult;
use crate::state::AppState;

/// `GET /v1/balance_transactions`.
pub const LIST_TRANSACTIONS: &[&str] = &["type", "source", "payout", "currency"];
/// `POST /v1/payouts`.
pub const CREATE_PAYOUT: &[&str] = &["amount", "currency", "description", "metadata"];
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

/// `POST /v1/payouts`, parsed: all of `/v2`'s create but the destination.
#[derive(Debug)]
pub struct NewPayout {
    amount: Amount,
    currency: Currency,
    description: Option<String>,
    metadata: Vec<(String, String)>,
}

pub fn parse_create_payout(mut i: Input) -> Result<NewPayout, CoreError> {
    let mut p = form(&mut i, CREATE_PAYOUT)?;
    let (amount, currency) = crate::http::payouts::parse_amount(&mut p)?;
    Ok(NewPayout {
        amount,
        currency,
        description: p.string("description")?,
        metadata: p.metadata()?.unwrap_or_default(),
    })
}

/// `POST /v1/payouts`: to the account's default destination, else 400.
pub(crate) async fn create_payout(
    state: AppState,
    ctx: RequestContext,
    cmd: NewPayout,
) -> ApiResult {
    let Some(destination) = state
        .services
        .balance()
        .payout_destination(&ctx.scope().account)
        .await?
    else {
        return Err(CoreError::invalid(
            "destination",
            "parameter_missing",
            "This account has no default payout destination: set one on the dashboard's Balance page or with `tender accounts payout-destination`.",
        )
        .into());
    };
    let cmd = CreatePayout {
        amount: cmd.amount,
        currency: cmd.currency,
        iban: destination.iban,
        account_holder_name: destination.account_holder_name,
        description: cmd.description,
        metadata: cmd.metadata,
    };
    crate::http::payouts::create_payout(state, ctx, cmd).await
}
