//! Prefixed object identifiers (`pay_…`, `cus_…`, …).
//!
//! An id is its kind's prefix plus 24 base62 characters: [`TIME_LEN`] encode the millisecond it
//! was made, the other [`RANDOM_LEN`] - [`TIME_LEN`] come from the operating system's CSPRNG
//! (16 × log2(62) ≈ 95 bits), so ids stay unguessable (a receipt page is found by payment id
//! alone) while new ids of a moment sort together. That is what keeps the stores fast: each new
//! id lands at the right edge of its table's id index, so a group commit changes a few pages of
//! it, where a random id dirties (and writes to the WAL) one random page per row.
//! Depends on `rand`, the system clock, and the store's `Collection` names.
//!
//! [`Id<K>`] is an id known to be of kind `K` (a [`kind`] marker; aliases such as [`PaymentId`]):
//! checked once where it enters — a path, a request body, a fresh one — and carried as that kind
//! to the store, so a customer's id cannot be handed where a payment's is meant and nothing
//! downstream checks its shape again. It reads as the `&str` the store takes; its kind also names
//! the collection it is stored in ([`crate::collection::Collection`]).

use std::marker::PhantomData;

use rand::{rngs::OsRng, RngCore};

const ALPHABET: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
/// Characters after the prefix.
pub const RANDOM_LEN: usize = 24;
/// Leading characters of those that encode the time (milliseconds since 1970, base62, most
/// significant first: 62^8 ms lasts past the year 8000).
pub const TIME_LEN: usize = 8;

/// The kinds of object that carry an id, each with its wire prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IdKind {
    Payment,
    PaymentMethod,
    Customer,
    Refund,
    Event,
    WebhookEndpoint,
    WebhookDelivery,
    Account,
    Request,
    ApiKey,
    Connector,
    BalanceTransaction,
    Payout,
    Dispute,
    Product,
    Price,
    Subscription,
    SubscriptionItem,
    Invoice,
    TestClock,
    SetupIntent,
    CheckoutSession,
    PaymentLink,
    /// A Checkout Session's line item (kept inside its session).
    LineItem,
    /// A card-testing block, told in a `risk.blocked` event (kept in the event only).
    RiskBlock,
}

impl IdKind {
    /// The prefix including its underscore.
    pub const fn prefix(self) -> &'static str {
        match self {
            IdKind::Payment => "pay_",
            IdKind::PaymentMethod => "pm_",
            IdKind::Customer => "cus_",
            IdKind::Refund => "re_",
            IdKind::Event => "evt_",
            IdKind::WebhookEndpoint => "we_",
            IdKind::WebhookDelivery => "wd_",
            IdKind::Account => "acct_",
            IdKind::Request => "req_",
            IdKind::ApiKey => "key_",
            IdKind::Connector => "conn_",
            IdKind::BalanceTransaction => "txn_",
            IdKind::Payout => "po_",
            IdKind::Dispute => "dp_",
            IdKind::Product => "prod_",
            IdKind::Price => "price_",
            IdKind::Subscription => "sub_",
            IdKind::SubscriptionItem => "si_",
            IdKind::Invoice => "in_",
            IdKind::TestClock => "clock_",
            IdKind::SetupIntent => "seti_",
            IdKind::CheckoutSession => "cs_",
            IdKind::PaymentLink => "plink_",
            IdKind::LineItem => "li_",
            IdKind::RiskBlock => "rblk_",
        }
    }
}

/// A fresh id of the given kind.
pub fn generate(kind: IdKind) -> String {
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let mut id = String::with_capacity(kind.prefix().len() + RANDOM_LEN);
    id.push_str(kind.prefix());
    push_time(&mut id, millis);
    id.push_str(&random_base62(RANDOM_LEN - TIME_LEN));
    id
}

/// The id of `kind` that stands for `seed` (an outside party's object, such as a processor's
/// payout), made at `seconds`: the same seed always gives the same id, so the store's key
/// keeps it recorded once. Sorts by `seconds` like [`generate`]'s.
pub fn derived(kind: IdKind, seconds: i64, seed: &str) -> String {
    use sha2::{Digest, Sha256};
    let mut id = String::with_capacity(kind.prefix().len() + RANDOM_LEN);
    id.push_str(kind.prefix());
    push_time(&mut id, (seconds.max(0) as u64).saturating_mul(1000));
    let digest = Sha256::digest(format!("{}{seed}", kind.prefix()).as_bytes());
    id.extend(
        digest
            .iter()
            .take(RANDOM_LEN - TIME_LEN)
            .map(|b| ALPHABET[(*b % 62) as usize] as char),
    );
    id
}

