//! Products, prices, subscriptions, invoices and test clocks in Stripe's shapes, read from
//! their `/v2` JSON (the same facts; Stripe's fields Tender has no notion of are `null` or
//! Stripe's default). In the pinned API version a subscription's period lives on its items
//! (`items.data[].current_period_*`) and an invoice names its subscription under
//! `parent.subscription_details`, its payments under `payments`. Pure.

use serde_json::{json, Value};

use super::ids;

fn field(v: &Value, key: &str) -> Value {
    v.get(key).cloned().unwrap_or(Value::Null)
}

fn metadata(v: &Value) -> Value {
    v.get("metadata").cloned().unwrap_or_else(|| json!({}))
}

fn deleted(v: &Value, object: &str) -> Option<Value> {
    (v.get("deleted").and_then(Value::as_bool) == Some(true))
        .then(|| json!({"id": field(v, "id"), "object": object, "deleted": true}))
}

/// A product; a deleted one as Stripe's `DeletedProduct`.
pub fn product(p: &Value) -> Value {
    if let Some(d) = deleted(p, "product") {
        return d;
    }
    json!({
        "id": field(p, "id"),
        "object": "product",
        "active": field(p, "active"),
        "created": field(p, "created"),
        "default_price": null,
        "description": field(p, "description"),
        "images": [],
        "livemode": field(p, "livemode"),
        "marketing_features": [],
        "metadata": metadata(p),
        "name": field(p, "name"),
        "package_dimensions": null,
        "shippable": null,
        "tax_code": null,
        "tax_details": null,
        "type": "service",
        "unit_label": null,
        "updated": field(p, "created"),
        "url": null,
    })
}

/// A price (`unit_amount` per unit; `recurring` with Stripe's defaults).
pub fn price(p: &Value) -> Value {
    let recurring = match p.get("recurring").filter(|r| r.is_object()) {
        Some(r) => json!({
            "interval": field(r, "interval"),
            "interval_count": r.get("interval_count").cloned().unwrap_or(json!(1)),
            "meter": null,
            "trial_period_days": null,
            "usage_type": "licensed",
        }),
        None => Value::Null,
    };
    let amount = field(p, "unit_amount");
    json!({
        "id": field(p, "id"),
        "object": "price",
        "active": field(p, "active"),
        "billing_scheme": "per_unit",
        "created": field(p, "created"),
        "currency": field(p, "currency"),
        "custom_unit_amount": null,
        "livemode": field(p, "livemode"),
        "lookup_key": field(p, "lookup_key"),
        "metadata": metadata(p),
        "nickname": field(p, "nickname"),
        "product": field(p, "product"),
        "recurring": recurring,
        "tax_behavior": "unspecified",
        "tiers_mode": null,
        "transform_quantity": null,
        "type": field(p, "type"),
        "unit_amount_decimal": amount.as_i64().map(|a| a.to_string()),
        "unit_amount": amount,
    })
}

/// One item of the subscription `s` (its `/v2` item: `{id, price, quantity}`).
fn subscription_item(s: &Value, item: &Value) -> Value {
    let price_v2 = item.get("price").cloned().unwrap_or(Value::Null);
    let price = if price_v2.is_object() {
        price(&price_v2)
    } else {
        price_v2
    };
    json!({
        "id": field(item, "id"),
        "object": "subscription_item",
        "billing_thresholds": null,
        "created": field(s, "created"),
        "current_period_end": field(s, "current_period_end"),
        "current_period_start": field(s, "current_period_start"),
        "current_trial": null,
        "discounts": [],
        "metadata": {},
        "plan": plan(&price),
        "price": price,
        "quantity": item.get("quantity").cloned().unwrap_or(json!(1)),
        "subscription": field(s, "id"),
        "tax_rates": [],
    })
}

