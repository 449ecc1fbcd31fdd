//! `/v1/payment_intents` (and the charge of each, `/v1/charges/{id}`): Stripe's parameters
//! read into `/v2`'s payment commands. A PaymentIntent is Tender's payment `pay_X` as `pi_X`.
//!
//! Created with `confirm=true` it is `/v2`'s create; without, it waits
//! (`requires_payment_method`, or `requires_confirmation` with a payment method; card details
//! given then are first saved as a one-time payment method) until `confirm`
//! (`tender_core::payments::intents`). `capture_method=manual` is `capture: false`;
//! `setup_future_usage` saves the card to the customer; a test token (`pm_card_visa`,
//! `payment_method_data[card][token]=tok_visa`) stands for its test card.

use tender_core::error::CoreError;
use tender_core::ids::{CustomerId, PaymentId, PaymentMethodId};
use tender_core::payments::create::{CreatePayment, CreatePaymentFields, PaymentMethodInput};
use tender_core::payments::intents::{ConfirmIntent, CreateIntent};
use tender_core::payments::lifecycle::UpdatePayment;
use tender_core::payments::payment::CancellationReason;
use tender_core::services::RequestContext;
use tender_core::store::Field;

use super::params::{form, list_form, list_request, path_id, referenced};
use super::payment_methods::{parse_card_given, test_card, CardGiven};
use super::test_tokens;
use crate::http::operation::{Input, ListRequest};
use crate::http::params::Params;
use crate::http::payments::parse_currency;
use crate::http::{ok, ApiResult};
use crate::state::AppState;

/// `POST /v1/payment_intents`.
pub const CREATE: &[&str] = &[
    "amount",
    "currency",
    "customer",
    "payment_method",
    "payment_method_data",
    "payment_method_types",
    "automatic_payment_methods",
    "confirm",
    "capture_method",
    "off_session",
    "setup_future_usage",
    "return_url",
    "description",
    "metadata",
];
/// `POST /v1/payment_intents/{id}/confirm`.
pub const CONFIRM: &[&str] = &[
    "payment_method",
    "payment_method_data",
    "payment_method_types",
    "return_url",
    "setup_future_usage",
    "off_session",
];
/// `POST /v1/payment_intents/{id}`.
pub const UPDATE: &[&str] = &["description", "metadata", "customer"];
/// `POST /v1/payment_intents/{id}/capture`.
pub const CAPTURE: &[&str] = &["amount_to_capture"];
/// `POST /v1/payment_intents/{id}/cancel`.
pub const CANCEL: &[&str] = &["cancellation_reason"];
/// `GET /v1/payment_intents`.
pub const LIST: &[&str] = &["customer"];

/// The payment method a create names.
#[derive(Debug)]
pub enum MethodGiven {
    Saved(PaymentMethodId),
    TestToken(String),
    Card(CardGiven),
}

/// `POST /v1/payment_intents`, parsed: the fields of `/v2`'s create but the payment method,
/// which may need the mode to resolve (a test token).
#[derive(Debug)]
pub struct NewIntent {
    method: Option<MethodGiven>,
    fields: CreatePaymentFields,
    confirm: bool,
}

pub(super) fn parse_method(p: &mut Params) -> Result<Option<MethodGiven>, CoreError> {
    if let Some(id) = p.string("payment_method")? {
        if p.has("payment_method_data") {
            return Err(CoreError::invalid(
                "payment_method_data",
                "parameter_invalid",
                "Give payment_method or payment_method_data, not both.",
            ));
        }
        if test_tokens::is_token(&id) {
            return Ok(Some(MethodGiven::TestToken(id)));
        }
        return Ok(Some(MethodGiven::Saved(referenced(id, "payment_method")?)));
    }
    let Some(mut data) = p.object("payment_method_data", &["type", "card"])? else {
        return Ok(None);
    };
    let kind = data.string("type")?;
    if data.required("type", kind)? != "card" {
        return Err(CoreError::invalid(
            "payment_method_data[type]",
            "parameter_invalid",
            "Tender takes cards: payment_method_data[type] must be card.",
        ));
    }
    parse_card_given(&mut data).map(|c| Some(MethodGiven::Card(c)))
}

