//! The SetupIntent (`seti_…`) in Stripe's shape, read from its `/v2` JSON
//! (`setup_intents::setup_intent`): the same fields under the same names, its decline as
//! `last_setup_error`, its client secret derived like a PaymentIntent's ([`Shapes`]). Pure.

use serde_json::{json, Map, Value};

use super::Shapes;

fn field(v: &Value, key: &str) -> Value {
    v.get(key).cloned().unwrap_or(Value::Null)
}

/// The SetupIntent `s` (its `/v2` JSON).
pub fn setup_intent(shapes: &Shapes, s: &Value) -> Value {
    let id = s.get("id").and_then(Value::as_str).unwrap_or_default();
    json!({
        "id": id,
        "object": "setup_intent",
        "allowed_payment_method_types": null,
        "application": null,
        "automatic_payment_methods": null,
        "cancellation_reason": field(s, "cancellation_reason"),
        "client_secret": shapes.client_secret(id),
        "created": field(s, "created"),
        "customer": field(s, "customer"),
        "customer_account": null,
        "description": field(s, "description"),
        "excluded_payment_method_types": null,
        "flow_directions": null,
        "last_setup_error": last_setup_error(s),
        "latest_attempt": null,
        "livemode": field(s, "livemode"),
        "mandate": null,
        "metadata": s.get("metadata").cloned().unwrap_or_else(|| json!({})),
        "next_action": null,
        "on_behalf_of": null,
        "payment_method": field(s, "payment_method"),
        "payment_method_configuration_details": null,
        "payment_method_options": {
            "card": {"mandate_options": null, "network": null, "request_three_d_secure": "automatic"},
        },
        "payment_method_types": ["card"],
        "single_use_mandate": null,
        "status": field(s, "status"),
        "usage": field(s, "usage"),
    })
}

/// The last decline as Stripe's `last_setup_error`; `null` when the last try did not fail.
fn last_setup_error(s: &Value) -> Value {
    let Some(e) = s.get("last_setup_error").filter(|e| e.is_object()) else {
        return Value::Null;
    };
    let code = e
        .get("code")
        .and_then(Value::as_str)
        .unwrap_or("card_declined");
    let mut out = Map::new();
    out.insert("type".into(), json!("card_error"));
    out.insert("code".into(), json!(code));
    out.insert("decline_code".into(), field(e, "decline_code"));
    out.insert("doc_url".into(), json!(super::doc_url(code)));
    out.insert("message".into(), field(e, "message"));
    out.insert("payment_method_type".into(), json!("card"));
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_declined_setup_shows_its_error_and_its_client_secret() {
        let shapes = Shapes::new(&[7; 32]);
        let v2 = json!({"id": "seti_A", "status": "requires_payment_method", "usage": "off_session",
            "last_setup_error": {"code": "card_declined", "decline_code": "insufficient_funds", "message": "Your card has insufficient funds.", "payment_method": "pm_1"}});
        let s = setup_intent(&shapes, &v2);
        assert_eq!(s["last_setup_error"]["decline_code"], "insufficient_funds");
        assert_eq!(s["last_setup_error"]["type"], "card_error");
        let secret = s["client_secret"].as_str().unwrap();
        assert!(secret.starts_with("seti_A_secret_"), "{secret}");
        assert!(shapes.client_secret_matches("seti_A", secret));
        assert!(!shapes.client_secret_matches("seti_B", secret));
    }
}
