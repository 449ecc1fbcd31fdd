//! The connector port (CONTRACT §8): what Tender asks of a payment processor and what it is
//! told, the `conn_` object that points an account at one, and the built-in simulator behind
//! the same port.
//!
//! - [`Connector`] is modelled on what real processors need (Hyperswitch's minimal connector):
//!   authorise (in two steps: [`Connector::create`] makes the processor's payment object,
//!   [`Connector::confirm`] authorises it), capture, void, refund and status sync. Every call
//!   carries an idempotency key derived from Tender's own object id ([`upstream_key`]), so a
//!   retried call never charges twice. The two steps let Tender record the processor's
//!   reference before any money can move: whatever crashes, a confirmed payment is always one
//!   whose reference Tender has, so it is found again by a sync, never authorised twice.
//! - Every answer says one of three things ([`Answer`]): the processor's state of the payment
//!   (with its reference), *unavailable* (nothing was made upstream: the request never left, or
//!   the processor refused it with a 5xx/429 before making anything: the only case in which a
//!   payment may fail over to the next connector), or *unknown* (sent, no answer: settled later
//!   by [`Connector::sync`], never by authorising again).
//! - [`ConnectorSettings`] is what a connector needs to run, secrets included; it is kept sealed
//!   under the vault key and never shown. [`ConnectorObject`] is what the API shows.
//! - [`crate::connectors::simulator::SimulatedConnector`] is the contract's test-card table ([`crate::payments::acquirer`]) behind the
//!   port, with failure injection ([`Fault`]) for tests.
//!
//! Pure; depends on the domain types and `async-trait`. The HTTP clients of real processors
//! live in the server (`tender-server/src/connectors/`), which supplies a [`ConnectorFactory`].

use std::sync::Arc;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

pub use super::processor_books::{Booked, SavedCard, UpstreamDispute, UpstreamPayout};
use crate::card::ValidatedCard;
use crate::metadata::Metadata;
use crate::money::Currency;
use crate::payments::acquirer::Decline;
pub use crate::payments::payment::ProcessorSettlement;

/// The kinds of connector.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConnectorType {
    /// The built-in simulator (CONTRACT §4.2), as a connector like any other.
    Simulator,
    /// The Stripe API (PaymentIntents, Refunds).
    Stripe,
}

impl ConnectorType {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "simulator" => Some(Self::Simulator),
            "stripe" => Some(Self::Stripe),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Simulator => "simulator",
            Self::Stripe => "stripe",
        }
    }

    /// The processor's public origin, used when `api_base` is not given.
    pub fn default_api_base(self) -> Option<&'static str> {
        match self {
            Self::Simulator => None,
            Self::Stripe => Some("https://api.stripe.com"),
        }
    }
}

/// `enabled` or `disabled`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConnectorStatus {
    Enabled,
    Disabled,
}

impl ConnectorStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Enabled => "enabled",
            Self::Disabled => "disabled",
        }
    }
}

/// A connector (`conn_…`) as stored and shown. Its secrets are not here: they are sealed apart
/// ([`ConnectorSettings`]) and never returned.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConnectorObject {
    pub id: String,
    pub object: String,
    #[serde(rename = "type")]
    pub kind: ConnectorType,
    pub name: Option<String>,
    pub status: ConnectorStatus,
    pub priority: i64,
    pub api_base: Option<String>,
    pub api_key_last4: Option<String>,
    pub raw_card_data: bool,
    pub livemode: bool,
    pub created: i64,
    pub metadata: Metadata,
}

impl crate::documents::document::Document for ConnectorObject {
    const COLLECTION: crate::store::Collection = crate::store::Collection::Connectors;

    fn id(&self) -> &str {
        &self.id
    }

    fn created(&self) -> i64 {
        self.created
    }

    fn index(&self) -> crate::store::IndexValues {
        use crate::store::IndexValues;
        IndexValues {
            status: Some(self.status.as_str().into()),
            ..IndexValues::default()
        }
    }
}

/// What a connector needs to run: its kind, where the processor is and its secrets. Kept
/// sealed under the vault key, owned by the connector's id; it outlives a deleted connector,
/// so that payments made through it can still be captured, canceled, refunded and synced.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
pub struct ConnectorSettings {
    #[serde(rename = "type")]
    pub kind: ConnectorType,
    pub api_base: Option<String>,
    pub api_key: Option<String>,
    pub webhook_secret: Option<String>,
    pub raw_card_data: bool,
    /// `raw_card_data` was set by the operator (the CLI, or the API of a server started with
    /// `--allow-connector-settings-via-api`), never by a merchant's key alone. Settings sealed
    /// before this existed read `false`: their processors get tokens only until the operator
    /// confirms (CONTRACT §15).
    #[serde(default)]
    pub cards_by_operator: bool,
}

impl ConnectorSettings {
    /// Whether a card number may be sent to this connector: the simulator keeps it in the
    /// process; a processor gets it only when the operator said so.
    pub fn takes_cards(&self) -> bool {
        match self.kind {
            ConnectorType::Simulator => self.raw_card_data,
            ConnectorType::Stripe => self.raw_card_data && self.cards_by_operator,
        }
    }
}

