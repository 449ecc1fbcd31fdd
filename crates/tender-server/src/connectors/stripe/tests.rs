//! Tests of [`super`] (`stripe.rs`), kept apart so the module reads as what it does.

use super::signature::verify_signature;
use super::*;
use hmac::{Hmac, Mac};
use serde_json::json;
use sha2::Sha256;

#[test]
fn payment_intent_states_map_onto_the_port() {
    assert_eq!(
        state_of(&json!({"status": "requires_confirmation"})),
        Upstream::Created
    );
    assert_eq!(
        state_of(
            &json!({"status": "succeeded", "amount": 1000, "amount_received": 600, "currency": "usd"})
        ),
        Upstream::Succeeded {
            captured: 600,
            currency: Some("usd".into()),
            settlement: None,
        }
    );
    assert_eq!(
        state_of(&json!({"status": "succeeded", "amount": 1000, "currency": "eur"})),
        Upstream::Succeeded {
            captured: 1000,
            currency: Some("eur".into()),
            settlement: None,
        }
    );
    // Without an amount it is not booked as nothing: asked again.
    assert_eq!(
        state_of(&json!({"status": "succeeded"})),
        Upstream::Processing
    );
    assert_eq!(
        state_of(&json!({"status": "requires_action",
            "next_action": {"type": "redirect_to_url", "redirect_to_url": {"url": "https://hooks.stripe.com/3ds"}}})),
        Upstream::RequiresAction {
            url: Some("https://hooks.stripe.com/3ds".into())
        }
    );
    assert_eq!(
        state_of(&json!({"status": "requires_action", "next_action": {"type": "use_stripe_sdk"}})),
        Upstream::RequiresAction { url: None }
    );
    match state_of(&json!({"status": "requires_payment_method",
        "last_payment_error": {"code": "card_declined", "decline_code": "insufficient_funds", "message": "Your card has insufficient funds."}}))
    {
        Upstream::Declined(d) => {
            assert_eq!(
                (d.code.as_ref(), d.decline_code.as_ref()),
                ("card_declined", "insufficient_funds")
            );
        }
        other => panic!("{other:?}"),
    }
}

fn sign(secret: &str, t: i64, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(format!("{t}.").as_bytes());
    mac.update(body);
    format!("t={t},v1={}", hex::encode(mac.finalize().into_bytes()))
}

#[test]
fn stripe_signatures_are_verified_with_the_whole_secret_and_a_tolerance() {
    let body = br#"{"id":"evt_1"}"#;
    let header = sign("whsec_abc", 1000, body);
    assert!(verify_signature("whsec_abc", &header, body, 1000).is_ok());
    assert!(verify_signature("whsec_abc", &header, body, 1299).is_ok());
    // A rolled secret's second v1 is accepted too.
    let both = format!(
        "{},v1={}",
        sign("whsec_old", 1000, body),
        &header[header.find("v1=").unwrap() + 3..]
    );
    assert!(verify_signature("whsec_abc", &both, body, 1000).is_ok());
    assert!(verify_signature("whsec_abc", &header, body, 1301).is_err());
    assert!(verify_signature("whsec_other", &header, body, 1000).is_err());
    assert!(verify_signature("whsec_abc", &header, br#"{"id":"evt_2"}"#, 1000).is_err());
    assert!(verify_signature("whsec_abc", "v1=00", body, 1000).is_err());
    assert!(verify_signature("whsec_abc", "t=1000", body, 1000).is_err());
}

#[test]
fn declines_map_onto_contract_codes() {
    // localstripe sends no decline_code: generic_decline.
    let d = decline_of(&json!({"code": "card_declined", "message": "Your card was declined."}));
    assert_eq!(
        (d.code.as_ref(), d.decline_code.as_ref()),
        ("card_declined", "generic_decline")
    );
    let d = decline_of(&json!({"code": "expired_card", "message": "Your card has expired."}));
    assert_eq!(
        (d.code.as_ref(), d.decline_code.as_ref()),
        ("expired_card", "expired_card")
    );
    let d = decline_of(&json!({"code": "payment_intent_authentication_failure"}));
    assert_eq!(d.code, "authentication_failed");
    let r = refusal(&json!({"message": "Bad request"}));
    assert_eq!(
        (r.code.as_ref(), r.decline_code.as_ref()),
        ("processing_error", "processor_refused_request")
    );
}

#[test]
fn webhooks_about_a_payments_refunds_or_disputes_are_hints_naming_its_payment_intent() {
    let event = |object: serde_json::Value| {
        serde_json::to_vec(&json!({"id": "evt_1", "type": "x", "data": {"object": object}}))
            .unwrap()
    };
    let read = |body: &[u8]| {
        inbound::read(
            Some("whsec_abc"),
            Some(&sign("whsec_abc", 1000, body)),
            body,
            1000,
        )
    };
    for object in ["dispute", "charge", "refund"] {
        let body = event(
            json!({"object": object, "id": "x_1", "payment_intent": "pi_1",
                                "metadata": {"tender_payment": "pay_from_the_charge"}}),
        );
        let inbound = read(&body).unwrap().expect(object);
        assert_eq!(inbound.reference, "pi_1");
        assert_eq!(inbound.state, None, "{object}: not a state");
        assert_eq!(
            inbound.payment, None,
            "{object}: the payment is read from the processor"
        );
    }
    let body = event(
        json!({"object": "payment_intent", "id": "pi_2", "status": "canceled",
                            "metadata": {"tender_payment": "pay_1"}}),
    );
    let inbound = read(&body).unwrap().unwrap();
    assert_eq!(
        (inbound.reference.as_str(), inbound.payment.as_deref()),
        ("pi_2", Some("pay_1"))
    );
    assert_eq!(inbound.state, Some(Upstream::Canceled));
    // About nothing Tender follows, or naming no PaymentIntent.
    assert_eq!(
        read(&event(json!({"object": "customer", "id": "cus_1"}))).unwrap(),
        None
    );
    assert_eq!(
        read(&event(json!({"object": "dispute", "id": "dp_1"}))).unwrap(),
        None
    );
    assert!(inbound::read(None, Some("t=1,v1=00"), b"{}", 1000).is_err());
}
