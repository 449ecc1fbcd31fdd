//! Webhooks as pure functions: the endpoint resource, secrets, both signature schemes (and their
//! verification), the retry schedule, and which addresses a live endpoint may not reach.
//! Pure; depends on `hmac`, `sha2`, `base64`, `rand`.

use base64::Engine;
use hmac::{Hmac, Mac};
use rand::{Rng, RngCore};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

use crate::auth::secrets_equal;

/// A webhook endpoint (`we_…`) as shown by the API (the secret only on creation and roll).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WebhookEndpoint {
    pub id: String,
    pub object: String,
    pub url: String,
    pub enabled_events: Vec<String>,
    pub description: Option<String>,
    pub status: EndpointStatus,
    pub livemode: bool,
    pub created: i64,
    /// Which wire its events are sent in: Tender's (`/v2`), or Stripe's for an endpoint created
    /// through `/v1` (its `enabled_events` are then Stripe's names; `crate::stripe::events`).
    #[serde(default, skip_serializing_if = "EndpointDialect::is_tender")]
    pub dialect: EndpointDialect,
}

/// The wire an endpoint's events are sent in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EndpointDialect {
    /// Tender's event shape and names, signed in `Tender-Signature`.
    #[default]
    Tender,
    /// Stripe's event shape and names, signed in `Stripe-Signature`.
    Stripe,
}

impl EndpointDialect {
    pub fn is_tender(&self) -> bool {
        *self == EndpointDialect::Tender
    }
}

impl crate::documents::document::Document for WebhookEndpoint {
    const COLLECTION: crate::store::Collection = crate::store::Collection::WebhookEndpoints;

    fn id(&self) -> &str {
        &self.id
    }

    fn created(&self) -> i64 {
        self.created
    }

    fn index(&self) -> crate::store::IndexValues {
        use crate::store::IndexValues;
        IndexValues {
            status: Some(self.status.as_str().to_string()),
            enabled_events: Some(self.events_index()),
            ..IndexValues::default()
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EndpointStatus {
    Enabled,
    Disabled,
}

impl EndpointStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            EndpointStatus::Enabled => "enabled",
            EndpointStatus::Disabled => "disabled",
        }
    }
}

impl WebhookEndpoint {
    /// The indexed form of `enabled_events`: `*` or `,a,b,` in Tender's event types; a Stripe
    /// endpoint's also names the Stripe names ([`crate::stripe::events::endpoint_index`]).
    pub fn events_index(&self) -> String {
        if self.dialect == EndpointDialect::Stripe {
            return crate::stripe::events::endpoint_index(&self.enabled_events);
        }
        if self.enabled_events.iter().any(|e| e == "*") {
            return "*".into();
        }
        format!(",{},", self.enabled_events.join(","))
    }

    /// Whether the Tender event `event_type` is sent to it.
    pub fn accepts(&self, event_type: &str) -> bool {
        match self.dialect {
            EndpointDialect::Tender => self
                .enabled_events
                .iter()
                .any(|e| e == "*" || e == event_type),
            EndpointDialect::Stripe => {
                crate::stripe::events::name_for(event_type, &self.enabled_events).is_some()
            }
        }
    }
}

/// A signing secret with the time it stops signing (`None`: current). `Debug` hides it.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
pub struct SigningSecret {
    pub secret: String,
    pub expires_at: Option<i64>,
}

impl std::fmt::Debug for SigningSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SigningSecret")
            .field("secret", &crate::secret::REDACTED)
            .field("expires_at", &self.expires_at)
            .finish()
    }
}

/// `whsec_` + base64 of 32 random bytes.
pub fn generate_secret() -> String {
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    format!(
        "whsec_{}",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    )
}

/// The `whsec_…` secret `tender listen` signs what it forwards with: derived from the API key
/// (HMAC-SHA256 of a fixed label, keyed with the key), so every run with one key prints the
/// same secret and a local receiver is configured once; rolling the key changes it. It reveals
/// nothing of the key.
pub fn listen_secret(api_key: &str) -> String {
    let mac = hmac_sha256(api_key.as_bytes(), &[b"tender listen signing secret v1"]);
    format!(
        "whsec_{}",
        base64::engine::general_purpose::STANDARD.encode(mac)
    )
}

fn hmac_sha256(key: &[u8], parts: &[&[u8]]) -> [u8; 32] {
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(key).expect("HMAC takes any key");
    for p in parts {
        mac.update(p);
    }
    mac.finalize().into_bytes().into()
}

