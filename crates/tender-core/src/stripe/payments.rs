//! A payment in Stripe's shapes: the PaymentIntent (`pi_X`) and its one charge (`ch_X`), both
//! read from the payment as `/v2` shows it (`documents::render::PaymentView`), every field of
//! Stripe's published shape present (`null` or Stripe's default where Tender has nothing).
//!
//! | Tender `status` | PaymentIntent `status` | charge `status` |
//! |---|---|---|
//! | `requires_action` | `requires_action` | `pending` |
//! | `processing` | `processing` | `pending` |
//! | `requires_capture` | `requires_capture` | `succeeded` (`captured: false`) |
//! | `succeeded` | `succeeded` | `succeeded` |
//! | `failed` (a decline) | `requires_payment_method`, with `last_payment_error` | `failed` |
//! | `canceled` | `canceled` | `failed` after a decline, else `succeeded`, `refunded` (the authorisation released) |
//!
//! Pure; depends on [`super::ids`] and `serde_json`.

use serde_json::{json, Map, Value};

use super::ids;
use super::Shapes;

fn text<'a>(p: &'a Value, key: &str) -> &'a str {
    p.get(key).and_then(Value::as_str).unwrap_or_default()
}

fn int(p: &Value, key: &str) -> i64 {
    p.get(key).and_then(Value::as_i64).unwrap_or_default()
}

fn field(p: &Value, key: &str) -> Value {
    p.get(key).cloned().unwrap_or(Value::Null)
}

/// A Tender status as the PaymentIntent's.
pub fn intent_status(status: &str) -> &str {
    match status {
        "failed" => "requires_payment_method",
        other => other,
    }
}

/// The PaymentIntent `pi_X` of the payment `p` (its `/v2` JSON).
pub fn payment_intent(shapes: &Shapes, p: &Value) -> Value {
    let id = text(p, "id");
    let status = text(p, "status");
    let amount = int(p, "amount");
    let payment_method = p.get("payment_method");
    let pm_id = payment_method
        .and_then(|pm| pm.get("id"))
        .cloned()
        .unwrap_or(Value::Null);
    let attempted = !matches!(status, "requires_payment_method" | "requires_confirmation");
    json!({
        "id": ids::intent(id),
        "object": "payment_intent",
        "allowed_payment_method_types": null,
        "amount": amount,
        "amount_capturable": if status == "requires_capture" { amount } else { 0 },
        "amount_received": int(p, "amount_captured"),
        "application": null,
        "application_fee_amount": null,
        "automatic_payment_methods": null,
        "canceled_at": field(p, "canceled_at"),
        "cancellation_reason": field(p, "cancellation_reason"),
        "capture_method": field(p, "capture_method"),
        "client_secret": shapes.client_secret(id),
        "confirmation_method": "automatic",
        "created": field(p, "created"),
        "currency": field(p, "currency"),
        "customer": field(p, "customer"),
        "customer_account": null,
        "description": field(p, "description"),
        "excluded_payment_method_types": null,
        "last_payment_error": last_payment_error(p),
        "latest_charge": if attempted { Value::String(ids::charge(id)) } else { Value::Null },
        "livemode": field(p, "livemode"),
        "managed_payments": null,
        "metadata": p.get("metadata").cloned().unwrap_or_else(|| json!({})),
        "next_action": field(p, "next_action"),
        "on_behalf_of": null,
        "payment_method": pm_id,
        "payment_method_configuration_details": null,
        "payment_method_options": {},
        "payment_method_types": [payment_method_type(p)],
        "payment_record": null,
        "processing": null,
        "receipt_email": null,
        "review": null,
        "setup_future_usage": null,
        "shipping": null,
        "source": null,
        "statement_descriptor": null,
        "statement_descriptor_suffix": null,
        "status": intent_status(status),
        "transfer_data": null,
        "transfer_group": null,
    })
}

/// `card`, or Tender's own payment method type (`bank_transfer`, `connector_token`).
fn payment_method_type(p: &Value) -> Value {
    p.get("payment_method")
        .and_then(|pm| pm.get("type"))
        .cloned()
        .unwrap_or_else(|| Value::String("card".into()))
}

/// A decline as the intent's `last_payment_error`; `null` for any other payment.
fn last_payment_error(p: &Value) -> Value {
    let Some(code) = p.get("failure_code").and_then(Value::as_str) else {
        return Value::Null;
    };
    let mut e = Map::new();
    e.insert("type".into(), json!("card_error"));
    e.insert("code".into(), json!(code));
    e.insert("decline_code".into(), field(p, "decline_code"));
    e.insert("doc_url".into(), json!(super::doc_url(code)));
    e.insert("message".into(), field(p, "failure_message"));
    e.insert("charge".into(), json!(ids::charge(text(p, "id"))));
    if let Some(pm) = p.get("payment_method").filter(|pm| pm.is_object()) {
        e.insert(
            "payment_method".into(),
            super::objects::snapshot_payment_method(pm, p),
        );
    }
    Value::Object(e)
}

