//! The render step: what the API shows of a stored document (API version 2.1).
//!
//! Documents are stored compact: no null or empty fields, nothing derivable (a payment's
//! `object`, `receipt_url`). Whatever a client sees — responses, lists, idempotent replays, the
//! objects inside events — is rendered here from the stored form, so the two can change apart:
//! a later API version renders the same rows its own way, and a change of the response shape
//! migrates no row. Rows written before the split (the full wire JSON) read the same, because
//! the stored forms skip the fields they do not know.
//!
//! Every object the API shows goes through [`Dialect::document`], one `match` over every
//! collection, so a second wire dialect (Stripe's `/v1`) is one more implementation of
//! [`Dialect`], not edits across the use cases. How Tender's own dialect (`/v2`, [`Renderer`])
//! shows each:
//!
//! | collection | shown as |
//! |---|---|
//! | payments | [`PaymentView`]: every field in the documented order, nulls included, `object` and `receipt_url` derived |
//! | events | [`Event`]: id, `object`, `api_version` added; a payment inside rendered as above |
//! | customers, refunds, payment methods, webhook endpoints, connectors, balance transactions, payouts, disputes, products, prices, subscriptions, invoices, test clocks | their stored form, which is their `/v2` shape (each type serialises its `object` and every field), passed through without parsing, so a page of 100 is spliced as stored |
//!
//! Pure; depends on the domain types.

use serde::Serialize;

use crate::error::{CoreError, CoreResult};
use crate::event::{Event, EventData, StoredEvent, API_VERSION};
use crate::metadata::Metadata;
use crate::money::Currency;
use crate::payments::payment::{
    CancellationReason, CaptureMethod, Payment, PaymentMethodSnapshot, PaymentStatus,
};
use crate::store::Collection;

/// A wire dialect: how the API shows each stored object.
pub trait Dialect {
    /// The stored document `id` of `collection` (its stored text, `body`) as this dialect
    /// shows it, as JSON text.
    fn document(&self, collection: Collection, id: &str, body: String) -> CoreResult<String>;
}

/// Tender's own dialect (`/v2`): renders stored documents; holds what rendering needs from the
/// configuration.
#[derive(Debug, Clone)]
pub struct Renderer {
    /// Base of `receipt_url`, without a trailing slash.
    receipt_base: String,
}

/// A payment as the API shows it: every field, in the documented order, nulls included.
#[derive(Debug, Serialize)]
pub struct PaymentView<'a> {
    pub id: &'a str,
    pub object: &'static str,
    pub amount: i64,
    pub amount_captured: i64,
    pub amount_refunded: i64,
    pub refunded: bool,
    pub currency: Currency,
    pub status: PaymentStatus,
    pub capture_method: CaptureMethod,
    /// `null` while a payment created without one awaits it (`requires_payment_method`).
    pub payment_method: Option<&'a PaymentMethodSnapshot>,
    pub customer: &'a Option<String>,
    pub description: &'a Option<String>,
    pub metadata: &'a Metadata,
    pub receipt_url: String,
    pub failure_code: &'a Option<String>,
    pub failure_message: &'a Option<String>,
    pub decline_code: &'a Option<String>,
    pub next_action: &'a Option<serde_json::Value>,
    pub return_url: &'a Option<String>,
    pub canceled_at: Option<i64>,
    pub cancellation_reason: Option<CancellationReason>,
    pub connector: &'a Option<String>,
    pub connector_reference: &'a Option<String>,
    pub balance_transaction: &'a Option<String>,
    pub disputed: bool,
    pub invoice: &'a Option<String>,
    pub livemode: bool,
    pub created: i64,
}

impl Renderer {
    pub fn new(receipt_base: impl Into<String>) -> Self {
        Self {
            receipt_base: receipt_base.into(),
        }
    }

    /// Where a payment's receipt is shown.
    pub fn receipt_url(&self, payment_id: &str) -> String {
        format!("{}/{}", self.receipt_base, payment_id)
    }

    pub fn payment<'a>(&self, p: &'a Payment) -> PaymentView<'a> {
        PaymentView {
            id: &p.id,
            object: "payment",
            amount: p.amount,
            amount_captured: p.amount_captured,
            amount_refunded: p.amount_refunded,
            refunded: p.refunded,
            currency: p.currency,
            status: p.status,
            capture_method: p.capture_method,
            payment_method: Some(&p.payment_method).filter(|pm| !pm.id.is_empty()),
            customer: &p.customer,
            description: &p.description,
            metadata: &p.metadata,
            receipt_url: self.receipt_url(&p.id),
            failure_code: &p.failure_code,
            failure_message: &p.failure_message,
            decline_code: &p.decline_code,
            next_action: &p.next_action,
            return_url: &p.return_url,
            canceled_at: p.canceled_at,
            cancellation_reason: p.cancellation_reason,
            connector: &p.connector,
            connector_reference: &p.connector_reference,
            balance_transaction: &p.balance_transaction,
            disputed: p.disputed,
            invoice: &p.invoice,
            livemode: p.livemode,
            created: p.created,
        }
    }

    /// A payment as the JSON value the API shows (for event payloads and diffs).
    pub fn payment_value(&self, p: &Payment) -> CoreResult<serde_json::Value> {
        serde_json::to_value(self.payment(p))
            .map_err(|e| CoreError::internal("render a payment", e))
    }

    /// The event `id` as the API shows it (responses and webhook payloads).
    pub fn event(&self, id: &str, stored: StoredEvent) -> CoreResult<Event> {
        let object = if stored.kind.starts_with("payment.") {
            let payment: Payment = serde_json::from_value(stored.data.object)
                .map_err(|e| crate::error::StoreError::Corrupt(format!("{id}: {e}")))?;
            self.payment_value(&payment)?
        } else {
            stored.data.object
        };
        Ok(Event {
            id: id.to_string(),
            object: "event".into(),
            kind: stored.kind,
            api_version: API_VERSION.into(),
            created: stored.created,
            livemode: stored.livemode,
            data: EventData {
                object,
                previous_attributes: stored.data.previous_attributes,
            },
            request: stored.request,
        })
    }

    /// A stored document of `collection` as the JSON text the API shows ([`Dialect`]).
    pub fn document(&self, collection: Collection, id: &str, body: String) -> CoreResult<String> {
        Dialect::document(self, collection, id, body)
    }
}

