//! Payments, captures, cancels and refunds through a connector (CONTRACT §8), and the syncs
//! that settle what a processor left unknown.
//!
//! # Record, commit, call, finish
//! No network call holds the database's write lock, and no money can move upstream before
//! Tender has recorded where it goes:
//!
//! 1. The payment is recorded `processing`, with a sync task due shortly, in one commit that
//!    also checkpoints the request's idempotency key ([`Services::commit_checkpoint`]): a retry
//!    after a crash is shown this payment, it never runs again.
//! 2. The connector makes the processor's payment object, unconfirmed
//!    ([`Connector::create`]). *Unavailable* (or no answer: nothing can be confirmed) moves on
//!    to the next enabled connector: failover. A decline is an answer, never a reason to fail
//!    over.
//! 3. The processor's reference is recorded (a commit), then the payment is confirmed
//!    ([`Connector::confirm`]): only a payment whose reference Tender holds can ever be
//!    authorised, so whatever crashes, a sync finds it again.
//! 4. The answer is recorded with its event, the saved card and the request's final answer.
//!    An unknown answer leaves the payment `processing` for the sync.
//!
//! The sync task ([`Payments::sync_payment`]) asks the same processor with backoff until it
//! says what happened; a payment it finds never confirmed (the process died between 3's commit
//! and the confirmation) is voided upstream and `failed`, never confirmed late. Refunds go the
//! same way: recorded `pending` (their amount reserved on the payment, so racing refunds can
//! never over-refund), sent with Tender's refund id as the upstream key, finished, and synced
//! while pending.
//!
//! Depends on the connector port, the storage port and the payment state machine.

use crate::auth::Scope;
use crate::card::ValidatedCard;
use crate::connectors::connector::{Answer, AuthorizeRequest, ConnectorType, Source, Upstream};
use crate::connectors::service::Routed;
use crate::connectors::word::disbelieve;
use crate::documents::batch::Batch;
use crate::documents::document::{to_body, to_value};
use crate::error::{CoreError, CoreResult, StoreError};
use crate::payments::acquirer::Decline;
use crate::payments::payment::{Payment, PaymentStatus};
use crate::payments::Payments;
use crate::services::RequestContext;
use crate::store::Collection;
use crate::task::TaskKind;

/// Seconds after a payment (or refund) is recorded before its first sync, by default
/// (`--connector-sync-delay`): well past the connectors' request time-out, so a sync never races
/// a request that is still waiting.
pub const FIRST_SYNC_SECS: i64 = 60;
/// The longest wait between two syncs.
pub const MAX_SYNC_INTERVAL_SECS: i64 = 3600;

/// What is paid with, owned (a one-time card is held only for the request).
pub(crate) enum UpstreamSource {
    Card(ValidatedCard),
    Token(String),
    /// A card the connector's processor keeps for its customer ([`crate::payments::kept`]).
    Saved(crate::payment_methods::payment_method::ProcessorCard),
}

/// A payment on its way to a connector, as `create_payment` prepared it.
pub(crate) struct UpstreamPayment {
    pub payment: Payment,
    pub source: UpstreamSource,
    pub capture: bool,
    /// Applied only when the processor did not refuse the payment (a card saved or attached).
    pub approved_ops: Batch,
    /// Applied only when it did (a claimed one-time card given back).
    pub declined_ops: Batch,
    /// What the payment was decided on and must still hold when it is recorded (a customer,
    /// a saved card still attached to it), with their versions.
    pub preconditions: Vec<(Collection, String, i64)>,
}

/// What an upstream state does to a payment.
pub(crate) struct Applied {
    /// The events the move makes, in order.
    pub(crate) events: Vec<&'static str>,
    pub(crate) decline: Option<CoreError>,
    /// The sync task stays (or is scheduled again): the processor has not finished.
    pub(crate) keep_syncing: bool,
    pub(crate) ops: Batch,
}

/// The delay before the next sync of something recorded at `created`, at `now`: half its age,
/// between a quarter of the first delay and an hour.
pub(crate) fn next_sync_delay(first: i64, created: i64, now: i64) -> i64 {
    ((now - created) / 2).clamp((first / 4).max(1), MAX_SYNC_INTERVAL_SECS)
}

/// `state` when the processor can be believed about `payment` ([`disbelieve`]); otherwise the
/// refusal is logged and the payment stays where it is, `processing`, for the sync to ask again.
pub(crate) fn believed(
    payment: &Payment,
    ceiling: i64,
    reference: Option<&str>,
    state: Upstream,
) -> Upstream {
    match disbelieve(payment, ceiling, reference, &state) {
        None => state,
        Some(why) => {
            tracing::warn!(payment = %payment.id, connector = ?payment.connector, %why, "the processor's answer was refused; nothing was booked");
            Upstream::Processing
        }
    }
}

