//! Refunds: the resource and its reasons. Pure.

use serde::{Deserialize, Serialize};

use crate::metadata::Metadata;
use crate::money::Currency;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RefundReason {
    Duplicate,
    Fraudulent,
    RequestedByCustomer,
}

impl RefundReason {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "duplicate" => Some(Self::Duplicate),
            "fraudulent" => Some(Self::Fraudulent),
            "requested_by_customer" => Some(Self::RequestedByCustomer),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RefundStatus {
    Pending,
    Succeeded,
    Failed,
}

/// What can happen to a pending refund.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefundEvent {
    /// The money reached the customer (a bank transfer settled, a processor confirmed).
    Settled,
    /// The processor refused it: the amount goes back to the payment and the balance.
    Failed,
}

/// The refund's state machine: `pending` → `succeeded` or `failed`; nothing after.
pub fn refund_after(from: RefundStatus, event: RefundEvent) -> Option<RefundStatus> {
    match (from, event) {
        (RefundStatus::Pending, RefundEvent::Settled) => Some(RefundStatus::Succeeded),
        (RefundStatus::Pending, RefundEvent::Failed) => Some(RefundStatus::Failed),
        _ => None,
    }
}

/// A refund (`re_…`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Refund {
    pub id: String,
    pub object: String,
    pub amount: i64,
    pub currency: Currency,
    pub payment: String,
    pub status: RefundStatus,
    pub reason: Option<RefundReason>,
    pub metadata: Metadata,
    pub livemode: bool,
    pub created: i64,
    /// The connector (`conn_…`) the refund went to, as its payment's; `None` for the implicit
    /// simulator. Rows written before connectors existed read as `None`.
    #[serde(default)]
    pub connector: Option<String>,
    /// The processor's id of the refund (a Stripe `re_…`).
    #[serde(default)]
    pub connector_reference: Option<String>,
    /// The `refund` balance transaction (`txn_…`): the amount leaving the balance.
    #[serde(default)]
    pub balance_transaction: Option<String>,
    /// The `refund_failure` transaction that gave it back, if the refund failed.
    #[serde(default)]
    pub failure_balance_transaction: Option<String>,
}

impl crate::documents::document::Document for Refund {
    const COLLECTION: crate::store::Collection = crate::store::Collection::Refunds;

    fn id(&self) -> &str {
        &self.id
    }

    fn created(&self) -> i64 {
        self.created
    }

    fn index(&self) -> crate::store::IndexValues {
        use crate::store::IndexValues;
        IndexValues {
            payment: Some(self.payment.clone()),
            ..IndexValues::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_refund_state_machine() {
        use RefundEvent as E;
        use RefundStatus as S;
        assert_eq!(refund_after(S::Pending, E::Settled), Some(S::Succeeded));
        assert_eq!(refund_after(S::Pending, E::Failed), Some(S::Failed));
        for from in [S::Succeeded, S::Failed] {
            for event in [E::Settled, E::Failed] {
                assert_eq!(refund_after(from, event), None, "{from:?} {event:?}");
            }
        }
    }
}