/// Appends `millis` as [`TIME_LEN`] base62 characters, most significant first.
fn push_time(out: &mut String, millis: u64) {
    let mut digits = [b'0'; TIME_LEN];
    let mut rest = millis;
    for d in digits.iter_mut().rev() {
        *d = ALPHABET[(rest % 62) as usize];
        rest /= 62;
    }
    out.extend(digits.iter().map(|&b| b as char));
}

/// `len` base62 characters from the OS CSPRNG (used for ids and key bodies).
///
/// Random bytes are fetched in one `getrandom` call per 64 bytes (not one per character, which
/// showed as ~9% of the server's CPU under load) and turned into characters by rejection
/// sampling: bytes ≥ 248 (= 4 × 62) are skipped, so every character stays uniform.
pub fn random_base62(len: usize) -> String {
    let mut out = String::with_capacity(len);
    let mut buf = [0u8; 64];
    while out.len() < len {
        OsRng.fill_bytes(&mut buf);
        for &b in &buf {
            if out.len() == len {
                break;
            }
            if b < 248 {
                out.push(ALPHABET[(b % 62) as usize] as char);
            }
        }
    }
    out
}

/// Whether `s` has the shape of an id of `kind`: its prefix followed by exactly
/// [`RANDOM_LEN`] base62 characters.
///
/// Used to answer a malformed id with the same 404 as a missing one without touching the store.
pub fn looks_like(kind: IdKind, s: &str) -> bool {
    match s.strip_prefix(kind.prefix()) {
        Some(rest) => rest.len() == RANDOM_LEN && rest.bytes().all(|b| b.is_ascii_alphanumeric()),
        None => false,
    }
}

/// A kind of id, as a type: its [`IdKind`], the name a "No such …" message gives it, and the
/// collection its objects are stored in.
pub trait Kind {
    const KIND: IdKind;
    /// The object's name in errors (`No such payment: 'pay_…'`).
    const NAME: &'static str;
    const COLLECTION: crate::collection::Collection;
}

macro_rules! kinds {
    ($($marker:ident, $alias:ident, $name:literal, $collection:ident;)*) => {
        /// The kinds of [`Id`], one uninhabited type each.
        pub mod kind {
            $(
                #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
                pub enum $marker {}
                impl super::Kind for $marker {
                    const KIND: super::IdKind = super::IdKind::$marker;
                    const NAME: &'static str = $name;
                    const COLLECTION: crate::collection::Collection =
                        crate::collection::Collection::$collection;
                }
            )*
        }
        $(pub type $alias = Id<kind::$marker>;)*
    };
}

kinds! {
    Payment, PaymentId, "payment", Payments;
    PaymentMethod, PaymentMethodId, "payment_method", PaymentMethods;
    Customer, CustomerId, "customer", Customers;
    Refund, RefundId, "refund", Refunds;
    Event, EventId, "event", Events;
    WebhookEndpoint, WebhookEndpointId, "webhook_endpoint", WebhookEndpoints;
    Connector, ConnectorId, "connector", Connectors;
    BalanceTransaction, BalanceTransactionId, "balance_transaction", BalanceTransactions;
    Payout, PayoutId, "payout", Payouts;
    Dispute, DisputeId, "dispute", Disputes;
    Product, ProductId, "product", Products;
    Price, PriceId, "price", Prices;
    Subscription, SubscriptionId, "subscription", Subscriptions;
    Invoice, InvoiceId, "invoice", Invoices;
    TestClock, TestClockId, "test clock", TestClocks;
    SetupIntent, SetupIntentId, "setup_intent", SetupIntents;
    CheckoutSession, CheckoutSessionId, "checkout_session", CheckoutSessions;
    PaymentLink, PaymentLinkId, "payment_link", PaymentLinks;
}

/// An id of kind `K`: its prefix and [`RANDOM_LEN`] base62 characters, checked on the way in.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Id<K> {
    text: String,
    kind: PhantomData<K>,
}

impl<K: Kind> Id<K> {
    /// `text` as an id of this kind, or `text` back when it does not have the shape of one: it
    /// could name nothing, and is answered like a missing one without a lookup.
    pub fn parse(text: String) -> Result<Self, String> {
        match looks_like(K::KIND, &text) {
            true => Ok(Id {
                text,
                kind: PhantomData,
            }),
            false => Err(text),
        }
    }

    /// [`Id::parse`], refusing with "No such {name}" ([`CoreError::NotFound`]) for a path.
    pub fn found(text: String) -> Result<Self, crate::error::CoreError> {
        Self::parse(text).map_err(|id| crate::error::CoreError::NotFound { kind: K::NAME, id })
    }

    /// [`Id::parse`], refusing with 400 `resource_missing` naming `param`, for a reference in a
    /// request body.
    pub fn referenced(text: String, param: &str) -> Result<Self, crate::error::CoreError> {
        Self::parse(text)
            .map_err(|id| crate::error::CoreError::missing_reference(param, K::NAME, &id))
    }

