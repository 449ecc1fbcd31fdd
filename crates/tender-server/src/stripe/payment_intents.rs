//! `/v1/payment_intents` (and the charge of each, `/v1/charges/{id}`): Stripe's parameters
//! read into `/v2`'s payment commands. A PaymentIntent is Tender's payment `pay_X` as `pi_X`.
//!
//! Creating one confirms it (`confirm=true` is required): Tender's payments are confirmed
//! when they are created. `capture_method=manual` is `capture: false`;
//! `setup_future_usage` saves the card to the customer; a test token (`pm_card_visa`,
//! `payment_method_data[card][token]=tok_visa`) stands for its test card.

use tender_core::error::CoreError;
use tender_core::ids::{CustomerId, PaymentId, PaymentMethodId};
use tender_core::payments::create::{CreatePayment, CreatePaymentFields, PaymentMethodInput};
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
use crate::http::ApiResult;
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
pub struct CreateIntent {
    method: MethodGiven,
    fields: CreatePaymentFields,
}

fn parse_method(p: &mut Params) -> Result<MethodGiven, CoreError> {
    if let Some(id) = p.string("payment_method")? {
        if p.has("payment_method_data") {
            return Err(CoreError::invalid(
                "payment_method_data",
                "parameter_invalid",
                "Give payment_method or payment_method_data, not both.",
            ));
        }
        if test_tokens::is_token(&id) {
            return Ok(MethodGiven::TestToken(id));
        }
        return Ok(MethodGiven::Saved(referenced(id, "payment_method")?));
    }
    let data = p.object("payment_method_data", &["type", "card"])?;
    let mut data = p.required("payment_method", data)?;
    let kind = data.string("type")?;
    if data.required("type", kind)? != "card" {
        return Err(CoreError::invalid(
            "payment_method_data[type]",
            "parameter_invalid",
            "Tender takes cards: payment_method_data[type] must be card.",
        ));
    }
    parse_card_given(&mut data).map(MethodGiven::Card)
}

/// `payment_method_types[]` (each `card`) and `automatic_payment_methods[enabled]`: read and
/// checked; a card is what Tender takes either way.
fn parse_method_types(p: &mut Params) -> Result<(), CoreError> {
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

pub fn parse_create(mut i: Input) -> Result<CreateIntent, CoreError> {
    let mut p = form(&mut i, CREATE)?;
    let amount = p.integer("amount")?;
    let amount = p.required("amount", amount)?;
    let currency = parse_currency(&mut p)?;
    if p.boolean("confirm")? != Some(true) {
        return Err(CoreError::invalid(
            "confirm",
            "parameter_invalid",
            "Tender confirms a PaymentIntent when it is created: pass confirm=true with its payment_method.",
        ));
    }
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
    // Server-side by definition here: the customer is not present; Tender needs no flag.
    if !matches!(p.peek("off_session"), Some(serde_json::Value::String(s)) if s == "one_off" || s == "recurring")
    {
        p.boolean("off_session")?;
    }
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
    Ok(CreateIntent { method, fields })
}

pub(crate) async fn create(state: AppState, ctx: RequestContext, cmd: CreateIntent) -> ApiResult {
    let payment_method = match cmd.method {
        MethodGiven::Saved(id) => PaymentMethodInput::Saved(id),
        MethodGiven::TestToken(name) => {
            PaymentMethodInput::Card(test_card(&ctx, &name, "payment_method")?)
        }
        MethodGiven::Card(card) => {
            PaymentMethodInput::Card(card.card(&ctx, "payment_method_data[card][token]")?)
        }
    };
    let create = CreatePayment::try_from(CreatePaymentFields {
        payment_method,
        ..cmd.fields
    })?;
    crate::http::payments::create_payment(state, ctx, create).await
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
    let reason = match p.string("cancellation_reason")? {
        None => None,
        Some(r) => Some(CancellationReason::parse(&r).ok_or_else(|| {
            CoreError::invalid(
                "cancellation_reason",
                "parameter_invalid",
                "cancellation_reason must be duplicate, fraudulent, requested_by_customer or abandoned.",
            )
        })?),
    };
    Ok((id, reason))
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
