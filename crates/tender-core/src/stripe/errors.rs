//! Tender's error envelope (`/v2`) as Stripe's (`/v1`): `{"error": {type, code, message,
//! param, decline_code, payment_intent, charge, doc_url}}` with the statuses Stripe's SDKs
//! turn into their exception classes (stripe-python's `_api_requestor.specific_v1_api_error`:
//! 400/404 → `InvalidRequestError`, or `IdempotencyError` when the type is
//! `idempotency_error`; 401 → `AuthenticationError`; 402 → `CardError`; 429 →
//! `RateLimitError`; anything else → `APIError`).
//!
//! | `/v2` | `/v1` |
//! |---|---|
//! | 401 `authentication_error` | 401 `invalid_request_error`, no code (as Stripe answers) |
//! | 403 `secret_key_required` (a publishable key) | 401 `invalid_request_error` |
//! | 405 (path served, method not) | 404 `Unrecognized request URL` |
//! | 429 `rate_limit_error` | 429 `invalid_request_error` / `rate_limit` (the card-testing guard's `card_testing_blocked` kept) |
//! | `payment_unexpected_state` | `payment_intent_unexpected_state` |
//! | `param: "payment"`, a `pay_X` in a message | `payment_intent`, `pi_X` |
//! | `payment: "pay_X"` (a decline) | `payment_intent`: the PaymentIntent, `charge: "ch_X"` |
//! | `setup_intent: "seti_X"` (a decline) | `setup_intent`: the SetupIntent |
//!
//! Pure.

use serde_json::{json, Map, Value};

use super::ids;
use super::Shape;

/// Stripe's answer to a path it does not serve; `twin` is Tender's own operation of that name
/// (`GET /v2/payments` for `GET /v1/payments`), if it has one.
pub fn unrecognized_url(method: &str, path: &str, twin: Option<&str>) -> Value {
    let hint = match twin {
        Some(twin) => format!(" Tender's own API has it: {method} {twin}."),
        None => String::new(),
    };
    json!({"error": {
        "type": "invalid_request_error",
        "message": format!("Unrecognized request URL ({method}: {path}). Tender's Stripe-compatible API serves the operations docs/stripe-compatibility.md lists.{hint}"),
    }})
}

/// The payment a `/v2` error names (a decline's `payment`), if any.
pub fn declined_payment(v2: &Value) -> Option<&str> {
    v2.pointer("/error/payment").and_then(Value::as_str)
}

/// The setup intent a `/v2` error names (a decline's `setup_intent`), if any.
pub fn declined_setup(v2: &Value) -> Option<&str> {
    v2.pointer("/error/setup_intent").and_then(Value::as_str)
}

/// The object a decline names and the shape Stripe embeds it in: the payment as its
/// PaymentIntent, or the SetupIntent.
pub fn declined(v2: &Value) -> Option<(Shape, &str)> {
    declined_payment(v2)
        .map(|p| (Shape::PaymentIntent, p))
        .or_else(|| declined_setup(v2).map(|s| (Shape::SetupIntent, s)))
}

/// The `/v2` error `v2` answered with `status`, as Stripe's; `intent` is the declined
/// payment's PaymentIntent (or the SetupIntent) when [`declined`] named one.
pub fn error(status: u16, v2: &Value, intent: Option<Value>) -> (u16, Value) {
    let e = v2.get("error").cloned().unwrap_or_else(|| json!({}));
    let text = |key: &str| e.get(key).and_then(Value::as_str).unwrap_or_default();
    let mut code = text("code").to_string();
    let mut kind = text("type").to_string();
    let mut status = status;
    let mut message =
        ids::in_text(text("message")).replace("No such payment:", "No such payment_intent:");
    match (status, kind.as_str()) {
        (401, _) | (403, "permission_error") => {
            if status == 403 {
                message = "This API call cannot be made with a publishable API key. Please use a secret API key.".into();
            }
            status = 401;
            kind = "invalid_request_error".into();
            code.clear();
        }
        (405, _) => {
            status = 404;
            kind = "invalid_request_error".into();
            code.clear();
            message = "Unrecognized request URL: this method is not served on this path.".into();
        }
        (429, _) => {
            kind = "invalid_request_error".into();
            // The card-testing guard's refusals keep their own code.
            if !matches!(
                code.as_str(),
                "card_testing_blocked" | "checkout_attempts_exhausted"
            ) {
                code = "rate_limit".into();
            }
        }
        _ => {}
    }
    if code == "payment_unexpected_state" {
        code = "payment_intent_unexpected_state".into();
    }
    let mut out = Map::new();
    out.insert("type".into(), json!(kind));
    if !code.is_empty() {
        out.insert("doc_url".into(), json!(super::doc_url(&code)));
        out.insert("code".into(), json!(code));
    }
    out.insert("message".into(), json!(message));
    if let Some(param) = e.get("param").and_then(Value::as_str) {
        let param = match param {
            "payment" => "payment_intent",
            other => other,
        };
        out.insert("param".into(), json!(param));
    }
    if let Some(d) = e.get("decline_code") {
        out.insert("decline_code".into(), d.clone());
    }
    if let Some(payment) = declined_payment(v2) {
        out.insert("charge".into(), json!(ids::charge(payment)));
        out.insert(
            "payment_intent".into(),
            intent.unwrap_or_else(|| json!(ids::intent(payment))),
        );
    } else if let Some(setup) = declined_setup(v2) {
        out.insert(
            "setup_intent".into(),
            intent.unwrap_or_else(|| json!(setup)),
        );
    }
    (status, json!({ "error": Value::Object(out) }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_decline_carries_its_intent_and_charge() {
        let v2 = json!({"error": {"type": "card_error", "code": "card_declined", "message": "Your card was declined.", "decline_code": "insufficient_funds", "payment": "pay_X", "request_id": "req_1"}});
        let (status, v1) = error(402, &v2, Some(json!({"id": "pi_X"})));
        assert_eq!(status, 402);
        assert_eq!(v1["error"]["payment_intent"]["id"], "pi_X");
        assert_eq!(v1["error"]["charge"], "ch_X");
        assert_eq!(v1["error"]["decline_code"], "insufficient_funds");
        assert_eq!(
            v1["error"]["doc_url"],
            "https://docs.stripe.com/error-codes/card-declined"
        );
        assert!(v1["error"].get("request_id").is_none());
    }

    #[test]
    fn statuses_follow_stripe() {
        let auth = json!({"error": {"type": "authentication_error", "code": "api_key_invalid", "message": "Invalid API key provided."}});
        assert_eq!(error(401, &auth, None).0, 401);
        assert_eq!(
            error(401, &auth, None).1["error"]["type"],
            "invalid_request_error"
        );
        let publishable = json!({"error": {"type": "permission_error", "code": "secret_key_required", "message": "x"}});
        assert_eq!(error(403, &publishable, None).0, 401);
        let missing = json!({"error": {"type": "invalid_request_error", "code": "resource_missing", "message": "No such payment: 'pay_X'", "param": "payment"}});
        let (s, v1) = error(404, &missing, None);
        assert_eq!(s, 404);
        assert_eq!(v1["error"]["message"], "No such payment_intent: 'pi_X'");
        assert_eq!(v1["error"]["param"], "payment_intent");
    }
}
