//! The webhook signature parsers on arbitrary headers: `Tender-Signature` through
//! `tender_core::webhooks::webhook::verify_tender_signature` (and the client's `verify_at`), and the
//! Standard Webhooks headers through `tender_client::webhook::verify_standard_at`.
//!
//! The input is split on the first two newlines into header, timestamp text and body.
//! Invariants: nothing panics (no overflow on extreme timestamps); a forged header never
//! verifies; a genuine header verifies, also with arbitrary extra elements appended, and stops
//! verifying when the body changes or the clock moves past the tolerance.

#![no_main]

use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use tender_client::webhook::{verify_at, verify_standard_at};
use tender_core::webhooks::webhook::{tender_signature, verify_tender_signature};

const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const TOLERANCE: i64 = 300;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut parts = text.splitn(3, '\n');
    let header = parts.next().unwrap_or("");
    let timestamp = parts.next().unwrap_or("");
    let body = parts.next().unwrap_or("").as_bytes();
    let now: i64 = timestamp.trim().parse().unwrap_or(1_700_000_000);

    // Arbitrary headers: any answer but a panic; never a match (the fuzzer has no secret).
    for t in [now, i64::MIN, i64::MAX, 0] {
        assert!(verify_tender_signature(header, body, SECRET, t, TOLERANCE).is_err());
        assert!(verify_tender_signature(header, body, SECRET, t, i64::MAX).is_err());
        assert!(verify_at(header, body, SECRET, Duration::from_secs(300), t).is_err());
        assert!(verify_standard_at(
            "msg_1",
            timestamp,
            header,
            body,
            SECRET,
            Duration::from_secs(300),
            t
        )
        .is_err());
    }

    // A genuine header (time taken from the input), with the fuzzed header appended.
    let genuine = tender_signature(&[SECRET], now, body);
    assert!(verify_tender_signature(&genuine, body, SECRET, now, TOLERANCE).is_ok());
    let extended = format!("{genuine},{header}");
    let verdict = verify_tender_signature(&extended, body, SECRET, now, TOLERANCE);
    // Appending may make the header malformed (a bad `t=` or `v1=`), never a mismatch.
    assert!(
        verdict.is_ok()
            || verdict == Err(tender_core::webhooks::webhook::VerifyError::Malformed)
            || header.contains("t=")
    );
    let mut other = body.to_vec();
    other.push(b'!');
    assert!(verify_tender_signature(&genuine, &other, SECRET, now, TOLERANCE).is_err());
    if let Some(later) = now.checked_add(TOLERANCE + 1) {
        assert!(verify_tender_signature(&genuine, body, SECRET, later, TOLERANCE).is_err());
    }
});