/// `payment_method_types[]` (each `card`) and `automatic_payment_methods[enabled]`: read and
/// checked; a card is what Tender takes either way.
pub(super) fn parse_method_types(p: &mut Params) -> Result<(), CoreError> {
    if let Some(types) = p.strings("payment_method_types", 10)? {
        if types.iter().any(|t| t != "card") {
            return Err(CoreError::invalid(
                "payment_method_types",
                "parameter_invalid",
                "Tender takes cards: payment_method_types must be [card].",
            ));
        }
    }
    if let Some(mut auto) =
        p.object("automatic_payment_methods", &["enabled", "allow_redirects"])?
    {
        auto.boolean("enabled")?;
        auto.string("allow_redirects")?;
    }
    Ok(())
}

pub fn parse_create(mut i: Input) -> Result<NewIntent, CoreError> {
    let mut p = form(&mut i, CREATE)?;
    let amount = p.integer("amount")?;
    let amount = p.required("amount", amount)?;
    let currency = parse_currency(&mut p)?;
    let confirm = p.boolean("confirm")?.unwrap_or(false);
    let method = parse_method(&mut p)?;
    parse_method_types(&mut p)?;
    let capture = match p.string("capture_method")?.as_deref() {
        None | Some("automatic") | Some("automatic_async") => true,
        Some("manual") => false,
        Some(_) => {
            return Err(CoreError::invalid(
                "capture_method",
                "parameter_invalid",
                "capture_method must be automatic, automatic_async or manual.",
            ))
        }
    };
    let save = parse_future_usage(&mut p)?;
    let fields = CreatePaymentFields {
        amount,
        currency,
        // Replaced once the method is resolved.
        payment_method: PaymentMethodInput::ConnectorToken(String::new()),
        customer: p
            .string("customer")?
            .map(|c| tender_core::stripe::ids::tender(&c)),
        description: p.string("description")?,
        metadata: p.metadata()?.unwrap_or_default(),
        capture,
        save_payment_method: save,
        return_url: p.string("return_url")?,
    };
    if confirm && method.is_none() {
        return Err(CoreError::invalid(
            "payment_method",
            "parameter_missing",
            "A PaymentIntent confirmed when it is created needs a payment_method (or payment_method_data).",
        ));
    }
    Ok(NewIntent {
        method,
        fields,
        confirm,
    })
}

/// `setup_future_usage` (save the card for later payments) and `off_session` (read; Tender
/// asks the customer nothing either way).
fn parse_future_usage(p: &mut Params) -> Result<bool, CoreError> {
    let save = match p.string("setup_future_usage")?.as_deref() {
        None => false,
        Some("off_session" | "on_session") => true,
        Some(_) => {
            return Err(CoreError::invalid(
                "setup_future_usage",
                "parameter_invalid",
                "setup_future_usage must be off_session or on_session.",
            ))
        }
    };
    if !matches!(p.peek("off_session"), Some(serde_json::Value::String(s)) if s == "one_off" || s == "recurring")
    {
        p.boolean("off_session")?;
    }
    Ok(save)
}

/// The method given, resolved: a test token as its card (test mode only).
pub(super) fn resolve_method(
    ctx: &RequestContext,
    method: MethodGiven,
) -> Result<PaymentMethodInput, CoreError> {
    Ok(match method {
        MethodGiven::Saved(id) => PaymentMethodInput::Saved(id),
        MethodGiven::TestToken(name) => {
            PaymentMethodInput::Card(test_card(ctx, &name, "payment_method")?)
        }
        MethodGiven::Card(card) => {
            PaymentMethodInput::Card(card.card(ctx, "payment_method_data[card][token]")?)
        }
    })
}

/// A card given to an intent that is not confirmed yet (or to a SetupIntent), saved as a
/// payment method (outside the request's idempotency key, which the intent's own write
/// completes).
pub(super) async fn one_time(
    state: &AppState,
    ctx: &RequestContext,
    method: PaymentMethodInput,
) -> Result<PaymentMethodId, CoreError> {
    match method {
        PaymentMethodInput::Saved(id) => Ok(id),
        PaymentMethodInput::Card(card) => {
            let mut saving = ctx.clone();
            saving.idempotency = None;
            let pm = state
                .services
                .payment_methods()
                .create_payment_method(&saving, card, Vec::new())
                .await?;
            PaymentMethodId::found(pm.id)
        }
        _ => Err(CoreError::invalid(
            "payment_method",
            "parameter_invalid",
            "Only cards can be given to a PaymentIntent.",
        )),
    }
}

