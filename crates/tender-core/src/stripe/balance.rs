//! The balance, its transactions, payouts and disputes in Stripe's shapes, read from their
//! `/v2` JSON. A transaction's `source` and a dispute's payment name the charge (`ch_X`), as
//! at Stripe. Pure.

use serde_json::{json, Value};

use super::ids;

fn field(v: &Value, key: &str) -> Value {
    v.get(key).cloned().unwrap_or(Value::Null)
}

/// `GET /v1/balance`: `available` and `pending` per currency.
pub fn balance(b: &Value) -> Value {
    let amounts = |key: &str| -> Value {
        let list = b
            .get(key)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        Value::Array(
            list.iter()
                .map(|a| json!({"amount": field(a, "amount"), "currency": field(a, "currency"), "source_types": {"card": field(a, "amount")}}))
                .collect(),
        )
    };
    json!({
        "object": "balance",
        "available": amounts("available"),
        "livemode": field(b, "livemode"),
        "pending": amounts("pending"),
    })
}

/// A balance transaction.
pub fn balance_transaction(t: &Value) -> Value {
    let source = t.get("source").and_then(Value::as_str).map(ids::charge);
    let fee_details: Vec<Value> = t
        .get("fee_details")
        .and_then(Value::as_array)
        .map(|fees| {
            fees.iter()
                .map(|f| json!({"amount": field(f, "amount"), "application": null, "currency": field(f, "currency"), "description": field(f, "description"), "type": "stripe_fee"}))
                .collect()
        })
        .unwrap_or_default();
    json!({
        "id": field(t, "id"),
        "object": "balance_transaction",
        "amount": field(t, "amount"),
        "available_on": field(t, "available_on"),
        "balance_type": "payments",
        "created": field(t, "created"),
        "currency": field(t, "currency"),
        "description": field(t, "description"),
        "exchange_rate": null,
        "fee": field(t, "fee"),
        "fee_details": fee_details,
        "net": field(t, "net"),
        "reporting_category": field(t, "reporting_category"),
        "source": source,
        "status": field(t, "status"),
        "type": field(t, "type"),
    })
}

/// A payout to the account's bank account.
pub fn payout(p: &Value) -> Value {
    json!({
        "id": field(p, "id"),
        "object": "payout",
        "amount": field(p, "amount"),
        "application_fee": null,
        "application_fee_amount": null,
        "arrival_date": field(p, "arrival_date"),
        // A connector's processor's payout, mirrored, was made on its own schedule.
        "automatic": p["connector"].is_string(),
        "balance_transaction": field(p, "balance_transaction"),
        "created": field(p, "created"),
        "currency": field(p, "currency"),
        "description": field(p, "description"),
        "destination": null,
        "failure_balance_transaction": field(p, "failure_balance_transaction"),
        "failure_code": field(p, "failure_code"),
        "failure_message": field(p, "failure_message"),
        "livemode": field(p, "livemode"),
        "metadata": p.get("metadata").cloned().unwrap_or_else(|| json!({})),
        "method": "standard",
        "original_payout": null,
        "payout_method": null,
        "reconciliation_status": "not_applicable",
        "reversed_by": null,
        "source_type": "card",
        "statement_descriptor": null,
        "status": field(p, "status"),
        "trace_id": null,
        "type": "bank_account",
    })
}

/// The evidence fields Stripe's dispute has (all strings or file ids, `null` when not given).
const EVIDENCE: &[&str] = &[
    "access_activity_log",
    "billing_address",
    "cancellation_policy",
    "cancellation_policy_disclosure",
    "cancellation_rebuttal",
    "customer_communication",
    "customer_email_address",
    "customer_name",
    "customer_purchase_ip",
    "customer_signature",
    "duplicate_charge_documentation",
    "duplicate_charge_explanation",
    "duplicate_charge_id",
    "product_description",
    "receipt",
    "refund_policy",
    "refund_policy_disclosure",
    "refund_refusal_explanation",
    "service_date",
    "service_documentation",
    "shipping_address",
    "shipping_carrier",
    "shipping_date",
    "shipping_documentation",
    "shipping_tracking_number",
    "uncategorized_file",
    "uncategorized_text",
];

/// A dispute of a payment's charge.
pub fn dispute(d: &Value) -> Value {
    let payment = d.get("payment").and_then(Value::as_str).unwrap_or_default();
    let given = d.get("evidence").cloned().unwrap_or_else(|| json!({}));
    let mut evidence = serde_json::Map::new();
    for key in EVIDENCE {
        evidence.insert((*key).into(), field(&given, key));
    }
    evidence.insert("enhanced_evidence".into(), json!({}));
    let has_evidence = EVIDENCE.iter().any(|k| !field(&given, k).is_null());
    let details = d
        .get("evidence_details")
        .cloned()
        .unwrap_or_else(|| json!({}));
    let submissions = details
        .get("submission_count")
        .and_then(Value::as_i64)
        .unwrap_or_default();
    let transactions: Vec<Value> = d
        .get("balance_transactions")
        .and_then(Value::as_array)
        .map(|ts| ts.iter().map(balance_transaction).collect())
        .unwrap_or_default();
    let status = d.get("status").and_then(Value::as_str).unwrap_or_default();
    json!({
        "id": field(d, "id"),
        "object": "dispute",
        "amount": field(d, "amount"),
        "balance_transactions": transactions,
        "charge": ids::charge(payment),
        "created": field(d, "created"),
        "currency": field(d, "currency"),
        "enhanced_eligibility_types": [],
        "evidence": evidence,
        "evidence_details": {
            "due_by": field(&details, "due_by"),
            "enhanced_eligibility": {},
            "has_evidence": has_evidence,
            "past_due": false,
            "submission_count": submissions,
            "submission_method": if submissions > 0 { "manual" } else { "not_submitted" },
        },
        "intended_submission_method": null,
        "is_charge_refundable": false,
        "livemode": field(d, "livemode"),
        "metadata": d.get("metadata").cloned().unwrap_or_else(|| json!({})),
        "payment_intent": ids::intent(payment),
        "reason": field(d, "reason"),
        "status": if status == "under_review" || status == "needs_response" || status == "won" || status == "lost" { status } else { "needs_response" },
    })
}
