//! Stripe's webhook signature (`Stripe-Signature: t=…,v1=…`): HMAC-SHA256 of `"{t}.{raw body}"`
//! under the whole `whsec_…` secret, compared in constant time, the timestamp within
//! [`super::WEBHOOK_TOLERANCE_SECS`] of Tender's clock either way; several `v1` (a secret being
//! rolled) are accepted.

use hmac::{Hmac, Mac};
use sha2::Sha256;
use tender_core::connectors::connector::WebhookRejected;

use super::WEBHOOK_TOLERANCE_SECS;

/// Checks a `Stripe-Signature` header against `body` under `secret` at `now`.
pub(super) fn verify_signature(
    secret: &str,
    header: &str,
    body: &[u8],
    now: i64,
) -> Result<(), WebhookRejected> {
    let reject = |why: &str| Err(WebhookRejected(why.to_string()));
    let mut timestamp = None;
    let mut signatures = Vec::new();
    for part in header.split(',') {
        match part.trim().split_once('=') {
            Some(("t", t)) => timestamp = t.parse::<i64>().ok(),
            Some(("v1", sig)) => signatures.push(sig),
            _ => {}
        }
    }
    let Some(t) = timestamp else {
        return reject("the Stripe-Signature header has no timestamp");
    };
    if (now - t).abs() > WEBHOOK_TOLERANCE_SECS {
        return reject("the signature's timestamp is more than five minutes away");
    }
    for sig in signatures {
        let Ok(expected) = hex::decode(sig) else {
            continue;
        };
        let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(secret.as_bytes()) else {
            return reject("the webhook secret is unusable");
        };
        mac.update(t.to_string().as_bytes());
        mac.update(b".");
        mac.update(body);
        // Constant-time comparison.
        if mac.verify_slice(&expected).is_ok() {
            return Ok(());
        }
    }
    reject("no v1 signature matches")
}