/// The charge `ch_X` of the payment `p` (its `/v2` JSON).
pub fn charge(p: &Value) -> Value {
    let id = text(p, "id");
    let status = text(p, "status");
    let amount = int(p, "amount");
    let declined = p.get("failure_code").is_some_and(|c| !c.is_null());
    let released = status == "canceled" && !declined;
    let charge_status = match status {
        "requires_action" | "processing" => "pending",
        _ if declined => "failed",
        _ => "succeeded",
    };
    let captured = int(p, "amount_captured") > 0;
    let amount_refunded = if released {
        amount
    } else {
        int(p, "amount_refunded")
    };
    json!({
        "id": ids::charge(id),
        "object": "charge",
        "amount": amount,
        "amount_captured": int(p, "amount_captured"),
        "amount_refunded": amount_refunded,
        "application": null,
        "application_fee": null,
        "application_fee_amount": null,
        "balance_transaction": field(p, "balance_transaction"),
        "billing_details": super::objects::empty_billing_details(),
        "calculated_statement_descriptor": "TENDER",
        "captured": captured,
        "created": field(p, "created"),
        "currency": field(p, "currency"),
        "customer": field(p, "customer"),
        "description": field(p, "description"),
        "disputed": p.get("disputed").cloned().unwrap_or(Value::Bool(false)),
        "failure_balance_transaction": null,
        "failure_code": field(p, "failure_code"),
        "failure_message": field(p, "failure_message"),
        "fraud_details": {},
        "livemode": field(p, "livemode"),
        "metadata": p.get("metadata").cloned().unwrap_or_else(|| json!({})),
        "on_behalf_of": null,
        "outcome": outcome(p, charge_status),
        "paid": charge_status == "succeeded",
        "payment_intent": ids::intent(id),
        "payment_method": p.get("payment_method").and_then(|pm| pm.get("id")).cloned().unwrap_or(Value::Null),
        "payment_method_details": payment_method_details(p),
        "receipt_email": null,
        "receipt_number": null,
        "receipt_url": field(p, "receipt_url"),
        "refunded": released || p.get("refunded").and_then(Value::as_bool).unwrap_or(false),
        "review": null,
        "shipping": null,
        "source": null,
        "source_transfer": null,
        "statement_descriptor": null,
        "statement_descriptor_suffix": null,
        "status": charge_status,
        "transfer_data": null,
        "transfer_group": null,
    })
}

/// The charge's `outcome`: authorised, or the issuer's decline with its reason.
fn outcome(p: &Value, charge_status: &str) -> Value {
    let declined = charge_status == "failed";
    let reason = if declined {
        field(p, "decline_code")
    } else {
        Value::Null
    };
    json!({
        "advice_code": null,
        "network_advice_code": null,
        "network_decline_code": null,
        "network_status": if declined { "declined_by_network" } else { "approved_by_network" },
        "reason": reason,
        "risk_level": "normal",
        "seller_message": if declined { "The bank did not return any further details with this decline." } else { "Payment complete." },
        "type": if declined { "issuer_declined" } else { "authorized" },
    })
}

/// `payment_method_details`: the card as the charge saw it (or the type alone).
fn payment_method_details(p: &Value) -> Value {
    let kind = payment_method_type(p);
    let Some(card) = p
        .get("payment_method")
        .and_then(|pm| pm.get("card"))
        .filter(|c| c.is_object())
    else {
        return json!({ "type": kind });
    };
    json!({
        "type": "card",
        "card": {
            "amount_authorized": if text(p, "status") == "failed" { Value::Null } else { json!(int(p, "amount")) },
            "authorization_code": null,
            "brand": field(card, "brand"),
            "checks": {
                "address_line1_check": null,
                "address_postal_code_check": null,
                "cvc_check": "pass",
            },
            "country": field(card, "country"),
            "electronic_commerce_indicator": null,
            "exp_month": field(card, "exp_month"),
            "exp_year": field(card, "exp_year"),
            "fingerprint": field(card, "fingerprint"),
            "funding": field(card, "funding"),
            "installments": null,
            "last4": field(card, "last4"),
            "mandate": null,
            "network": field(card, "brand"),
            "network_token": null,
            "network_transaction_id": null,
            "regulated_status": null,
            "three_d_secure": null,
            "transaction_link_id": null,
            "wallet": null,
        },
    })
}
