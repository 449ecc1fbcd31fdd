//! The Stripe dialect (`/v1`, CONTRACT §13): how Tender's objects look to a client written for
//! Stripe. Every object is read from its `/v2` JSON — the one complete, public form every
//! answer, idempotent replay and event already has — and shown in Stripe's published shape
//! (the shapes the official SDKs declare; `tender-server/tests/fixtures/stripe-shapes.json`
//! holds them and the tests check every object against it). So `/v1` is a translation at the
//! edge, over the same objects, ledger, events and idempotency records as `/v2`.
//!
//! | Tender object (`/v2`) | shown through `/v1` as | where |
//! |---|---|---|
//! | payment `pay_X` | PaymentIntent `pi_X`, or its one charge `ch_X` | [`payments`] |
//! | customer, payment method, refund | Customer, PaymentMethod, Refund | [`objects`] |
//! | setup intent `seti_X` | SetupIntent | [`setup_intents`] |
//! | checkout session `cs_X`, its line items, payment link | Checkout Session, item, PaymentLink | [`checkout`] |
//! | product, price, subscription, invoice, test clock | the same | [`billing`] |
//! | balance, balance transaction, payout, dispute | the same | [`balance`] |
//! | error envelope | Stripe's error, a decline with its PaymentIntent | [`errors`] |
//! | event | Stripe's event, under Stripe's name | [`events`] |
//!
//! Ids: [`ids`]. Pure: no I/O, depends on `serde_json` and the vault's key derivation only.

pub mod balance;
pub mod billing;
pub mod checkout;
pub mod errors;
pub mod events;
pub mod ids;
pub mod objects;
pub mod payments;
pub mod setup_intents;

use hmac::{Hmac, Mac};
use serde_json::Value;
use sha2::Sha256;

/// The Stripe API version whose shapes `/v1` answers in (the one stripe-python 16.1.0 and
/// stripe-node 23.1.0 pin); any `Stripe-Version` a client sends is echoed, and answered in
/// this shape.
pub const API_VERSION: &str = "2026-10-28.endive";

/// Which of Stripe's shapes an answer is shown in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    PaymentIntent,
    Charge,
    Customer,
    PaymentMethod,
    Refund,
    Product,
    Price,
    Subscription,
    Invoice,
    TestClock,
    Balance,
    BalanceTransaction,
    Payout,
    Dispute,
    WebhookEndpoint,
    SetupIntent,
    CheckoutSession,
    PaymentLink,
    /// A Checkout Session's line item.
    LineItem,
    /// A card-testing block (`risk.blocked`) as `radar.early_fraud_warning`.
    EarlyFraudWarning,
}

/// What rendering needs beyond the object: the key client secrets are derived with.
#[derive(Clone)]
pub struct Shapes {
    client_secret_key: [u8; 32],
}

impl std::fmt::Debug for Shapes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Shapes { .. }")
    }
}

impl Shapes {
    pub fn new(vault_key: &[u8; 32]) -> Self {
        Self {
            client_secret_key: crate::vault::derive_key(vault_key, "stripe client secret"),
        }
    }

    /// A PaymentIntent's or SetupIntent's `client_secret`: `pi_X_secret_` (`seti_X_secret_`)
    /// and 24 characters of an HMAC of the object's id under a key derived from the vault key. Nothing is stored: the same
    /// id always gives the same secret, and none can be made without the vault key.
    pub fn client_secret(&self, payment_id: &str) -> String {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.client_secret_key)
            .expect("HMAC takes a key of any length");
        mac.update(payment_id.as_bytes());
        let digest = mac.finalize().into_bytes();
        const ALPHABET: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
        let secret: String = digest
            .iter()
            .take(24)
            .map(|b| ALPHABET[(*b as usize) % ALPHABET.len()] as char)
            .collect();
        format!("{}_secret_{secret}", ids::intent(payment_id))
    }

    /// Whether `given` is the `client_secret` of the payment `payment_id` (constant time).
    pub fn client_secret_matches(&self, payment_id: &str, given: &str) -> bool {
        crate::auth::secrets_equal(self.client_secret(payment_id).as_bytes(), given.as_bytes())
    }

    /// The `/v2` object `v2` in `shape`.
    pub fn show(&self, shape: Shape, v2: &Value) -> Value {
        match shape {
            Shape::PaymentIntent => payments::payment_intent(self, v2),
            Shape::Charge => payments::charge(v2),
            Shape::Customer => objects::customer(v2),
            Shape::PaymentMethod => objects::payment_method(v2),
            Shape::Refund => objects::refund(v2),
            Shape::Product => billing::product(v2),
            Shape::Price => billing::price(v2),
            Shape::Subscription => billing::subscription(v2),
            Shape::Invoice => billing::invoice(v2),
            Shape::TestClock => billing::test_clock(v2),
            Shape::Balance => balance::balance(v2),
            Shape::BalanceTransaction => balance::balance_transaction(v2),
            Shape::Payout => balance::payout(v2),
            Shape::Dispute => balance::dispute(v2),
            Shape::WebhookEndpoint => objects::webhook_endpoint(v2),
            Shape::SetupIntent => setup_intents::setup_intent(self, v2),
            Shape::CheckoutSession => checkout::checkout_session(v2),
            Shape::LineItem => checkout::line_item(v2),
            Shape::PaymentLink => checkout::payment_link(v2),
            Shape::EarlyFraudWarning => objects::early_fraud_warning(v2),
        }
    }
}

/// Stripe's documentation page of an error `code`.
pub fn doc_url(code: &str) -> String {
    format!(
        "https://docs.stripe.com/error-codes/{}",
        code.replace('_', "-")
    )
}
