//! Recurring billing's vocabulary (CONTRACT §10): the limits, products and prices in their
//! stored form (also what the API shows), and how a billing period ends ([`period_end`]).
//! Subscriptions, invoices and test clocks have a file each beside this one
//! ([`super::subscription`], [`super::invoice`], [`super::clock`]); the tests of all four
//! are below.
//!
//! Periods are anchored: the n-th period of a subscription ends n intervals after its
//! `billing_cycle_anchor` (its start, or the end of its trial), so a monthly subscription that
//! started on 31 January renews on 28 (or 29) February, 31 March, 30 April… and never drifts.
//!
//! Pure; depends on [`crate::money`], [`crate::metadata`] and [`crate::clock`]'s calendar.

use serde::{Deserialize, Serialize};

use crate::clock::{civil_date, unix_from_civil};
use crate::metadata::Metadata;
use crate::money::Currency;

/// `product.name` and `price.nickname` are at most this many characters.
pub const NAME_MAX_CHARS: usize = 5000;
/// A subscription has at most this many items.
pub const MAX_ITEMS: usize = 20;
/// An item's quantity is at most this.
pub const MAX_QUANTITY: i64 = 10_000;
/// A trial lasts at most this many days.
pub const MAX_TRIAL_DAYS: i64 = 730;
/// `customer.subscription.trial_will_end` comes this long before the trial ends.
pub const TRIAL_WILL_END_SECS: i64 = 3 * 86_400;
/// An `incomplete` subscription whose first invoice is still unpaid this long after it was
/// created becomes `incomplete_expired`.
pub const INCOMPLETE_EXPIRY_SECS: i64 = 23 * 3600;
/// A test clock moves forward at most this many months at a time.
pub const MAX_ADVANCE_MONTHS: u32 = 24;
/// Test-clock quotas (CONTRACT §17): what one test key can make a shared server do.
/// Clocks of an account advancing at once…
pub const MAX_ADVANCING_CLOCKS: i64 = 3;
/// …customers on one clock…
pub const MAX_CUSTOMERS_PER_CLOCK: i64 = 100;
/// …and invoices one advance may make (every renewal of every subscription on the clock).
pub const MAX_INVOICES_PER_ADVANCE: u64 = 10_000;

/// How many period ends of the schedule anchored at `anchor` fall in `(after, until]`, counting
/// no further than `cap + 1` (enough to say it is over `cap`).
pub fn periods_between(anchor: i64, recurring: Recurring, after: i64, until: i64, cap: u64) -> u64 {
    let mut count = 0;
    let mut end = next_period_end(anchor, recurring, after);
    while end <= until && count <= cap {
        count += 1;
        end = next_period_end(anchor, recurring, end);
    }
    count
}

/// How often a recurring price bills.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Interval {
    Day,
    Week,
    Month,
    Year,
}

impl Interval {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "day" => Some(Interval::Day),
            "week" => Some(Interval::Week),
            "month" => Some(Interval::Month),
            "year" => Some(Interval::Year),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Interval::Day => "day",
            Interval::Week => "week",
            Interval::Month => "month",
            Interval::Year => "year",
        }
    }

    /// The largest `interval_count`: a period lasts at most a year.
    pub fn max_count(self) -> u32 {
        match self {
            Interval::Day => 365,
            Interval::Week => 52,
            Interval::Month => 12,
            Interval::Year => 1,
        }
    }
}

/// A recurring price's schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Recurring {
    pub interval: Interval,
    pub interval_count: u32,
}

/// The first day of `month` months after `(year, month0)` (0-based month), as (year, month1).
fn add_months(year: i32, month: u32, months: i64) -> (i32, u32) {
    let total = i64::from(year) * 12 + i64::from(month - 1) + months;
    (
        total.div_euclid(12) as i32,
        (total.rem_euclid(12) + 1) as u32,
    )
}

/// `unix` moved `months` calendar months on, the day clamped to the target month's last day
/// (31 January + 1 month = 28/29 February), the time of day kept.
pub fn add_calendar_months(unix: i64, months: i64) -> i64 {
    let (y, m, d) = civil_date(unix);
    let (ty, tm) = add_months(y, m, months);
    let mut day = d;
    let midnight = loop {
        if let Some(t) = unix_from_civil(ty, tm, day) {
            break t;
        }
        day -= 1;
    };
    midnight + unix.rem_euclid(86_400)
}

/// The end of the `n`-th period (n ≥ 1) of a schedule anchored at `anchor`.
pub fn period_end(anchor: i64, recurring: Recurring, n: u32) -> i64 {
    let steps = i64::from(recurring.interval_count) * i64::from(n);
    match recurring.interval {
        Interval::Day => anchor + steps * 86_400,
        Interval::Week => anchor + steps * 7 * 86_400,
        Interval::Month => add_calendar_months(anchor, steps),
        Interval::Year => add_calendar_months(anchor, steps * 12),
    }
}

