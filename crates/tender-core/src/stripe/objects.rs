//! Customers, payment methods and refunds in Stripe's shapes, read from their `/v2` JSON. The
//! fields are the same facts under Stripe's names; what Tender does not keep is `null` or
//! Stripe's default (`balance: 0`, `tax_exempt: "none"`, `allow_redisplay: "unspecified"`).
//! Pure; depends on [`super::ids`] and `serde_json`.

use serde_json::{json, Value};

use super::ids;

fn field(v: &Value, key: &str) -> Value {
    v.get(key).cloned().unwrap_or(Value::Null)
}

fn metadata(v: &Value) -> Value {
    v.get("metadata").cloned().unwrap_or_else(|| json!({}))
}

/// An address with every line present.
fn address(a: &Value) -> Value {
    if !a.is_object() {
        return Value::Null;
    }
    json!({
        "city": field(a, "city"),
        "country": field(a, "country"),
        "line1": field(a, "line1"),
        "line2": field(a, "line2"),
        "postal_code": field(a, "postal_code"),
        "state": field(a, "state"),
    })
}

/// `billing_details` when Tender keeps none.
pub fn empty_billing_details() -> Value {
    json!({
        "address": address(&json!({})),
        "email": null,
        "name": null,
        "phone": null,
        "tax_id": null,
    })
}

/// The customer `c`; a deleted one (`{id, object, deleted}`) as Stripe's `DeletedCustomer`.
pub fn customer(c: &Value) -> Value {
    if c.get("deleted").and_then(Value::as_bool) == Some(true) {
        return json!({"id": field(c, "id"), "object": "customer", "deleted": true});
    }
    json!({
        "id": field(c, "id"),
        "object": "customer",
        "address": address(&field(c, "address")),
        "balance": 0,
        "created": field(c, "created"),
        "currency": null,
        "default_source": null,
        "delinquent": false,
        "description": field(c, "description"),
        "discount": null,
        "email": field(c, "email"),
        "invoice_prefix": null,
        "invoice_settings": {
            "custom_fields": null,
            "default_payment_method": c.pointer("/invoice_settings/default_payment_method").cloned().unwrap_or(Value::Null),
            "footer": null,
            "rendering_options": null,
        },
        "livemode": field(c, "livemode"),
        "metadata": metadata(c),
        "name": field(c, "name"),
        "phone": field(c, "phone"),
        "preferred_locales": [],
        "shipping": null,
        "tax_exempt": "none",
        "test_clock": field(c, "test_clock"),
    })
}

/// A card as a payment method's `card`.
fn card(card: &Value) -> Value {
    json!({
        "brand": field(card, "brand"),
        "checks": {
            "address_line1_check": null,
            "address_postal_code_check": null,
            "cvc_check": "pass",
        },
        "country": field(card, "country"),
        "display_brand": field(card, "brand"),
        "exp_month": field(card, "exp_month"),
        "exp_year": field(card, "exp_year"),
        "fingerprint": field(card, "fingerprint"),
        "funding": field(card, "funding"),
        "generated_from": null,
        "last4": field(card, "last4"),
        "networks": {"available": [field(card, "brand")], "preferred": null},
        "regulated_status": "unregulated",
        "three_d_secure_usage": {"supported": true},
        "wallet": null,
    })
}

/// The payment method `pm` (its `/v2` JSON).
pub fn payment_method(pm: &Value) -> Value {
    let mut out = json!({
        "id": field(pm, "id"),
        "object": "payment_method",
        "allow_redisplay": "unspecified",
        "billing_details": empty_billing_details(),
        "created": field(pm, "created"),
        "customer": field(pm, "customer"),
        "customer_account": null,
        "livemode": field(pm, "livemode"),
        "metadata": metadata(pm),
        "type": field(pm, "type"),
    });
    if let Some(c) = pm.get("card").filter(|c| c.is_object()) {
        out["card"] = card(c);
    }
    out
}

/// The payment method a payment used, from the snapshot the payment keeps (`snapshot`), with
/// the payment's customer, mode and time where the snapshot has none.
pub fn snapshot_payment_method(snapshot: &Value, payment: &Value) -> Value {
    let mut pm = snapshot.clone();
    if let Some(obj) = pm.as_object_mut() {
        for key in ["livemode", "created"] {
            obj.entry(key).or_insert_with(|| field(payment, key));
        }
        obj.entry("customer").or_insert(Value::Null);
    }
    payment_method(&pm)
}

/// The refund `r` (its `/v2` JSON): its payment as `payment_intent` and `charge`.
pub fn refund(r: &Value) -> Value {
    let payment = r.get("payment").and_then(Value::as_str).unwrap_or_default();
    json!({
        "id": field(r, "id"),
        "object": "refund",
        "amount": field(r, "amount"),
        "balance_transaction": field(r, "balance_transaction"),
        "charge": ids::charge(payment),
        "created": field(r, "created"),
        "currency": field(r, "currency"),
        "customer": null,
        "customer_account": null,
        "metadata": metadata(r),
        "payment_intent": ids::intent(payment),
        "payment_method": null,
        "reason": field(r, "reason"),
        "receipt_number": null,
        "source_transfer_reversal": null,
        "status": field(r, "status"),
        "transfer_reversal": null,
    })
}

/// A webhook endpoint (its `secret` only in the answer that created it); a deleted one as
/// Stripe's `DeletedWebhookEndpoint`.
pub fn webhook_endpoint(e: &Value) -> Value {
    if e.get("deleted").and_then(Value::as_bool) == Some(true) {
        return json!({"id": field(e, "id"), "object": "webhook_endpoint", "deleted": true});
    }
    let stripe = e.get("dialect").and_then(Value::as_str) == Some("stripe");
    let mut out = json!({
        "id": field(e, "id"),
        "object": "webhook_endpoint",
        "api_version": if stripe { json!(super::API_VERSION) } else { Value::Null },
        "application": null,
        "created": field(e, "created"),
        "description": field(e, "description"),
        "enabled_events": field(e, "enabled_events"),
        "livemode": field(e, "livemode"),
        "metadata": {},
        "status": field(e, "status"),
        "url": field(e, "url"),
    });
    if let Some(secret) = e.get("secret").filter(|s| s.is_string()) {
        out["secret"] = secret.clone();
    }
    out
}

/// A card-testing block (`risk.blocked`, CONTRACT §14) as Stripe's nearest object, the
/// `radar.early_fraud_warning` Radar sends for a card that looks stolen: `fraud_type` `misc`,
/// not `actionable` (nothing was charged to refund), `charge` and `payment_intent` the payment
/// the blocked try was for when it was one (`null` for a Checkout page's or an invoice's try,
/// refused before any payment). What Stripe has no field for (the reason, the limit, the
/// address, until when) is in `/v2`'s `risk_block`.
pub fn early_fraud_warning(v2: &Value) -> Value {
    let payment = v2["reference"].as_str().filter(|r| r.starts_with("pay_"));
    json!({
        "id": field(v2, "id"),
        "object": "radar.early_fraud_warning",
        "actionable": false,
        "charge": payment.map(ids::charge),
        "created": field(v2, "created"),
        "fraud_type": "misc",
        "livemode": field(v2, "livemode"),
        "payment_intent": payment.map(ids::intent),
    })
}
