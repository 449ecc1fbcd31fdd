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
