//! Refunds made at a connector's processor itself (CONTRACT §15): the merchant refunds in
//! Stripe's dashboard, and Tender must not go on believing the money is there. Each payment a
//! processor captured and holds is watched ([`TaskKind::WatchPayment`]: first an hour after its
//! capture, then with backoff up to a week, for [`WATCH_SECS`]); a watch lists the processor's
//! refunds of the payment and records each succeeded one Tender did not make as a Tender
//! refund — `refund.created` and `payment.refunded`, booked out of the processor's balance —
//! once (the processor's refund id is its `connector_reference`, and the payment's version
//! guards the write). The processor's word is checked: a refund beyond what is left to refund,
//! in another currency, or of nothing is refused and logged, never booked. Pending and failed
//! refunds at the processor wait for a later watch. The same watch mirrors the disputes opened
//! at the processor ([`crate::balance::processor_disputes`]), and the processor's webhook about
//! a refund or a dispute makes Tender look at once ([`Refunds::mirror_processor`]).
//!
//! Depends on the connector port, the refund and payment documents and the balance.

use serde_json::json;

use crate::auth::Scope;
use crate::connectors::connector::{bounded, Connector, Inbound, RefundUpstream, UpstreamRefund};
use crate::documents::document::{from_body, to_value};
use crate::error::CoreResult;
use crate::ids::{self, IdKind};
use crate::metadata::Metadata;
use crate::payments::payment::{Payment, PaymentStatus};
use crate::refunds::refund::{Refund, RefundStatus};
use crate::refunds::service::new_refund;
use crate::refunds::Refunds;
use crate::store::{ClaimedTask, Collection, Field};
use crate::task::TaskKind;

/// How long after its capture a payment is watched: Stripe takes refunds for 180 days.
pub const WATCH_SECS: i64 = 180 * 86_400;
/// The first watch, after the capture.
pub const FIRST_WATCH_SECS: i64 = 3600;
/// The longest wait between two watches.
const MAX_WATCH_INTERVAL_SECS: i64 = 7 * 86_400;

/// The wait before the next watch of a payment captured at `captured`, at `now`: half its age,
/// between an hour and a week.
fn next_watch(captured: i64, now: i64) -> i64 {
    ((now - captured) / 2).clamp(FIRST_WATCH_SECS, MAX_WATCH_INTERVAL_SECS)
}

/// The processor's reference of `payment` when it is watched at `now`: captured and held by
/// its processor, within [`WATCH_SECS`] of its creation.
fn watched(payment: &Payment, now: i64) -> Option<String> {
    let watched = matches!(payment.status, PaymentStatus::Succeeded)
        && payment.held_by().is_some()
        && now - payment.created < WATCH_SECS;
    payment.connector_reference.clone().filter(|_| watched)
}

