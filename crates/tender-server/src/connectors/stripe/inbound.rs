//! Stripe's webhooks to Tender (`POST /connector_webhooks/{conn_…}`), verified
//! ([`super::signature`]) and read as a hint (CONTRACT §15): a PaymentIntent's event says
//! where the payment is; a charge's, a refund's or a dispute's (`charge.refunded`,
//! `charge.dispute.created`…) says that Stripe's books of a payment changed, and names it by
//! its `payment_intent`. Either way Tender reads the processor again before anything moves.

use serde_json::Value;
use tender_core::connectors::connector::{Inbound, WebhookRejected};

use super::signature::verify_signature;
use super::state_of;

/// Verifies the webhook `body` with `secret` and reads it; `Ok(None)` when it is about nothing
/// Tender follows.
pub(super) fn read(
    secret: Option<&str>,
    signature: Option<&str>,
    body: &[u8],
    now: i64,
) -> Result<Option<Inbound>, WebhookRejected> {
    let Some(secret) = secret else {
        return Err(WebhookRejected(
            "the connector has no webhook_secret".to_string(),
        ));
    };
    let Some(header) = signature else {
        return Err(WebhookRejected("no Stripe-Signature header".to_string()));
    };
    verify_signature(secret, header, body, now)?;
    let event: Value = serde_json::from_slice(body)
        .map_err(|_| WebhookRejected("the body is not a JSON event".to_string()))?;
    let object = &event["data"]["object"];
    let (reference, state) = match object["object"].as_str() {
        Some("payment_intent") => (object["id"].as_str(), Some(state_of(object))),
        Some("charge" | "refund" | "dispute") => (object["payment_intent"].as_str(), None),
        _ => return Ok(None),
    };
    let Some(reference) = reference.filter(|r| r.len() <= 255) else {
        return Ok(None);
    };
    Ok(Some(Inbound {
        payment: object["metadata"]["tender_payment"]
            .as_str()
            .filter(|_| state.is_some())
            .map(str::to_string),
        reference: reference.to_string(),
        state,
    }))
}
