//! Invoices (`in_`): the stored form, the state machine ([`invoice_after`]), and when a failed
//! invoice is tried again ([`Dunning`], [`is_hard_decline`]).

use crate::billing::model::EmbeddedList;
use crate::error::CoreError;
use crate::money::Currency;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InvoiceStatus {
    Draft,
    Open,
    Paid,
    Uncollectible,
    Void,
}

/// What can happen to an invoice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InvoiceEvent {
    /// Finalized: a draft becomes payable.
    Finalized,
    /// A try was paid (or the invoice was for nothing).
    Paid,
    /// The dunning schedule ran out, or a hard decline ended it.
    GaveUp,
    /// Voided by the merchant, or with the subscription it opened.
    Voided,
}

/// The invoice's state machine: a `draft` is finalized to `open`; only an `open` invoice
/// moves on, to `paid`, `uncollectible` or `void`; every other status is final here.
pub fn invoice_after(from: InvoiceStatus, event: InvoiceEvent) -> Option<InvoiceStatus> {
    match (from, event) {
        (InvoiceStatus::Draft, InvoiceEvent::Finalized) => Some(InvoiceStatus::Open),
        (InvoiceStatus::Open, InvoiceEvent::Paid) => Some(InvoiceStatus::Paid),
        (InvoiceStatus::Open, InvoiceEvent::GaveUp) => Some(InvoiceStatus::Uncollectible),
        (InvoiceStatus::Open, InvoiceEvent::Voided) => Some(InvoiceStatus::Void),
        _ => None,
    }
}

/// 400 `invoice_unexpected_state`: `what` is possible only while the invoice is open.
pub fn invoice_state_error(i: &Invoice, what: &str) -> CoreError {
    CoreError::invalid(
        "invoice",
        "invoice_unexpected_state",
        format!(
            "This invoice's status is {}; {what} only while it is open.",
            i.status.as_str()
        ),
    )
}

impl InvoiceStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            InvoiceStatus::Draft => "draft",
            InvoiceStatus::Open => "open",
            InvoiceStatus::Paid => "paid",
            InvoiceStatus::Uncollectible => "uncollectible",
            InvoiceStatus::Void => "void",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [
            InvoiceStatus::Draft,
            InvoiceStatus::Open,
            InvoiceStatus::Paid,
            InvoiceStatus::Uncollectible,
            InvoiceStatus::Void,
        ]
        .into_iter()
        .find(|x| x.as_str() == s)
    }
}

/// Why an invoice was made (Stripe's `billing_reason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BillingReason {
    /// A subscription's first invoice, made when it is created.
    SubscriptionCreate,
    /// A subscription's renewal (the first one after a trial too).
    #[default]
    SubscriptionCycle,
    /// A preview of the next renewal's invoice, never stored.
    Upcoming,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Period {
    pub start: i64,
    pub end: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InvoiceLine {
    pub price: String,
    pub quantity: i64,
    pub amount: i64,
    pub period: Period,
    pub description: String,
}

/// What a customer owes for one period of a subscription (`in_`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Invoice {
    pub id: String,
    pub object: String,
    pub customer: String,
    pub subscription: Option<String>,
    /// Invoices stored before this field was are renewals' or first invoices'; they read as
    /// renewals.
    #[serde(default)]
    pub billing_reason: BillingReason,
    pub status: InvoiceStatus,
    /// Its number in the account's gap-free sequence ([`crate::billing::numbering`]), given
    /// when it is finalized; `None` for a draft (and for invoices finalized before numbers).
    #[serde(default)]
    pub number: Option<String>,
    pub currency: Currency,
    pub amount_due: i64,
    pub amount_paid: i64,
    pub lines: EmbeddedList<InvoiceLine>,
    pub period_start: i64,
    pub period_end: i64,
    /// Payments tried, successful or not.
    pub attempt_count: u32,
    /// When the next automatic try is due; `None` when none will be made.
    pub next_payment_attempt: Option<i64>,
    /// The latest payment tried (the successful one once paid).
    pub payment: Option<String>,
    /// Every payment tried, oldest first.
    #[serde(default)]
    pub payments: Vec<String>,
    /// When its first automatic try failed (the dunning schedule counts from there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_failed_at: Option<i64>,
    /// Automatic tries failed since then (the step of the dunning schedule reached).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub dunning_step: u32,
    pub hosted_invoice_url: String,
    pub created: i64,
    pub livemode: bool,
}

impl crate::documents::document::Document for Invoice {
    const COLLECTION: crate::store::Collection = crate::store::Collection::Invoices;

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
            subscription: self.subscription.clone(),
            status: Some(self.status.as_str().to_string()),
            ..IndexValues::default()
        }
    }
}

/// When a failed invoice is tried again: days after its first failure (`--dunning-days`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dunning {
    pub days: Vec<i64>,
}

impl Default for Dunning {
    fn default() -> Self {
        Self {
            days: vec![1, 3, 5, 7],
        }
    }
}

impl Dunning {
    /// `1,3,5,7`: increasing whole days, 1 to 10 of them, each 1..=60.
    pub fn parse(s: &str) -> Result<Self, String> {
        let mut days = Vec::new();
        for part in s.split(',') {
            let d: i64 = part
                .trim()
                .parse()
                .map_err(|_| format!("'{part}' is not a whole number of days"))?;
            if !(1..=60).contains(&d) {
                return Err(format!("{d}: retry days must be 1 to 60"));
            }
            if days.last().is_some_and(|&last| d <= last) {
                return Err("retry days must increase".into());
            }
            days.push(d);
        }
        if days.is_empty() || days.len() > 10 {
            return Err("give 1 to 10 retry days".into());
        }
        Ok(Self { days })
    }

    /// After `attempts` automatic tries, all failed, the first at `first_failed_at`: when the
    /// next one is due, or `None` when that was the last.
    pub fn next_attempt(&self, first_failed_at: i64, attempts: u32) -> Option<i64> {
        let retry = attempts.checked_sub(1)? as usize;
        self.days.get(retry).map(|d| first_failed_at + d * 86_400)
    }
}

/// Declines no retry can cure: the card is gone or the bank suspects fraud.
pub fn is_hard_decline(decline_code: Option<&str>) -> bool {
    matches!(
        decline_code,
        Some("lost_card" | "stolen_card" | "fraudulent" | "expired_card")
    )
}

// ---- Test clocks -----------------------------------------------------------------------------

fn is_zero(n: &u32) -> bool {
    *n == 0
}
