//! Stripe's own books of a connector's payments (CONTRACT §15): the disputes opened there
//! (`GET /v1/disputes?payment_intent=`, with their balance transactions expanded, as Stripe
//! gives them) and the payouts Stripe made (`GET /v1/payouts?created[gte]=`), read for Tender
//! to mirror, and the Tender payment a PaymentIntent names (for a webhook about its charge).
//! Stripe's statuses in Tender's words: a dispute `warning_*` (an inquiry) as the
//! matching dispute status, `warning_closed` as won; anything else Tender does not know is
//! left out.

use serde_json::Value;
use tender_core::balance::lifecycle::{DisputeStatus, PayoutStatus};
use tender_core::connectors::connector::{bounded, UpstreamDispute, UpstreamPayout};

use super::settlement::settlement_of;
use super::Stripe;

impl Stripe {
    /// Every dispute Stripe holds of the PaymentIntent `reference`.
    pub(super) async fn disputes(&self, reference: &str) -> Result<Vec<UpstreamDispute>, String> {
        let list = self
            .read(&format!(
                "/v1/disputes?payment_intent={reference}&limit=100&expand[]=data.balance_transactions"
            ))
            .await?;
        Ok(list["data"]
            .as_array()
            .map(|data| data.iter().filter_map(upstream_dispute).collect())
            .unwrap_or_default())
    }

    /// `metadata[tender_payment]` of the PaymentIntent `reference`.
    pub(super) async fn tender_payment(&self, reference: &str) -> Result<Option<String>, String> {
        let pi = self
            .read(&format!("/v1/payment_intents/{reference}"))
            .await?;
        Ok(pi["metadata"]["tender_payment"].as_str().map(bounded))
    }

    /// Stripe's payouts created at or after `since`, at most `limit`, oldest first.
    pub(super) async fn payouts(
        &self,
        since: i64,
        limit: usize,
    ) -> Result<Vec<UpstreamPayout>, String> {
        let list = self
            .read(&format!(
                "/v1/payouts?created[gte]={since}&limit={}",
                limit.min(100)
            ))
            .await?;
        let mut found: Vec<UpstreamPayout> = list["data"]
            .as_array()
            .map(|data| data.iter().filter_map(upstream_payout).collect())
            .unwrap_or_default();
        found.sort_by_key(|p| p.created);
        Ok(found)
    }
}

fn dispute_status(status: &str) -> Option<DisputeStatus> {
    Some(match status {
        "needs_response" | "warning_needs_response" => DisputeStatus::NeedsResponse,
        "under_review" | "warning_under_review" => DisputeStatus::UnderReview,
        "won" | "warning_closed" => DisputeStatus::Won,
        "lost" => DisputeStatus::Lost,
        _ => return None,
    })
}

/// A dispute of Stripe's list as the port tells it; `None` for one Tender cannot read.
fn upstream_dispute(d: &Value) -> Option<UpstreamDispute> {
    let transactions = d["balance_transactions"]
        .as_array()?
        .iter()
        .map(settlement_of)
        .collect::<Result<Vec<_>, _>>()
        .ok()?;
    Some(UpstreamDispute {
        reference: bounded(d["id"].as_str()?),
        amount: d["amount"].as_i64()?,
        currency: bounded(d["currency"].as_str()?),
        reason: bounded(d["reason"].as_str().unwrap_or("general")),
        status: dispute_status(d["status"].as_str()?)?,
        due_by: d["evidence_details"]["due_by"].as_i64(),
        transactions,
    })
}

/// A payout of Stripe's list as the port tells it; `None` for one Tender cannot read.
fn upstream_payout(p: &Value) -> Option<UpstreamPayout> {
    let text = |key: &str| p[key].as_str().map(bounded);
    Some(UpstreamPayout {
        reference: bounded(p["id"].as_str()?),
        amount: p["amount"].as_i64()?,
        currency: bounded(p["currency"].as_str()?),
        status: PayoutStatus::parse(p["status"].as_str()?)?,
        arrival_date: p["arrival_date"].as_i64()?,
        created: p["created"].as_i64()?,
        failure_code: text("failure_code"),
        failure_message: text("failure_message"),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn txn(amount: i64, fee: i64) -> Value {
        json!({"id": "txn_1", "object": "balance_transaction", "amount": amount, "fee": fee,
               "net": amount - fee, "currency": "usd",
               "fee_details": [{"amount": fee, "description": "Dispute fee", "type": "stripe_fee"}]})
    }

    #[test]
    fn stripes_disputes_read_in_tenders_words_with_their_transactions() {
        let d = upstream_dispute(&json!({
            "id": "dp_1", "object": "dispute", "amount": 1000, "currency": "usd",
            "reason": "product_not_received", "status": "warning_closed",
            "evidence_details": {"due_by": 1_800_000_000},
            "balance_transactions": [txn(-1000, 1500), txn(1000, -1500)],
        }))
        .unwrap();
        assert_eq!(d.status, DisputeStatus::Won);
        assert_eq!(d.reason, "product_not_received");
        assert_eq!(d.due_by, Some(1_800_000_000));
        assert_eq!(
            d.transactions
                .iter()
                .map(|t| (t.amount, t.fee, t.net))
                .collect::<Vec<_>>(),
            [(-1000, 1500, -2500), (1000, -1500, 2500)]
        );
        assert_eq!(d.transactions[0].description, "Dispute fee");
        for (status, ours) in [
            ("needs_response", DisputeStatus::NeedsResponse),
            ("warning_needs_response", DisputeStatus::NeedsResponse),
            ("under_review", DisputeStatus::UnderReview),
            ("warning_under_review", DisputeStatus::UnderReview),
            ("won", DisputeStatus::Won),
            ("lost", DisputeStatus::Lost),
        ] {
            assert_eq!(dispute_status(status), Some(ours), "{status}");
        }
        // A status Tender does not know, or transactions it cannot read: left out.
        assert_eq!(dispute_status("prevented"), None);
        let unreadable = json!({"id": "dp_2", "amount": 1, "currency": "usd", "status": "lost",
                                "balance_transactions": [{"id": "txn_2", "amount": "12"}]});
        assert_eq!(upstream_dispute(&unreadable), None);
    }

    #[test]
    fn stripes_payouts_read_in_tenders_words() {
        let p = upstream_payout(&json!({
            "id": "po_1", "object": "payout", "amount": 2000, "currency": "usd",
            "status": "failed", "arrival_date": 5, "created": 4,
            "failure_code": "account_closed", "failure_message": "The bank account has been closed.",
        }))
        .unwrap();
        assert_eq!(p.status, PayoutStatus::Failed);
        assert_eq!((p.amount, p.created, p.arrival_date), (2000, 4, 5));
        assert_eq!(p.failure_code.as_deref(), Some("account_closed"));
        assert_eq!(
            upstream_payout(&json!({"id": "po_2", "amount": 1, "currency": "usd",
                                    "status": "reversed", "arrival_date": 1, "created": 1})),
            None
        );
    }
}