impl Refunds<'_> {
    /// A verified webhook of connector `connector_id` saying that its processor's books of a
    /// payment changed (a refund, a dispute): only a hint, so the payment's refunds and disputes
    /// are read from the processor at once ([`Refunds::mirror_processor`]) when the payment is
    /// this connector's and watched. The payment is the one the webhook names, else the one the
    /// processor's payment names.
    pub(crate) async fn take_books_hint(
        &self,
        scope: &Scope,
        connector_id: &str,
        connector: &dyn Connector,
        inbound: &Inbound,
    ) -> CoreResult<()> {
        let named = match &inbound.payment {
            Some(p) => Some(p.clone()),
            None => match connector.payment_of(&inbound.reference).await {
                Ok(p) => p,
                Err(why) => {
                    tracing::info!(reference = %bounded(&inbound.reference), reason = %bounded(&why), "the processor's payment could not be read; its watch will look");
                    return Ok(());
                }
            },
        };
        let Some(id) = named.filter(|p| ids::looks_like(IdKind::Payment, p)) else {
            return Ok(());
        };
        let Some(record) = self
            .store
            .find_record(scope, Collection::Payments, &id)
            .await?
        else {
            return Ok(());
        };
        let payment: Payment = from_body(&record.id, &record.body)?;
        let ours = payment.connector.as_deref() == Some(connector_id)
            && payment.connector_reference.as_deref() == Some(inbound.reference.as_str());
        match watched(&payment, self.now()).filter(|_| ours) {
            Some(reference) => self.mirror_processor(scope, &payment, &reference).await,
            None => Ok(()),
        }
    }

    /// The watch task of a payment its processor holds.
    pub(crate) async fn watch_payment(&self, task: &ClaimedTask) -> CoreResult<()> {
        let scope = &task.scope;
        let Some(record) = self
            .store
            .find_record(scope, Collection::Payments, &task.object_id)
            .await?
        else {
            return self.watch_again(task, None).await;
        };
        let payment: Payment = from_body(&record.id, &record.body)?;
        let Some(reference) = watched(&payment, self.now()) else {
            return self.watch_again(task, None).await;
        };
        self.mirror_processor(scope, &payment, &reference).await?;
        self.watch_again(task, Some(payment.created)).await
    }

    /// What the processor booked of its own on `payment` (its processor's `reference`):
    /// refunds made there recorded as Tender's, disputes opened there mirrored
    /// ([`crate::balance::processor_disputes`]), each once. What cannot be read now is logged
    /// and read at the next watch.
    pub(crate) async fn mirror_processor(
        &self,
        scope: &Scope,
        payment: &Payment,
        reference: &str,
    ) -> CoreResult<()> {
        let (connector, _) = self.payments().upstream_of(scope, payment).await?;
        match connector.refunds_of(reference).await {
            Ok(found) => {
                for upstream in found
                    .iter()
                    .filter(|r| r.tender_refund.is_none() && r.state == RefundUpstream::Succeeded)
                {
                    self.retry_on_conflict(|| {
                        self.record_processor_refund(scope, &payment.id, upstream)
                    })
                    .await?;
                }
            }
            Err(why) => {
                tracing::info!(payment = %payment.id, reason = %bounded(&why), "the processor's refunds could not be read; read again later");
            }
        }
        match connector.disputes_of(reference).await {
            Ok(found) => {
                self.balance()
                    .mirror_disputes(scope, &payment.id, &found)
                    .await
            }
            Err(why) => {
                tracing::info!(payment = %payment.id, reason = %bounded(&why), "the processor's disputes could not be read; read again later");
                Ok(())
            }
        }
    }

    /// Ends a watch and, when `created` is given, schedules the next.
    async fn watch_again(&self, task: &ClaimedTask, created: Option<i64>) -> CoreResult<()> {
        let mut ops = self.background(&task.scope);
        ops.done(task);
        if let Some(created) = created {
            let now = self.now();
            ops.schedule(
                TaskKind::WatchPayment,
                &task.object_id,
                now + next_watch(created, now),
            );
        }
        self.commit_background(ops).await
    }

    /// `upstream`, a refund made at the processor of payment `id`, recorded once as Tender's.
    async fn record_processor_refund(
        &self,
        scope: &Scope,
        id: &str,
        upstream: &UpstreamRefund,
    ) -> CoreResult<()> {
        let (payment, version): (Payment, i64) = self
            .load(scope, Collection::Payments, "payment", id)
            .await?;
        if self.known(scope, id, &upstream.reference).await? {
            return Ok(());
        }
        let left = payment.amount_captured - payment.amount_refunded;
        if !(1..=left).contains(&upstream.amount)
            || !upstream
                .currency
                .eq_ignore_ascii_case(payment.currency.code())
        {
            tracing::warn!(payment = %id, refund = %upstream.reference, amount = upstream.amount, currency = %upstream.currency, left, "a refund the processor reports is outside what the payment has left; not booked");
            return Ok(());
        }
        let mut refund = new_refund(&payment, upstream.amount, None, Metadata::new(), self.now());
        refund.status = RefundStatus::Succeeded;
        refund.connector_reference = Some(upstream.reference.clone());
        let mut batch = self.background(scope);
        self.balance()
            .book_refund(&mut batch, &mut refund, payment.held_by())?;
        let mut after = payment.clone();
        after.amount_refunded += upstream.amount;
        after.refunded = after.amount_refunded == after.amount_captured;
        let refunded = json!({
            "amount_refunded": payment.amount_refunded,
            "refunded": payment.refunded,
        });
        batch
            .update(&after, version)?
            .insert(&refund)?
            .event_json("refund.created", to_value(&refund)?, None)?
            .event_json("payment.refunded", to_value(&after)?, Some(refunded))?;
        self.commit_background(batch).await
    }

    /// Whether payment `id` has a Tender refund for the processor's refund `reference`.
    async fn known(&self, scope: &Scope, id: &str, reference: &str) -> CoreResult<bool> {
        let refunds = self
            .every_record(
                scope,
                Collection::Refunds,
                vec![(Field::Payment, id.to_string())],
                Default::default(),
            )
            .await?;
        for record in &refunds {
            let r: Refund = from_body(&record.id, &record.body)?;
            if r.connector_reference.as_deref() == Some(reference) {
                return Ok(true);
            }
        }
        Ok(false)
    }
}
