//! Verifying webhooks: check the `Tender-Signature` header against the raw body and your
//! endpoint's secret, then read the event.
//!
//! ```no_run
//! # fn handle(headers: &std::collections::HashMap<String, String>, body: &[u8]) {
//! use tender_client::webhook;
//! let secret = "whsec_…"; // from webhook_endpoints().create(..), kept by you
//! let header = headers.get("tender-signature").map(String::as_str).unwrap_or("");
//! match webhook::verify(header, body, secret, webhook::DEFAULT_TOLERANCE) {
//!     Ok(event) => println!("{} {}", event.id, event.kind), // dedupe by event.id
//!     Err(e) => eprintln!("rejected: {e}"),                 // answer 400
//! }
//! # }
//! ```
//!
//! Receivers written for Standard Webhooks can use [`verify_standard`] on the `webhook-id`,
//! `webhook-timestamp` and `webhook-signature` headers instead; both are on every delivery.
//!
//! Verify the bytes exactly as received, before any JSON parsing or re-encoding. While a
//! secret is being rolled the header carries one `v1=` per live secret; either secret
//! verifies. The work is done by `tender_core::webhooks::webhook::verify_tender_signature`, the same
//! function the server's own tests verify deliveries with (constant-time comparison).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tender_core::auth::secrets_equal;
use tender_core::webhooks::webhook::{
    standard_signature, tender_signature, verify_tender_signature, VerifyError,
};

use crate::events::Event;

/// The header carrying the signature (HTTP header names are case-insensitive).
pub const SIGNATURE_HEADER: &str = "Tender-Signature";

/// How far the signed timestamp may be from now: five minutes, against replays.
pub const DEFAULT_TOLERANCE: Duration = Duration::from_secs(300);

/// Why a webhook was rejected.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WebhookError {
    /// The header is not `t=<unix>,v1=<hex>[,v1=<hex>…]`.
    #[error("the Tender-Signature header is malformed")]
    Malformed,
    /// The signed timestamp is further than the tolerance from now (a replay, or a clock off).
    #[error("the signature's timestamp is outside the tolerance")]
    TimestampOutOfTolerance,
    /// No signature matches this body and secret (tampered, or another endpoint's secret).
    #[error("no signature matches the body")]
    NoMatch,
    /// Correctly signed, but not an event this client can read.
    #[error("the signed body is not an event: {0}")]
    InvalidPayload(#[source] serde_json::Error),
}

impl From<VerifyError> for WebhookError {
    fn from(e: VerifyError) -> Self {
        match e {
            VerifyError::Malformed => WebhookError::Malformed,
            VerifyError::TimestampOutOfTolerance => WebhookError::TimestampOutOfTolerance,
            VerifyError::NoMatch => WebhookError::NoMatch,
        }
    }
}

/// Verifies `header` (the `Tender-Signature` value) over `raw_body` with the endpoint's
/// `secret` (`whsec_…`), allowing `tolerance` between the signed time and now, and returns
/// the event.
pub fn verify(
    header: &str,
    raw_body: &[u8],
    secret: &str,
    tolerance: Duration,
) -> Result<Event, WebhookError> {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    verify_at(header, raw_body, secret, tolerance, now)
}

/// [`verify`] as of `now` (Unix seconds), for tests with a fixed clock.
pub fn verify_at(
    header: &str,
    raw_body: &[u8],
    secret: &str,
    tolerance: Duration,
    now: i64,
) -> Result<Event, WebhookError> {
    let tolerance = i64::try_from(tolerance.as_secs()).unwrap_or(i64::MAX);
    verify_tender_signature(header, raw_body, secret, now, tolerance)?;
    serde_json::from_slice(raw_body).map_err(WebhookError::InvalidPayload)
}

/// Verifies the Standard Webhooks headers of a delivery (`webhook-id`, `webhook-timestamp`,
/// `webhook-signature`) over `raw_body` with the endpoint's `secret` (`whsec_…`; the HMAC key
/// is the base64-decoded part after the prefix), and returns the event.
pub fn verify_standard(
    webhook_id: &str,
    webhook_timestamp: &str,
    webhook_signature: &str,
    raw_body: &[u8],
    secret: &str,
    tolerance: Duration,
) -> Result<Event, WebhookError> {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    verify_standard_at(
        webhook_id,
        webhook_timestamp,
        webhook_signature,
        raw_body,
        secret,
        tolerance,
        now,
    )
}