/// A price as the legacy `plan` object Stripe still sends on every subscription item.
fn plan(price: &Value) -> Value {
    let recurring = price.get("recurring").cloned().unwrap_or(Value::Null);
    json!({
        "id": field(price, "id"),
        "object": "plan",
        "active": field(price, "active"),
        "amount": field(price, "unit_amount"),
        "amount_decimal": field(price, "unit_amount_decimal"),
        "billing_scheme": "per_unit",
        "created": field(price, "created"),
        "currency": field(price, "currency"),
        "interval": field(&recurring, "interval"),
        "interval_count": field(&recurring, "interval_count"),
        "livemode": field(price, "livemode"),
        "metadata": price.get("metadata").cloned().unwrap_or_else(|| json!({})),
        "meter": null,
        "nickname": field(price, "nickname"),
        "product": field(price, "product"),
        "tiers_mode": null,
        "transform_usage": null,
        "trial_period_days": null,
        "usage_type": "licensed",
    })
}

/// A subscription.
pub fn subscription(s: &Value) -> Value {
    let items: Vec<Value> = s
        .pointer("/items/data")
        .and_then(Value::as_array)
        .map(|items| items.iter().map(|i| subscription_item(s, i)).collect())
        .unwrap_or_default();
    let id = s.get("id").and_then(Value::as_str).unwrap_or_default();
    json!({
        "id": id,
        "object": "subscription",
        "application": null,
        "application_fee_percent": null,
        "automatic_tax": {"disabled_reason": null, "enabled": false, "liability": null},
        "billing_cycle_anchor": field(s, "billing_cycle_anchor"),
        "billing_cycle_anchor_config": null,
        "billing_mode": {"flexible": null, "type": "classic"},
        "billing_schedules": [],
        "billing_thresholds": null,
        "cancel_at": if s.get("cancel_at_period_end").and_then(Value::as_bool) == Some(true) { field(s, "current_period_end") } else { Value::Null },
        "cancel_at_period_end": field(s, "cancel_at_period_end"),
        "canceled_at": field(s, "canceled_at"),
        "cancellation_details": {"comment": null, "feedback": null, "feedback_option": null, "reason": null},
        "collection_method": "charge_automatically",
        "created": field(s, "created"),
        "currency": field(s, "currency"),
        "customer": field(s, "customer"),
        "customer_account": null,
        "days_until_due": null,
        "default_payment_method": field(s, "default_payment_method"),
        "default_source": null,
        "description": null,
        "discounts": [],
        "ended_at": field(s, "ended_at"),
        "invoice_settings": {"account_tax_ids": null, "custom_fields": null, "description": null, "footer": null, "issuer": {"type": "self"}},
        "items": {
            "object": "list",
            "data": items,
            "has_more": false,
            "total_count": items.len(),
            "url": format!("/v1/subscription_items?subscription={id}"),
        },
        "latest_invoice": field(s, "latest_invoice"),
        "livemode": field(s, "livemode"),
        "managed_payments": null,
        "metadata": metadata(s),
        "next_pending_invoice_item_invoice": null,
        "on_behalf_of": null,
        "pause_collection": null,
        "payment_settings": {"payment_method_options": null, "payment_method_types": null, "save_default_payment_method": "off"},
        "pending_invoice_item_interval": null,
        "pending_setup_intent": field(s, "pending_setup_intent"),
        "pending_update": null,
        "schedule": null,
        "start_date": field(s, "created"),
        "status": field(s, "status"),
        "test_clock": field(s, "test_clock"),
        "transfer_data": null,
        "trial_end": field(s, "trial_end"),
        "trial_settings": {"end_behavior": {
            "billing_cycle_anchor": "unchanged",
            "missing_payment_method": s
                .pointer("/trial_settings/end_behavior/missing_payment_method")
                .cloned()
                .unwrap_or_else(|| json!("create_invoice")),
        }},
        "trial_start": field(s, "trial_start"),
    })
}

/// An invoice: its amounts and state, the parties, and its lists (lines, payments, the
/// subscription under `parent`), each from a function of its own.
pub fn invoice(inv: &Value) -> Value {
    let mut out = invoice_amounts(inv);
    for part in [invoice_parties(inv), invoice_lists(inv)] {
        if let (Some(out), Value::Object(part)) = (out.as_object_mut(), part) {
            out.extend(part);
        }
    }
    out
}

