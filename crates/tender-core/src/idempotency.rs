//! Idempotency keys (CONTRACT §4.9): every rule about them lives in this file; the HTTP layer
//! only reads the header and translates what [`Services::begin_idempotent`] answers.
//!
//! - **Keys** are 1–255 printable ASCII characters ([`check_key`]); records are scoped to
//!   account and mode, and publishable-key requests get their own namespace ([`stored_key`]):
//!   a public key can never claim the key the merchant's server uses.
//! - **The fingerprint** is an HMAC-SHA256 under a key derived from the vault key, over the
//!   method, the path and the canonical body (object keys sorted, so key order does not count).
//!   Before hashing, a card's `cvc` is dropped (the CVC is never stored in any form, and a replay
//!   with another CVC is a replay, so it is no oracle), and card numbers and IBANs are replaced by
//!   their keyed digests. Without the vault key nothing in a stored fingerprint can be guessed
//!   and checked offline, whatever else of the body the database holds.
//! - **A claim** is taken in the database before the work ([`Services::begin_idempotent`]): a
//!   new key runs, a finished one replays its stored answer byte for byte, one with another
//!   fingerprint is `400`, one still running is `409`. A running claim is never taken over while
//!   the process that made it lives (see `Store::claim_idempotency`).
//! - **The answer** is stored by the write batch of the use case (`Services::commit`), or, for a
//!   request that wrote nothing, by [`Claim::keep`]: 2xx and 4xx answers are kept, 5xx (and
//!   405s of the router) release the key ([`Claim::release`]), and a request abandoned half-way
//!   (the client hung up) releases it when its [`Claim`] is dropped. Kept answers are sealed
//!   under the vault key ([`response_sealer`]): some carry secrets shown once.
//!
use hmac::{Hmac, Mac};
use serde_json::Value;
use sha2::Sha256;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::auth::{KeyKind, Principal, Scope};
use crate::error::{CoreError, CoreResult, StoreError};
use crate::service::Services;
use crate::store::{IdempotencyClaim, StoredResponse};
use crate::vault::derive_key;

/// Longest idempotency key.
pub const MAX_KEY_LEN: usize = 255;

/// An `Idempotency-Key` as sent: 1–255 printable ASCII characters (else 400
/// `idempotency_key_invalid`). `None` means the header's bytes were not text.
pub fn check_key(raw: Option<&str>) -> CoreResult<String> {
    let invalid = |message: &'static str| CoreError::InvalidParam {
        param: Some("Idempotency-Key".into()),
        code: "idempotency_key_invalid",
        message: message.into(),
    };
    let key = raw.ok_or_else(|| invalid("Idempotency keys must be printable ASCII."))?;
    if key.is_empty() || key.len() > MAX_KEY_LEN {
        return Err(invalid("Idempotency keys must be 1 to 255 characters."));
    }
    Ok(key.to_string())
}

/// An idempotency key this request has claimed; completed by the write batch that carries the
/// response, or by [`Claim::keep`] when the request wrote nothing.
#[derive(Debug)]
pub struct IdempotencyHold {
    /// The key as the client sent it (shown in events' `request.idempotency_key`).
    pub key: String,
    /// The key the record is stored under ([`stored_key`]).
    pub stored: String,
    completed: AtomicBool,
}

impl IdempotencyHold {
    pub fn new(key: String, kind: KeyKind) -> Self {
        Self {
            stored: stored_key(&key, kind),
            key,
            completed: AtomicBool::new(false),
        }
    }

    /// Whether a committed batch already stored the response under the key.
    pub fn is_completed(&self) -> bool {
        self.completed.load(Ordering::SeqCst)
    }

    /// Called once the batch carrying the response committed.
    pub(crate) fn mark_completed(&self) {
        self.completed.store(true, Ordering::SeqCst);
    }
}

/// What a request that carries an `Idempotency-Key` does.
#[derive(Debug)]
pub enum Begun {
    /// Run it: the key is claimed. Put [`Claim::hold`] in the request's context, then end with
    /// [`Claim::keep`] or [`Claim::release`] (or let the write batch complete it).
    Run(Claim),
    /// Answer again what the first request answered (status and body as first sent).
    Replay(StoredResponse),
}

/// A claimed key, held for the length of one request. Dropped without [`Claim::keep`] or
/// [`Claim::release`] and not completed by a batch (the request was abandoned: its client
/// hung up and its handler was dropped), it releases the key in the background, since nothing
/// else would while this process lives.
pub struct Claim {
    services: Services,
    scope: Scope,
    hold: Arc<IdempotencyHold>,
    settled: bool,
}

impl std::fmt::Debug for Claim {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Claim")
            .field("scope", &self.scope)
            .field("hold", &self.hold)
            .finish_non_exhaustive()
    }
}

