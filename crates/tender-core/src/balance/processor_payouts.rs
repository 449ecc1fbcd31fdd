//! Payouts a connector's processor makes (CONTRACT §15): the processor pays the money it holds
//! out to the merchant's bank on its own schedule, so Tender never pays it out a second time —
//! Tender's own payouts move only its own available balance — and instead mirrors the
//! processor's, read-only. A connector of a processor is mirrored from its creation
//! ([`TaskKind::MirrorPayouts`]: every [`MIRROR_INTERVAL_SECS`], the processor's payouts of the
//! last [`MIRROR_WINDOW_SECS`]), until it is deleted.
//!
//! Each payout the processor reports is one Tender payout whose id is derived from the
//! processor's ([`ids::derived`]), so it is recorded once however often it is read. It moves
//! as the processor's does, booked with the same rules as Tender's own (the processor's
//! available balance for Tender's):
//!
//! | the processor's payout goes  | Tender books                              | event            |
//! |------------------------------|-------------------------------------------|------------------|
//! | (first seen)                 | `payout`: processor available → in transit | `payout.created` |
//! | `pending` → `in_transit`     | —                                         | `payout.updated` |
//! | → `paid`                     | in transit → external                     | `payout.paid`    |
//! | → `failed`, `canceled`       | `payout_failure`: back to processor available (from external once paid) | `payout.failed`, `payout.canceled` |
//!
//! A payout first seen further on takes the rows up to where it is, in one batch. The
//! processor's word is checked: a payout in an unknown currency, of an amount outside
//! `1..=MAX_AMOUNT`, or of more than Tender has booked as available at the processor is refused
//! and logged, never booked (read again at the next mirror); any other move (`paid` →
//! `in_transit`…) is logged and ignored. Canceling one through Tender is refused
//! (`payout_at_processor`).
//!
//! Depends on the payout documents, the connector port's [`UpstreamPayout`] and the balance's
//! transactions.

use crate::auth::Scope;
use crate::balance::ledger::LedgerAccount;
use crate::balance::payouts::{Payout, PayoutStatus};
use crate::balance::transactions::{self, At};
use crate::balance::BalanceBook;
use crate::connectors::connector::{bounded, UpstreamPayout};
use crate::documents::batch::Batch;
use crate::documents::document::{from_body, to_value};
use crate::error::{CoreError, CoreResult, StoreError};
use crate::ids::{self, IdKind};
use crate::money::{Currency, MAX_AMOUNT};
use crate::store::{ClaimedTask, Collection};
use crate::task::TaskKind;

/// How often a connector's processor's payouts are read.
pub const MIRROR_INTERVAL_SECS: i64 = 3600;
/// How far back each read looks (a payout is in transit for days, and may fail after it was
/// paid).
pub const MIRROR_WINDOW_SECS: i64 = 30 * 86_400;
/// The most payouts one read takes.
const MIRROR_LIMIT: usize = 100;

fn posting_failed(e: crate::balance::ledger::PostingError) -> CoreError {
    CoreError::internal("build a ledger posting", e)
}

