//! Subscriptions (`sub_`): the stored form (also what the API shows) and the state machine,
//! [`subscription_after`], the whole of it in one function, table-tested in `model.rs`.

use crate::billing::invoice::{InvoiceLine, Period};
use crate::billing::model::{EmbeddedList, Price, Recurring};
use crate::metadata::Metadata;
use crate::money::Currency;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SubscriptionStatus {
    Incomplete,
    IncompleteExpired,
    Trialing,
    Active,
    PastDue,
    Canceled,
    Unpaid,
    /// Its trial ended without a card to charge, and its `trial_settings` said to pause: no
    /// invoices until it is resumed.
    Paused,
}

impl SubscriptionStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            SubscriptionStatus::Incomplete => "incomplete",
            SubscriptionStatus::IncompleteExpired => "incomplete_expired",
            SubscriptionStatus::Trialing => "trialing",
            SubscriptionStatus::Active => "active",
            SubscriptionStatus::PastDue => "past_due",
            SubscriptionStatus::Canceled => "canceled",
            SubscriptionStatus::Unpaid => "unpaid",
            SubscriptionStatus::Paused => "paused",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [
            SubscriptionStatus::Incomplete,
            SubscriptionStatus::IncompleteExpired,
            SubscriptionStatus::Trialing,
            SubscriptionStatus::Active,
            SubscriptionStatus::PastDue,
            SubscriptionStatus::Canceled,
            SubscriptionStatus::Unpaid,
            SubscriptionStatus::Paused,
        ]
        .into_iter()
        .find(|x| x.as_str() == s)
    }

    /// No more invoices, renewals or changes: the subscription is over.
    pub fn is_ended(self) -> bool {
        matches!(
            self,
            SubscriptionStatus::Canceled | SubscriptionStatus::IncompleteExpired
        )
    }
}

/// What happens to a subscription.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubscriptionEvent {
    /// An invoice of it was paid.
    InvoicePaid,
    /// A payment of its latest invoice failed, and the invoice will be tried again.
    PaymentFailed,
    /// The last try of its invoice failed (or a hard decline): the invoice is uncollectible.
    GaveUp,
    /// A new period began (renewal, or the end of the trial) and its invoice is open.
    Renewed,
    /// The first invoice stayed unpaid for 23 hours.
    IncompleteExpired,
    /// Canceled now, or at the end of the period it was set to end with.
    Canceled,
    /// Its trial ended without a card to charge, set to pause then.
    Paused,
}

/// A subscription change that is not allowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BadTransition {
    pub from: SubscriptionStatus,
    pub event: SubscriptionEvent,
}

/// The subscription's state machine: its status after `event`.
pub fn subscription_after(
    from: SubscriptionStatus,
    event: SubscriptionEvent,
) -> Result<SubscriptionStatus, BadTransition> {
    use SubscriptionEvent as E;
    use SubscriptionStatus as S;
    let to = match (from, event) {
        (S::Canceled | S::IncompleteExpired, _) => None,
        (_, E::Canceled) => Some(S::Canceled),
        (S::Incomplete, E::InvoicePaid) => Some(S::Active),
        (S::Incomplete, E::PaymentFailed | E::GaveUp) => Some(S::Incomplete),
        (S::Incomplete, E::IncompleteExpired) => Some(S::IncompleteExpired),
        (S::Incomplete, E::Renewed) => None,
        (_, E::IncompleteExpired) => None,
        (S::Trialing, E::Paused) => Some(S::Paused),
        (_, E::Paused) => None,
        // Resumed, it is active once the new period's invoice is paid; until then (a failed
        // try) it stays paused, and it does not renew.
        (S::Paused, E::InvoicePaid) => Some(S::Active),
        (S::Paused, E::PaymentFailed | E::GaveUp) => Some(S::Paused),
        (S::Paused, E::Renewed) => None,
        // The first invoice after a trial, and every renewal, starts from active.
        (S::Trialing | S::Active | S::PastDue | S::Unpaid, E::InvoicePaid) => Some(S::Active),
        // The trial's end is the first renewal: the subscription is active from then on.
        (S::Trialing | S::Active, E::Renewed) => Some(S::Active),
        (S::PastDue, E::Renewed) => Some(S::PastDue),
        // An unpaid subscription still renews (its invoices open), but stays unpaid until one
        // is paid.
        (S::Unpaid, E::Renewed) => Some(S::Unpaid),
        (S::Trialing | S::Active | S::PastDue, E::PaymentFailed) => Some(S::PastDue),
        (S::Unpaid, E::PaymentFailed) => Some(S::Unpaid),
        (S::Trialing | S::Active | S::PastDue | S::Unpaid, E::GaveUp) => Some(S::Unpaid),
    };
    to.ok_or(BadTransition { from, event })
}

