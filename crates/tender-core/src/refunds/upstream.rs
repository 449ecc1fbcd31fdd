//! Refunds of a connector's payment (CONTRACT §8): recorded `pending` with their amount reserved
//! on the payment (so racing refunds never over-refund), sent with Tender's refund id as the
//! processor's idempotency key, finished on the answer, and synced while pending.

use crate::auth::Scope;
use crate::connectors::connector::{RefundAnswer, RefundUpstream};
use crate::connectors::word::refund_doubt;
use crate::documents::batch::Batch;
use crate::documents::document::{from_body, to_value};
use crate::error::{CoreResult, StoreError};
use crate::payments::payment::Payment;
use crate::refunds::refund::{refund_after, Refund, RefundEvent, RefundStatus};
use crate::services::RequestContext;
use crate::store::{ClaimedTask, Collection};
use crate::task::TaskKind;

use crate::payments::upstream::next_sync_delay;
use crate::refunds::Refunds;

impl Refunds<'_> {
    /// Records a refund of a connector's payment `pending`: `ops` (the payment update that
    /// reserves its amount, the refund, its `refund.created` event) with its sync task and a
    /// checkpoint of the request's key. Returns the sync task's id. A lost race on the payment
    /// fails here, before anything is sent.
    pub(crate) async fn record_refund_upstream(
        &self,
        ctx: &RequestContext,
        refund: &Refund,
        mut batch: Batch,
    ) -> CoreResult<String> {
        let sync_task = batch.schedule_id(
            TaskKind::SyncRefund,
            &refund.id,
            refund.created + self.config.connector_sync_delay,
        );
        self.commit_checkpoint(ctx, batch, Collection::Refunds, &refund.id)
            .await?;
        Ok(sync_task)
    }

    /// Sends a refund recorded by [`Refunds::record_refund_upstream`] and finishes it.
    pub(crate) async fn send_refund_upstream(
        &self,
        ctx: &RequestContext,
        payment: &Payment,
        mut refund: Refund,
        sync_task: String,
    ) -> CoreResult<Refund> {
        let scope = ctx.scope();
        let (connector, reference) = self.payments().upstream_of(scope, payment).await?;
        let answer = connector
            .refund(&refund.id, &reference, refund.amount)
            .await;
        let version = 1;
        let (ops, _) = self
            .finish_refund(scope, &mut refund, version, answer, &sync_task, Some(ctx))
            .await?;
        let object = to_value(&refund)?;
        // Still pending, the batch is empty: the answer is the pending refund; the sync
        // finishes it.
        self.commit(ctx, ops, Ok(&object)).await?;
        Ok(refund)
    }

    /// The writes that finish a pending refund on `answer` (none while it stays pending), and
    /// whether it is finished.
    async fn finish_refund(
        &self,
        scope: &Scope,
        refund: &mut Refund,
        version: i64,
        answer: RefundAnswer,
        task: &str,
        ctx: Option<&RequestContext>,
    ) -> CoreResult<(Batch, bool)> {
        let mut ops = match ctx {
            Some(ctx) => self.batch(ctx),
            None => self.background(scope),
        };
        let before = to_value(&*refund)?;
        let state = match answer {
            RefundAnswer::Known {
                reference,
                state,
                amount,
            } => {
                // Another amount or currency than asked is no answer: pending, synced.
                if let Some(why) = refund_doubt(refund, &state, amount.as_ref()) {
                    tracing::warn!(refund = %refund.id, %why, "the processor's answer to a refund is not believed");
                    return Ok((ops, false));
                }
                if reference.is_some() {
                    refund.connector_reference = reference;
                }
                state
            }
            RefundAnswer::Unavailable(why) | RefundAnswer::Unknown(why) => {
                tracing::info!(refund = %refund.id, reason = %why, "refund not confirmed by the processor yet; it will be synced");
                return Ok((ops, false));
            }
        };
        match state {
            RefundUpstream::Pending => {
                if before == to_value(&*refund)? {
                    return Ok((ops, false));
                }
            }
            RefundUpstream::Succeeded | RefundUpstream::Failed => {
                let event = match state {
                    RefundUpstream::Succeeded => RefundEvent::Settled,
                    _ => RefundEvent::Failed,
                };
                let Some(status) = refund_after(refund.status, event) else {
                    return Ok((ops, false));
                };
                refund.status = status;
            }
        }
        if refund.status == RefundStatus::Failed {
            // The reserved amount goes back to the payment.
            let record = self
                .store
                .find_record(scope, Collection::Payments, &refund.payment)
                .await?
                .ok_or_else(|| StoreError::Corrupt(format!("{}: payment gone", refund.id)))?;
            let mut payment: Payment = from_body(&record.id, &record.body)?;
            payment.amount_refunded -= refund.amount;
            payment.refunded =
                payment.amount_refunded == payment.amount_captured && payment.amount_captured > 0;
            ops.update(&payment, record.version)?;
            // …and to the balance (CONTRACT §9).
            self.balance()
                .book_refund_failure(&mut ops, refund, payment.held_by())?;
        }
        let after = to_value(&*refund)?;
        let previous = crate::event::previous_attributes(&before, &after);
        ops.update(&*refund, version)?
            .event_json("refund.updated", after, previous)?;
        let done = refund.status != RefundStatus::Pending;
        if done {
            ops.done_id(task);
        }
        Ok((ops, done))
    }

    /// The sync task of a pending refund: sends it again (the connector finds the refund it
    /// already made under Tender's refund id before making one) until it is settled.
    pub(crate) async fn sync_refund(&self, task: &ClaimedTask) -> CoreResult<()> {
        let scope = &task.scope;
        let Some(record) = self
            .store
            .find_record(scope, Collection::Refunds, &task.object_id)
            .await?
        else {
            return self.payments().reschedule(task, None).await;
        };
        let mut refund: Refund = from_body(&record.id, &record.body)?;
        if refund.status != RefundStatus::Pending || refund.connector.is_none() {
            return self.payments().reschedule(task, None).await;
        }
        let (payment, _): (Payment, i64) = self
            .load(scope, Collection::Payments, "payment", &refund.payment)
            .await?;
        let (connector, reference) = self.payments().upstream_of(scope, &payment).await?;
        let answer = connector
            .refund(&refund.id, &reference, refund.amount)
            .await;
        let (ops, done) = self
            .finish_refund(scope, &mut refund, record.version, answer, &task.id, None)
            .await?;
        if !done {
            let mut ops = ops;
            let now = self.now();
            ops.done(task).schedule(
                TaskKind::SyncRefund,
                &refund.id,
                now + next_sync_delay(self.config.connector_sync_delay, refund.created, now),
            );
            return self.commit_background(ops).await;
        }
        self.commit_background(ops).await
    }
}
