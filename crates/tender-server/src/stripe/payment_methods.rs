//! `/v1/payment_methods` and `/v1/customers/{id}/payment_methods`: Stripe's parameters read
//! into `/v2`'s commands. Test-mode token names (`pm_card_visa`, `card[token]=tok_visa`) stand
//! for their test cards ([`super::test_tokens`]): attaching `pm_card_visa` saves a new card, as
//! Stripe does.

use serde_json::Value;
use tender_core::card::CardInput;
use tender_core::error::CoreError;
use tender_core::ids::{CustomerId, PaymentMethodId};
use tender_core::services::RequestContext;
use tender_core::store::Field;

use super::params::{form, list_form, list_request, path_id, referenced};
use super::test_tokens;
use crate::http::operation::{Input, ListRequest};
use crate::http::params::Params;
use crate::http::payments::parse_card;
use crate::http::{ok, ApiResult};
use crate::state::AppState;

/// `POST /v1/payment_methods`.
pub const CREATE: &[&str] = &["type", "card", "metadata"];
/// `POST /v1/payment_methods/{id}/attach`.
pub const ATTACH: &[&str] = &["customer"];
/// `GET /v1/payment_methods`.
pub const LIST: &[&str] = &["customer", "type"];
/// `GET /v1/customers/{id}/payment_methods`.
pub const LIST_OF_CUSTOMER: &[&str] = &["type"];

/// A card as given: its fields, or a test token standing for one.
#[derive(Debug)]
pub enum CardGiven {
    Fields(CardInput),
    TestToken(String),
}

impl CardGiven {
    /// The card, or (a token in live mode, or an unknown token) 400 naming `param`.
    pub fn card(self, ctx: &RequestContext, param: &'static str) -> Result<CardInput, CoreError> {
        match self {
            CardGiven::Fields(card) => Ok(card),
            CardGiven::TestToken(name) => test_card(ctx, &name, param),
        }
    }
}

/// The test card a token names, in test mode only.
pub fn test_card(
    ctx: &RequestContext,
    name: &str,
    param: &'static str,
) -> Result<CardInput, CoreError> {
    match test_tokens::card(name) {
        Some(card) if !ctx.scope().livemode() => Ok(card),
        _ => Err(CoreError::missing_reference(param, "token", name)),
    }
}

/// `card`: `card[number|exp_month|exp_year|cvc]`, or `card[token]`.
pub fn parse_card_given(p: &mut Params) -> Result<CardGiven, CoreError> {
    let is_token =
        matches!(p.peek("card"), Some(Value::Object(card)) if card.contains_key("token"));
    if !is_token {
        return parse_card(p).map(CardGiven::Fields);
    }
    let token = match p.object("card", &["token"])? {
        Some(mut card) => card.string("token")?,
        None => None,
    };
    Ok(CardGiven::TestToken(token.unwrap_or_default()))
}

pub fn parse_create(mut i: Input) -> Result<(CardGiven, Vec<(String, String)>), CoreError> {
    let mut p = form(&mut i, CREATE)?;
    let kind = p.string("type")?;
    let kind = p.required("type", kind)?;
    if kind != "card" {
        return Err(CoreError::invalid(
            "type",
            "parameter_invalid",
            "Tender creates card payment methods only: type must be card.",
        ));
    }
    let card = parse_card_given(&mut p)?;
    Ok((card, p.metadata()?.unwrap_or_default()))
}

pub(crate) async fn create(
    state: AppState,
    ctx: RequestContext,
    (card, metadata): (CardGiven, Vec<(String, String)>),
) -> ApiResult {
    let card = card.card(&ctx, "card[token]")?;
    let made = crate::http::payment_methods::NewPaymentMethod::Card(card);
    crate::http::payment_methods::create_payment_method(state, ctx, (made, metadata)).await
}

/// What `attach` names: a saved card, or a test token to save.
#[derive(Debug)]
pub enum AttachTarget {
    Saved(PaymentMethodId),
    TestToken(String),
}

pub fn parse_attach(mut i: Input) -> Result<(AttachTarget, CustomerId), CoreError> {
    let target = if test_tokens::is_token(&i.id) {
        AttachTarget::TestToken(i.id.clone())
    } else {
        AttachTarget::Saved(path_id(&i)?)
    };
    let mut p = form(&mut i, ATTACH)?;
    let customer = p.string("customer")?;
    let customer = referenced(p.required("customer", customer)?, "customer")?;
    Ok((target, customer))
}

/// `POST /v1/payment_methods/{id}/attach`: a test token is first saved as a new card.
pub(crate) async fn attach(
    state: AppState,
    ctx: RequestContext,
    (target, customer): (AttachTarget, CustomerId),
) -> ApiResult {
    let methods = state.services.payment_methods();
    let id = match target {
        AttachTarget::Saved(id) => id,
        AttachTarget::TestToken(name) => {
            let card = test_card(&ctx, &name, "payment_method")?;
            // The card is saved first, outside the request's idempotency key, which the
            // attach's own write completes.
            let mut saving = ctx.clone();
            saving.idempotency = None;
            let created = methods
                .create_payment_method(&saving, card, Vec::new())
                .await?;
            PaymentMethodId::found(created.id.clone())?
        }
    };
    ok(&methods.attach_payment_method(&ctx, &id, &customer).await?)
}

pub fn parse_detach(mut i: Input) -> Result<PaymentMethodId, CoreError> {
    let id = path_id(&i)?;
    form(&mut i, &[])?;
    Ok(id)
}

pub fn parse_id(i: Input) -> Result<PaymentMethodId, CoreError> {
    parse_detach(i)
}

fn check_type(p: &mut Params) -> Result<(), CoreError> {
    match p.string("type")? {
        Some(t) if t != "card" => Err(CoreError::invalid(
            "type",
            "parameter_invalid",
            "Tender keeps card payment methods only: type must be card.",
        )),
        _ => Ok(()),
    }
}

pub fn parse_list(mut i: Input) -> Result<ListRequest, CoreError> {
    let mut p = list_form(&mut i, LIST)?;
    check_type(&mut p)?;
    let customer = p.string("customer")?;
    let customer = p.required("customer", customer)?;
    let customer: CustomerId = referenced(customer, "customer")?;
    list_request(&i, &mut p, vec![(Field::Customer, customer.to_string())])
}

pub fn parse_list_of_customer(mut i: Input) -> Result<ListRequest, CoreError> {
    let customer: CustomerId = path_id(&i)?;
    let mut p = list_form(&mut i, LIST_OF_CUSTOMER)?;
    check_type(&mut p)?;
    list_request(&i, &mut p, vec![(Field::Customer, customer.to_string())])
}