/// What a trial that ends without a card to charge does (Stripe's
/// `trial_settings.end_behavior.missing_payment_method`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MissingPaymentMethod {
    /// Opens the first invoice all the same (its try fails: `past_due`, dunning).
    #[default]
    CreateInvoice,
    /// Pauses the subscription (`paused`) until it is resumed.
    Pause,
    /// Cancels it.
    Cancel,
}

impl MissingPaymentMethod {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "create_invoice" => Some(Self::CreateInvoice),
            "pause" => Some(Self::Pause),
            "cancel" => Some(Self::Cancel),
            _ => None,
        }
    }
}

/// How a subscription's trial ends (`trial_settings`), as Stripe nests it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TrialSettings {
    pub end_behavior: TrialEndBehavior,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TrialEndBehavior {
    pub missing_payment_method: MissingPaymentMethod,
}

/// One line of a subscription (`si_`): a price (as it was when subscribed) and a quantity.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubscriptionItem {
    pub id: String,
    pub object: String,
    pub price: Price,
    pub quantity: i64,
}

/// A customer's recurring purchase (`sub_`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Subscription {
    pub id: String,
    pub object: String,
    pub customer: String,
    pub status: SubscriptionStatus,
    pub items: EmbeddedList<SubscriptionItem>,
    pub currency: Currency,
    /// Where the periods are counted from: the start, or the end of the trial.
    pub billing_cycle_anchor: i64,
    pub current_period_start: i64,
    pub current_period_end: i64,
    pub trial_start: Option<i64>,
    pub trial_end: Option<i64>,
    pub cancel_at_period_end: bool,
    pub canceled_at: Option<i64>,
    pub ended_at: Option<i64>,
    pub latest_invoice: Option<String>,
    pub default_payment_method: Option<String>,
    /// The SetupIntent that collects the customer's card during a trial the customer starts
    /// without one (`payment_behavior=default_incomplete`).
    #[serde(default)]
    pub pending_setup_intent: Option<String>,
    /// Stored before it existed: a trial ends with an invoice, as then.
    #[serde(default)]
    pub trial_settings: TrialSettings,
    pub test_clock: Option<String>,
    pub metadata: Metadata,
    pub created: i64,
    pub livemode: bool,
}

impl crate::documents::document::Document for Subscription {
    const COLLECTION: crate::store::Collection = crate::store::Collection::Subscriptions;

    fn id(&self) -> &str {
        &self.id
    }

    fn created(&self) -> i64 {
        self.created
    }

    fn index(&self) -> crate::store::IndexValues {
        use crate::store::IndexValues;
        IndexValues {
            customer: Some(self.customer.clone()),
            status: Some(self.status.as_str().to_string()),
            prices: Some(crate::store::prices_column(
                self.items.data.iter().map(|i| i.price.id.as_str()),
            )),
            ..IndexValues::default()
        }
    }
}

impl Subscription {
    /// The schedule every item shares.
    pub fn recurring(&self) -> Option<Recurring> {
        self.items.data.first().and_then(|i| i.price.recurring)
    }

    /// What one period costs.
    pub fn period_amount(&self) -> i64 {
        self.items
            .data
            .iter()
            .map(|i| i.price.unit_amount * i.quantity)
            .sum()
    }

    /// The invoice lines of the period `[start, end)`, described as Stripe does
    /// (`2 × Plan (at 15.00 USD / month)`) with `product_name` (its id when it has none).
    pub fn lines(
        &self,
        start: i64,
        end: i64,
        product_name: impl Fn(&str) -> Option<String>,
    ) -> Vec<InvoiceLine> {
        self.items
            .data
            .iter()
            .map(|i| {
                let p = &i.price;
                let every = match p.recurring {
                    Some(r) if r.interval_count > 1 => {
                        format!(" every {} {}s", r.interval_count, r.interval.as_str())
                    }
                    Some(r) => format!(" / {}", r.interval.as_str()),
                    None => String::new(),
                };
                InvoiceLine {
                    price: p.id.clone(),
                    quantity: i.quantity,
                    amount: p.unit_amount * i.quantity,
                    period: Period { start, end },
                    description: format!(
                        "{} × {} (at {}{every})",
                        i.quantity,
                        product_name(&p.product).unwrap_or_else(|| p.product.clone()),
                        crate::money::format_amount(p.unit_amount, p.currency)
                    ),
                }
            })
            .collect()
    }
}

// ---- Invoices --------------------------------------------------------------------------------
