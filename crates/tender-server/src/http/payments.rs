//! `/v2/payments`: create, retrieve, update, capture, cancel, list.

use serde_json::Value;
use tender_core::card::CardInput;
use tender_core::error::CoreError;
use tender_core::ids::{CustomerId, PaymentId, PaymentMethodId};
use tender_core::money::Currency;
use tender_core::payments::create::{CreatePayment, CreatePaymentFields, PaymentMethodInput};
use tender_core::payments::lifecycle::UpdatePayment;
use tender_core::payments::payment::{CancellationReason, PaymentStatus};
use tender_core::secret::Secret;
use tender_core::services::RequestContext;
use tender_core::store::Field;

use super::params::{Listing, Params, Query};
use super::{ok, ApiResult};
use crate::state::AppState;

pub(crate) fn parse_currency(p: &mut Params) -> Result<Currency, CoreError> {
    let raw = p.string("currency")?;
    let raw = p.required("currency", raw)?;
    Currency::parse(&raw).ok_or_else(|| {
        CoreError::invalid(
            "currency",
            "parameter_invalid",
            format!("Invalid currency: {raw}."),
        )
    })
}

pub fn parse_card(pm: &mut Params) -> Result<CardInput, CoreError> {
    let card = pm.object("card", &["number", "exp_month", "exp_year", "cvc"])?;
    let mut card = pm.required("card", card)?;
    let number = card.string("number")?;
    let number = card.required("number", number)?;
    let exp_month = card.integer("exp_month")?;
    let exp_month = card.required("exp_month", exp_month)?;
    let exp_year = card.integer("exp_year")?;
    let exp_year = card.required("exp_year", exp_year)?;
    let cvc = card.string("cvc")?;
    let cvc = card.required("cvc", cvc)?;
    Ok(CardInput {
        number: Secret::new(number),
        exp_month,
        exp_year,
        cvc: Secret::new(cvc),
    })
}

/// `payment_method`: a `pm_…` id or `{type, card | bank_transfer | connector_token}`.
fn parse_payment_method(p: &mut Params) -> Result<PaymentMethodInput, CoreError> {
    if let Some(Value::String(_)) = p.peek("payment_method") {
        let id = p.string("payment_method")?.unwrap_or_default();
        return Ok(PaymentMethodInput::Saved(PaymentMethodId::referenced(
            id,
            "payment_method",
        )?));
    }
    const KINDS: [&str; 3] = ["card", "bank_transfer", "connector_token"];
    let pm = p.object(
        "payment_method",
        &["type", "card", "bank_transfer", "connector_token"],
    )?;
    let mut pm = p.required("payment_method", pm)?;
    let kind = pm.string("type")?;
    let kind = pm.required("type", kind)?;
    // Only the field of the type given.
    for other in KINDS {
        if other != kind && pm.has(other) {
            return Err(CoreError::invalid(
                format!("payment_method[{other}]"),
                "parameter_unknown",
                format!("{other} cannot be given with type {kind}."),
            ));
        }
    }
    match kind.as_str() {
        "card" => parse_card(&mut pm).map(PaymentMethodInput::Card),
        "connector_token" => {
            let token = pm.string("connector_token")?;
            let token = pm.required("connector_token", token)?;
            if token.is_empty() || token.len() > 255 || !token.bytes().all(|b| b.is_ascii_graphic()) {
                return Err(CoreError::invalid(
                    "payment_method[connector_token]",
                    "parameter_invalid",
                    "connector_token must be the processor's payment method id (1 to 255 printable characters).",
                ));
            }
            Ok(PaymentMethodInput::ConnectorToken(token))
        }
        "bank_transfer" => {
            let bt = pm.object("bank_transfer", &["iban", "account_holder_name"])?;
            let mut bt = pm.required("bank_transfer", bt)?;
            let iban = bt.string("iban")?;
            let iban = bt.required("iban", iban)?;
            let holder = bt.string("account_holder_name")?;
            let holder = bt.required("account_holder_name", holder)?;
            Ok(PaymentMethodInput::BankTransfer {
                iban: Secret::new(iban),
                account_holder_name: holder,
            })
        }
        other => Err(CoreError::invalid(
            "payment_method[type]",
            "parameter_invalid",
            format!(
                "Unsupported payment method type: {other}. Use card, bank_transfer or connector_token."
            ),
        )),
    }
}

