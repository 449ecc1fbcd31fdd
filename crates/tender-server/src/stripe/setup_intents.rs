//! `/v1/setup_intents`: Stripe's parameters read into `/v2`'s SetupIntent commands. The card
//! may be a saved `pm_…`, a test token (`pm_card_visa`) or `payment_method_data[card]`, saved
//! as a payment method first (as a PaymentIntent's is, [`super::payment_intents::one_time`]).

use tender_core::error::CoreError;
use tender_core::ids::{PaymentMethodId, SetupIntentId};
use tender_core::services::RequestContext;
use tender_core::setup_intents::service::{ConfirmSetupIntent, CreateSetupIntent};
use tender_core::setup_intents::setup_intent::SetupCancellationReason;
use tender_core::store::Field;

use super::params::{form, list_form, list_request, path_id, referenced};
use super::payment_intents::{
    one_time, parse_method, parse_method_types, resolve_method, MethodGiven,
};
use crate::http::operation::{Input, ListRequest};
use crate::http::setup_intents as v2;
use crate::http::ApiResult;
use crate::state::AppState;

/// `POST /v1/setup_intents`.
pub const CREATE: &[&str] = &[
    "customer",
    "payment_method",
    "payment_method_data",
    "payment_method_types",
    "automatic_payment_methods",
    "confirm",
    "usage",
    "description",
    "metadata",
];
/// `POST /v1/setup_intents/{id}/confirm`.
pub const CONFIRM: &[&str] = &["payment_method", "payment_method_data"];
/// `POST /v1/setup_intents/{id}/cancel`.
pub const CANCEL: &[&str] = &["cancellation_reason"];
/// `GET /v1/setup_intents`.
pub const LIST: &[&str] = &["customer"];

/// A create or confirmation, parsed: `/v2`'s command, and the card to resolve first.
#[derive(Debug)]
pub struct WithMethod<T> {
    command: T,
    method: Option<MethodGiven>,
}

pub fn parse_create(mut i: Input) -> Result<WithMethod<CreateSetupIntent>, CoreError> {
    let mut p = form(&mut i, CREATE)?;
    let method = parse_method(&mut p)?;
    parse_method_types(&mut p)?;
    let command = v2::parse_create_from(p)?;
    if command.confirm && method.is_none() {
        return Err(CoreError::invalid(
            "payment_method",
            "parameter_missing",
            "A SetupIntent confirmed when it is created needs a payment_method.",
        ));
    }
    Ok(WithMethod { command, method })
}

/// The card given, saved as a payment method if it is not one yet.
async fn saved_method(
    state: &AppState,
    ctx: &RequestContext,
    method: Option<MethodGiven>,
) -> Result<Option<PaymentMethodId>, CoreError> {
    match method {
        Some(m) => Ok(Some(one_time(state, ctx, resolve_method(ctx, m)?).await?)),
        None => Ok(None),
    }
}

pub(crate) async fn create(
    state: AppState,
    ctx: RequestContext,
    cmd: WithMethod<CreateSetupIntent>,
) -> ApiResult {
    let mut command = cmd.command;
    command.payment_method = saved_method(&state, &ctx, cmd.method).await?;
    v2::create_setup_intent(state, ctx, command).await
}

pub fn parse_confirm(
    mut i: Input,
) -> Result<(SetupIntentId, WithMethod<ConfirmSetupIntent>), CoreError> {
    let id = path_id(&i)?;
    let mut p = form(&mut i, CONFIRM)?;
    let method = parse_method(&mut p)?;
    let command = ConfirmSetupIntent::default();
    Ok((id, WithMethod { command, method }))
}

pub(crate) async fn confirm(
    state: AppState,
    ctx: RequestContext,
    (id, cmd): (SetupIntentId, WithMethod<ConfirmSetupIntent>),
) -> ApiResult {
    let mut command = cmd.command;
    command.payment_method = saved_method(&state, &ctx, cmd.method).await?;
    v2::confirm_setup_intent(state, ctx, (id, command)).await
}

pub fn parse_cancel(
    mut i: Input,
) -> Result<(SetupIntentId, Option<SetupCancellationReason>), CoreError> {
    let id = path_id(&i)?;
    let p = form(&mut i, CANCEL)?;
    Ok((id, v2::parse_cancel_from(p)?))
}

pub fn parse_id(mut i: Input) -> Result<SetupIntentId, CoreError> {
    let id = path_id(&i)?;
    form(&mut i, &[])?;
    Ok(id)
}

pub fn parse_list(mut i: Input) -> Result<ListRequest, CoreError> {
    let mut p = list_form(&mut i, LIST)?;
    let mut filters = Vec::new();
    if let Some(customer) = p.string("customer")? {
        let customer: tender_core::ids::CustomerId = referenced(customer, "customer")?;
        filters.push((Field::Customer, customer.to_string()));
    }
    list_request(&i, &mut p, filters)
}
