//! The Payment Link (`plink_…`, CONTRACT §14): a lasting address that sells the same lines to
//! anyone who opens it; each visit opens a fresh Checkout Session. Its mode follows its prices
//! (all one-time: `payment`; all recurring: `subscription`). Pure.

use serde::{Deserialize, Serialize};

use crate::billing::model::{EmbeddedList, Price, PriceType};
use crate::checkout::session::{CheckoutMode, LineItem};
use crate::error::{CoreError, CoreResult};
use crate::metadata::Metadata;
use crate::money::Currency;

/// What the customer sees after paying.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AfterCompletionType {
    /// Sent on to the shop's address.
    Redirect,
    /// Tender's own confirmation page.
    HostedConfirmation,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Redirect {
    pub url: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostedConfirmation {
    pub custom_message: Option<String>,
}

/// `after_completion`, as Stripe spells it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AfterCompletion {
    #[serde(rename = "type")]
    pub kind: AfterCompletionType,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redirect: Option<Redirect>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hosted_confirmation: Option<HostedConfirmation>,
}

impl Default for AfterCompletion {
    fn default() -> Self {
        AfterCompletion {
            kind: AfterCompletionType::HostedConfirmation,
            redirect: None,
            hosted_confirmation: Some(HostedConfirmation {
                custom_message: None,
            }),
        }
    }
}

/// A Payment Link as `/v2` shows it (and stores it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PaymentLink {
    pub id: String,
    pub object: String,
    /// An inactive link opens no session (its page says it is no longer available).
    pub active: bool,
    pub mode: CheckoutMode,
    pub currency: Currency,
    pub line_items: EmbeddedList<LineItem>,
    pub after_completion: AfterCompletion,
    pub allow_promotion_codes: bool,
    pub url: String,
    pub metadata: Metadata,
    pub livemode: bool,
    pub created: i64,
}

/// The mode a link's prices make: one-time prices a payment, recurring ones a subscription;
/// mixed, the 400 naming the first line that differs.
pub fn mode_of(prices: &[&Price]) -> CoreResult<CheckoutMode> {
    let Some(first) = prices.first() else {
        return Err(CoreError::invalid(
            "line_items",
            "parameter_missing",
            "A payment link needs line_items.",
        ));
    };
    if let Some(i) = prices.iter().position(|p| p.kind != first.kind) {
        return Err(CoreError::invalid(
            format!("line_items[{i}][price]"),
            "parameter_invalid",
            "A payment link's prices are all one-time or all recurring.",
        ));
    }
    Ok(match first.kind {
        PriceType::OneTime => CheckoutMode::Payment,
        PriceType::Recurring => CheckoutMode::Subscription,
    })
}

impl crate::documents::document::Document for PaymentLink {
    const COLLECTION: crate::store::Collection = crate::store::Collection::PaymentLinks;

    fn id(&self) -> &str {
        &self.id
    }

    fn created(&self) -> i64 {
        self.created
    }

    fn index(&self) -> crate::store::IndexValues {
        crate::store::IndexValues {
            active: Some(self.active),
            ..Default::default()
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::billing::model::{Interval, Recurring};

    fn price(recurring: bool) -> Price {
        Price {
            id: "price_1".into(),
            object: "price".into(),
            product: "prod_1".into(),
            currency: Currency::parse("usd").unwrap(),
            unit_amount: 100,
            kind: if recurring {
                PriceType::Recurring
            } else {
                PriceType::OneTime
            },
            recurring: recurring.then_some(Recurring {
                interval: Interval::Year,
                interval_count: 1,
            }),
            active: true,
            nickname: None,
            lookup_key: None,
            metadata: Metadata::default(),
            created: 0,
            livemode: false,
        }
    }

    #[test]
    fn a_links_prices_decide_its_mode_and_may_not_mix() {
        let (once, yearly) = (price(false), price(true));
        assert_eq!(mode_of(&[&once, &once]).unwrap(), CheckoutMode::Payment);
        assert_eq!(mode_of(&[&yearly]).unwrap(), CheckoutMode::Subscription);
        let err = mode_of(&[&once, &yearly]).unwrap_err();
        assert!(
            matches!(&err, CoreError::InvalidParam { param: Some(p), .. } if p == "line_items[1][price]"),
            "{err:?}"
        );
        assert!(mode_of(&[]).is_err());
    }
}