/// The first period end of the schedule strictly after `after` (≥ `anchor`).
pub fn next_period_end(anchor: i64, recurring: Recurring, after: i64) -> i64 {
    // An estimate from the shortest possible period, then forward to the first end past it.
    let shortest = match recurring.interval {
        Interval::Day => 86_400,
        Interval::Week => 7 * 86_400,
        Interval::Month => 31 * 86_400,
        Interval::Year => 366 * 86_400,
    } * i64::from(recurring.interval_count);
    let mut n = (((after - anchor).max(0) / shortest) as u32).max(1);
    while period_end(anchor, recurring, n) <= after {
        n += 1;
    }
    n = n.max(1);
    period_end(anchor, recurring, n)
}

// ---- Products and prices ---------------------------------------------------------------------

/// What a merchant sells (`prod_`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Product {
    pub id: String,
    pub object: String,
    pub name: String,
    pub description: Option<String>,
    pub active: bool,
    pub metadata: Metadata,
    pub created: i64,
    pub livemode: bool,
}

impl crate::documents::document::Document for Product {
    const COLLECTION: crate::store::Collection = crate::store::Collection::Products;

    fn id(&self) -> &str {
        &self.id
    }

    fn created(&self) -> i64 {
        self.created
    }

    fn index(&self) -> crate::store::IndexValues {
        use crate::store::IndexValues;
        IndexValues {
            active: Some(self.active),
            ..IndexValues::default()
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PriceType {
    OneTime,
    Recurring,
}

impl PriceType {
    pub fn as_str(self) -> &'static str {
        match self {
            PriceType::OneTime => "one_time",
            PriceType::Recurring => "recurring",
        }
    }
}

/// How much a product costs, and how often (`price_`). Its amount and schedule never change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Price {
    pub id: String,
    pub object: String,
    pub product: String,
    pub currency: Currency,
    pub unit_amount: i64,
    #[serde(rename = "type")]
    pub kind: PriceType,
    pub recurring: Option<Recurring>,
    pub active: bool,
    pub nickname: Option<String>,
    /// A name the shop finds the price by (Stripe's `lookup_key`), unique among the account's
    /// prices in a mode.
    #[serde(default)]
    pub lookup_key: Option<String>,
    pub metadata: Metadata,
    pub created: i64,
    pub livemode: bool,
}

impl crate::documents::document::Document for Price {
    const COLLECTION: crate::store::Collection = crate::store::Collection::Prices;

    fn id(&self) -> &str {
        &self.id
    }

    fn created(&self) -> i64 {
        self.created
    }

    fn index(&self) -> crate::store::IndexValues {
        use crate::store::IndexValues;
        IndexValues {
            product: Some(self.product.clone()),
            active: Some(self.active),
            // The price's type, in the column lists filter on (`type=`).
            event_type: Some(self.kind.as_str().to_string()),
            currency: Some(self.currency.code().to_string()),
            lookup_key: self.lookup_key.clone(),
            ..IndexValues::default()
        }
    }
}

// ---- Subscriptions ---------------------------------------------------------------------------

/// A list embedded in an object (`{object: "list", data: [...]}`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EmbeddedList<T> {
    pub object: String,
    pub data: Vec<T>,
}

