//! The Checkout Session (`cs_…`) and its line items, the rules its items follow in each mode,
//! and the moves of the table in [`super`]'s doc. Pure.

use serde::{Deserialize, Serialize};

use crate::billing::model::{EmbeddedList, Price, PriceType, MAX_QUANTITY};
use crate::error::{CoreError, CoreResult};
use crate::metadata::Metadata;
use crate::money::Currency;
use crate::payments::payment::CaptureMethod;
use crate::validate::check_amount;

/// A session has at most this many line items (Stripe's limit).
pub const MAX_LINE_ITEMS: usize = 100;
/// A session is open for at most this long, and by default for exactly this long.
pub const MAX_OPEN_SECS: i64 = 24 * 3600;
/// `expires_at` is at least this far ahead.
pub const MIN_OPEN_SECS: i64 = 30 * 60;
/// How long a try holds its session: another try meanwhile is refused (409), so two forms
/// sent at once from two tabs never start two subscriptions. A try that dies with its node
/// lets go of the session when this has passed.
pub const TRY_HOLD_SECS: i64 = 120;

/// What the session collects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckoutMode {
    /// One payment of the items' total.
    Payment,
    /// A subscription to the items' recurring prices.
    Subscription,
    /// A card saved to the customer, nothing charged.
    Setup,
}

impl CheckoutMode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Payment => "payment",
            Self::Subscription => "subscription",
            Self::Setup => "setup",
        }
    }

    pub fn parse(s: &str) -> CoreResult<Self> {
        match s {
            "payment" => Ok(Self::Payment),
            "subscription" => Ok(Self::Subscription),
            "setup" => Ok(Self::Setup),
            _ => Err(CoreError::invalid(
                "mode",
                "parameter_invalid",
                "mode must be payment, subscription or setup.",
            )),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckoutStatus {
    Open,
    Complete,
    Expired,
}

impl CheckoutStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Open => "open",
            Self::Complete => "complete",
            Self::Expired => "expired",
        }
    }

    /// A `status` filter's value, or the 400 naming it.
    pub fn parse(s: &str) -> CoreResult<Self> {
        [Self::Open, Self::Complete, Self::Expired]
            .into_iter()
            .find(|v| v.as_str() == s)
            .ok_or_else(|| {
                CoreError::invalid(
                    "status",
                    "parameter_invalid",
                    "status must be open, complete or expired.",
                )
            })
    }
}

/// Whether the session's money came in (Stripe's `payment_status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckoutPaymentStatus {
    /// Not paid yet, or only authorised (a manual capture).
    Unpaid,
    Paid,
    /// Setup mode, or a subscription that starts with a trial.
    NoPaymentRequired,
}

/// One line of what is bought: a price and how many.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LineItem {
    pub id: String,
    /// `"item"`, as Stripe's.
    pub object: String,
    /// The product's name.
    pub description: String,
    pub price: Price,
    pub quantity: i64,
    pub currency: Currency,
    pub amount_subtotal: i64,
    pub amount_total: i64,
}

impl LineItem {
    pub fn new(id: String, description: String, price: Price, quantity: i64) -> Self {
        let amount = price.unit_amount * quantity;
        LineItem {
            id,
            object: "item".into(),
            description,
            currency: price.currency,
            price,
            quantity,
            amount_subtotal: amount,
            amount_total: amount,
        }
    }
}

/// `subscription_data`: what the subscription a session starts is created with.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SubscriptionData {
    pub trial_period_days: Option<i64>,
}

/// A Checkout Session as `/v2` shows it (and stores it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckoutSession {
    pub id: String,
    pub object: String,
    pub mode: CheckoutMode,
    pub status: CheckoutStatus,
    pub payment_status: CheckoutPaymentStatus,
    /// `None` in setup mode.
    pub currency: Option<Currency>,
    pub amount_subtotal: Option<i64>,
    pub amount_total: Option<i64>,
    pub line_items: EmbeddedList<LineItem>,
    /// The hosted page; `None` once the session is complete or expired.
    pub url: Option<String>,
    pub success_url: String,
    pub cancel_url: Option<String>,
    pub customer: Option<String>,
    /// The e-mail the page starts with, or the one the customer gave.
    pub customer_email: Option<String>,
    pub client_reference_id: Option<String>,
    pub allow_promotion_codes: bool,
    pub subscription_data: Option<SubscriptionData>,
    /// `payment_intent_data[capture_method]` (payment mode).
    pub capture_method: CaptureMethod,
    pub payment_intent: Option<String>,
    pub subscription: Option<String>,
    pub setup_intent: Option<String>,
    /// The payment link that opened it, if one did.
    pub payment_link: Option<String>,
    /// Declined tries so far; at the account's `declines_per_session` (3 by default) the page
    /// takes no more.
    pub declined_attempts: u32,
    /// While a try of the page runs: until when it holds the session ([`TRY_HOLD_SECS`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trying_until: Option<i64>,
    pub metadata: Metadata,
    pub expires_at: i64,
    pub completed_at: Option<i64>,
    pub livemode: bool,
    pub created: i64,
}