/// What the route answered (steps 2 and 3): the answer of the connector that took the
/// payment (none: no connector could be reached), that connector's type, and the payment's
/// version after the reference was recorded.
struct Asked {
    answer: Option<Answer>,
    kind: ConnectorType,
    version: i64,
}

impl Payments<'_> {
    /// `POST /payments` when the account has connectors: record, call, finish (the module
    /// doc's steps 1 to 4).
    pub(crate) async fn create_upstream(
        &self,
        ctx: &RequestContext,
        route: Vec<Routed>,
        up: UpstreamPayment,
    ) -> CoreResult<Payment> {
        let scope = ctx.scope();
        let is_card = matches!(up.source, UpstreamSource::Card(_));
        if is_card && !route[0].takes_cards {
            self.give_back(scope, &up.declined_ops).await;
            return Err(CoreError::invalid(
                "payment_method",
                "connector_requires_token",
                format!(
                    "Card details are not sent to connector {} (the operator has not enabled raw_card_data for it): pay with the processor's own token instead, payment_method: {{type: \"connector_token\", connector_token: \"pm_…\"}}.",
                    route[0].object.id
                ),
            ));
        }
        self.claim_key(ctx).await?;
        let mut payment = up.payment;
        payment.status = PaymentStatus::Processing;
        payment.connector = Some(route[0].object.id.clone());
        let sync_task = self
            .record_processing(ctx, &payment, up.preconditions, &up.declined_ops)
            .await?;
        let source = match &up.source {
            UpstreamSource::Card(card) => Source::Card(card),
            UpstreamSource::Token(token) => Source::Token(token),
            UpstreamSource::Saved(at) => Source::Saved {
                customer: &at.customer,
                payment_method: &at.payment_method,
            },
        };
        let payment_id = payment.id.clone();
        let return_url = payment.return_url.clone();
        let req = AuthorizeRequest {
            payment: &payment_id,
            amount: payment.amount,
            currency: payment.currency,
            capture: up.capture,
            source,
            return_url: return_url.as_deref(),
            livemode: scope.livemode(),
        };
        let asked = self
            .ask_route(scope, &route, &mut payment, &req, &up.declined_ops)
            .await?;
        self.finish_upstream(
            ctx,
            payment,
            asked,
            &sync_task,
            up.approved_ops,
            up.declined_ops,
        )
        .await
    }

    /// Step 1: `payment` recorded `processing` with its first sync due, in the commit that
    /// checkpoints the request's key; the sync task's id.
    async fn record_processing(
        &self,
        ctx: &RequestContext,
        payment: &Payment,
        mut preconditions: Vec<(Collection, String, i64)>,
        declined_ops: &Batch,
    ) -> CoreResult<String> {
        let mut sync = self.batch(ctx);
        let sync_task = sync.schedule_id(
            TaskKind::SyncPayment,
            &payment.id,
            payment.created + self.config.connector_sync_delay,
        );
        // Recorded while what it was decided on still holds: a concurrent change that
        // invalidates nothing (a customer's metadata) means recording again with the new
        // versions; one that does (the customer deleted) is the client's error. Either way
        // nothing was sent yet, and a claimed one-time card is given back on failure.
        let mut attempts = 0;
        loop {
            attempts += 1;
            let mut ops = sync.clone();
            match payment.stored_version {
                None => ops.insert(payment)?.event("payment.created", payment)?,
                Some(version) => ops.update(payment, version)?,
            };
            for (collection, id, version) in &preconditions {
                ops.check(*collection, id, *version);
            }
            let failed = match self
                .commit_checkpoint(ctx, ops, Collection::Payments, &payment.id)
                .await
            {
                Ok(()) => return Ok(sync_task),
                Err(CoreError::Store(StoreError::Conflict(_))) if attempts < 16 => {
                    match self
                        .refresh_preconditions(ctx, payment, &preconditions)
                        .await
                    {
                        Ok(fresh) => {
                            preconditions = fresh;
                            continue;
                        }
                        Err(e) => e,
                    }
                }
                Err(e) => e,
            };
            self.give_back(ctx.scope(), declined_ops).await;
            return Err(failed);
        }
    }

    /// Steps 2 and 3: the route's connectors asked in turn until one answers; its reference
    /// recorded before it confirms.
    async fn ask_route(
        &self,
        scope: &Scope,
        route: &[Routed],
        payment: &mut Payment,
        req: &AuthorizeRequest<'_>,
        declined_ops: &Batch,
    ) -> CoreResult<Asked> {
        let is_card = matches!(req.source, Source::Card(_));
        // The row as `record_processing` left it.
        let mut version = payment.stored_version.map_or(1, |v| v + 1);
        let mut outcome = None;
        let mut kind = route[0].object.kind;
        for routed in route.iter().filter(|r| !is_card || r.takes_cards) {
            let id = &routed.object.id;
            // A card that went to a processor goes nowhere else: failing over would hand the
            // same number to a second party on the first one's say (CONTRACT §15).
            let card_left = is_card && routed.object.kind != ConnectorType::Simulator;
            match routed.connector.create(req).await {
                Answer::NotSent(why) => {
                    tracing::warn!(payment = %payment.id, connector = %id, reason = %crate::connectors::connector::bounded(&why), "connector unreachable, nothing sent; trying the next one");
                }
                Answer::Unavailable(why) | Answer::Unknown { reason: why, .. } if card_left => {
                    tracing::warn!(payment = %payment.id, connector = %id, reason = %crate::connectors::connector::bounded(&why), "connector unavailable after the card was sent to it; the payment does not fail over");
                    payment.connector = Some(id.clone());
                    kind = routed.object.kind;
                    break;
                }
                Answer::Unavailable(why) | Answer::Unknown { reason: why, .. } => {
                    tracing::warn!(payment = %payment.id, connector = %id, reason = %crate::connectors::connector::bounded(&why), "connector unavailable; trying the next one");
                }
                Answer::Known {
                    reference: Some(reference),
                    state: Upstream::Created,
                } => {
                    let confirmed = self
                        .confirm_at(
                            scope,
                            routed,
                            payment,
                            (reference, version),
                            req,
                            declined_ops,
                        )
                        .await?;
                    version += 1;
                    if let Some(answer) = confirmed {
                        kind = routed.object.kind;
                        outcome = Some(answer);
                        break;
                    }
                    if card_left {
                        break;
                    }
                }
                answer => {
                    // Refused at creation (the payment method itself was declined).
                    payment.connector = Some(id.clone());
                    kind = routed.object.kind;
                    outcome = Some(answer);
                    break;
                }
            }
        }
        Ok(Asked {
            answer: outcome,
            kind,
            version,
        })
    }

    /// Step 3 at one connector: the processor's `reference` recorded on `payment` (at
    /// `version`), then the payment confirmed there. `None`: the connector could not be reached to
    /// confirm, nothing was authorised and the reference is released.
    async fn confirm_at(
        &self,
        scope: &Scope,
        routed: &Routed,
        payment: &mut Payment,
        (reference, version): (String, i64),
        req: &AuthorizeRequest<'_>,
        declined_ops: &Batch,
    ) -> CoreResult<Option<Answer>> {
        // Recorded before it can move money: a sync can always find it again.
        payment.connector = Some(routed.object.id.clone());
        payment.connector_reference = Some(reference.clone());
        let mut reference_batch = self.background(scope);
        reference_batch.update(&*payment, version)?;
        if let Err(e) = self.commit_background(reference_batch).await {
            // Never confirmed: release it upstream (the sync settles the payment, failed) and
            // give back a one-time card this request holds.
            let _ = routed.connector.void(&payment.id, &reference).await;
            self.give_back(scope, declined_ops).await;
            return Err(e);
        }
        match routed.connector.confirm(&reference, req).await {
            Answer::Unavailable(why) | Answer::NotSent(why) => {
                // Nothing was authorised here.
                tracing::warn!(payment = %payment.id, connector = %routed.object.id, reason = %crate::connectors::connector::bounded(&why), "connector unavailable at confirmation");
                let _ = routed.connector.void(&payment.id, &reference).await;
                payment.connector_reference = None;
                Ok(None)
            }
            answer => Ok(Some(answer)),
        }
    }

    /// Step 4: the answer recorded with its event, what depends on the outcome (a card saved,
    /// or a claimed one given back) and the request's final answer.
    async fn finish_upstream(
        &self,
        ctx: &RequestContext,
        mut payment: Payment,
        asked: Asked,
        sync_task: &str,
        approved_ops: Batch,
        declined_ops: Batch,
    ) -> CoreResult<Payment> {
        let scope = ctx.scope();
        let Asked {
            answer: outcome,
            kind,
            version,
        } = asked;
        let answer = outcome.unwrap_or(Answer::Known {
            reference: None,
            state: Upstream::Declined(Decline::PROCESSOR_UNAVAILABLE),
        });
        let state = match answer {
            Answer::Known { reference, state } => {
                if payment.connector_reference.is_none() {
                    payment.connector_reference = reference.clone();
                }
                believed(&payment, payment.amount, reference.as_deref(), state)
            }
            Answer::Unknown { reference, .. } => {
                if reference.is_some() {
                    payment.connector_reference = reference;
                }
                Upstream::Processing
            }
            Answer::Unavailable(_) | Answer::NotSent(_) => Upstream::Processing,
        };
        let before = payment.clone();
        let applied = self
            .apply_upstream(scope, &mut payment, state, kind)
            .await?;
        let mut ops = self.batch(ctx);
        ops.update(&payment, version)?;
        if !applied.keep_syncing {
            ops.done_id(sync_task);
        }
        ops.extend(applied.ops);
        if applied.decline.is_none() && before.status != PaymentStatus::Failed {
            ops.extend(approved_ops.clone());
        } else {
            ops.extend(declined_ops.clone());
        }
        let mut event = None;
        for kind in &applied.events {
            let id = ops.event_id(kind, to_value(&payment)?, None)?;
            event.get_or_insert(id);
        }
        let stored = to_body(&payment)?;
        let committed = match &applied.decline {
            None => {
                self.commit_payment(ctx, ops, &stored, event.as_deref())
                    .await
            }
            Some(err) => self.commit(ctx, ops, Err(err)).await,
        };
        match committed {
            Ok(()) => match applied.decline {
                None => Ok(payment),
                Some(err) => Err(err),
            },
            // A sync (or the processor's webhook) settled the payment while this request was
            // still waiting for the processor: both asked the same processor, so the payment as
            // recorded is the answer.
            Err(CoreError::Store(StoreError::Conflict(_))) => {
                self.answer_as_recorded(ctx, &payment.id, approved_ops, declined_ops)
                    .await
            }
            Err(e) => Err(e),
        }
    }

    /// Gives back what a declined or abandoned payment took (a claimed one-time card), as far
    /// as the store lets it; a failure is logged, the payment's own answer stands.
    async fn give_back(&self, _scope: &Scope, declined_ops: &Batch) {
        if declined_ops.is_empty() {
            return;
        }
        if let Err(e) = self.commit_background(declined_ops.clone()).await {
            tracing::warn!(error = %crate::error::error_chain(&e), "could not give back a claimed payment method");
        }
    }

    /// Answers with payment `id` as it is recorded now (a decline as its 402), keeping that
    /// answer under the request's idempotency key, and applies what depends on the outcome
    /// (saving the card when it was not declined; giving back a claimed one-time card when it
    /// was) while this request still holds the card.
    async fn answer_as_recorded(
        &self,
        ctx: &RequestContext,
        id: &str,
        approved_ops: Batch,
        declined_ops: Batch,
    ) -> CoreResult<Payment> {
        let (current, _): (Payment, i64) = self
            .load(ctx.scope(), Collection::Payments, "payment", id)
            .await?;
        if current.status == PaymentStatus::Failed {
            self.give_back(ctx.scope(), &declined_ops).await;
            let d = Decline {
                code: current.failure_code.clone().unwrap_or_default().into(),
                decline_code: current.decline_code.clone().unwrap_or_default().into(),
                message: current.failure_message.clone().unwrap_or_default().into(),
            };
            let err = d.error(&current.id);
            self.commit(ctx, self.batch(ctx), Err(&err)).await?;
            return Err(err);
        }
        if !approved_ops.is_empty() {
            if let Err(e) = self.commit_background(approved_ops).await {
                tracing::warn!(payment = %current.id, error = %crate::error::error_chain(&e), "could not save the payment's card");
            }
        }
        self.commit_payment(ctx, self.batch(ctx), &to_body(&current)?, None)
            .await?;
        Ok(current)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syncs_back_off_with_age_between_bounds() {
        assert_eq!(next_sync_delay(FIRST_SYNC_SECS, 0, 10), FIRST_SYNC_SECS / 4);
        assert_eq!(next_sync_delay(FIRST_SYNC_SECS, 0, 600), 300);
        assert_eq!(
            next_sync_delay(FIRST_SYNC_SECS, 0, 100_000),
            MAX_SYNC_INTERVAL_SECS
        );
        assert_eq!(next_sync_delay(1, 0, 1), 1);
    }
}