/// `POST /payments`: the body → the command the service gets (no store involved).
pub fn parse_create(body: Value) -> Result<CreatePayment, CoreError> {
    let mut p = Params::body(
        body,
        &[
            "amount",
            "currency",
            "payment_method",
            "customer",
            "description",
            "metadata",
            "capture",
            "save_payment_method",
            "return_url",
        ],
    )?;
    let amount = p.integer("amount")?;
    let amount = p.required("amount", amount)?;
    let currency = parse_currency(&mut p)?;
    let payment_method = parse_payment_method(&mut p)?;
    // The shape is read here; the values are checked once, by the command's constructor.
    CreatePayment::try_from(CreatePaymentFields {
        amount,
        currency,
        payment_method,
        customer: p.string("customer")?,
        description: p.string("description")?,
        metadata: p.metadata()?.unwrap_or_default(),
        capture: p.boolean("capture")?.unwrap_or(true),
        save_payment_method: p.boolean("save_payment_method")?.unwrap_or(false),
        return_url: p.string("return_url")?,
    })
}

pub(crate) async fn create_payment(
    state: AppState,
    ctx: RequestContext,
    cmd: CreatePayment,
) -> ApiResult {
    let result = state.services.payments().create_payment(&ctx, cmd).await;
    answer_created(&state, result)
}

/// The answer to a payment's try (a create, a confirmation), counted in the metrics.
pub(crate) fn answer_created(
    state: &AppState,
    result: Result<tender_core::payments::payment::Payment, CoreError>,
) -> ApiResult {
    match &result {
        Ok(p) => state.metrics.payment_created(p.status.as_str()),
        Err(tender_core::error::CoreError::Card {
            payment: Some(_), ..
        }) => state.metrics.payment_created("failed"),
        Err(_) => {}
    }
    ok(&state.services.renderer().payment(&result?))
}

/// `POST /payments/{id}`: the body → the update.
pub fn parse_update(body: Value) -> Result<UpdatePayment, CoreError> {
    let mut p = Params::body(body, &["description", "metadata", "customer"])?;
    Ok(UpdatePayment {
        description: p.clearable_string("description")?,
        metadata: p.metadata()?,
        customer: p
            .string("customer")?
            .map(|c| CustomerId::referenced(c, "customer"))
            .transpose()?,
    })
}

pub(crate) async fn update_payment(
    state: AppState,
    ctx: RequestContext,
    (id, cmd): (PaymentId, UpdatePayment),
) -> ApiResult {
    let payment = state
        .services
        .payments()
        .update_payment(&ctx, &id, cmd)
        .await?;
    ok(&state.services.renderer().payment(&payment))
}

/// `POST /payments/{id}/capture`: the body → the amount to capture (default all).
pub fn parse_capture(body: Value) -> Result<Option<i64>, CoreError> {
    Params::body(body, &["amount"])?.integer("amount")
}

pub(crate) async fn capture_payment(
    state: AppState,
    ctx: RequestContext,
    (id, amount): (PaymentId, Option<i64>),
) -> ApiResult {
    let payment = state
        .services
        .payments()
        .capture_payment(&ctx, &id, amount)
        .await?;
    ok(&state.services.renderer().payment(&payment))
}

/// `POST /payments/{id}/cancel`: the body → the reason.
pub fn parse_cancel(body: Value) -> Result<Option<CancellationReason>, CoreError> {
    parse_cancellation_reason(&mut Params::body(body, &["cancellation_reason"])?)
}

/// `cancellation_reason`, in either dialect.
pub(crate) fn parse_cancellation_reason(
    p: &mut Params,
) -> Result<Option<CancellationReason>, CoreError> {
    p.string("cancellation_reason")?
        .map(|r| {
            CancellationReason::parse(&r).ok_or_else(|| {
                CoreError::invalid(
                    "cancellation_reason",
                    "parameter_invalid",
                    "cancellation_reason must be duplicate, fraudulent, requested_by_customer or abandoned.",
                )
            })
        })
        .transpose()
}

pub(crate) async fn cancel_payment(
    state: AppState,
    ctx: RequestContext,
    (id, reason): (PaymentId, Option<CancellationReason>),
) -> ApiResult {
    let payment = state
        .services
        .payments()
        .cancel_payment(&ctx, &id, reason)
        .await?;
    ok(&state.services.renderer().payment(&payment))
}

/// `GET /payments`: the query string → page and filters.
pub fn parse_list(query: Option<&str>) -> Result<Listing, CoreError> {
    let q = Query::parse(query, &["customer", "status"])?;
    let params = q.list_params()?;
    let mut filters = Vec::new();
    if let Some(c) = q.get("customer") {
        filters.push((Field::Customer, c.to_string()));
    }
    if let Some(s) = q.get("status") {
        let status = PaymentStatus::parse(s).ok_or_else(|| {
            CoreError::invalid(
                "status",
                "parameter_invalid",
                format!("Unknown payment status: {s}."),
            )
        })?;
        filters.push((Field::Status, status.as_str().to_string()));
    }
    Ok((params, filters))
}