pub(crate) async fn create(state: AppState, ctx: RequestContext, cmd: NewIntent) -> ApiResult {
    let method = cmd.method.map(|m| resolve_method(&ctx, m)).transpose()?;
    if cmd.confirm {
        let Some(payment_method) = method else {
            // The parser refuses this already; never a panic on a request.
            return Err(CoreError::invalid(
                "payment_method",
                "parameter_missing",
                "A PaymentIntent confirmed when it is created needs a payment_method.",
            )
            .into());
        };
        let create = CreatePayment::try_from(CreatePaymentFields {
            payment_method,
            ..cmd.fields
        })?;
        return crate::http::payments::create_payment(state, ctx, create).await;
    }
    let payment = CreatePayment::try_from(cmd.fields)?;
    let payment_method = match method {
        Some(m) => Some(one_time(&state, &ctx, m).await?),
        None => None,
    };
    let intent = state
        .services
        .payments()
        .create_intent(
            &ctx,
            CreateIntent {
                payment,
                payment_method,
            },
        )
        .await?;
    ok(&state.services.renderer().payment(&intent))
}

/// `POST /v1/payment_intents/{id}/confirm`, parsed.
#[derive(Debug)]
pub struct Confirm {
    method: Option<MethodGiven>,
    return_url: Option<String>,
    save: bool,
}

pub fn parse_confirm(mut i: Input) -> Result<(PaymentId, Confirm), CoreError> {
    let id = path_id(&i)?;
    let mut p = form(&mut i, CONFIRM)?;
    let method = parse_method(&mut p)?;
    parse_method_types(&mut p)?;
    let save = parse_future_usage(&mut p)?;
    Ok((
        id,
        Confirm {
            method,
            return_url: p.string("return_url")?,
            save,
        },
    ))
}

pub(crate) async fn confirm(
    state: AppState,
    ctx: RequestContext,
    (id, cmd): (PaymentId, Confirm),
) -> ApiResult {
    let payment_method = cmd.method.map(|m| resolve_method(&ctx, m)).transpose()?;
    if let Some(url) = &cmd.return_url {
        tender_core::validate::check_return_url(url)?;
    }
    let result = state
        .services
        .payments()
        .confirm_payment(
            &ctx,
            &id,
            ConfirmIntent {
                payment_method,
                return_url: cmd.return_url,
                save_payment_method: cmd.save,
            },
        )
        .await;
    crate::http::payments::answer_created(&state, result)
}

/// A retrieve: the id (`pi_X`, or `ch_X` for a charge), and no parameters.
pub fn parse_id(mut i: Input) -> Result<PaymentId, CoreError> {
    let id = path_id(&i)?;
    form(&mut i, &[])?;
    Ok(id)
}

pub fn parse_update(mut i: Input) -> Result<(PaymentId, UpdatePayment), CoreError> {
    let id = path_id(&i)?;
    let mut p = form(&mut i, UPDATE)?;
    Ok((
        id,
        UpdatePayment {
            description: p.clearable_string("description")?,
            metadata: p.metadata()?,
            customer: p
                .string("customer")?
                .map(|c| referenced::<tender_core::ids::kind::Customer>(c, "customer"))
                .transpose()?
                .map(|c: CustomerId| c),
        },
    ))
}

pub fn parse_capture(mut i: Input) -> Result<(PaymentId, Option<i64>), CoreError> {
    let id = path_id(&i)?;
    let mut p = form(&mut i, CAPTURE)?;
    Ok((id, p.integer("amount_to_capture")?))
}

pub fn parse_cancel(mut i: Input) -> Result<(PaymentId, Option<CancellationReason>), CoreError> {
    let id = path_id(&i)?;
    let mut p = form(&mut i, CANCEL)?;
    Ok((
        id,
        crate::http::payments::parse_cancellation_reason(&mut p)?,
    ))
}

pub fn parse_list(mut i: Input) -> Result<ListRequest, CoreError> {
    let mut p = list_form(&mut i, LIST)?;
    let filters = match p.string("customer")? {
        Some(c) => vec![(
            Field::Customer,
            referenced::<tender_core::ids::kind::Customer>(c, "customer")?.to_string(),
        )],
        None => Vec::new(),
    };
    list_request(&i, &mut p, filters)
}
