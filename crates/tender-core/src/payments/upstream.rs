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
//! The sync task ([`Services::sync_payment`]) asks the same processor with backoff until it
//! says what happened; a payment it finds never confirmed (the process died between 3's commit
//! and the confirmation) is voided upstream and `failed`, never confirmed late. Refunds go the
//! same way: recorded `pending` (their amount reserved on the payment, so racing refunds can
//! never over-refund), sent with Tender's refund id as the upstream key, finished, and synced
//! while pending.
//!
//! Depends on the connector port, the storage port and the payment state machine.

use serde_json::json;

use crate::auth::{hash_key, Scope};
use crate::card::ValidatedCard;
use crate::connectors::connector::{
    disbelieve, Answer, AuthorizeRequest, ConnectorType, RefundAnswer, RefundUpstream, Source,
    Upstream,
};
use crate::connectors::service::Routed;
use crate::documents::batch::Batch;
use crate::documents::document::{from_body, to_body, to_value};
use crate::error::{CoreError, CoreResult, StoreError};
use crate::ids;
use crate::payments::acquirer::Decline;
use crate::payments::payment::{CancellationReason, Payment, PaymentStatus};
use crate::payments::payment::{AUTHENTICATION_TIMEOUT_SECS, AUTHORIZATION_TTL_SECS};
use crate::refunds::refund::{Refund, RefundStatus};
use crate::services::{RequestContext, Services};
use crate::store::{ClaimedTask, Collection};
use crate::task::TaskKind;

/// Seconds after a payment (or refund) is recorded before its first sync, by default
/// (`--connector-sync-delay`): well past the connectors' request time-out, so a sync never races
/// a request that is still waiting.
pub const FIRST_SYNC_SECS: i64 = 60;
/// The longest wait between two syncs.
const MAX_SYNC_INTERVAL_SECS: i64 = 3600;

