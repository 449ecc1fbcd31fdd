//! Disputes opened at a connector's processor (CONTRACT §15): the cardholder's bank disputes a
//! payment the processor holds, and the processor withdraws the money and its dispute fee from
//! the merchant's balance there. Tender mirrors each one the watch of the payment finds
//! ([`crate::refunds::processor`], or at once on the processor's webhook) as a Tender dispute
//! (`connector_reference` = the processor's id, its evidence deadline, its status) and books
//! each of the processor's balance transactions of it as the processor booked them
//! ([`transactions::processor_dispute`]: the withdrawal and its fee, then any reinstatement),
//! once: Tender's transactions of a dispute stand one-for-one, in order, beside the
//! processor's. A lost dispute's withheld amount leaves the ledger, as for Tender's own.
//!
//! The processor's word is checked first ([`dispute_doubt`]): a dispute of another currency,
//! of more than the payment captured and did not refund, or whose transactions would withhold
//! more than the disputed amount, give back more than was withheld, or do not add up, is
//! refused and logged, never booked.
//!
//! Depends on the dispute documents, the connector port's [`UpstreamDispute`] and the balance's
//! transactions.

use crate::auth::Scope;
use crate::balance::disputes::{posting_failed, Dispute, DisputeStatus, Evidence, EvidenceDetails};
use crate::balance::transactions::{self, At, Fee, FeeType};
use crate::balance::BalanceBook;
use crate::connectors::connector::{bounded, UpstreamDispute};
use crate::documents::batch::Batch;
use crate::documents::document::{from_body, to_value};
use crate::error::{CoreError, CoreResult, StoreError};
use crate::ids::{self, IdKind};
use crate::money::Currency;
use crate::payments::payment::Payment;
use crate::store::{Collection, Field};

/// The most a processor may charge to handle one dispute, in minor units, when the disputed
/// amount is smaller (Stripe's is 15.00).
const MAX_DISPUTE_FEE: i64 = 10_000;

/// Why the processor's `upstream` dispute of a payment in `currency` that has `captured` left
/// (captured less refunded) cannot be believed, or `None`.
pub fn dispute_doubt(
    currency: Currency,
    captured: i64,
    upstream: &UpstreamDispute,
) -> Option<String> {
    let currency = currency.code();
    if !upstream.currency.eq_ignore_ascii_case(currency) {
        return Some(format!(
            "it is in {}, the payment in {currency}",
            bounded(&upstream.currency)
        ));
    }
    if !(1..=captured).contains(&upstream.amount) {
        return Some(format!(
            "it disputes {} of {captured} captured and not refunded",
            upstream.amount
        ));
    }
    let (mut withheld, mut fees) = (0i64, 0i64);
    for t in &upstream.transactions {
        if !t.currency.eq_ignore_ascii_case(currency) || t.amount.checked_sub(t.fee) != Some(t.net)
        {
            return Some(format!(
                "its transaction {} is in {} or its fee and net do not make its amount",
                bounded(&t.reference),
                bounded(&t.currency)
            ));
        }
        withheld = withheld.checked_sub(t.amount).unwrap_or(i64::MIN);
        fees = fees.checked_add(t.fee).unwrap_or(i64::MIN);
        if !(0..=upstream.amount).contains(&withheld)
            || !(0..=MAX_DISPUTE_FEE.max(upstream.amount)).contains(&fees)
        {
            return Some(format!(
                "its transactions withhold {withheld} of {} disputed, with {fees} in fees",
                upstream.amount
            ));
        }
    }
    None
}