/// The items' currency and total, or the 400 naming the line that breaks `mode`'s rules:
/// payment mode takes one-time prices, subscription mode recurring ones on one schedule, setup
/// mode none; all in one currency; quantities 1 to [`MAX_QUANTITY`]; a total in bounds.
pub fn check_items(
    mode: CheckoutMode,
    items: &[(Price, i64)],
) -> CoreResult<Option<(Currency, i64)>> {
    if mode == CheckoutMode::Setup {
        if !items.is_empty() {
            return Err(CoreError::invalid(
                "line_items",
                "parameter_invalid",
                "A setup-mode session has no line_items.",
            ));
        }
        return Ok(None);
    }
    if items.is_empty() || items.len() > MAX_LINE_ITEMS {
        return Err(CoreError::invalid(
            "line_items",
            "parameter_invalid",
            format!(
                "A {}-mode session needs 1 to {MAX_LINE_ITEMS} line_items.",
                mode.as_str()
            ),
        ));
    }
    let (first, _) = &items[0];
    let mut total: i64 = 0;
    for (i, (price, quantity)) in items.iter().enumerate() {
        let invalid = |message: String| {
            CoreError::invalid(format!("line_items[{i}]"), "parameter_invalid", message)
        };
        match (mode, price.kind) {
            (CheckoutMode::Payment, PriceType::Recurring) => {
                return Err(invalid(format!(
                    "{} is a recurring price; use mode=subscription for it.",
                    price.id
                )))
            }
            (CheckoutMode::Subscription, PriceType::OneTime) => {
                return Err(invalid(format!(
                    "{} is a one-time price; a subscription-mode session takes recurring prices.",
                    price.id
                )))
            }
            _ => {}
        }
        if !price.active {
            return Err(invalid(format!("{} is not active.", price.id)));
        }
        if price.currency != first.currency {
            return Err(invalid(format!(
                "{} is in {}, the first line in {}: all lines share one currency.",
                price.id,
                price.currency.code(),
                first.currency.code()
            )));
        }
        if price.recurring != first.recurring {
            return Err(invalid(format!(
                "{} bills on another schedule than {}: all lines share one interval.",
                price.id, first.id
            )));
        }
        if !(1..=MAX_QUANTITY).contains(quantity) {
            return Err(CoreError::invalid(
                format!("line_items[{i}][quantity]"),
                "parameter_invalid",
                format!("quantity must be 1 to {MAX_QUANTITY}."),
            ));
        }
        total = total.saturating_add(price.unit_amount.saturating_mul(*quantity));
    }
    if mode == CheckoutMode::Payment || total > 0 {
        check_amount("line_items", total, first.currency)?;
    }
    Ok(Some((first.currency, total)))
}

impl CheckoutSession {
    /// 400 `checkout_session_unexpected_state` unless the session is open and not past its
    /// `expires_at` (`now`).
    pub fn require_open(&self, now: i64, doing: &str) -> CoreResult<()> {
        if self.status == CheckoutStatus::Open && now < self.expires_at {
            return Ok(());
        }
        let status = match self.status {
            CheckoutStatus::Open => "expired",
            other => other.as_str(),
        };
        Err(CoreError::invalid(
            "session",
            "checkout_session_unexpected_state",
            format!("This Checkout Session is {status}, so it cannot be {doing}."),
        ))
    }

    /// Paid (or its card saved, or its subscription started): `complete`, with what it made.
    pub fn complete(&mut self, payment_status: CheckoutPaymentStatus, at: i64) {
        self.status = CheckoutStatus::Complete;
        self.payment_status = payment_status;
        self.completed_at = Some(at);
        self.url = None;
        self.trying_until = None;
    }

    /// Nobody paid in time, or the shop ended it.
    pub fn expire(&mut self) {
        self.status = CheckoutStatus::Expired;
        self.url = None;
    }

    /// Whether a try holds it at `now`.
    pub fn held(&self, now: i64) -> bool {
        self.trying_until.is_some_and(|until| now < until)
    }