impl Claim {
    pub fn hold(&self) -> Arc<IdempotencyHold> {
        Arc::clone(&self.hold)
    }

    /// The request ended with `response` and wrote nothing itself: keep the answer (2xx and
    /// 4xx), sealed, unless its batch already did.
    pub async fn keep(mut self, response: StoredResponse) {
        self.settled = true;
        if self.hold.is_completed() {
            return;
        }
        let sealed = self.services.seal_idempotent_response(response);
        if let Err(e) = self
            .services
            .store
            .complete_idempotency(&self.scope, &self.hold.stored, sealed)
            .await
        {
            tracing::warn!(error = %e, "could not store an idempotent response");
        }
    }

    /// The request failed on our side (5xx) or was never handled (405): free the key, so a
    /// retry runs the request again. A key a batch already completed stays completed.
    pub async fn release(mut self) {
        self.settled = true;
        if self.hold.is_completed() {
            return;
        }
        if let Err(e) = self
            .services
            .store
            .release_idempotency(&self.scope, &self.hold.stored)
            .await
        {
            tracing::warn!(error = %e, "could not release an idempotency key");
        }
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        if self.settled || self.hold.is_completed() {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let (services, scope, hold) = (
            self.services.clone(),
            self.scope.clone(),
            Arc::clone(&self.hold),
        );
        // Only a claim still running is released: a batch that committed first keeps it.
        runtime.spawn(async move {
            if let Err(e) = services
                .store
                .release_idempotency(&scope, &hold.stored)
                .await
            {
                tracing::warn!(error = %e, "could not release an abandoned idempotency key");
            }
        });
    }
}

impl Services {
    /// Claims `key` for a request of `principal` (`method`, `path`, parsed `body`), or says
    /// how to answer without running it: a replay, or 400/409 `idempotency_error`.
    pub async fn begin_idempotent(
        &self,
        principal: &Principal,
        key: String,
        method: &str,
        path: &str,
        body: &serde_json::Value,
    ) -> CoreResult<Begun> {
        let fingerprint =
            Fingerprinter::new(&self.config.vault_key).fingerprint(method, path, body);
        let hold = Arc::new(IdempotencyHold::new(key, principal.key_kind));
        let claim = self
            .store
            .claim_idempotency(&principal.scope, &hold.stored, &fingerprint, self.now())
            .await?;
        match claim {
            IdempotencyClaim::Acquired => Ok(Begun::Run(Claim {
                services: self.clone(),
                scope: principal.scope.clone(),
                hold,
                settled: false,
            })),
            IdempotencyClaim::Replay(stored) => {
                Ok(Begun::Replay(self.open_idempotent_response(stored)?))
            }
            IdempotencyClaim::Mismatch => Err(CoreError::IdempotencyMismatch),
            IdempotencyClaim::InProgress => Err(CoreError::IdempotencyInProgress),
        }
    }

    /// A response as kept under an idempotency key: sealed under the vault key.
    pub(crate) fn seal_idempotent_response(&self, response: StoredResponse) -> StoredResponse {
        StoredResponse {
            status: response.status,
            body: response_sealer(&self.config.vault_key).seal_bytes(&response.body),
        }
    }

    /// The response kept under an idempotency key, opened for a replay.
    fn open_idempotent_response(&self, stored: StoredResponse) -> CoreResult<StoredResponse> {
        let body = response_sealer(&self.config.vault_key)
            .open_bytes(&stored.body)
            .map_err(|_| {
                StoreError::Corrupt(
                    "an idempotent response cannot be opened with this vault key".into(),
                )
            })?;
        Ok(StoredResponse {
            status: stored.status,
            body,
        })
    }
}

/// Purpose string of the derived fingerprint key (see [`derive_key`]).
const FINGERPRINT_PURPOSE: &str = "idempotency fingerprint";

/// Prefix of publishable-key records. DEL (0x7f) is no visible ASCII, so no `Idempotency-Key`
/// header can carry it: the two namespaces cannot meet.
const PUBLISHABLE_NAMESPACE: &str = "\u{7f}publishable:";

/// The key under which a request's record is stored, given the key the client sent.
pub fn stored_key(key: &str, kind: KeyKind) -> String {
    match kind {
        KeyKind::Secret => key.to_string(),
        KeyKind::Publishable => format!("{PUBLISHABLE_NAMESPACE}{key}"),
    }
}

/// Seals the responses kept under idempotency keys.
pub fn response_sealer(vault_key: &[u8; 32]) -> crate::vault::Sealer {
    crate::vault::Sealer::new(vault_key, "idempotent response")
}

/// Computes request fingerprints under the vault key.
#[derive(Clone)]
pub struct Fingerprinter {
    key: [u8; 32],
}

impl std::fmt::Debug for Fingerprinter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Fingerprinter([REDACTED])")
    }
}