impl BalanceBook<'_> {
    /// Mirrors `found`, the processor's disputes of payment `id`, each once.
    pub(crate) async fn mirror_disputes(
        &self,
        scope: &Scope,
        id: &str,
        found: &[UpstreamDispute],
    ) -> CoreResult<()> {
        for upstream in found {
            let mirrored = self
                .retry_on_conflict(|| self.mirror_dispute(scope, id, upstream))
                .await;
            match mirrored {
                // A racing mirror (the watch and a webhook) booked the same transaction first:
                // read again, and find it there.
                Err(CoreError::Store(StoreError::Duplicate(_))) => {
                    self.retry_on_conflict(|| self.mirror_dispute(scope, id, upstream))
                        .await?
                }
                other => other?,
            }
        }
        Ok(())
    }

    /// `upstream` as a Tender dispute of payment `id`: made when new, brought to the
    /// processor's status and transactions when not; nothing when it already is.
    async fn mirror_dispute(
        &self,
        scope: &Scope,
        id: &str,
        upstream: &UpstreamDispute,
    ) -> CoreResult<()> {
        let (payment, payment_version): (Payment, i64) = self
            .load(scope, Collection::Payments, "payment", id)
            .await?;
        let Some(held_by) = payment.held_by() else {
            return Ok(());
        };
        let left = payment.amount_captured - payment.amount_refunded;
        if let Some(why) = dispute_doubt(payment.currency, left, upstream) {
            tracing::warn!(payment = %id, dispute = %bounded(&upstream.reference), reason = %why, "a dispute the processor reports cannot be believed; not booked");
            return Ok(());
        }
        let known = self
            .dispute_at_processor(scope, id, &upstream.reference)
            .await?;
        let before = known.as_ref().map(|(d, _)| d.clone());
        let mut after = before
            .clone()
            .unwrap_or_else(|| self.new_dispute_mirror(&payment, upstream));
        after.status = upstream.status;
        if let Some(due_by) = upstream.due_by {
            after.evidence_details.due_by = due_by;
        }
        let mut batch = self.background(scope);
        let now = self.now();
        self.book_transactions(&mut batch, &mut after, upstream, held_by)?;
        let lost_now = after.status == DisputeStatus::Lost
            && before.as_ref().map(|b| b.status) != Some(DisputeStatus::Lost);
        if lost_now {
            let withheld: i64 = -after
                .balance_transactions
                .iter()
                .map(|t| t.amount)
                .sum::<i64>();
            if let Some(posting) =
                transactions::dispute_lost(now, &after.id, after.currency, withheld)
                    .map_err(posting_failed)?
            {
                batch.post(posting);
            }
        }
        match (&before, known) {
            (Some(b), _) if *b == after => return Ok(()),
            (Some(_), Some((_, version))) => {
                batch.update(&after, version)?;
            }
            _ => {
                let mut disputed = payment.clone();
                disputed.disputed = true;
                batch
                    .insert(&after)?
                    .update(&disputed, payment_version)?
                    .event("dispute.created", &after)?;
            }
        }
        let closed_now =
            after.status.is_closed() && !before.as_ref().is_some_and(|b| b.status.is_closed());
        match (before.is_some(), closed_now) {
            (_, true) => batch.event_json("dispute.closed", to_value(&after)?, None)?,
            (true, false) => batch.event_json("dispute.updated", to_value(&after)?, None)?,
            (false, false) => &mut batch,
        };
        self.commit_background(batch).await
    }

    /// Books, to `batch`, the processor's transactions of `upstream` that `dispute` does not
    /// have yet, in order, and adds them to it.
    fn book_transactions(
        &self,
        batch: &mut Batch,
        dispute: &mut Dispute,
        upstream: &UpstreamDispute,
        held_by: &str,
    ) -> CoreResult<()> {
        let livemode = batch.scope().livemode();
        for (index, t) in upstream
            .transactions
            .iter()
            .enumerate()
            .skip(dispute.balance_transactions.len())
        {
            let txn_id = ids::generate(IdKind::BalanceTransaction);
            let at = At {
                txn_id: &txn_id,
                now: self.now(),
                livemode,
                held_by: Some(held_by),
            };
            let fee = Fee {
                amount: t.fee,
                kind: FeeType::ProcessorFee,
                description: &t.description,
            };
            let booking = transactions::processor_dispute(
                at,
                &dispute.id,
                index,
                dispute.currency,
                fee,
                t.amount,
            )
            .map_err(posting_failed)?;
            dispute
                .balance_transactions
                .extend(booking.transaction.iter().cloned());
            batch.book(booking)?;
        }
        Ok(())
    }

    /// A new Tender dispute standing for `upstream`, a dispute of `payment` (no transactions
    /// yet).
    fn new_dispute_mirror(&self, payment: &Payment, upstream: &UpstreamDispute) -> Dispute {
        let now = self.now();
        Dispute {
            id: ids::generate(IdKind::Dispute),
            object: "dispute".into(),
            amount: upstream.amount,
            currency: payment.currency,
            payment: payment.id.clone(),
            connector_reference: Some(bounded(&upstream.reference)),
            reason: bounded(&upstream.reason),
            status: upstream.status,
            evidence: Evidence::default(),
            evidence_details: EvidenceDetails {
                due_by: upstream.due_by.unwrap_or(now),
                submission_count: 0,
            },
            balance_transactions: Vec::new(),
            metadata: Default::default(),
            created: now,
            livemode: payment.livemode,
        }
    }

    /// Payment `id`'s dispute standing for the processor's `reference`, with its version.
    async fn dispute_at_processor(
        &self,
        scope: &Scope,
        id: &str,
        reference: &str,
    ) -> CoreResult<Option<(Dispute, i64)>> {
        let records = self
            .every_record(
                scope,
                Collection::Disputes,
                vec![(Field::Payment, id.to_string())],
                Default::default(),
            )
            .await?;
        for record in records {
            let d: Dispute = from_body(&record.id, &record.body)?;
            if d.connector_reference.as_deref() == Some(reference) {
                return Ok(Some((d, record.version)));
            }
        }
        Ok(None)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::payments::payment::ProcessorSettlement;

    fn txn(amount: i64, fee: i64, currency: &str) -> ProcessorSettlement {
        ProcessorSettlement {
            reference: "txn_1".into(),
            amount,
            fee,
            net: amount - fee,
            currency: currency.into(),
            description: "Dispute fee".into(),
        }
    }

    fn dispute(amount: i64, transactions: Vec<ProcessorSettlement>) -> UpstreamDispute {
        UpstreamDispute {
            reference: "dp_1".into(),
            amount,
            currency: "usd".into(),
            reason: "fraudulent".into(),
            status: DisputeStatus::NeedsResponse,
            due_by: Some(1),
            transactions,
        }
    }

    #[test]
    fn a_processors_dispute_is_believed_only_within_the_payment_and_its_own_amount() {
        let usd = Currency::parse("usd").unwrap();
        let believed = [
            dispute(1000, vec![]),
            dispute(1000, vec![txn(-1000, 1500, "usd")]),
            dispute(1000, vec![txn(-1000, 1500, "USD"), txn(1000, -1500, "usd")]),
            dispute(300, vec![txn(-300, 1500, "usd")]),
        ];
        for d in &believed {
            assert_eq!(dispute_doubt(usd, 1000, d), None, "{d:?}");
        }
        let mut other_currency = dispute(1000, vec![]);
        other_currency.currency = "eur".into();
        let mut bad_net = txn(-1000, 1500, "usd");
        bad_net.net = 0;
        let doubted = [
            other_currency,
            dispute(1001, vec![]),
            dispute(0, vec![]),
            dispute(1000, vec![txn(-1001, 0, "usd")]),
            dispute(1000, vec![txn(1000, 0, "usd")]),
            dispute(1000, vec![txn(-1000, 0, "usd"), txn(2000, 0, "usd")]),
            dispute(1000, vec![txn(-1000, 10_001, "usd")]),
            dispute(1000, vec![txn(-1000, -1, "usd")]),
            dispute(1000, vec![txn(-1000, 0, "eur")]),
            dispute(1000, vec![bad_net]),
            dispute(1000, vec![txn(i64::MIN + 1, 0, "usd")]),
        ];
        for d in &doubted {
            assert!(dispute_doubt(usd, 1000, d).is_some(), "{d:?}");
        }
    }
}
