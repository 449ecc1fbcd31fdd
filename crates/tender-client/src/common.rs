//! Shapes shared by several resources: metadata, cards, addresses, deletion answers.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The merchant's own key/value strings (≤ 50 keys, key ≤ 40 characters without `[` `]`,
/// value ≤ 500). On updates keys merge into what is stored, and a key set to `""` is removed.
pub type Metadata = BTreeMap<String, String>;

/// The answer to a `DELETE`: `{id, object, deleted: true}`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Deleted {
    pub id: String,
    pub object: String,
    pub deleted: bool,
}

/// A card brand, from the number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum CardBrand {
    Visa,
    Mastercard,
    Amex,
    Discover,
    Diners,
    Jcb,
    Unionpay,
    /// Unrecognised numbers, and brands newer than this client.
    #[serde(other)]
    Unknown,
}

/// A card as the API shows it: never the full number.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Card {
    pub brand: CardBrand,
    pub last4: String,
    pub exp_month: u32,
    pub exp_year: u32,
    /// Equal for the same card number within one account (not across accounts).
    pub fingerprint: String,
    /// ISO 3166-1 alpha-2 issuing country.
    pub country: String,
    /// `credit`, `debit`, `prepaid` or `unknown`.
    pub funding: String,
}

/// Card details to charge or tokenise. `Debug` never shows the number or the CVC.
#[derive(Clone, PartialEq, Eq, Serialize)]
pub struct CardParams {
    pub number: String,
    pub exp_month: u32,
    pub exp_year: u32,
    pub cvc: String,
}

impl CardParams {
    pub fn new(
        number: impl Into<String>,
        exp_month: u32,
        exp_year: u32,
        cvc: impl Into<String>,
    ) -> Self {
        Self {
            number: number.into(),
            exp_month,
            exp_year,
            cvc: cvc.into(),
        }
    }
}

impl std::fmt::Debug for CardParams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let last4 = self.number.get(self.number.len().saturating_sub(4)..);
        f.debug_struct("CardParams")
            .field("number", &format_args!("…{}", last4.unwrap_or("")))
            .field("exp_month", &self.exp_month)
            .field("exp_year", &self.exp_year)
            .field("cvc", &"[REDACTED]")
            .finish()
    }
}

/// A postal address. In requests, omitted fields are left as they are on update and `""`
/// clears one; `country` is an ISO 3166-1 alpha-2 code.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Address {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line1: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line2: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub city: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub postal_code: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub country: Option<String>,
}