fn int(v: &Value, key: &str) -> i64 {
    v.get(key).and_then(Value::as_i64).unwrap_or_default()
}

/// What an invoice is for and where it stands.
fn invoice_amounts(inv: &Value) -> Value {
    let status = inv
        .get("status")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let (due, paid, attempts) = (
        int(inv, "amount_due"),
        int(inv, "amount_paid"),
        int(inv, "attempt_count"),
    );
    // Stored before invoices recorded why they were made: a subscription's are renewals.
    let reason = match field(inv, "billing_reason") {
        Value::Null if field(inv, "subscription").is_null() => json!("manual"),
        Value::Null => json!("subscription_cycle"),
        reason => reason,
    };
    let finalized = if status == "draft" {
        Value::Null
    } else {
        field(inv, "created")
    };
    json!({
        "id": field(inv, "id"),
        "object": "invoice",
        "amount_due": due,
        "amount_overpaid": 0,
        "amount_paid": paid,
        "amount_remaining": if matches!(status, "paid" | "void") { 0 } else { due - paid },
        "amount_shipping": 0,
        "attempt_count": attempts,
        "attempted": attempts > 0,
        "billing_reason": reason,
        "collection_method": "charge_automatically",
        "created": field(inv, "created"),
        "currency": field(inv, "currency"),
        "due_date": null,
        "effective_at": finalized,
        "ending_balance": 0,
        "hosted_invoice_url": field(inv, "hosted_invoice_url"),
        "invoice_pdf": inv
            .get("hosted_invoice_url")
            .and_then(Value::as_str)
            .map(|url| format!("{url}/pdf")),
        "livemode": field(inv, "livemode"),
        "metadata": {},
        "next_payment_attempt": field(inv, "next_payment_attempt"),
        "number": field(inv, "number"),
        "period_end": field(inv, "period_end"),
        "period_start": field(inv, "period_start"),
        "post_payment_credit_notes_amount": 0,
        "pre_payment_credit_notes_amount": 0,
        "receipt_number": null,
        "starting_balance": 0,
        "status": status,
        "status_transitions": {
            "finalized_at": finalized,
            "marked_uncollectible_at": null,
            "paid_at": if status == "paid" { field(inv, "created") } else { Value::Null },
            "voided_at": null,
        },
        "subtotal": due,
        "subtotal_excluding_tax": due,
        "test_clock": field(inv, "test_clock"),
        "total": due,
        "total_discount_amounts": [],
        "total_excluding_tax": due,
        "total_pretax_credit_amounts": [],
        "total_taxes": [],
        "webhooks_delivered_at": field(inv, "created"),
    })
}

/// Who an invoice is from and to: the customer's id, and `null` for what Tender does not copy
/// onto invoices (the customer's details, the account's, tax ids).
fn invoice_parties(inv: &Value) -> Value {
    json!({
        "account_country": null,
        "account_name": null,
        "account_tax_ids": null,
        "application": null,
        "automatic_tax": {"disabled_reason": null, "enabled": false, "liability": null, "provider": null, "status": null},
        "automatically_finalizes_at": null,
        "custom_fields": null,
        "customer": field(inv, "customer"),
        "customer_account": null,
        "customer_address": null,
        "customer_email": null,
        "customer_name": null,
        "customer_phone": null,
        "customer_shipping": null,
        "customer_tax_exempt": "none",
        "default_payment_method": null,
        "default_source": null,
        "default_tax_rates": [],
        "description": null,
        "discounts": [],
        "footer": null,
        "from_invoice": null,
        "issuer": {"type": "self"},
        "last_finalization_error": null,
        "latest_revision": null,
        "on_behalf_of": null,
        "payment_settings": {"default_mandate": null, "payment_method_options": null, "payment_method_types": null},
        "rendering": null,
        "shipping_cost": null,
        "shipping_details": null,
        "statement_descriptor": null,
    })
}