/// `Tender-Signature: t=<t>,v1=<hex>[,v1=<hex>…]` — Stripe's scheme, keyed with the whole
/// `whsec_…` string; one `v1` per secret, newest first.
pub fn tender_signature(secrets: &[&str], timestamp: i64, body: &[u8]) -> String {
    let t = timestamp.to_string();
    let mut header = format!("t={t}");
    for secret in secrets {
        let sig = hmac_sha256(secret.as_bytes(), &[t.as_bytes(), b".", body]);
        header.push_str(",v1=");
        header.push_str(&hex::encode(sig));
    }
    header
}

/// The Standard Webhooks key: the base64-decoded part after `whsec_`.
fn standard_key(secret: &str) -> Vec<u8> {
    let b64 = secret.strip_prefix("whsec_").unwrap_or(secret);
    base64::engine::general_purpose::STANDARD
        .decode(b64)
        .unwrap_or_else(|_| b64.as_bytes().to_vec())
}

/// `webhook-signature: v1,<base64> [v1,<base64>…]` over `<id>.<t>.<body>`.
pub fn standard_signature(secrets: &[&str], msg_id: &str, timestamp: i64, body: &[u8]) -> String {
    let t = timestamp.to_string();
    secrets
        .iter()
        .map(|s| {
            let sig = hmac_sha256(
                &standard_key(s),
                &[msg_id.as_bytes(), b".", t.as_bytes(), b".", body],
            );
            format!(
                "v1,{}",
                base64::engine::general_purpose::STANDARD.encode(sig)
            )
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Why a signature was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    #[error("the signature header is malformed")]
    Malformed,
    #[error("the timestamp is outside the tolerance")]
    TimestampOutOfTolerance,
    #[error("no signature matches")]
    NoMatch,
}

/// Verifies a `Tender-Signature` header against the raw body, as a receiver would: some `v1`
/// must match (constant-time) and `t` must be within `tolerance_secs` of `now`.
pub fn verify_tender_signature(
    header: &str,
    body: &[u8],
    secret: &str,
    now: i64,
    tolerance_secs: i64,
) -> Result<(), VerifyError> {
    let mut timestamp = None;
    let mut signatures = Vec::new();
    for part in header.split(',') {
        let (k, v) = part.trim().split_once('=').ok_or(VerifyError::Malformed)?;
        match k {
            "t" => timestamp = Some(v.parse::<i64>().map_err(|_| VerifyError::Malformed)?),
            "v1" => signatures.push(hex::decode(v).map_err(|_| VerifyError::Malformed)?),
            _ => {}
        }
    }
    let t = timestamp.ok_or(VerifyError::Malformed)?;
    if signatures.is_empty() {
        return Err(VerifyError::Malformed);
    }
    // `abs_diff`: a hostile `t` (or clock) near i64::MIN/MAX must not overflow (found by fuzzing).
    if u64::try_from(tolerance_secs).map_or(true, |tol| now.abs_diff(t) > tol) {
        return Err(VerifyError::TimestampOutOfTolerance);
    }
    let expected = hmac_sha256(secret.as_bytes(), &[t.to_string().as_bytes(), b".", body]);
    if signatures.iter().any(|s| secrets_equal(s, &expected)) {
        Ok(())
    } else {
        Err(VerifyError::NoMatch)
    }
}

/// The retry schedule after the first attempt (CONTRACT §5), in seconds.
pub const RETRY_SCHEDULE: [i64; 7] = [5, 300, 1800, 7200, 18_000, 36_000, 36_000];

/// An endpoint failing everything for this long is disabled.
pub const DISABLE_AFTER_SECS: i64 = 5 * 24 * 3600;

/// A receiver's `Retry-After` is honoured up to this many seconds.
pub const MAX_RETRY_AFTER_SECS: i64 = 24 * 3600;

/// Delay in milliseconds before retry number `failed_attempts` (1 = after the first failure),
/// scaled and with ±10% jitter, or `None` when the schedule is exhausted.
pub fn retry_delay_ms(
    failed_attempts: usize,
    scale: f64,
    retry_after_secs: Option<i64>,
) -> Option<i64> {
    let base = *RETRY_SCHEDULE.get(failed_attempts.checked_sub(1)?)?;
    if let Some(ra) = retry_after_secs {
        return Some(ra.clamp(0, MAX_RETRY_AFTER_SECS) * 1000);
    }
    let jitter = rand::thread_rng().gen_range(0.9..=1.1);
    Some(((base as f64) * 1000.0 * scale * jitter).round().max(0.0) as i64)
}

/// Due deliveries of each account and mode a claim weighs, at most: enough to skip endpoints
/// at their cap without reading a scope's whole backlog (both stores use it).
pub const CANDIDATES_PER_SCOPE: i64 = 256;

/// A due delivery the store found, as the fair claim weighs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DueDelivery {
    pub id: String,
    /// The account and mode (`account_id`, `livemode`) it belongs to.
    pub scope: (String, bool),
    pub endpoint_id: String,
    pub next_attempt_at_ms: i64,
}

/// Picks up to `limit` deliveries to lease from `candidates` (any order, no duplicates). Each
/// pick goes to the account and mode with the fewest deliveries in flight (counting `busy_*`,
/// leased now, and the picks so far), ties to the one whose next delivery is oldest; within a
/// scope, its oldest delivery whose endpoint has room. Nothing puts an endpoint over
/// `per_endpoint` or a scope over `per_account` in flight. So when slots free up, the account
/// that has least goes first: tenants whose endpoints are slow (each attempt holding a slot for
/// up to the 10 s timeout) cannot keep a healthy tenant waiting behind them, however many
/// they are.
///
/// Pure, so both stores share it; they only find the candidates and lease the picks.
pub fn fair_pick(
    mut candidates: Vec<DueDelivery>,
    busy_accounts: &std::collections::HashMap<(String, bool), usize>,
    busy_endpoints: &std::collections::HashMap<String, usize>,
    per_account: usize,
    per_endpoint: usize,
    limit: usize,
) -> Vec<String> {
    use std::collections::{HashMap, VecDeque};
    candidates.sort_by(|a, b| (a.next_attempt_at_ms, &a.id).cmp(&(b.next_attempt_at_ms, &b.id)));
    let mut queues: HashMap<(String, bool), VecDeque<DueDelivery>> = HashMap::new();
    for c in candidates {
        queues.entry(c.scope.clone()).or_default().push_back(c);
    }
    let mut load: HashMap<(String, bool), usize> = queues
        .keys()
        .map(|scope| {
            (
                scope.clone(),
                busy_accounts.get(scope).copied().unwrap_or(0),
            )
        })
        .collect();
    let mut in_endpoint: HashMap<String, usize> = busy_endpoints.clone();
    let mut picked = Vec::new();
    while picked.len() < limit {
        // The scope with the least in flight that can still take one, oldest first on ties.
        let mut best: Option<((usize, i64, String, bool), usize)> = None;
        for (scope, queue) in &queues {
            let in_flight = load[scope];
            if in_flight >= per_account {
                continue;
            }
            let Some(pos) = queue
                .iter()
                .position(|d| in_endpoint.get(&d.endpoint_id).copied().unwrap_or(0) < per_endpoint)
            else {
                continue;
            };
            let key = (
                in_flight,
                queue[pos].next_attempt_at_ms,
                scope.0.clone(),
                scope.1,
            );
            if best.as_ref().is_none_or(|(k, _)| key < *k) {
                best = Some((key, pos));
            }
        }
        let Some(((_, _, account, live), pos)) = best else {
            break;
        };
        let scope = (account, live);
        let Some(d) = queues.get_mut(&scope).and_then(|q| q.remove(pos)) else {
            break;
        };
        *in_endpoint.entry(d.endpoint_id.clone()).or_insert(0) += 1;
        *load.entry(scope).or_insert(0) += 1;
        picked.push(d.id);
    }
    picked
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tender_signature_verifies_and_rejects_tampering() {
        let secret = generate_secret();
        let body = br#"{"id":"evt_1"}"#;
        let header = tender_signature(&[&secret], 1_700_000_000, body);
        assert!(verify_tender_signature(&header, body, &secret, 1_700_000_010, 300).is_ok());
        assert_eq!(
            verify_tender_signature(&header, b"{}", &secret, 1_700_000_010, 300),
            Err(VerifyError::NoMatch)
        );
        assert_eq!(
            verify_tender_signature(&header, body, &secret, 1_700_001_000, 300),
            Err(VerifyError::TimestampOutOfTolerance)
        );
        assert_eq!(
            verify_tender_signature("garbage", body, &secret, 0, 300),
            Err(VerifyError::Malformed)
        );
    }
    #[test]
    fn listen_secret_is_stable_per_key_and_signs_both_schemes() {
        let a = listen_secret("sk_test_aaaaaaaaaaaaaaaaaaaaaaaa");
        assert_eq!(a, listen_secret("sk_test_aaaaaaaaaaaaaaaaaaaaaaaa"));
        assert_ne!(a, listen_secret("sk_test_aaaaaaaaaaaaaaaaaaaaaaab"));
        assert!(a.starts_with("whsec_") && !a.contains("sk_test"));
        // The Standard Webhooks key is the 32 bytes after the prefix, as for generated secrets.
        assert_eq!(standard_key(&a).len(), 32);
        let body = br#"{"id":"evt_1"}"#;
        let header = tender_signature(&[&a], 1_700_000_000, body);
        assert!(verify_tender_signature(&header, body, &a, 1_700_000_000, 300).is_ok());
    }

    fn due(id: &str, account: &str, endpoint: &str, at: i64) -> DueDelivery {
        DueDelivery {
            id: id.into(),
            scope: (account.into(), false),
            endpoint_id: endpoint.into(),
            next_attempt_at_ms: at,
        }
    }
    #[test]
    fn the_fair_pick_alternates_accounts_and_respects_the_caps() {
        use std::collections::HashMap;
        let mut candidates: Vec<_> = (0..10)
            .map(|i| due(&format!("b{i}"), "acct_b", &format!("we_b{}", i % 2), i))
            .collect();
        candidates.push(due("a0", "acct_a", "we_a", 100));
        let none: HashMap<(String, bool), usize> = HashMap::new();
        let no_endpoints: HashMap<String, usize> = HashMap::new();
        // A's single, newest delivery comes second: right after B's oldest.
        let picked = fair_pick(candidates.clone(), &none, &no_endpoints, 100, 100, 2);
        assert_eq!(picked, ["b0", "a0"]);
        // B already has deliveries in flight (slow endpoints): A, with none, goes first.
        let b_busy: HashMap<_, _> = [(("acct_b".to_string(), false), 5)].into();
        let picked = fair_pick(candidates.clone(), &b_busy, &no_endpoints, 100, 100, 1);
        assert_eq!(picked, ["a0"]);
        // Endpoint cap 2: B gets two per endpoint (4), A its one.
        let picked = fair_pick(candidates.clone(), &none, &no_endpoints, 100, 2, 100);
        assert_eq!(picked.len(), 5);
        // Account cap 3, counting 2 already in flight for B: B gets one more, after A.
        let busy: HashMap<_, _> = [(("acct_b".to_string(), false), 2)].into();
        let picked = fair_pick(candidates.clone(), &busy, &no_endpoints, 3, 100, 100);
        assert_eq!(picked, ["a0", "b0"]);
        // An endpoint already full is skipped, its account's other endpoint is not.
        let full: HashMap<_, _> = [("we_b0".to_string(), 8)].into();
        let picked = fair_pick(candidates, &none, &full, 100, 8, 3);
        assert_eq!(picked, ["b1", "a0", "b3"]);
    }
    #[test]
    fn extreme_timestamps_are_out_of_tolerance_not_an_overflow() {
        let secret = generate_secret();
        for (t, now) in [
            (i64::MIN, 1_700_000_000),
            (i64::MAX, i64::MIN),
            (0, i64::MAX),
        ] {
            let header = tender_signature(&[&secret], t, b"x");
            assert_eq!(
                verify_tender_signature(&header, b"x", &secret, now, 300),
                Err(VerifyError::TimestampOutOfTolerance)
            );
        }
        let header = tender_signature(&[&secret], i64::MIN, b"x");
        assert!(verify_tender_signature(&header, b"x", &secret, i64::MIN, 0).is_ok());
        assert!(verify_tender_signature(&header, b"x", &secret, i64::MIN, -1).is_err());
    }
    #[test]
    fn during_a_roll_both_secrets_sign_newest_first() {
        let (old, new) = (generate_secret(), generate_secret());
        let body = b"x";
        let header = tender_signature(&[&new, &old], 10, body);
        assert_eq!(header.matches("v1=").count(), 2);
        assert!(verify_tender_signature(&header, body, &old, 10, 5).is_ok());
        assert!(verify_tender_signature(&header, body, &new, 10, 5).is_ok());
        let std_sig = standard_signature(&[&new, &old], "evt_1", 10, body);
        assert_eq!(std_sig.split(' ').count(), 2);
        assert!(std_sig.starts_with("v1,"));
    }
    #[test]
    fn standard_signature_matches_the_reference_vector() {
        // From the Standard Webhooks specification's test vector.
        let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
        let body = br#"{"test": 2432232314}"#;
        let sig = standard_signature(&[secret], "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body);
        assert_eq!(sig, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
    }
    #[test]
    fn retry_schedule_is_scaled_and_ends_after_seven_retries() {
        for (i, base) in RETRY_SCHEDULE.iter().enumerate() {
            let d = retry_delay_ms(i + 1, 1.0, None).unwrap();
            assert!((d as f64) >= *base as f64 * 900.0 && (d as f64) <= *base as f64 * 1100.0);
        }
        assert_eq!(retry_delay_ms(8, 1.0, None), None);
        assert!(retry_delay_ms(1, 0.001, None).unwrap() <= 6);
        assert_eq!(retry_delay_ms(1, 1.0, Some(30)), Some(30_000));
        assert_eq!(
            retry_delay_ms(1, 1.0, Some(10_000_000)),
            Some(MAX_RETRY_AFTER_SECS * 1000)
        );
    }
}
