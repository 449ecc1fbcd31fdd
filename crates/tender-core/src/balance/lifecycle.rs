//! The lifecycles of disputes and payouts (CONTRACT §9, §15): their statuses and the state
//! machine of each, one pure function with its table. Shared by Tender's own disputes and
//! payouts ([`crate::balance::disputes`], [`crate::balance::payouts`]) and by the connector
//! port, which reports a processor's in the same words
//! ([`crate::connectors::processor_books`]).
//!
//! Pure; depends on serde only.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DisputeStatus {
    NeedsResponse,
    UnderReview,
    Won,
    Lost,
}

impl DisputeStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            DisputeStatus::NeedsResponse => "needs_response",
            DisputeStatus::UnderReview => "under_review",
            DisputeStatus::Won => "won",
            DisputeStatus::Lost => "lost",
        }
    }

    /// Whether the dispute is over.
    pub fn is_closed(self) -> bool {
        matches!(self, DisputeStatus::Won | DisputeStatus::Lost)
    }
}

/// What can happen to a dispute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DisputeEvent {
    /// The merchant submitted evidence.
    Submitted,
    /// The cardholder's bank decided for the merchant.
    Won,
    /// Decided for the cardholder: by the bank, by the merchant closing it, or by nobody
    /// answering before the due date.
    Lost,
}

/// The dispute's state machine: its status after `event`, or `None` when its status does not
/// allow it.
///
/// | from             | `Submitted`    | `Won` | `Lost` |
/// |------------------|----------------|-------|--------|
/// | `needs_response` | `under_review` | —     | `lost` |
/// | `under_review`   | —              | `won` | `lost` |
/// | `won`, `lost`    | —              | —     | —      |
pub fn dispute_after(from: DisputeStatus, event: DisputeEvent) -> Option<DisputeStatus> {
    use DisputeEvent as E;
    use DisputeStatus as S;
    match (from, event) {
        (S::NeedsResponse, E::Submitted) => Some(S::UnderReview),
        (S::UnderReview, E::Won) => Some(S::Won),
        (S::NeedsResponse | S::UnderReview, E::Lost) => Some(S::Lost),
        _ => None,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PayoutStatus {
    Pending,
    InTransit,
    Paid,
    Failed,
    Canceled,
}

impl PayoutStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            PayoutStatus::Pending => "pending",
            PayoutStatus::InTransit => "in_transit",
            PayoutStatus::Paid => "paid",
            PayoutStatus::Failed => "failed",
            PayoutStatus::Canceled => "canceled",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [
            PayoutStatus::Pending,
            PayoutStatus::InTransit,
            PayoutStatus::Paid,
            PayoutStatus::Failed,
            PayoutStatus::Canceled,
        ]
        .into_iter()
        .find(|p| p.as_str() == s)
    }
}

/// What can happen to a payout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PayoutEvent {
    /// The bank took it (the first step of the task).
    Sent,
    /// It reached the merchant's account.
    Paid,
    /// The bank refused it.
    Failed,
    /// The merchant canceled it.
    Canceled,
}

/// The payout's state machine: its status after `event`, or `None` when its status does not
/// allow it.
///
/// | from         | `Sent`       | `Paid` | `Failed` | `Canceled` |
/// |--------------|--------------|--------|----------|------------|
/// | `pending`    | `in_transit` | —      | —        | `canceled` |
/// | `in_transit` | —            | `paid` | `failed` | —          |
/// | `paid`, `failed`, `canceled` | — | — | —     | —          |
pub fn payout_after(from: PayoutStatus, event: PayoutEvent) -> Option<PayoutStatus> {
    use PayoutEvent as E;
    use PayoutStatus as S;
    match (from, event) {
        (S::Pending, E::Sent) => Some(S::InTransit),
        (S::Pending, E::Canceled) => Some(S::Canceled),
        (S::InTransit, E::Paid) => Some(S::Paid),
        (S::InTransit, E::Failed) => Some(S::Failed),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dispute_state_machine() {
        use DisputeEvent as E;
        use DisputeStatus as S;
        let allowed = [
            (S::NeedsResponse, E::Submitted, S::UnderReview),
            (S::NeedsResponse, E::Lost, S::Lost),
            (S::UnderReview, E::Won, S::Won),
            (S::UnderReview, E::Lost, S::Lost),
        ];
        for from in [S::NeedsResponse, S::UnderReview, S::Won, S::Lost] {
            for event in [E::Submitted, E::Won, E::Lost] {
                let expected = allowed
                    .iter()
                    .find(|(f, e, _)| *f == from && *e == event)
                    .map(|(_, _, to)| *to);
                assert_eq!(dispute_after(from, event), expected, "{from:?} {event:?}");
            }
        }
    }

    #[test]
    fn the_payout_state_machine() {
        use PayoutEvent as E;
        use PayoutStatus as S;
        let events = [E::Sent, E::Paid, E::Failed, E::Canceled];
        let allowed = [
            (S::Pending, E::Sent, S::InTransit),
            (S::Pending, E::Canceled, S::Canceled),
            (S::InTransit, E::Paid, S::Paid),
            (S::InTransit, E::Failed, S::Failed),
        ];
        for from in [S::Pending, S::InTransit, S::Paid, S::Failed, S::Canceled] {
            for event in events {
                let expected = allowed
                    .iter()
                    .find(|(f, e, _)| *f == from && *e == event)
                    .map(|(_, _, to)| *to);
                assert_eq!(payout_after(from, event), expected, "{from:?} {event:?}");
            }
        }
    }
}
