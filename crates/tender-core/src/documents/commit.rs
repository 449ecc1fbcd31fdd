//! Where a use case commits its [`Batch`]: the one place a batch reaches the store.
//!
//! - A request's batch goes with its idempotency record ([`Services::commit`]; a payment's
//!   answer is kept as what renders it again, [`Services::commit_payment`]; a request that
//!   will call a processor after its commit keeps a checkpoint, [`Services::commit_checkpoint`]).
//!   The rules of what is kept are [`super::idempotency`]'s; this file only writes them.
//! - Background work (a task, a processor's webhook) commits without a record
//!   ([`Services::commit_background`]). A task reads the document it works on with
//!   [`Services::load_due`], which drops the task when the document is gone.
//!
//! Depends on [`Batch`], the idempotency rules and the storage port.

use crate::documents::batch::Batch;
use crate::documents::document::{from_body, Document};
use crate::error::{CoreError, CoreResult, StoreError};
use crate::services::{RequestContext, Services};
use crate::store::{ClaimedTask, Collection, StoredResponse, WriteBatch};

impl Services {
    /// Commits `ops` with the request's response (`result`) as its idempotency record. When
    /// another request wrote the key first, nothing is applied and the request is marked lost:
    /// [`super::idempotency::Claim::settle`] then answers what that request did.
    pub(crate) async fn commit(
        &self,
        ctx: &RequestContext,
        ops: Batch,
        result: Result<&serde_json::Value, &CoreError>,
    ) -> CoreResult<()> {
        let answer = || self.encoder.encode(result, &ctx.request_id);
        self.commit_with(ctx, ops, answer).await
    }

    /// [`Services::commit`] for a use case answering with a payment: the record keeps what
    /// renders it again ([`Services::kept_payment`]).
    pub(crate) async fn commit_payment(
        &self,
        ctx: &RequestContext,
        ops: Batch,
        stored: &str,
        event: Option<&str>,
    ) -> CoreResult<()> {
        self.commit_with(ctx, ops, || self.kept_payment(stored, event))
            .await
    }

    /// Commits `ops` of a request that will act outside its final batch (call a processor)
    /// after this commit, keeping its claimed key running with a checkpoint: should this
    /// process die before the request completes, a retry with the key is answered with the
    /// current state of the object `id` of `collection`, which this batch records (a payment
    /// recorded before its processor is asked, a refund before it is sent), instead of running
    /// again. Needs the key claimed ([`Services::claim_key`]).
    pub(crate) async fn commit_checkpoint(
        &self,
        ctx: &RequestContext,
        ops: Batch,
        collection: Collection,
        id: &str,
    ) -> CoreResult<()> {
        let idempotency = ctx
            .idempotency
            .as_ref()
            .map(|hold| self.checkpoint_write(hold, collection, id));
        let (ops, _held) = ops.into_parts();
        self.store
            .commit(WriteBatch {
                scope: ctx.scope().clone(),
                ops,
                idempotency,
            })
            .await?;
        Ok(())
    }

    async fn commit_with(
        &self,
        ctx: &RequestContext,
        ops: Batch,
        answer: impl FnOnce() -> StoredResponse,
    ) -> CoreResult<()> {
        let idempotency = ctx
            .idempotency
            .as_ref()
            .map(|hold| self.idempotency_write(hold, answer()));
        let (ops, _held) = ops.into_parts();
        let batch = WriteBatch {
            scope: ctx.scope().clone(),
            ops,
            idempotency,
        };
        match self.store.commit(batch).await {
            Ok(()) => {
                if let Some(hold) = &ctx.idempotency {
                    hold.complete();
                }
                Ok(())
            }
            Err(StoreError::IdempotencyKeyTaken(_)) => {
                if let Some(hold) = &ctx.idempotency {
                    hold.mark_lost();
                }
                Err(CoreError::IdempotencyInProgress)
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Commits the batch of background work (a task, a processor's webhook): no request, so
    /// no idempotency record.
    pub(crate) async fn commit_background(&self, batch: Batch) -> CoreResult<()> {
        let scope = batch.scope().clone();
        let (ops, _held) = batch.into_parts();
        self.store
            .commit(WriteBatch {
                scope,
                ops,
                idempotency: None,
            })
            .await?;
        Ok(())
    }

    /// The document `task` works on and its version; `None` (and the task dropped) when the
    /// document is gone.
    pub(crate) async fn load_due<D: Document>(
        &self,
        task: &ClaimedTask,
    ) -> CoreResult<Option<(D, i64)>> {
        match self
            .store
            .find_record(&task.scope, D::COLLECTION, &task.object_id)
            .await?
        {
            Some(record) => Ok(Some((from_body(&record.id, &record.body)?, record.version))),
            None => {
                self.drop_task(task, "its object is gone").await?;
                Ok(None)
            }
        }
    }

    /// Ends `task` without doing anything: what it was for no longer applies.
    pub(crate) async fn drop_task(&self, task: &ClaimedTask, why: &str) -> CoreResult<()> {
        tracing::debug!(task = %task.id, why, "task no longer applies");
        let mut batch = self.background(&task.scope);
        batch.done(task);
        self.commit_background(batch).await
    }
}