impl<T> EmbeddedList<T> {
    pub fn new(data: Vec<T>) -> Self {
        Self {
            object: "list".into(),
            data,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::billing::{invoice::*, subscription::*};

    #[test]
    fn the_invoice_state_machine() {
        use InvoiceEvent as E;
        use InvoiceStatus as S;
        let allowed = [
            (E::Paid, S::Paid),
            (E::GaveUp, S::Uncollectible),
            (E::Voided, S::Void),
        ];
        for (event, to) in allowed {
            assert_eq!(invoice_after(S::Open, event), Some(to));
            for from in [S::Draft, S::Paid, S::Uncollectible, S::Void] {
                assert_eq!(invoice_after(from, event), None, "{from:?} {event:?}");
            }
        }
        // Only a draft is finalized.
        assert_eq!(invoice_after(S::Draft, E::Finalized), Some(S::Open));
        for from in [S::Open, S::Paid, S::Uncollectible, S::Void] {
            assert_eq!(invoice_after(from, E::Finalized), None, "{from:?}");
        }
    }

    const JAN_31_2027: i64 = 1_801_353_600; // 2027-01-31T00:00:00Z
    fn monthly() -> Recurring {
        Recurring {
            interval: Interval::Month,
            interval_count: 1,
        }
    }

    #[test]
    fn monthly_periods_clamp_to_the_month_end_and_never_drift() {
        assert_eq!(civil_date(JAN_31_2027), (2027, 1, 31));
        let ends: Vec<_> = (1..=4)
            .map(|n| civil_date(period_end(JAN_31_2027 + 3600, monthly(), n)))
            .collect();
        assert_eq!(
            ends,
            vec![(2027, 2, 28), (2027, 3, 31), (2027, 4, 30), (2027, 5, 31)]
        );
        // The time of day is kept.
        assert_eq!(
            period_end(JAN_31_2027 + 3600, monthly(), 2).rem_euclid(86_400),
            3600
        );
        // Leap years.
        let jan_31_2028 = unix_from_civil(2028, 1, 31).unwrap();
        assert_eq!(
            civil_date(period_end(jan_31_2028, monthly(), 1)),
            (2028, 2, 29)
        );
        let feb_29 = unix_from_civil(2028, 2, 29).unwrap();
        let yearly = Recurring {
            interval: Interval::Year,
            interval_count: 1,
        };
        assert_eq!(civil_date(period_end(feb_29, yearly, 1)), (2029, 2, 28));
        assert_eq!(civil_date(period_end(feb_29, yearly, 4)), (2032, 2, 29));
    }

    #[test]
    fn the_next_period_end_is_the_first_one_after_the_given_time() {
        let weekly = Recurring {
            interval: Interval::Week,
            interval_count: 2,
        };
        assert_eq!(next_period_end(0, weekly, 0), 14 * 86_400);
        assert_eq!(next_period_end(0, weekly, 14 * 86_400), 28 * 86_400);
        assert_eq!(next_period_end(0, weekly, 14 * 86_400 - 1), 14 * 86_400);
        let a = JAN_31_2027;
        let feb = period_end(a, monthly(), 1);
        assert_eq!(next_period_end(a, monthly(), a), feb);
        assert_eq!(
            next_period_end(a, monthly(), feb),
            period_end(a, monthly(), 2)
        );
        assert_eq!(
            next_period_end(a, monthly(), a + 400 * 86_400),
            period_end(a, monthly(), 14)
        );
    }

    #[test]
    fn dunning_retries_on_the_configured_days_after_the_first_failure() {
        let d = Dunning::default();
        let t = 1_000_000;
        assert_eq!(d.next_attempt(t, 0), None);
        assert_eq!(d.next_attempt(t, 1), Some(t + 86_400));
        assert_eq!(d.next_attempt(t, 2), Some(t + 3 * 86_400));
        assert_eq!(d.next_attempt(t, 3), Some(t + 5 * 86_400));
        assert_eq!(d.next_attempt(t, 4), Some(t + 7 * 86_400));
        assert_eq!(d.next_attempt(t, 5), None);
        assert_eq!(Dunning::parse("2, 4").unwrap().days, vec![2, 4]);
        for bad in ["", "0", "3,1", "1,1", "x", "61", "1,2,3,4,5,6,7,8,9,10,11"] {
            assert!(Dunning::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn only_declines_no_retry_can_cure_are_hard() {
        for code in ["lost_card", "stolen_card", "fraudulent", "expired_card"] {
            assert!(is_hard_decline(Some(code)));
        }
        for code in ["generic_decline", "insufficient_funds", "do_not_honor"] {
            assert!(!is_hard_decline(Some(code)));
        }
        assert!(!is_hard_decline(None));
    }

    #[test]
    fn the_subscription_state_machine() {
        use SubscriptionEvent as E;
        use SubscriptionStatus as S;
        let table = [
            (S::Incomplete, E::InvoicePaid, Some(S::Active)),
            (S::Incomplete, E::PaymentFailed, Some(S::Incomplete)),
            (
                S::Incomplete,
                E::IncompleteExpired,
                Some(S::IncompleteExpired),
            ),
            (S::Incomplete, E::Renewed, None),
            (S::Incomplete, E::Canceled, Some(S::Canceled)),
            (S::Trialing, E::Renewed, Some(S::Active)),
            (S::PastDue, E::Renewed, Some(S::PastDue)),
            (S::Trialing, E::InvoicePaid, Some(S::Active)),
            (S::Trialing, E::PaymentFailed, Some(S::PastDue)),
            (S::Active, E::Renewed, Some(S::Active)),
            (S::Active, E::PaymentFailed, Some(S::PastDue)),
            (S::Active, E::GaveUp, Some(S::Unpaid)),
            (S::Active, E::IncompleteExpired, None),
            (S::PastDue, E::PaymentFailed, Some(S::PastDue)),
            (S::PastDue, E::InvoicePaid, Some(S::Active)),
            (S::PastDue, E::GaveUp, Some(S::Unpaid)),
            (S::Unpaid, E::Renewed, Some(S::Unpaid)),
            (S::Unpaid, E::InvoicePaid, Some(S::Active)),
            (S::Unpaid, E::Canceled, Some(S::Canceled)),
            (S::Canceled, E::InvoicePaid, None),
            (S::Canceled, E::Canceled, None),
            (S::IncompleteExpired, E::InvoicePaid, None),
            (S::Trialing, E::Paused, Some(S::Paused)),
            (S::Active, E::Paused, None),
            (S::Incomplete, E::Paused, None),
            (S::Paused, E::InvoicePaid, Some(S::Active)),
            (S::Paused, E::PaymentFailed, Some(S::Paused)),
            (S::Paused, E::GaveUp, Some(S::Paused)),
            (S::Paused, E::Renewed, None),
            (S::Paused, E::Canceled, Some(S::Canceled)),
        ];
        for (from, event, to) in table {
            assert_eq!(
                subscription_after(from, event).ok(),
                to,
                "{from:?} {event:?}"
            );
        }
    }
}
