//! Where a connector's payment ends up when the processor did not say at once: the sync task
//! that asks it again with backoff ([`Payments::sync_payment`]), and the processor's webhook,
//! a hint that makes Tender ask at once ([`Payments::receive_connector_webhook`]). Both move the
//! payment with [`crate::payments::payment::authorised`], as the create path does
//! ([`super::upstream`]).

use crate::auth::Scope;
use crate::connectors::connector::{Answer, Connector, ConnectorType, Inbound, Upstream};
use crate::documents::batch::Batch;
use crate::documents::document::from_body;
use crate::error::{CoreError, CoreResult};
use crate::ids;
use crate::payments::acquirer::Decline;
use crate::payments::payment::{Payment, PaymentStatus};
use crate::store::{ClaimedTask, Collection};
use crate::task::TaskKind;

use crate::payments::upstream::{believed, next_sync_delay, Applied};
use crate::payments::Payments;

impl Payments<'_> {
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
        let waiting = payment.status.awaits_processor();
        let Some(connector_id) = payment.connector.clone().filter(|_| waiting) else {
            return self.reschedule(task, None).await;
        };
        // The sealed settings are read and opened once for both the client and its kind.
        let settings = self
            .connectors()
            .connector_settings(scope, &connector_id)
            .await?;
        let kind = settings.kind;
        let connector = self
            .connectors
            .build(&connector_id, &settings, scope.livemode());
        let Some(state) = synced_state(connector.as_ref(), &payment).await else {
            return self.reschedule(task, Some(payment.created)).await;
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
    pub(crate) fn upstream_applied(
        &self,
        payment: &Payment,
        version: i64,
        applied: Applied,
    ) -> CoreResult<Batch> {
        let mut ops = self.background(applied.ops.scope());
        ops.update(payment, version)?;
        ops.extend(applied.ops);
        for kind in &applied.events {
            ops.event(kind, payment)?;
        }
        Ok(ops)
    }

    /// Ends a sync task and, when `created` is given, schedules the next one with backoff.
    pub(crate) async fn reschedule(
        &self,
        task: &ClaimedTask,
        created: Option<i64>,
    ) -> CoreResult<()> {
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

    /// `POST /connector_webhooks/{connector}`: a processor tells where one of its payments is
    /// (or that its refunds or disputes changed: [`crate::refunds::Refunds::take_books_hint`]).
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
        let settings = self
            .connectors()
            .connector_settings(&scope, connector_id)
            .await?;
        let connector = self
            .connectors
            .build(connector_id, &settings, scope.livemode());
        let inbound = connector
            .read_webhook(signature, body, self.now())
            .map_err(|e| rejected(&e.0))?;
        let Some(inbound) = inbound else {
            return Ok(());
        };
        if inbound.state.is_none() {
            return self
                .refunds()
                .take_books_hint(&scope, connector_id, connector.as_ref(), &inbound)
                .await;
        }
        let Some(payment_id) = inbound
            .payment
            .clone()
            .filter(|p| ids::looks_like(crate::ids::IdKind::Payment, p))
        else {
            return Ok(());
        };
        self.retry_on_conflict(|| {
            self.take_hint(
                &scope,
                connector_id,
                connector.as_ref(),
                settings.kind,
                &inbound,
                &payment_id,
            )
        })
        .await
    }

    /// A verified webhook's hint about payment `payment_id`, checked with the processor and
    /// applied when it moves a payment of this connector that is waiting for it.
    async fn take_hint(
        &self,
        scope: &Scope,
        connector_id: &str,
        connector: &dyn Connector,
        kind: ConnectorType,
        inbound: &Inbound,
        payment_id: &str,
    ) -> CoreResult<()> {
        let Some(record) = self
            .store
            .find_record(scope, Collection::Payments, payment_id)
            .await?
        else {
            return Ok(());
        };
        let mut payment: Payment = from_body(&record.id, &record.body)?;
        let ours = payment.connector.as_deref() == Some(connector_id)
            && payment.connector_reference.as_deref() == Some(inbound.reference.as_str());
        let waiting = payment.status.awaits_processor();
        if !ours || !waiting || matches!(inbound.state, None | Some(Upstream::Created)) {
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
            Answer::Unknown { .. } | Answer::Unavailable(_) | Answer::NotSent(_) => return Ok(()),
        };
        let before = payment.clone();
        let applied = self
            .apply_upstream(scope, &mut payment, state, kind)
            .await?;
        if payment == before {
            return Ok(());
        }
        let ops = self.upstream_applied(&payment, record.version, applied)?;
        // The payment's sync task finds it settled and ends by itself.
        self.commit_background(ops).await
    }
}

/// What a sync makes of the processor's word on `payment`: the state to move it to, or `None`
/// to ask again later (no answer, a payment made but never confirmed that could not be
/// released, or a word that cannot be believed about a payment awaiting its customer).
async fn synced_state(connector: &dyn Connector, payment: &Payment) -> Option<Upstream> {
    Some(match payment.connector_reference.clone() {
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
                _ => return None,
            },
            Answer::Known {
                state,
                reference: said,
            } => match believed(payment, payment.amount, said.as_deref(), state) {
                // Refused (logged): asked again later, nothing booked.
                Upstream::Processing if payment.status == PaymentStatus::RequiresAction => {
                    return None
                }
                state => state,
            },
            Answer::Unknown { reason, .. }
            | Answer::Unavailable(reason)
            | Answer::NotSent(reason) => {
                tracing::info!(payment = %payment.id, reason = %crate::connectors::connector::bounded(&reason), "sync: the processor did not answer; asking again later");
                return None;
            }
        },
    })
}