    /// Whether it has taken as many declined tries as it will (`limit`, the account's
    /// `declines_per_session`).
    pub fn exhausted(&self, limit: u32) -> bool {
        self.declined_attempts >= limit
    }
}

impl crate::documents::document::Document for CheckoutSession {
    const COLLECTION: crate::store::Collection = crate::store::Collection::CheckoutSessions;

    fn id(&self) -> &str {
        &self.id
    }

    fn created(&self) -> i64 {
        self.created
    }

    fn index(&self) -> crate::store::IndexValues {
        crate::store::IndexValues {
            customer: self.customer.clone(),
            status: Some(self.status.as_str().to_string()),
            payment: self.payment_intent.clone(),
            subscription: self.subscription.clone(),
            ..Default::default()
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::billing::model::{Interval, Recurring};

    fn price(id: &str, amount: i64, recurring: bool) -> Price {
        Price {
            id: id.into(),
            object: "price".into(),
            product: "prod_1".into(),
            currency: Currency::parse("usd").unwrap(),
            unit_amount: amount,
            kind: if recurring {
                PriceType::Recurring
            } else {
                PriceType::OneTime
            },
            recurring: recurring.then_some(Recurring {
                interval: Interval::Month,
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
    fn each_mode_takes_its_own_kind_of_price_and_totals_the_lines() {
        let items = [(price("a", 1500, false), 2), (price("b", 250, false), 1)];
        let (currency, total) = check_items(CheckoutMode::Payment, &items).unwrap().unwrap();
        assert_eq!((currency.code(), total), ("usd", 3250));
        let err = check_items(CheckoutMode::Subscription, &items).unwrap_err();
        assert!(err.to_string().contains("one-time price"), "{err}");
        let monthly = [(price("m", 900, true), 1)];
        assert!(check_items(CheckoutMode::Payment, &monthly).is_err());
        assert_eq!(
            check_items(CheckoutMode::Subscription, &monthly)
                .unwrap()
                .unwrap()
                .1,
            900
        );
        assert!(check_items(CheckoutMode::Setup, &monthly).is_err());
        assert_eq!(check_items(CheckoutMode::Setup, &[]).unwrap(), None);
        assert!(check_items(CheckoutMode::Payment, &[]).is_err());
    }

    #[test]
    fn a_line_out_of_bounds_is_named() {
        let err = check_items(
            CheckoutMode::Payment,
            &[(price("a", 100, false), 1), (price("b", 100, false), 0)],
        )
        .unwrap_err();
        assert!(
            matches!(&err, CoreError::InvalidParam { param: Some(p), .. } if p == "line_items[1][quantity]"),
            "{err:?}"
        );
        let mut eur = price("e", 100, false);
        eur.currency = Currency::parse("eur").unwrap();
        assert!(check_items(
            CheckoutMode::Payment,
            &[(price("a", 100, false), 1), (eur, 1)]
        )
        .is_err());
        // A total of nothing is no payment.
        assert!(check_items(CheckoutMode::Payment, &[(price("z", 0, false), 1)]).is_err());
    }

    #[test]
    fn an_open_session_completes_or_expires_once() {
        let mut s = CheckoutSession {
            id: "cs_1".into(),
            object: "checkout_session".into(),
            mode: CheckoutMode::Payment,
            status: CheckoutStatus::Open,
            payment_status: CheckoutPaymentStatus::Unpaid,
            currency: None,
            amount_subtotal: None,
            amount_total: None,
            line_items: EmbeddedList::new(vec![]),
            url: Some("http://r/checkout/cs_1".into()),
            success_url: "http://shop/ok".into(),
            cancel_url: None,
            customer: None,
            customer_email: None,
            client_reference_id: None,
            allow_promotion_codes: false,
            subscription_data: None,
            capture_method: CaptureMethod::Automatic,
            payment_intent: None,
            subscription: None,
            setup_intent: None,
            payment_link: None,
            declined_attempts: 0,
            trying_until: Some(40),
            metadata: Metadata::default(),
            expires_at: 100,
            completed_at: None,
            livemode: false,
            created: 0,
        };
        assert!(s.require_open(99, "paid").is_ok());
        assert!(s.held(39) && !s.held(40));
        let late = s.require_open(100, "paid").unwrap_err();
        assert!(late.to_string().contains("expired"), "{late}");
        s.complete(CheckoutPaymentStatus::Paid, 50);
        assert_eq!((s.url.as_deref(), s.trying_until), (None, None));
        let err = s.require_open(60, "expired").unwrap_err();
        assert!(err.to_string().contains("complete"), "{err}");
        s.declined_attempts = 3;
        assert!(s.exhausted(3) && !s.exhausted(4));
    }
}