impl Fingerprinter {
    pub fn new(vault_key: &[u8; 32]) -> Self {
        Self {
            key: derive_key(vault_key, FINGERPRINT_PURPOSE),
        }
    }

    fn mac(&self) -> Hmac<Sha256> {
        <Hmac<Sha256> as Mac>::new_from_slice(&self.key).expect("HMAC takes any key")
    }

    /// The fingerprint of `method path body`, as hex.
    pub fn fingerprint(&self, method: &str, path: &str, body: &Value) -> String {
        let mut text = format!("{method} {path}\n");
        self.canonical(body, None, &mut text);
        let mut mac = self.mac();
        mac.update(text.as_bytes());
        hex::encode(mac.finalize().into_bytes())
    }

    /// A keyed digest standing in for a secret value inside the canonical text.
    fn digest(&self, field: &str, value: &Value) -> String {
        let mut mac = self.mac();
        mac.update(b"field:");
        mac.update(field.as_bytes());
        mac.update(b"\n");
        mac.update(value.to_string().as_bytes());
        format!("\"#{}\"", hex::encode(mac.finalize().into_bytes()))
    }

    /// Sorted-key JSON; `parent` is the key whose value `value` is.
    fn canonical(&self, value: &Value, parent: Option<&str>, out: &mut String) {
        match value {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                out.push('{');
                let mut first = true;
                for k in keys {
                    let secret = match (parent, k.as_str()) {
                        (Some("card"), "cvc") => continue,
                        (Some("card"), "number") | (Some("bank_transfer"), "iban") => true,
                        _ => false,
                    };
                    if !first {
                        out.push(',');
                    }
                    first = false;
                    out.push_str(&serde_json::to_string(k).unwrap_or_default());
                    out.push(':');
                    if secret {
                        out.push_str(&self.digest(k, &map[k]));
                    } else {
                        self.canonical(&map[k], Some(k), out);
                    }
                }
                out.push('}');
            }
            Value::Array(items) => {
                out.push('[');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    self.canonical(v, None, out);
                }
                out.push(']');
            }
            other => out.push_str(&other.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fp(body: Value) -> String {
        Fingerprinter::new(&[7; 32]).fingerprint("POST", "/v2/payments", &body)
    }

    fn pay(number: &str, cvc: &str) -> Value {
        json!({"amount": 100, "payment_method": {"type": "card",
               "card": {"number": number, "cvc": cvc, "exp_month": 1}}})
    }

    #[test]
    fn key_order_does_not_count_but_values_and_paths_do() {
        assert_eq!(
            fp(json!({"a": 1, "b": {"x": 1, "y": 2}})),
            fp(json!({"b": {"y": 2, "x": 1}, "a": 1}))
        );
        assert_ne!(fp(json!({"a": 1})), fp(json!({"a": 2})));
        let f = Fingerprinter::new(&[7; 32]);
        assert_ne!(
            f.fingerprint("POST", "/v2/payments", &json!({})),
            f.fingerprint("POST", "/v2/customers", &json!({}))
        );
    }

    #[test]
    fn the_cvc_never_counts_and_the_card_number_does() {
        assert_eq!(
            fp(pay("4242424242424242", "123")),
            fp(pay("4242424242424242", "999"))
        );
        assert_ne!(
            fp(pay("4242424242424242", "123")),
            fp(pay("4000056655665556", "123"))
        );
        let iban = |i: &str| json!({"payment_method": {"bank_transfer": {"iban": i}}});
        assert_ne!(
            fp(iban("DE89370400440532013000")),
            fp(iban("DE89370400440532013001"))
        );
        // A metadata key named like a card field is an ordinary value.
        assert_ne!(
            fp(json!({"metadata": {"cvc": "1"}})),
            fp(json!({"metadata": {"cvc": "2"}}))
        );
    }

    #[test]
    fn another_vault_key_gives_another_fingerprint() {
        let body = pay("4242424242424242", "123");
        assert_ne!(
            Fingerprinter::new(&[7; 32]).fingerprint("POST", "/p", &body),
            Fingerprinter::new(&[8; 32]).fingerprint("POST", "/p", &body)
        );
    }

    #[test]
    fn publishable_keys_live_in_their_own_namespace() {
        assert_eq!(stored_key("order-1", KeyKind::Secret), "order-1");
        let pk = stored_key("order-1", KeyKind::Publishable);
        assert_ne!(pk, "order-1");
        assert!(pk.ends_with("order-1"));
        assert!(axum_header_cannot_carry(&pk));
    }

    /// What `HeaderValue::to_str` accepts: visible ASCII, space and tab.
    fn axum_header_cannot_carry(s: &str) -> bool {
        s.bytes().any(|b| !(b == b'\t' || (32..127).contains(&b)))
    }
}
