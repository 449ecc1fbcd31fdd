//! The Checkout Session (`cs_…`) and its line items in Stripe's shape, read from their `/v2`
//! JSON (`checkout::session`): `object: "checkout.session"`, the PaymentIntent as `pi_X`, the
//! e-mail also as `customer_details`, the line items only through their own list (Stripe
//! leaves them out unless expanded). Pure.

use serde_json::{json, Value};

use super::billing::price;
use super::ids;

fn field(v: &Value, key: &str) -> Value {
    v.get(key).cloned().unwrap_or(Value::Null)
}

/// The session `s` (its `/v2` JSON).
pub fn checkout_session(s: &Value) -> Value {
    let email = field(s, "customer_email");
    let customer_details = match email.is_null() && s.get("customer").is_none_or(Value::is_null) {
        true => Value::Null,
        false => json!({
            "address": null, "business_name": null, "email": email, "individual_name": null,
            "name": null, "phone": null, "tax_exempt": "none", "tax_ids": [],
        }),
    };
    json!({
        "id": field(s, "id"),
        "object": "checkout.session",
        "adaptive_pricing": null,
        "after_expiration": null,
        "allow_promotion_codes": field(s, "allow_promotion_codes"),
        "allowed_payment_method_types": null,
        "amount_subtotal": field(s, "amount_subtotal"),
        "amount_total": field(s, "amount_total"),
        "automatic_tax": {"enabled": false, "liability": null, "provider": null, "status": null},
        "billing_address_collection": null,
        "cancel_url": field(s, "cancel_url"),
        "client_reference_id": field(s, "client_reference_id"),
        "client_secret": null,
        "collected_information": null,
        "consent": null,
        "consent_collection": null,
        "created": field(s, "created"),
        "currency": field(s, "currency"),
        "currency_conversion": null,
        "custom_fields": [],
        "custom_text": {"after_submit": null, "shipping_address": null, "submit": null, "terms_of_service_acceptance": null},
        "customer": field(s, "customer"),
        "customer_account": null,
        // Tender makes a customer for every session that has none.
        "customer_creation": "always",
        "customer_details": customer_details,
        "customer_email": email,
        "discounts": [],
        "expires_at": field(s, "expires_at"),
        "integration_identifier": null,
        "invoice": null,
        "invoice_creation": null,
        "livemode": field(s, "livemode"),
        "locale": null,
        "managed_payments": null,
        "metadata": s.get("metadata").cloned().unwrap_or_else(|| json!({})),
        "mode": field(s, "mode"),
        "origin_context": null,
        "payment_intent": s.get("payment_intent").and_then(Value::as_str).map(ids::intent),
        "payment_link": field(s, "payment_link"),
        "payment_method_collection": "always",
        "payment_method_configuration_details": null,
        "payment_method_options": {},
        "payment_method_types": ["card"],
        "payment_status": field(s, "payment_status"),
        "permissions": null,
        "phone_number_collection": {"enabled": false},
        "recovered_from": null,
        "saved_payment_method_options": null,
        "setup_intent": field(s, "setup_intent"),
        "shipping_address_collection": null,
        "shipping_cost": null,
        "shipping_options": [],
        "status": field(s, "status"),
        "submit_type": null,
        "subscription": field(s, "subscription"),
        "success_url": field(s, "success_url"),
        "total_details": {"amount_discount": 0, "amount_shipping": 0, "amount_tax": 0},
        "ui_mode": "hosted_page",
        "url": field(s, "url"),
        "wallet_options": null,
    })
}

/// The payment link `l` (its `/v2` JSON): cards only, Tender's hosted page, no collection
/// of addresses, tax ids or custom fields; its lines only through their own list.
pub fn payment_link(l: &Value) -> Value {
    let mut after = l.get("after_completion").cloned().unwrap_or(Value::Null);
    if let Some(h) = after
        .get_mut("hosted_confirmation")
        .filter(|h| h.is_object())
    {
        h["custom_message"] = h.get("custom_message").cloned().unwrap_or(Value::Null);
    }
    let subscription = field(l, "mode") == "subscription";
    json!({
        "id": field(l, "id"),
        "object": "payment_link",
        "active": field(l, "active"),
        "after_completion": after,
        "allow_promotion_codes": field(l, "allow_promotion_codes"),
        "application": null,
        "application_fee_amount": null,
        "application_fee_percent": null,
        "automatic_tax": {"enabled": false, "liability": null},
        "billing_address_collection": "auto",
        "consent_collection": null,
        "currency": field(l, "currency"),
        "custom_fields": [],
        "custom_text": {"after_submit": null, "shipping_address": null, "submit": null, "terms_of_service_acceptance": null},
        "customer_creation": "always",
        "inactive_message": null,
        "invoice_creation": null,
        "livemode": field(l, "livemode"),
        "managed_payments": null,
        "metadata": l.get("metadata").cloned().unwrap_or_else(|| json!({})),
        "on_behalf_of": null,
        "payment_intent_data": null,
        "payment_method_collection": "always",
        "payment_method_options": null,
        "payment_method_types": ["card"],
        "phone_number_collection": {"enabled": false},
        "restrictions": null,
        "shipping_address_collection": null,
        "shipping_options": [],
        "submit_type": if subscription { "subscribe" } else { "auto" },
        "subscription_data": null,
        "tax_id_collection": {"enabled": false, "required": "never"},
        "transfer_data": null,
        "url": field(l, "url"),
    })
}

/// A session's line item (its `/v2` JSON) as Stripe's `item`.
pub fn line_item(l: &Value) -> Value {
    json!({
        "id": field(l, "id"),
        "object": "item",
        "adjustable_quantity": null,
        "amount_discount": 0,
        "amount_subtotal": field(l, "amount_subtotal"),
        "amount_tax": 0,
        "amount_total": field(l, "amount_total"),
        "currency": field(l, "currency"),
        "description": field(l, "description"),
        "metadata": {},
        "price": l.get("price").map(price).unwrap_or(Value::Null),
        "quantity": field(l, "quantity"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_payment_link_shows_its_confirmation_message_even_when_unset() {
        let l = payment_link(&json!({
            "id": "plink_A", "active": true, "mode": "payment", "currency": "usd",
            "after_completion": {"type": "hosted_confirmation", "hosted_confirmation": {}},
        }));
        assert_eq!(l["object"], "payment_link");
        assert_eq!(
            l["after_completion"]["hosted_confirmation"]["custom_message"],
            Value::Null
        );
        assert_eq!(l["submit_type"], "auto");
    }

    #[test]
    fn a_session_names_its_payment_intent_as_stripe_does() {
        let s = checkout_session(&json!({
            "id": "cs_A", "mode": "payment", "status": "complete", "payment_status": "paid",
            "payment_intent": "pay_B", "customer": "cus_C", "customer_email": "a@b.example",
            "amount_total": 1500, "currency": "usd", "url": null,
        }));
        assert_eq!(s["object"], "checkout.session");
        assert_eq!(s["payment_intent"], "pi_B");
        assert_eq!(s["customer_details"]["email"], "a@b.example");
        assert_eq!(s["ui_mode"], "hosted_page");
    }
}
