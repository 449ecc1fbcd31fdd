//! Payment methods (`pm_…`): tokenised cards, attachable to a customer for later charges.
//! The resource shows only brand, last four, expiry, fingerprint, country and funding; the
//! number lives sealed in the vault (see `service::payment_methods`). Pure.

use serde::{Deserialize, Serialize};

use crate::metadata::Metadata;
use crate::payments::payment::CardDetails;

/// A payment method as the API shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PaymentMethod {
    pub id: String,
    pub object: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub card: CardDetails,
    pub customer: Option<String>,
    /// The connector whose processor keeps this card (CONTRACT §15: saved behind a connector
    /// that takes no card details, as the processor's own reusable payment method); it is
    /// charged there only. `None`: the card is in Tender's vault.
    #[serde(default)]
    pub connector: Option<String>,
    pub metadata: Metadata,
    pub livemode: bool,
    pub created: i64,
}

impl crate::documents::document::Document for PaymentMethod {
    const COLLECTION: crate::store::Collection = crate::store::Collection::PaymentMethods;

    fn id(&self) -> &str {
        &self.id
    }

    fn created(&self) -> i64 {
        self.created
    }

    fn index(&self) -> crate::store::IndexValues {
        use crate::store::IndexValues;
        IndexValues {
            customer: self.customer.clone(),
            ..IndexValues::default()
        }
    }
}

/// What the vault keeps for a card: enough to charge it again, never the CVC.
#[derive(Clone, Serialize, Deserialize)]
pub struct VaultedCard {
    pub pan: String,
    pub exp_month: u8,
    pub exp_year: u16,
}

impl std::fmt::Debug for VaultedCard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VaultedCard")
            .field("pan", &"[REDACTED]")
            .field("exp_month", &self.exp_month)
            .field("exp_year", &self.exp_year)
            .finish()
    }
}

/// A card a connector's processor keeps for a customer (CONTRACT §15), as the vault keeps
/// its reference: the connector, the processor's customer and its payment method (Stripe:
/// `cus_…`, `pm_…`). No card data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessorCard {
    pub connector: String,
    pub customer: String,
    pub payment_method: String,
}

/// What the vault keeps for a payment method: the card itself, or where a processor keeps it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Vaulted {
    Card(VaultedCard),
    Processor(ProcessorCard),
}