    /// A fresh id of this kind.
    pub fn generate() -> Self {
        Id {
            text: generate(K::KIND),
            kind: PhantomData,
        }
    }

    /// An id read back from a stored document, which only ever holds ids this module made: not
    /// checked again.
    pub fn stored(text: impl Into<String>) -> Self {
        Id {
            text: text.into(),
            kind: PhantomData,
        }
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    pub fn into_string(self) -> String {
        self.text
    }
}

impl<K> std::ops::Deref for Id<K> {
    type Target = str;
    fn deref(&self) -> &str {
        &self.text
    }
}

impl<K> std::fmt::Display for Id<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

impl<K> std::fmt::Debug for Id<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&self.text, f)
    }
}

impl<K> PartialEq<str> for Id<K> {
    fn eq(&self, other: &str) -> bool {
        self.text == other
    }
}

impl<K> PartialEq<String> for Id<K> {
    fn eq(&self, other: &String) -> bool {
        &self.text == other
    }
}

impl<K> PartialEq<Id<K>> for String {
    fn eq(&self, other: &Id<K>) -> bool {
        *self == other.text
    }
}

impl<K> From<Id<K>> for String {
    fn from(id: Id<K>) -> String {
        id.text
    }
}

impl<K> serde::Serialize for Id<K> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typed_id_is_checked_once_for_its_own_kind() {
        let fresh = PaymentId::generate();
        assert!(fresh.starts_with("pay_"));
        let again = PaymentId::parse(fresh.to_string()).expect("a generated id parses");
        assert_eq!(again, fresh);
        assert_eq!(CustomerId::parse(fresh.to_string()), Err(fresh.to_string()));
        assert!(PaymentId::parse("pay_short".into()).is_err());
        assert!(PaymentId::parse(format!("{fresh}x")).is_err());
        assert_eq!(
            serde_json::to_string(&fresh).unwrap(),
            format!("\"{fresh}\"")
        );
        assert_eq!(format!("{fresh:?}"), format!("{:?}", fresh.as_str()));
        assert_eq!(<kind::TestClock as Kind>::NAME, "test clock");
    }

    #[test]
    fn a_derived_id_is_the_same_for_the_same_seed_and_looks_like_any_other() {
        let a = derived(IdKind::Payout, 1_795_000_000, "conn_1:po_1");
        assert_eq!(a, derived(IdKind::Payout, 1_795_000_000, "conn_1:po_1"));
        assert_ne!(a, derived(IdKind::Payout, 1_795_000_000, "conn_1:po_2"));
        assert_ne!(a, derived(IdKind::Payout, 1_795_000_000, "conn_2:po_1"));
        assert!(looks_like(IdKind::Payout, &a), "{a}");
        // Sorted by time, as generated ids are.
        assert!(
            derived(IdKind::Payout, 1_795_000_001, "x")
                > derived(IdKind::Payout, 1_795_000_000, "y")
        );
    }

    #[test]
    fn generated_ids_have_prefix_and_24_base62_chars() {
        let id = generate(IdKind::Payment);
        assert!(id.starts_with("pay_"));
        assert_eq!(id.len(), 4 + RANDOM_LEN);
        assert!(looks_like(IdKind::Payment, &id));
        assert!(!looks_like(IdKind::Customer, &id));
    }

    #[test]
    fn ids_of_later_moments_sort_after_earlier_ones() {
        let (mut a, mut b, mut c) = (String::new(), String::new(), String::new());
        push_time(&mut a, 1_700_000_000_000);
        push_time(&mut b, 1_700_000_000_001);
        push_time(&mut c, 4_102_444_800_000); // 2100-01-01
        assert!(a < b && b < c, "{a} {b} {c}");
        assert_eq!(a.len(), TIME_LEN);
        let first = generate(IdKind::Payment);
        std::thread::sleep(std::time::Duration::from_millis(2));
        let second = generate(IdKind::Payment);
        assert!(first[..4 + TIME_LEN] < second[..4 + TIME_LEN]);
    }

    #[test]
    fn generated_ids_do_not_repeat() {
        let ids: std::collections::HashSet<_> =
            (0..10_000).map(|_| generate(IdKind::Event)).collect();
        assert_eq!(ids.len(), 10_000);
    }

    #[test]
    fn looks_like_refuses_hostile_shapes() {
        assert!(!looks_like(IdKind::Payment, "pay_"));
        assert!(!looks_like(IdKind::Payment, "pay_abc'--"));
        assert!(!looks_like(IdKind::Payment, "pay_../../etc"));
        assert!(!looks_like(
            IdKind::Payment,
            &format!("pay_{}", "a".repeat(65))
        ));
    }
}