impl std::fmt::Debug for ConnectorSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConnectorSettings")
            .field("kind", &self.kind)
            .field("api_base", &self.api_base)
            .field(
                "api_key",
                &self.api_key.as_ref().map(|_| crate::secret::REDACTED),
            )
            .field(
                "webhook_secret",
                &self
                    .webhook_secret
                    .as_ref()
                    .map(|_| crate::secret::REDACTED),
            )
            .field("raw_card_data", &self.raw_card_data)
            .field("cards_by_operator", &self.cards_by_operator)
            .finish()
    }
}

/// What a payment is paid with, as sent upstream.
#[derive(Debug, Clone, Copy)]
pub enum Source<'a> {
    /// The card itself (only to connectors with `raw_card_data`).
    Card(&'a ValidatedCard),
    /// A payment method the processor issued (`connector_token`).
    Token(&'a str),
    /// A payment method the processor keeps for its customer, charged without the customer
    /// (an invoice, a saved card).
    Saved {
        customer: &'a str,
        payment_method: &'a str,
    },
}

/// An authorisation request.
#[derive(Debug, Clone, Copy)]
pub struct AuthorizeRequest<'a> {
    /// Tender's payment id: the upstream idempotency key and reference are derived from it.
    pub payment: &'a str,
    pub amount: i64,
    pub currency: Currency,
    /// Capture at once (`automatic`) or hold for a later capture (`manual`).
    pub capture: bool,
    pub source: Source<'a>,
    pub return_url: Option<&'a str>,
    pub livemode: bool,
}

/// The processor's state of a payment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Upstream {
    /// Made, not confirmed: no money can move until [`Connector::confirm`].
    Created,
    /// Money moved: `captured` minor units were taken, in `currency` when the processor said
    /// which (lower-case ISO 4217, as it wrote it), with the processor's booking of it
    /// (`settlement`: its fee and net) when it told it; a processor connector always does, the
    /// simulator never (Tender's pricing books its payments).
    Succeeded {
        captured: i64,
        currency: Option<String>,
        settlement: Option<ProcessorSettlement>,
    },
    /// Authorised, waiting for a capture.
    RequiresCapture,
    /// The cardholder must authenticate; `url` is the processor's page for it, if it gave one.
    RequiresAction { url: Option<String> },
    /// The processor is still working on it.
    Processing,
    /// Refused: the processor's codes mapped onto CONTRACT §4.2.
    Declined(Decline),
    /// Released before capture.
    Canceled,
}

/// The most characters of a processor's own text (a refusal, a reason) that Tender stores in
/// an object or writes to its log (CONTRACT §15).
pub const MAX_PROCESSOR_TEXT: usize = 500;

/// `text` cut to [`MAX_PROCESSOR_TEXT`] characters (`…` marks a cut), control characters
/// replaced: what may be stored or logged of something a processor said.
pub fn bounded(text: &str) -> String {
    let mut out: String = text
        .chars()
        .take(MAX_PROCESSOR_TEXT)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if text.chars().nth(MAX_PROCESSOR_TEXT).is_some() {
        out.pop();
        out.push('…');
    }
    out
}

/// What a processor said to a payment operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// It answered: its reference for the payment (when known) and the payment's state there.
    Known {
        reference: Option<String>,
        state: Upstream,
    },
    /// The request never left Tender: no connection to the processor was made, so nothing
    /// was sent (not even a card). A payment may fail over, whatever it is paid with.
    NotSent(String),
    /// Nothing was made upstream: the processor refused the request (5xx, 429) before making
    /// anything, or the connection broke before its answer. What the request carried reached
    /// the processor: a payment paid with a token may fail over, one paid with a card may not
    /// (CONTRACT §15).
    Unavailable(String),
    /// The request was sent and no answer came back (a time-out, a reset after sending, a 5xx
    /// after the payment may have been made): unknown until [`Connector::sync`] says.
    Unknown {
        reference: Option<String>,
        reason: String,
    },
}

/// The processor's state of a refund.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefundUpstream {
    Succeeded,
    Pending,
    Failed,
}

/// What a processor said to a refund.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefundAnswer {
    Known {
        reference: Option<String>,
        state: RefundUpstream,
        /// What the processor says it refunded and in which currency, when it said
        /// (CONTRACT §15: checked against what Tender asked).
        amount: Option<(i64, String)>,
    },
    /// Nothing was made upstream.
    Unavailable(String),
    /// Sent, no answer.
    Unknown(String),
}

/// A refund of a payment as its processor keeps it: made by Tender (`tender_refund`, Stripe's
/// `metadata[tender_refund]`) or at the processor itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpstreamRefund {
    /// The processor's id of it (a Stripe `re_…`).
    pub reference: String,
    pub amount: i64,
    /// Lower-case ISO 4217, as the processor wrote it.
    pub currency: String,
    pub state: RefundUpstream,
    /// Tender's id of the refund, when Tender made it.
    pub tender_refund: Option<String>,
}