/// What is paid with, owned (a one-time card is held only for the request).
pub(crate) enum UpstreamSource {
    Card(ValidatedCard),
    Token(String),
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
struct Applied {
    event: Option<&'static str>,
    decline: Option<CoreError>,
    /// The sync task stays (or is scheduled again): the processor has not finished.
    keep_syncing: bool,
    ops: Batch,
}

/// The delay before the next sync of something recorded at `created`, at `now`: half its age,
/// between a quarter of the first delay and an hour.
fn next_sync_delay(first: i64, created: i64, now: i64) -> i64 {
    ((now - created) / 2).clamp((first / 4).max(1), MAX_SYNC_INTERVAL_SECS)
}

/// `state` when the processor can be believed about `payment` ([`disbelieve`]); otherwise the
/// refusal is logged and the payment stays where it is, `processing`, for the sync to ask again.
fn believed(payment: &Payment, ceiling: i64, reference: Option<&str>, state: Upstream) -> Upstream {
    match disbelieve(payment, ceiling, reference, &state) {
        None => state,
        Some(why) => {
            tracing::warn!(payment = %payment.id, connector = ?payment.connector, %why, "the processor's answer was refused; nothing was booked");
            Upstream::Processing
        }
    }
}

fn decline_error(d: &Decline, payment: &str) -> CoreError {
    CoreError::Card {
        code: d.code.clone(),
        decline_code: Some(d.decline_code.clone()),
        message: d.message.clone(),
        param: None,
        payment: Some(payment.to_string()),
    }
}

impl Services {
    /// `POST /payments` when the account has connectors (see the module doc).
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
        let mut preconditions = up.preconditions;
        let mut attempts = 0;
        loop {
            attempts += 1;
            let mut ops = sync.clone();
            ops.insert(&payment)?;
            for (collection, id, version) in &preconditions {
                ops.check(*collection, id, *version);
            }
            let failed = match self
                .commit_checkpoint(ctx, ops, Collection::Payments, &payment.id)
                .await
            {
                Ok(()) => break,
                Err(CoreError::Store(StoreError::Conflict(_))) if attempts < 16 => {
                    match self
                        .refresh_preconditions(ctx, &payment, &preconditions)
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
            self.give_back(scope, &up.declined_ops).await;
            return Err(failed);
        }
        let mut version = 1;

        let source = match &up.source {
            UpstreamSource::Card(card) => Source::Card(card),
            UpstreamSource::Token(token) => Source::Token(token),
        };
        let req = AuthorizeRequest {
            payment: &payment.id.clone(),
            amount: payment.amount,
            currency: payment.currency,
            capture: up.capture,
            source,
            return_url: payment.return_url.as_deref(),
            livemode: scope.livemode(),
        };
        let mut outcome = None;
        let mut kind = route[0].object.kind;
        for routed in route.iter().filter(|r| !is_card || r.takes_cards) {
            let id = &routed.object.id;
            // A card that went to a processor goes nowhere else: failing over would hand the
            // same number to a second party on the first one's say (CONTRACT §15).
            let card_left = is_card && routed.object.kind != ConnectorType::Simulator;
            match routed.connector.create(&req).await {
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
                    // Recorded before it can move money: a sync can always find it again.
                    payment.connector = Some(id.clone());
                    payment.connector_reference = Some(reference.clone());
                    let mut reference_batch = self.background(scope);
                    reference_batch.update(&payment, version)?;
                    let recorded = self.commit_background(reference_batch).await;
                    if let Err(e) = recorded {
                        // Never confirmed: release it upstream (the sync settles the payment,
                        // failed) and give back a one-time card this request holds.
                        let _ = routed.connector.void(&payment.id, &reference).await;
                        self.give_back(scope, &up.declined_ops).await;
                        return Err(e);
                    }
                    version += 1;
                    match routed.connector.confirm(&reference, &req).await {
                        Answer::Unavailable(why) | Answer::NotSent(why) => {
                            // Nothing was authorised here.
                            tracing::warn!(payment = %payment.id, connector = %id, reason = %crate::connectors::connector::bounded(&why), "connector unavailable at confirmation");
                            let _ = routed.connector.void(&payment.id, &reference).await;
                            payment.connector_reference = None;
                            if card_left {
                                break;
                            }
                        }
                        answer => {
                            kind = routed.object.kind;
                            outcome = Some(answer);
                            break;
                        }
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
            ops.done_id(&sync_task);
        }
        ops.extend(applied.ops);
        if applied.decline.is_none() && before.status != PaymentStatus::Failed {
            ops.extend(up.approved_ops.clone());
        } else {
            ops.extend(up.declined_ops.clone());
        }
        let mut event = None;
        if let Some(kind) = applied.event {
            event = Some(ops.event_id(kind, to_value(&payment)?, None)?);
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
                self.answer_as_recorded(ctx, &payment.id, up.approved_ops, up.declined_ops)
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
            let err = decline_error(&d, &current.id);
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

    /// Moves `payment` to what the processor says (`state`), with the event, the follow-up
    /// tasks and, for a decline, the error the client gets.
    async fn apply_upstream(
        &self,
        scope: &Scope,
        payment: &mut Payment,
        state: Upstream,
        kind: ConnectorType,
    ) -> CoreResult<Applied> {
        let now = self.now();
        let mut applied = Applied {
            event: None,
            decline: None,
            keep_syncing: false,
            ops: self.background(scope),
        };
        match state {
            Upstream::Created | Upstream::Processing => {
                payment.status = PaymentStatus::Processing;
                applied.keep_syncing = true;
            }
            Upstream::Succeeded { captured, .. } => {
                payment.status = PaymentStatus::Succeeded;
                payment.amount_captured = captured;
                payment.next_action = None;
                applied.event = Some("payment.succeeded");
                self.book_charge(&mut applied.ops, payment).await?;
            }
            Upstream::RequiresCapture => {
                payment.status = PaymentStatus::RequiresCapture;
                payment.next_action = None;
                applied.ops.schedule(
                    TaskKind::ExpireAuthorization,
                    &payment.id,
                    now + AUTHORIZATION_TTL_SECS,
                );
            }
            Upstream::RequiresAction { url } => {
                payment.status = PaymentStatus::RequiresAction;
                match (url, kind) {
                    (Some(url), _) => {
                        payment.next_action = Some(json!({
                            "type": "redirect_to_url",
                            "redirect_to_url": {"url": url, "return_url": payment.return_url},
                        }));
                        applied.keep_syncing = true;
                        applied.ops.schedule(
                            TaskKind::AbandonAuthentication,
                            &payment.id,
                            now + AUTHENTICATION_TIMEOUT_SECS,
                        );
                    }
                    // The simulator authenticates on Tender's own page, as without connectors.
                    (None, ConnectorType::Simulator) => {
                        let token = ids::random_base62(32);
                        payment.next_action = Some(json!({
                            "type": "redirect_to_url",
                            "redirect_to_url": {
                                "url": format!("{}/authenticate/{}/{}", self.config.receipt_base, payment.id, token),
                                "return_url": payment.return_url,
                            }
                        }));
                        applied.ops.seal(&payment.id, hash_key(&token));
                        applied.ops.schedule(
                            TaskKind::AbandonAuthentication,
                            &payment.id,
                            now + AUTHENTICATION_TIMEOUT_SECS,
                        );
                    }
                    // The processor authenticates in its own client SDK and gave no page.
                    (None, other) => {
                        payment.next_action = Some(json!({
                            "type": "use_processor_sdk",
                            "use_processor_sdk": {
                                "processor": other.as_str(),
                                "reference": payment.connector_reference,
                            },
                        }));
                        applied.keep_syncing = true;
                        applied.ops.schedule(
                            TaskKind::AbandonAuthentication,
                            &payment.id,
                            now + AUTHENTICATION_TIMEOUT_SECS,
                        );
                    }
                }
            }
            Upstream::Declined(d) => {
                payment.status = PaymentStatus::Failed;
                payment.next_action = None;
                payment.failure_code = Some(d.code.to_string());
                payment.decline_code = Some(d.decline_code.to_string());
                payment.failure_message = Some(d.message.to_string());
                applied.event = Some("payment.failed");
                applied.decline = Some(decline_error(&d, &payment.id));
            }
            Upstream::Canceled => {
                let d = Decline {
                    code: "processing_error".into(),
                    decline_code: "canceled_by_processor".into(),
                    message: "The payment processor canceled this payment; nothing was charged."
                        .into(),
                };
                payment.status = PaymentStatus::Failed;
                payment.next_action = None;
                payment.failure_code = Some(d.code.to_string());
                payment.decline_code = Some(d.decline_code.to_string());
                payment.failure_message = Some(d.message.to_string());
                applied.event = Some("payment.failed");
                applied.decline = Some(decline_error(&d, &payment.id));
            }
        }
        Ok(applied)
    }

    /// The sync task of a payment left `processing` (or `requires_action` at a processor):
    /// asks its processor, settles it, or asks again later.
    pub(crate) async fn sync_payment(&self, task: &ClaimedTask) -> CoreResult<()> {
        let scope = &task.scope;
        let Some(record) = self
            .store
            .find_record(scope, Collection::Payments, &task.object_id)
            .await?
        else {
            return self.reschedule(task, None).await;
        };
        let mut payment: Payment = from_body(&record.id, &record.body)?;
        let version = record.version;
        let waiting = matches!(
            payment.status,
            PaymentStatus::Processing | PaymentStatus::RequiresAction
        );
        let Some(connector_id) = payment.connector.clone().filter(|_| waiting) else {
            return self.reschedule(task, None).await;
        };
        // The sealed settings are read and opened once for both the client and its kind.
        let settings = self.connector_settings(scope, &connector_id).await?;
        let kind = settings.kind;
        let connector = self
            .connectors
            .build(&connector_id, &settings, scope.livemode());
        let state = match payment.connector_reference.clone() {
            // No reference was recorded, so nothing was ever confirmed (see the module doc).
            None => Upstream::Declined(Decline::PROCESSOR_UNAVAILABLE),
            Some(reference) => match connector.sync(&reference).await {
                // Made, never confirmed: release it, never confirm it late.
                Answer::Known {
                    state: Upstream::Created,
                    ..
                } => match connector.void(&payment.id, &reference).await {
                    // Released before anyone confirmed it: nothing was charged.
                    Answer::Known {
                        state: Upstream::Canceled | Upstream::Declined(_),
                        ..
                    } => Upstream::Declined(Decline::PROCESSOR_UNAVAILABLE),
                    // The confirmation got there first: what the processor says now stands.
                    Answer::Known { state, .. } if state != Upstream::Created => state,
                    _ => return self.reschedule(task, Some(payment.created)).await,
                },
                Answer::Known {
                    state,
                    reference: said,
                } => match believed(&payment, payment.amount, said.as_deref(), state) {
                    // Refused (logged): asked again later, nothing booked.
                    Upstream::Processing if payment.status == PaymentStatus::RequiresAction => {
                        return self.reschedule(task, Some(payment.created)).await
                    }
                    state => state,
                },
                Answer::Unknown { reason, .. }
                | Answer::Unavailable(reason)
                | Answer::NotSent(reason) => {
                    tracing::info!(payment = %payment.id, reason = %crate::connectors::connector::bounded(&reason), "sync: the processor did not answer; asking again later");
                    return self.reschedule(task, Some(payment.created)).await;
                }
            },
        };
        let before = payment.clone();
        let applied = self
            .apply_upstream(scope, &mut payment, state, kind)
            .await?;
        if payment == before {
            return self.reschedule(task, Some(payment.created)).await;
        }
        let keep_syncing = applied.keep_syncing;
        let mut ops = self.upstream_applied(&payment, version, applied)?;
        ops.done(task);
        if keep_syncing {
            ops.schedule(
                TaskKind::SyncPayment,
                &payment.id,
                self.now()
                    + next_sync_delay(
                        self.config.connector_sync_delay,
                        payment.created,
                        self.now(),
                    ),
            );
        }
        self.commit_background(ops).await
    }

    /// The batch that records `payment` moved by a processor's word: the payment at `version`,
    /// what the move does (`applied`) and its event.
    fn upstream_applied(
        &self,
        payment: &Payment,
        version: i64,
        applied: Applied,
    ) -> CoreResult<Batch> {
        let mut ops = self.background(applied.ops.scope());
        ops.update(payment, version)?;
        ops.extend(applied.ops);
        if let Some(kind) = applied.event {
            ops.event(kind, payment)?;
        }
        Ok(ops)
    }

    /// Ends a sync task and, when `created` is given, schedules the next one with backoff.
    async fn reschedule(&self, task: &ClaimedTask, created: Option<i64>) -> CoreResult<()> {
        let mut ops = self.background(&task.scope);
        ops.done(task);
        if let Some(created) = created {
            let kind = TaskKind::parse(&task.kind).unwrap_or(TaskKind::SyncPayment);
            let now = self.now();
            ops.schedule(
                kind,
                &task.object_id,
                now + next_sync_delay(self.config.connector_sync_delay, created, now),
            );
        }
        self.commit_background(ops).await
    }

    /// Captures `amount` of a connector's payment upstream; what was captured.
    pub(crate) async fn capture_upstream(
        &self,
        scope: &Scope,
        payment: &Payment,
        amount: i64,
    ) -> CoreResult<i64> {
        let (connector, reference) = self.upstream_of(scope, payment).await?;
        match connector.capture(&payment.id, &reference, amount).await {
            Answer::Known {
                state,
                reference: said,
            } if matches!(state, Upstream::Succeeded { .. }) => {
                match (disbelieve(payment, amount, said.as_deref(), &state), state) {
                    (None, Upstream::Succeeded { captured, .. }) => Ok(captured),
                    (why, _) => {
                        let why = why.unwrap_or_default();
                        tracing::warn!(payment = %payment.id, %why, "the processor's answer to a capture was refused; nothing was booked");
                        Err(CoreError::UnexpectedState {
                            message: format!("The processor's answer to the capture cannot be accepted ({why}); nothing was booked."),
                        })
                    }
                }
            }
            Answer::Known { state, .. } => Err(CoreError::UnexpectedState {
                message: format!(
                    "The processor did not capture this payment; it reports it as {state:?}."
                ),
            }),
            Answer::Unavailable(why)
            | Answer::NotSent(why)
            | Answer::Unknown { reason: why, .. } => Err(CoreError::ProcessorUnavailable(
                crate::connectors::connector::bounded(&why),
            )),
        }
    }

    /// Releases a connector's authorised payment upstream.
    pub(crate) async fn void_upstream(&self, scope: &Scope, payment: &Payment) -> CoreResult<()> {
        let (connector, reference) = self.upstream_of(scope, payment).await?;
        match connector.void(&payment.id, &reference).await {
            Answer::Known {
                state: Upstream::Canceled,
                ..
            } => Ok(()),
            Answer::Known { state, .. } => Err(CoreError::UnexpectedState {
                message: format!(
                    "The processor did not cancel this payment; it reports it as {state:?}."
                ),
            }),
            Answer::Unavailable(why)
            | Answer::NotSent(why)
            | Answer::Unknown { reason: why, .. } => Err(CoreError::ProcessorUnavailable(
                crate::connectors::connector::bounded(&why),
            )),
        }
    }

    async fn upstream_of(
        &self,
        scope: &Scope,
        payment: &Payment,
    ) -> CoreResult<(
        std::sync::Arc<dyn crate::connectors::connector::Connector>,
        String,
    )> {
        let (Some(connector), Some(reference)) = (&payment.connector, &payment.connector_reference)
        else {
            return Err(CoreError::UnexpectedState {
                message: "This payment never reached its processor.".into(),
            });
        };
        Ok((self.connector(scope, connector).await?, reference.clone()))
    }

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

    /// Sends a refund recorded by [`Services::record_refund_upstream`] and finishes it.
    pub(crate) async fn send_refund_upstream(
        &self,
        ctx: &RequestContext,
        payment: &Payment,
        mut refund: Refund,
        sync_task: String,
    ) -> CoreResult<Refund> {
        let scope = ctx.scope();
        let (connector, reference) = self.upstream_of(scope, payment).await?;
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
            RefundAnswer::Known { reference, state } => {
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
            RefundUpstream::Succeeded => refund.status = RefundStatus::Succeeded,
            RefundUpstream::Failed => {
                refund.status = RefundStatus::Failed;
                // The reserved amount goes back to the payment.
                let record = self
                    .store
                    .find_record(scope, Collection::Payments, &refund.payment)
                    .await?
                    .ok_or_else(|| StoreError::Corrupt(format!("{}: payment gone", refund.id)))?;
                let mut payment: Payment = from_body(&record.id, &record.body)?;
                payment.amount_refunded -= refund.amount;
                payment.refunded = payment.amount_refunded == payment.amount_captured
                    && payment.amount_captured > 0;
                ops.update(&payment, record.version)?;
                // …and to the balance (CONTRACT §9).
                self.book_refund_failure(&mut ops, refund)?;
            }
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
            return self.reschedule(task, None).await;
        };
        let mut refund: Refund = from_body(&record.id, &record.body)?;
        if refund.status != RefundStatus::Pending || refund.connector.is_none() {
            return self.reschedule(task, None).await;
        }
        let (payment, _): (Payment, i64) = self
            .load(scope, Collection::Payments, "payment", &refund.payment)
            .await?;
        let (connector, reference) = self.upstream_of(scope, &payment).await?;
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

    /// `POST /connector_webhooks/{connector}`: a processor tells where one of its payments is.
    /// Verified with the connector's `webhook_secret` (anything unverified is 400 and changes
    /// nothing). A verified webhook is only a hint (CONTRACT §15): for a `processing` or
    /// `requires_action` payment of that connector, Tender asks the processor itself where the
    /// payment is and moves it there, with its event, when the answer can be believed; a
    /// webhook that repeats a known state, or is about something Tender does not track, changes
    /// nothing. What the webhook's body says of amounts is never read.
    pub async fn receive_connector_webhook(
        &self,
        connector_id: &str,
        signature: Option<&str>,
        body: &[u8],
    ) -> CoreResult<()> {
        // One answer for every refusal (no such connector, no secret, a bad signature): the
        // sender learns nothing of which connectors exist (T3-I2). Why is logged.
        let rejected = |why: &str| {
            tracing::info!(connector = %crate::connectors::connector::bounded(connector_id), reason = %why, "a connector webhook was refused");
            CoreError::InvalidParam {
                param: None,
                code: "webhook_signature_invalid",
                message: "The webhook was not accepted: its signature could not be verified."
                    .into(),
            }
        };
        if !ids::looks_like(crate::ids::IdKind::Connector, connector_id) {
            return Err(rejected("no such connector"));
        }
        let Some((scope, _)) = self.store.find_sealed_unscoped(connector_id).await? else {
            return Err(rejected("no such connector"));
        };
        let settings = self.connector_settings(&scope, connector_id).await?;
        let connector = self
            .connectors
            .build(connector_id, &settings, scope.livemode());
        let inbound = connector
            .read_webhook(signature, body, self.now())
            .map_err(|e| rejected(&e.0))?;
        let Some(inbound) = inbound else {
            return Ok(());
        };
        let Some(payment_id) = inbound
            .payment
            .filter(|p| ids::looks_like(crate::ids::IdKind::Payment, p))
        else {
            return Ok(());
        };
        self.retry_on_conflict(|| async {
            let Some(record) = self
                .store
                .find_record(&scope, Collection::Payments, &payment_id)
                .await?
            else {
                return Ok(());
            };
            let mut payment: Payment = from_body(&record.id, &record.body)?;
            let ours = payment.connector.as_deref() == Some(connector_id)
                && payment.connector_reference.as_deref() == Some(inbound.reference.as_str());
            let waiting = matches!(
                payment.status,
                PaymentStatus::Processing | PaymentStatus::RequiresAction
            );
            if !ours || !waiting || inbound.state == Upstream::Created {
                return Ok(());
            }
            // The hint is checked with the processor: its own answer is what moves the payment.
            let state = match connector.sync(&inbound.reference).await {
                Answer::Known {
                    state,
                    reference: said,
                } => match believed(&payment, payment.amount, said.as_deref(), state) {
                    Upstream::Processing | Upstream::Created => return Ok(()),
                    state => state,
                },
                // Not reachable now: the payment's sync task asks again later.
                Answer::Unknown { .. } | Answer::Unavailable(_) | Answer::NotSent(_) => {
                    return Ok(())
                }
            };
            let before = payment.clone();
            let applied = self
                .apply_upstream(&scope, &mut payment, state, settings.kind)
                .await?;
            if payment == before {
                return Ok(());
            }
            let ops = self.upstream_applied(&payment, record.version, applied)?;
            // The payment's sync task finds it settled and ends by itself.
            self.commit_background(ops).await
        })
        .await
    }

    /// Whether a payment that is about to be canceled by a task (expiry, abandoned
    /// authentication) must first be released at its processor; releases it.
    pub(crate) async fn release_before_cancel(
        &self,
        scope: &Scope,
        payment: &Payment,
        reason: Option<CancellationReason>,
    ) -> CoreResult<()> {
        if payment.connector.is_none() || payment.connector_reference.is_none() {
            return Ok(());
        }
        let _ = reason;
        self.void_upstream(scope, payment).await
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