impl BalanceBook<'_> {
    /// The `mirror_payouts` task of connector `task.object_id`: reads its processor's payouts,
    /// mirrors each, and comes back in [`MIRROR_INTERVAL_SECS`] while the connector exists.
    pub(crate) async fn mirror_payouts(&self, task: &ClaimedTask) -> CoreResult<()> {
        let scope = &task.scope;
        let id = &task.object_id;
        if self
            .store
            .find_record(scope, Collection::Connectors, id)
            .await?
            .is_none()
        {
            return self.drop_task(task, "the connector was deleted").await;
        }
        let connector = self.connectors().connector(scope, id).await?;
        let now = self.now();
        match connector
            .payouts_since(now - MIRROR_WINDOW_SECS, MIRROR_LIMIT)
            .await
        {
            Ok(found) => {
                for upstream in &found {
                    self.retry_on_conflict(|| self.mirror_payout(scope, id, upstream))
                        .await?;
                }
            }
            Err(why) => {
                tracing::info!(connector = %id, reason = %bounded(&why), "the processor's payouts could not be read; read again later");
            }
        }
        let mut batch = self.background(scope);
        batch
            .done(task)
            .schedule(TaskKind::MirrorPayouts, id, now + MIRROR_INTERVAL_SECS);
        self.commit_background(batch).await
    }

    /// `upstream`, a payout of connector `connector`'s processor, as a Tender payout.
    async fn mirror_payout(
        &self,
        scope: &Scope,
        connector: &str,
        upstream: &UpstreamPayout,
    ) -> CoreResult<()> {
        let Some(currency) = Currency::parse(&upstream.currency) else {
            tracing::warn!(connector, payout = %bounded(&upstream.reference), currency = %bounded(&upstream.currency), "a payout the processor reports is in an unknown currency; not booked");
            return Ok(());
        };
        if !(1..=MAX_AMOUNT).contains(&upstream.amount) {
            tracing::warn!(connector, payout = %bounded(&upstream.reference), amount = upstream.amount, "a payout the processor reports is of an impossible amount; not booked");
            return Ok(());
        }
        let id = ids::derived(
            IdKind::Payout,
            upstream.created,
            &format!("{connector}:{}", upstream.reference),
        );
        let mut batch = self.background(scope);
        let (before, mut after) = match self
            .store
            .find_record(scope, Collection::Payouts, &id)
            .await?
        {
            Some(record) => {
                let before: Payout = from_body(&record.id, &record.body)?;
                (Some((before.clone(), record.version)), before)
            }
            None => (
                None,
                self.new_payout_mirror(&mut batch, &id, connector, currency, upstream)?,
            ),
        };
        let moved = self.follow(&mut batch, &mut after, upstream)?;
        let event = match (&before, moved) {
            (Some((b, _)), _) if *b == after => return Ok(()),
            (Some((_, version)), Some(event)) => {
                batch.update(&after, *version)?;
                event
            }
            (Some(_), None) => return Ok(()),
            (None, moved) => {
                batch.insert(&after)?;
                batch.event("payout.created", &after)?;
                match moved {
                    Some(event) => event,
                    None => return self.commit_mirror(batch, &after).await,
                }
            }
        };
        let object = to_value(&after)?;
        let previous = before
            .as_ref()
            .and_then(|(b, _)| to_value(b).ok())
            .and_then(|b| crate::event::previous_attributes(&b, &object))
            .filter(|_| event == "payout.updated");
        batch.event_json(event, object, previous)?;
        self.commit_mirror(batch, &after).await
    }

    /// A payout mirroring `upstream`, `pending`, booked to `batch` out of the processor's
    /// available balance (which must hold it).
    fn new_payout_mirror(
        &self,
        batch: &mut Batch,
        id: &str,
        connector: &str,
        currency: Currency,
        upstream: &UpstreamPayout,
    ) -> CoreResult<Payout> {
        let txn_id = ids::generate(IdKind::BalanceTransaction);
        let at = At {
            txn_id: &txn_id,
            now: self.now(),
            livemode: batch.scope().livemode(),
            held_by: Some(connector),
        };
        let booking =
            transactions::payout(at, id, currency, upstream.amount).map_err(posting_failed)?;
        batch
            .book(booking)?
            .require_balance(LedgerAccount::ProcessorAvailable, currency, 0);
        Ok(Payout {
            id: id.to_string(),
            object: "payout".into(),
            amount: upstream.amount,
            currency,
            status: PayoutStatus::Pending,
            arrival_date: upstream.arrival_date,
            destination: None,
            connector: Some(connector.to_string()),
            connector_reference: Some(bounded(&upstream.reference)),
            balance_transaction: Some(txn_id),
            failure_balance_transaction: None,
            failure_code: None,
            failure_message: None,
            description: None,
            metadata: Default::default(),
            created: upstream.created,
            livemode: batch.scope().livemode(),
        })
    }

    /// Moves `payout` to where the processor's `upstream` is, booking the move to `batch`
    /// (the module's table): its event, or `None` when it does not move.
    fn follow(
        &self,
        batch: &mut Batch,
        payout: &mut Payout,
        upstream: &UpstreamPayout,
    ) -> CoreResult<Option<&'static str>> {
        use PayoutStatus as S;
        let from = payout.status;
        payout.arrival_date = upstream.arrival_date;
        let event = match (from, upstream.status) {
            (from, to) if from == to => return Ok(None),
            (S::Pending, S::InTransit) => "payout.updated",
            (S::Pending | S::InTransit, S::Paid) => {
                if let Some(posting) = transactions::payout_paid(
                    self.now(),
                    &payout.id,
                    payout.currency,
                    payout.amount,
                )
                .map_err(posting_failed)?
                {
                    batch.post(posting);
                }
                "payout.paid"
            }
            (S::Pending | S::InTransit | S::Paid, S::Failed)
            | (S::Pending | S::InTransit, S::Canceled) => {
                let txn_id = ids::generate(IdKind::BalanceTransaction);
                let at = At {
                    txn_id: &txn_id,
                    now: self.now(),
                    livemode: batch.scope().livemode(),
                    held_by: payout.connector.as_deref(),
                };
                let booking = transactions::payout_failure(
                    at,
                    &payout.id,
                    payout.currency,
                    payout.amount,
                    from == S::Paid,
                )
                .map_err(posting_failed)?;
                batch.book(booking)?;
                payout.failure_balance_transaction = Some(txn_id);
                payout.failure_code = upstream.failure_code.clone();
                payout.failure_message = upstream.failure_message.clone();
                if upstream.status == S::Failed {
                    "payout.failed"
                } else {
                    "payout.canceled"
                }
            }
            (from, to) => {
                tracing::warn!(payout = %payout.id, from = from.as_str(), to = to.as_str(), "the processor reports a payout move Tender does not follow; ignored");
                return Ok(None);
            }
        };
        payout.status = upstream.status;
        Ok(Some(event))
    }

    /// Commits a mirror's batch; a payout of more than the processor's available balance
    /// Tender booked is logged and left for the next read, as is one a racing mirror recorded
    /// first.
    async fn commit_mirror(&self, batch: Batch, payout: &Payout) -> CoreResult<()> {
        match self.commit_background(batch).await {
            Err(CoreError::Store(StoreError::BalanceInsufficient(_))) => {
                tracing::warn!(payout = %payout.id, reference = ?payout.connector_reference, amount = payout.amount, "the processor paid out more than Tender has booked as available there; not booked, read again later");
                Ok(())
            }
            // A racing mirror recorded it first; the next read follows it from there.
            Err(CoreError::Store(StoreError::Duplicate(_))) => Ok(()),
            other => other,
        }
    }
}
