//! Customers: the resource and its address. Pure.

use serde::{Deserialize, Serialize};

use crate::metadata::Metadata;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Address {
    pub line1: Option<String>,
    pub line2: Option<String>,
    pub city: Option<String>,
    pub state: Option<String>,
    pub postal_code: Option<String>,
    pub country: Option<String>,
}

/// How a customer's invoices are paid: the card charged when the subscription names none.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct InvoiceSettings {
    /// A card (`pm_…`) attached to the customer; `None`: the newest attached card.
    pub default_payment_method: Option<String>,
}

/// A customer (`cus_…`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Customer {
    pub id: String,
    pub object: String,
    pub email: Option<String>,
    pub name: Option<String>,
    pub phone: Option<String>,
    pub address: Option<Address>,
    pub description: Option<String>,
    pub metadata: Metadata,
    #[serde(default)]
    pub invoice_settings: InvoiceSettings,
    /// The test clock (`clock_…`) whose time applies to this customer's subscriptions and
    /// invoices (CONTRACT §10); set on create only.
    #[serde(default)]
    pub test_clock: Option<String>,
    pub livemode: bool,
    pub created: i64,
}

impl crate::documents::document::Document for Customer {
    const COLLECTION: crate::store::Collection = crate::store::Collection::Customers;

    fn id(&self) -> &str {
        &self.id
    }

    fn created(&self) -> i64 {
        self.created
    }

    fn index(&self) -> crate::store::IndexValues {
        use crate::store::IndexValues;
        // E-mail addresses are indexed lower-cased, so the `email` filter ignores case.
        IndexValues {
            email: self.email.as_deref().map(str::to_lowercase),
            test_clock: self.test_clock.clone(),
            ..IndexValues::default()
        }
    }
}
