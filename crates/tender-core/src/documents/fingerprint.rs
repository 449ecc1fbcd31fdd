//! The fingerprint of a request under an idempotency key (see [`super::idempotency`]): an
//! HMAC-SHA256, under a key derived from the vault key, of the method, the path and the
//! canonical body (object keys sorted). A card's `cvc` never enters it; card numbers, IBANs and
//! a connector's `api_key` and `webhook_secret` enter only as keyed digests, so nothing in a
//! stored fingerprint can be guessed and checked offline without the vault key.

use hmac::{Hmac, Mac};
use serde_json::Value;
use sha2::Sha256;

use crate::vault::derive_key;

/// Purpose string of the derived fingerprint key (see [`derive_key`]).
const FINGERPRINT_PURPOSE: &str = "idempotency fingerprint";

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
                        // A connector's secrets (`POST /connectors`, `POST /connectors/{id}`).
                        (None, "api_key" | "webhook_secret") => true,
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

    /// `/v1`'s bodies are form-decoded into the same tree with string values
    /// (`payment_method_data[card][cvc]`, `card[number]`): the CVC stays out there too (a replay
    /// with another one is a replay, so no oracle), and the number enters only as a digest.
    #[test]
    fn stripe_form_trees_leave_the_cvc_out_and_digest_the_number() {
        let body = |number: &str, cvc: &str| {
            json!({"amount": "2000", "confirm": "true", "payment_method_data": {"type": "card",
                "card": {"number": number, "exp_month": "12", "exp_year": "2034", "cvc": cvc}}})
        };
        let f = Fingerprinter::new(&[7; 32]);
        let at = |b: Value| f.fingerprint("POST", "/v1/payment_intents", &b);
        assert_eq!(
            at(body("4242424242424242", "123")),
            at(body("4242424242424242", "999"))
        );
        assert_ne!(
            at(body("4242424242424242", "123")),
            at(body("4000000000000002", "123"))
        );
        let mut text = String::new();
        f.canonical(&body("4242424242424242", "123"), None, &mut text);
        assert!(
            !text.contains("4242424242424242") && !text.contains("\"123\""),
            "{text}"
        );
    }

    #[test]
    fn connector_secrets_count_but_only_as_keyed_digests() {
        let f =
            |key: &str| fp(json!({"type": "stripe", "api_key": key, "webhook_secret": "whsec_1"}));
        assert_ne!(f("sk_test_a"), f("sk_test_b"));
        let mut text = String::new();
        Fingerprinter::new(&[7; 32]).canonical(
            &json!({"api_key": "sk_test_a", "webhook_secret": "whsec_1"}),
            None,
            &mut text,
        );
        assert!(
            !text.contains("sk_test_a") && !text.contains("whsec_1"),
            "{text}"
        );
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
}
