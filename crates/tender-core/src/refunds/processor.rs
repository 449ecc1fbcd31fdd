//! Refunds made at a connector's processor itself (CONTRACT §15): the merchant refunds in
//! Stripe's dashboard, and Tender must not go on believing the money is there. Each payment a
//! processor captured and holds is watched ([`TaskKind::WatchPayment`]: first an hour after its
//! capture, then with backoff up to a week, for [`WATCH_SECS`]); a watch lists the processor's
//! refunds of the payment and records each succeeded one Tender did not make as a Tender
//! refund — `refund.created` and `payment.refunded`, booked out of the processor's balance —
//! once (the processor's refund id is its `connector_reference`, and the payment's version
//! guards the write). The processor's word is checked: a refund beyond what is left to refund,
//! in another currency, or of nothing is refused and logged, never booked. Pending and failed
//! refunds at the processor wait for a later watch.
//!
//! Depends on the connector port, the refund and payment documents and the balance.

use serde_json::json;

use crate::auth::Scope;
use crate::connectors::connector::{bounded, RefundUpstream, UpstreamRefund};
use crate::documents::document::{from_body, to_value};
use crate::error::CoreResult;
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

impl Refunds<'_> {
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
        let watched = matches!(payment.status, PaymentStatus::Succeeded)
            && payment.held_by().is_some()
            && self.now() - payment.created < WATCH_SECS;
        let Some(reference) = payment.connector_reference.clone().filter(|_| watched) else {
            return self.watch_again(task, None).await;
        };
        let (connector, _) = self.payments().upstream_of(scope, &payment).await?;
        let found = match connector.refunds_of(&reference).await {
            Ok(found) => found,
            Err(why) => {
                tracing::info!(payment = %payment.id, reason = %bounded(&why), "the processor's refunds could not be read; watched again later");
                return self.watch_again(task, Some(payment.created)).await;
            }
        };
        for upstream in found
            .iter()
            .filter(|r| r.tender_refund.is_none() && r.state == RefundUpstream::Succeeded)
        {
            self.retry_on_conflict(|| self.record_processor_refund(scope, &payment.id, upstream))
                .await?;
        }
        self.watch_again(task, Some(payment.created)).await
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