impl Dialect for Renderer {
    fn document(&self, collection: Collection, id: &str, body: String) -> CoreResult<String> {
        match collection {
            Collection::Payments => {
                let payment: Payment = crate::documents::document::from_body(id, &body)?;
                to_text(&self.payment(&payment))
            }
            Collection::Events => {
                let stored: StoredEvent = crate::documents::document::from_body(id, &body)?;
                to_text(&self.event(id, stored)?)
            }
            // Stored as shown (the table in the module doc).
            Collection::Customers
            | Collection::Refunds
            | Collection::PaymentMethods
            | Collection::WebhookEndpoints
            | Collection::Connectors
            | Collection::BalanceTransactions
            | Collection::Payouts
            | Collection::Disputes
            | Collection::Products
            | Collection::Prices
            | Collection::Subscriptions
            | Collection::Invoices
            | Collection::TestClocks
            | Collection::SetupIntents
            | Collection::CheckoutSessions
            | Collection::PaymentLinks
            | Collection::InvoiceSequences => Ok(body),
        }
    }
}

/// JSON text of a rendered value.
fn to_text<T: Serialize>(value: &T) -> CoreResult<String> {
    serde_json::to_string(value).map_err(|e| CoreError::internal("render a document", e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::payments::payment::PaymentMethodSnapshot;

    fn payment() -> Payment {
        Payment {
            id: "pay_0VboMFL4YYyguVF9XDqgpNar".into(),
            amount: 2000,
            amount_captured: 2000,
            amount_refunded: 0,
            refunded: false,
            currency: Currency::parse("usd").unwrap(),
            status: PaymentStatus::Succeeded,
            capture_method: CaptureMethod::Automatic,
            payment_method: PaymentMethodSnapshot {
                id: "pm_0VboMFL4sHTGTDBUapetpVWP".into(),
                kind: "card".into(),
                card: None,
                bank_transfer: None,
                connector_token: None,
            },
            customer: None,
            description: Some("Order".into()),
            metadata: Metadata::new(),
            failure_code: None,
            failure_message: None,
            decline_code: None,
            next_action: None,
            return_url: None,
            canceled_at: None,
            cancellation_reason: None,
            connector: None,
            connector_reference: None,
            balance_transaction: None,
            disputed: false,
            invoice: None,
            save_payment_method: false,
            processor_settlement: None,
            stored_version: None,
            livemode: false,
            created: 1_795_448_336,
        }
    }

    #[test]
    fn the_stored_form_omits_nulls_and_what_can_be_derived_and_the_view_shows_everything() {
        let p = payment();
        let stored = serde_json::to_string(&p).unwrap();
        for absent in [
            "null",
            "\"object\"",
            "receipt_url",
            "\"refunded\"",
            "amount_refunded",
        ] {
            assert!(!stored.contains(absent), "{absent} in {stored}");
        }
        let shown = serde_json::to_value(Renderer::new("https://r.example").payment(&p)).unwrap();
        assert_eq!(shown["object"], "payment");
        assert_eq!(
            shown["receipt_url"],
            "https://r.example/pay_0VboMFL4YYyguVF9XDqgpNar"
        );
        assert_eq!(shown["customer"], serde_json::Value::Null);
        assert_eq!(shown["amount_refunded"], 0);
        assert_eq!(shown["refunded"], false);
        // Every field of the API, nulls included (`connector`, `connector_reference`,
        // `balance_transaction` and `invoice` too).
        assert_eq!(shown.as_object().unwrap().len(), 28);
        assert_eq!(shown["invoice"], serde_json::Value::Null);
        assert_eq!(shown["balance_transaction"], serde_json::Value::Null);
        assert_eq!(shown["disputed"], false);
        assert_eq!(shown["connector"], serde_json::Value::Null);
    }

    #[test]
    fn a_row_stored_in_the_full_wire_form_reads_and_renders_the_same() {
        let r = Renderer::new("https://r.example");
        let p = payment();
        let wire = serde_json::to_string(&r.payment(&p)).unwrap();
        let again = r
            .document(Collection::Payments, &p.id, wire.clone())
            .unwrap();
        assert_eq!(again, wire);
        let compact = serde_json::to_string(&p).unwrap();
        assert_eq!(
            r.document(Collection::Payments, &p.id, compact).unwrap(),
            wire
        );
    }
}