/// [`verify_standard`] as of `now` (Unix seconds).
pub fn verify_standard_at(
    webhook_id: &str,
    webhook_timestamp: &str,
    webhook_signature: &str,
    raw_body: &[u8],
    secret: &str,
    tolerance: Duration,
    now: i64,
) -> Result<Event, WebhookError> {
    let t: i64 = webhook_timestamp
        .trim()
        .parse()
        .map_err(|_| WebhookError::Malformed)?;
    let signatures: Vec<&str> = webhook_signature
        .split(' ')
        .filter(|s| s.starts_with("v1,"))
        .collect();
    if signatures.is_empty() {
        return Err(WebhookError::Malformed);
    }
    let tolerance = i64::try_from(tolerance.as_secs()).unwrap_or(i64::MAX);
    if now.abs_diff(t) > tolerance.unsigned_abs() {
        return Err(WebhookError::TimestampOutOfTolerance);
    }
    // The same function the server signs with, over "<id>.<t>.<body>".
    let expected = standard_signature(&[secret], webhook_id, t, raw_body);
    if !signatures
        .iter()
        .any(|s| secrets_equal(s.as_bytes(), expected.as_bytes()))
    {
        return Err(WebhookError::NoMatch);
    }
    serde_json::from_slice(raw_body).map_err(WebhookError::InvalidPayload)
}

/// A `Tender-Signature` value for `body` signed at `timestamp` with each of `secrets` (newest
/// first), as the server sends it: for testing your own receiver.
pub fn sign(secrets: &[&str], timestamp: i64, body: &[u8]) -> String {
    tender_signature(secrets, timestamp, body)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const BODY: &[u8] = br#"{"id":"evt_1","object":"event","type":"customer.created","api_version":"2.1","created":1,"livemode":false,"data":{"object":{}},"request":{"id":null,"idempotency_key":null}}"#;

    #[test]
    fn a_signed_event_verifies_and_parses() {
        let header = sign(&[SECRET], 1_000, BODY);
        let event = verify_at(&header, BODY, SECRET, DEFAULT_TOLERANCE, 1_010).expect("valid");
        assert_eq!(event.id, "evt_1");
        assert_eq!(event.kind, "customer.created");
    }

    #[test]
    fn tampering_old_timestamps_other_secrets_and_garbage_are_refused() {
        let header = sign(&[SECRET], 1_000, BODY);
        let mut tampered = BODY.to_vec();
        tampered[10] = b'X';
        assert!(matches!(
            verify_at(&header, &tampered, SECRET, DEFAULT_TOLERANCE, 1_000),
            Err(WebhookError::NoMatch)
        ));
        assert!(matches!(
            verify_at(&header, BODY, SECRET, DEFAULT_TOLERANCE, 1_301),
            Err(WebhookError::TimestampOutOfTolerance)
        ));
        assert!(matches!(
            verify_at(&header, BODY, "whsec_other", DEFAULT_TOLERANCE, 1_000),
            Err(WebhookError::NoMatch)
        ));
        assert!(matches!(
            verify_at("nonsense", BODY, SECRET, DEFAULT_TOLERANCE, 1_000),
            Err(WebhookError::Malformed)
        ));
        let header = sign(&[SECRET], 1_000, b"not json");
        assert!(matches!(
            verify_at(&header, b"not json", SECRET, DEFAULT_TOLERANCE, 1_000),
            Err(WebhookError::InvalidPayload(_))
        ));
    }

    #[test]
    fn standard_webhooks_headers_verify_and_refuse_tampering() {
        let sig = standard_signature(&[SECRET], "evt_1", 1_000, BODY);
        let ok = verify_standard_at(
            "evt_1",
            "1000",
            &sig,
            BODY,
            SECRET,
            DEFAULT_TOLERANCE,
            1_100,
        );
        assert_eq!(ok.expect("valid").id, "evt_1");
        let other_id = verify_standard_at(
            "evt_2",
            "1000",
            &sig,
            BODY,
            SECRET,
            DEFAULT_TOLERANCE,
            1_000,
        );
        assert!(matches!(other_id, Err(WebhookError::NoMatch)));
        let old = verify_standard_at(
            "evt_1",
            "1000",
            &sig,
            BODY,
            SECRET,
            DEFAULT_TOLERANCE,
            1_301,
        );
        assert!(matches!(old, Err(WebhookError::TimestampOutOfTolerance)));
        let garbage = verify_standard_at(
            "evt_1",
            "soon",
            &sig,
            BODY,
            SECRET,
            DEFAULT_TOLERANCE,
            1_000,
        );
        assert!(matches!(garbage, Err(WebhookError::Malformed)));
        // Several signatures (a roll): any one matching is enough.
        let header = format!("v1,bm9wZQ== {sig}");
        let two = verify_standard_at(
            "evt_1",
            "1000",
            &header,
            BODY,
            SECRET,
            DEFAULT_TOLERANCE,
            1_000,
        );
        assert!(two.is_ok());
    }

    #[test]
    fn during_a_roll_either_secret_verifies() {
        let new = "whsec_bmV3bmV3bmV3bmV3bmV3bmV3bmV3bmV3bmV3bmV3";
        let header = sign(&[new, SECRET], 1_000, BODY);
        assert!(verify_at(&header, BODY, SECRET, DEFAULT_TOLERANCE, 1_000).is_ok());
        assert!(verify_at(&header, BODY, new, DEFAULT_TOLERANCE, 1_000).is_ok());
    }
}