/// What a verified inbound webhook of a processor says about a payment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inbound {
    /// Tender's payment id, as the processor keeps it (Stripe: `metadata[tender_payment]`).
    pub payment: Option<String>,
    /// The processor's id of the payment.
    pub reference: String,
    /// Where the payment is; `None` when the webhook is about what the processor booked of it
    /// (a refund, a dispute) instead.
    pub state: Option<Upstream>,
}

/// Why an inbound webhook was not accepted (its signature, its timestamp, its shape).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookRejected(pub String);

/// A processor behind the port.
#[async_trait]
pub trait Connector: Send + Sync {
    /// Makes the processor's payment object for `req`, unconfirmed: `Known { state: Created }`
    /// with its reference (or a decline of the payment method itself).
    async fn create(&self, req: &AuthorizeRequest<'_>) -> Answer;

    /// Authorises (and, when `req.capture`, captures) the payment made by [`Connector::create`].
    async fn confirm(&self, reference: &str, req: &AuthorizeRequest<'_>) -> Answer;

    /// Captures `amount` (at most what was authorised) of an authorised payment.
    async fn capture(&self, payment: &str, reference: &str, amount: i64) -> Answer;

    /// Releases an authorised (or authenticating) payment.
    async fn void(&self, payment: &str, reference: &str) -> Answer;

    /// Asks where the payment `reference` is.
    async fn sync(&self, reference: &str) -> Answer;

    /// Refunds `amount` of a captured payment; `refund` is Tender's refund id (the upstream
    /// idempotency key is derived from it).
    async fn refund(&self, refund: &str, reference: &str, amount: i64) -> RefundAnswer;

    /// Every refund the processor holds of the payment `reference`, however it was made
    /// (CONTRACT §15: refunds made at the processor reach Tender); `Err` with why when it
    /// could not say. A processor that takes refunds only from Tender has none of its own.
    async fn refunds_of(&self, reference: &str) -> Result<Vec<UpstreamRefund>, String> {
        let _ = reference;
        Ok(Vec::new())
    }

    /// Every dispute the processor holds of the payment `reference` (CONTRACT §15); `Err` with
    /// why when it could not say. A processor without disputes of its own has none.
    async fn disputes_of(&self, reference: &str) -> Result<Vec<UpstreamDispute>, String> {
        let _ = reference;
        Ok(Vec::new())
    }

    /// Keeps the processor's payment method `token` for later payments (CONTRACT §15): attached
    /// to `customer` (the processor's customer of Tender's customer `tender_customer`, made
    /// first when `None`); the upstream idempotency keys derive from `key_id`. `Err` with why.
    async fn save_card(
        &self,
        token: &str,
        tender_customer: &str,
        customer: Option<&str>,
        key_id: &str,
    ) -> Result<SavedCard, String> {
        let _ = (token, tender_customer, customer, key_id);
        Err("this connector keeps no payment methods".to_string())
    }

    /// Tender's payment id as the processor keeps it on its payment `reference` (Stripe:
    /// `metadata[tender_payment]`), read from it; `Ok(None)` when it has none.
    async fn payment_of(&self, reference: &str) -> Result<Option<String>, String> {
        let _ = reference;
        Ok(None)
    }

    /// The processor's payouts created at or after `since` (Unix seconds), at most `limit`,
    /// oldest first (CONTRACT §15: mirrored, never made by Tender); `Err` with why.
    async fn payouts_since(&self, since: i64, limit: usize) -> Result<Vec<UpstreamPayout>, String> {
        let _ = (since, limit);
        Ok(Vec::new())
    }

    /// The processor's own balance transaction of `booked` (CONTRACT §15: reconciliation
    /// compares it with Tender's to the cent); `Err` with why when it cannot say.
    async fn booking(&self, booked: Booked<'_>) -> Result<ProcessorSettlement, String> {
        let _ = booked;
        Err("this connector keeps no balance transactions".to_string())
    }

    /// Verifies an inbound webhook (`signature`: the processor's signature header, `body`: the
    /// raw body, `now`: Unix seconds) and reads it: `Ok(None)` when it is verified but about
    /// nothing Tender tracks. A connector without a webhook secret rejects every webhook.
    fn read_webhook(
        &self,
        signature: Option<&str>,
        body: &[u8],
        now: i64,
    ) -> Result<Option<Inbound>, WebhookRejected> {
        let _ = (signature, body, now);
        Err(WebhookRejected(
            "this connector takes no webhooks".to_string(),
        ))
    }
}

/// Builds a running connector from its settings (the server supplies one that knows every
/// processor; [`crate::connectors::simulator::BuiltInConnectors`] knows only the simulator).
pub trait ConnectorFactory: Send + Sync + 'static {
    /// The connector `id` of a scope of `livemode`, from its settings.
    fn build(&self, id: &str, settings: &ConnectorSettings, livemode: bool) -> Arc<dyn Connector>;
}

/// The upstream idempotency key of an operation on Tender's object `id`: the same operation
/// on the same object always carries the same key, so a retry never acts twice.
pub fn upstream_key(id: &str, operation: &str) -> String {
    format!("tender-{id}-{operation}")
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