/// An invoice's lines, its payments (`pay_X` as `pi_X`) and its subscription under `parent`.
fn invoice_lists(inv: &Value) -> Value {
    let id = inv.get("id").and_then(Value::as_str).unwrap_or_default();
    let lines: Vec<Value> = inv
        .pointer("/lines/data")
        .and_then(Value::as_array)
        .map(|lines| {
            lines
                .iter()
                .enumerate()
                .map(|(i, l)| invoice_line(inv, i, l))
                .collect()
        })
        .unwrap_or_default();
    let payments: Vec<Value> = inv
        .get("payments")
        .and_then(Value::as_array)
        .map(|ps| {
            ps.iter()
                .filter_map(Value::as_str)
                .map(|p| invoice_payment(inv, p))
                .collect()
        })
        .unwrap_or_default();
    let subscription = field(inv, "subscription");
    let parent = if subscription.is_null() {
        Value::Null
    } else {
        json!({
            "quote_details": null,
            "subscription_details": {"metadata": {}, "subscription": subscription},
            "type": "subscription_details",
        })
    };
    json!({
        "lines": {"object": "list", "data": lines, "has_more": false, "url": format!("/v1/invoices/{id}/lines")},
        "parent": parent,
        "payments": {"object": "list", "data": payments, "has_more": false, "url": format!("/v1/invoice_payments?invoice={id}")},
    })
}

fn invoice_line(inv: &Value, index: usize, line: &Value) -> Value {
    let id = inv.get("id").and_then(Value::as_str).unwrap_or_default();
    json!({
        "id": format!("il_{}_{index}", id.trim_start_matches("in_")),
        "object": "line_item",
        "amount": field(line, "amount"),
        "currency": field(inv, "currency"),
        "description": field(line, "description"),
        "discount_amounts": [],
        "discountable": true,
        "discounts": [],
        "invoice": id,
        "livemode": field(inv, "livemode"),
        "metadata": {},
        "parent": {
            "invoice_item_details": null,
            "subscription_item_details": {
                "invoice_item": null,
                "proration": false,
                "proration_details": {"credited_items": null},
                "subscription": field(inv, "subscription"),
                "subscription_item": null,
            },
            "type": "subscription_item_details",
        },
        "period": field(line, "period"),
        "pretax_credit_amounts": [],
        "pricing": {
            "price_details": {"price": field(line, "price"), "product": null},
            "type": "price_details",
            "unit_amount_decimal": null,
        },
        "quantity": field(line, "quantity"),
        "subtotal": field(line, "amount"),
        "taxes": [],
    })
}

/// One payment of an invoice, as Stripe's `invoice_payment`.
fn invoice_payment(inv: &Value, payment: &str) -> Value {
    let paid = inv.get("payment").and_then(Value::as_str) == Some(payment)
        && inv.get("status").and_then(Value::as_str) == Some("paid");
    json!({
        "id": format!("inpay_{}", payment.trim_start_matches("pay_")),
        "object": "invoice_payment",
        "amount_paid": if paid { field(inv, "amount_paid") } else { Value::Null },
        "amount_requested": field(inv, "amount_due"),
        "created": field(inv, "created"),
        "currency": field(inv, "currency"),
        "invoice": field(inv, "id"),
        "is_default": inv.get("payment").and_then(Value::as_str) == Some(payment),
        "livemode": field(inv, "livemode"),
        "payment": {"type": "payment_intent", "payment_intent": ids::intent(payment)},
        "status": if paid { "paid" } else { "open" },
        "status_transitions": {"canceled_at": null, "paid_at": null},
    })
}

/// A test clock; a deleted one as Stripe's `DeletedTestClock`.
pub fn test_clock(c: &Value) -> Value {
    if let Some(d) = deleted(c, "test_helpers.test_clock") {
        return d;
    }
    let frozen = c
        .get("frozen_time")
        .and_then(Value::as_i64)
        .unwrap_or_default();
    json!({
        "id": field(c, "id"),
        "object": "test_helpers.test_clock",
        "created": field(c, "created"),
        "deletes_after": frozen + 30 * 24 * 3600,
        "frozen_time": frozen,
        "livemode": field(c, "livemode"),
        "name": field(c, "name"),
        "status": field(c, "status"),
        "status_details": c.get("status_details").cloned().unwrap_or_else(|| json!({})),
    })
}
