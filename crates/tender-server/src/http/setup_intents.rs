//! `/v2/setup_intents`: save a card for later without charging it (create, confirm, cancel,
//! retrieve, list by customer). The parsers read a [`Params`] of either dialect, so `/v1`'s
//! SetupIntents run the same code ([`crate::stripe`]).

use serde_json::Value;
use tender_core::error::CoreError;
use tender_core::ids::{CustomerId, PaymentMethodId, SetupIntentId};
use tender_core::services::RequestContext;
use tender_core::setup_intents::service::{ConfirmSetupIntent, CreateSetupIntent};
use tender_core::setup_intents::setup_intent::{SetupCancellationReason, Usage};
use tender_core::store::Field;

use super::params::{Listing, Params, Query};
use super::{ok, ApiResult};
use crate::state::AppState;

/// The parameters of `POST /setup_intents`.
pub const CREATE_FIELDS: &[&str] = &[
    "customer",
    "payment_method",
    "confirm",
    "usage",
    "description",
    "metadata",
];

/// `POST /setup_intents`: the body → the command.
pub fn parse_create(body: Value) -> Result<CreateSetupIntent, CoreError> {
    parse_create_from(Params::body(body, CREATE_FIELDS)?)
}

/// [`parse_create`] from parameters of either dialect; `payment_method` already a stored
/// method's id (`/v1` resolves its test tokens first).
pub fn parse_create_from(mut p: Params) -> Result<CreateSetupIntent, CoreError> {
    let customer = p
        .string("customer")?
        .map(|c| CustomerId::referenced(c, "customer"))
        .transpose()?;
    let payment_method = parse_method(&mut p)?;
    let usage = match p.string("usage")? {
        Some(u) => Usage::parse(&u)?,
        None => Usage::default(),
    };
    Ok(CreateSetupIntent {
        customer,
        payment_method,
        usage,
        description: p.string("description")?,
        metadata: p.metadata()?.unwrap_or_default(),
        confirm: p.boolean("confirm")?.unwrap_or(false),
    })
}

fn parse_method(p: &mut Params) -> Result<Option<PaymentMethodId>, CoreError> {
    p.string("payment_method")?
        .map(|pm| PaymentMethodId::referenced(pm, "payment_method"))
        .transpose()
}

pub(crate) async fn create_setup_intent(
    state: AppState,
    ctx: RequestContext,
    cmd: CreateSetupIntent,
) -> ApiResult {
    ok(&state
        .services
        .setup_intents()
        .create_setup_intent(&ctx, cmd)
        .await?)
}

/// `POST /setup_intents/{id}/confirm`: the body → the card to save, if another.
pub fn parse_confirm(body: Value) -> Result<ConfirmSetupIntent, CoreError> {
    parse_confirm_from(Params::body(body, &["payment_method"])?)
}

pub fn parse_confirm_from(mut p: Params) -> Result<ConfirmSetupIntent, CoreError> {
    Ok(ConfirmSetupIntent {
        payment_method: parse_method(&mut p)?,
    })
}

pub(crate) async fn confirm_setup_intent(
    state: AppState,
    ctx: RequestContext,
    (id, cmd): (SetupIntentId, ConfirmSetupIntent),
) -> ApiResult {
    ok(&state
        .services
        .setup_intents()
        .confirm_setup_intent(&ctx, &id, cmd)
        .await?)
}

/// `POST /setup_intents/{id}/cancel`: the body → the reason, if any.
pub fn parse_cancel(body: Value) -> Result<Option<SetupCancellationReason>, CoreError> {
    parse_cancel_from(Params::body(body, &["cancellation_reason"])?)
}

pub fn parse_cancel_from(mut p: Params) -> Result<Option<SetupCancellationReason>, CoreError> {
    p.string("cancellation_reason")?
        .map(|r| SetupCancellationReason::parse(&r))
        .transpose()
}

pub(crate) async fn cancel_setup_intent(
    state: AppState,
    ctx: RequestContext,
    (id, reason): (SetupIntentId, Option<SetupCancellationReason>),
) -> ApiResult {
    ok(&state
        .services
        .setup_intents()
        .cancel_setup_intent(&ctx, &id, reason)
        .await?)
}

/// `GET /setup_intents`: the query string → page and the customer filter.
pub fn parse_list(query: Option<&str>) -> Result<Listing, CoreError> {
    let q = Query::parse(query, &["customer"])?;
    let params = q.list_params()?;
    let filters = q
        .get("customer")
        .map(|c| (Field::Customer, c.to_string()))
        .into_iter()
        .collect();
    Ok((params, filters))
}
