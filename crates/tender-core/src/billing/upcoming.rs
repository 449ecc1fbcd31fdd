//! A subscription's next invoice before it exists: the preview a shop asks for
//! (`POST /v1/invoices/create_preview`) and the `invoice.upcoming` event sent
//! [`UPCOMING_SECS`] before each renewal. Both are the invoice the renewal would open now — the
//! same lines, by [`Billing::invoice_for`] — marked as a preview: id `upcoming_in_…`, status
//! `draft`, `billing_reason` `upcoming`, no hosted page, never stored.
//!
//! Depends on [`super::subscriptions`] (the invoice a renewal opens) and the storage port.

use serde_json::Value;

use crate::billing::invoice::{BillingReason, Invoice, InvoiceStatus};
use crate::billing::model::next_period_end;
use crate::billing::subscription::{Subscription, SubscriptionStatus};
use crate::billing::Billing;
use crate::documents::batch::Batch;
use crate::documents::document::to_value;
use crate::error::{CoreError, CoreResult};
use crate::ids::{self, IdKind};
use crate::services::RequestContext;
use crate::store::{ClaimedTask, Collection};
use crate::task::TaskKind;

/// `invoice.upcoming` comes this long before a renewal (Stripe's default for its "upcoming
/// renewal events" setting is a few days; Tender's is the trial reminder's three).
pub const UPCOMING_SECS: i64 = 3 * 86_400;

/// Schedules `invoice.upcoming` for the renewal at the end of the period `[start, end)`, unless
/// the period is too short for it to come before.
pub(crate) fn schedule_upcoming(ops: &mut Batch, subscription: &str, (start, end): (i64, i64)) {
    if end - UPCOMING_SECS > start {
        ops.schedule(TaskKind::InvoiceUpcoming, subscription, end - UPCOMING_SECS);
    }
}

/// A preview as the API and the event show it: without a hosted page.
fn preview_value(invoice: &Invoice) -> CoreResult<Value> {
    let mut value = to_value(invoice)?;
    value["hosted_invoice_url"] = Value::Null;
    Ok(value)
}

impl Billing<'_> {
    /// The invoice `sub`'s next renewal would open, as a preview; `None` when no renewal will
    /// come (ended, incomplete, paused, canceling at the period's end, no schedule).
    async fn next_invoice(
        &self,
        scope: &crate::auth::Scope,
        sub: &Subscription,
    ) -> CoreResult<Option<Invoice>> {
        if sub.status.is_ended()
            || matches!(
                sub.status,
                SubscriptionStatus::Incomplete | SubscriptionStatus::Paused
            )
            || sub.cancel_at_period_end
        {
            return Ok(None);
        }
        let Some(recurring) = sub.recurring() else {
            return Ok(None);
        };
        let start = sub.current_period_end;
        let end = next_period_end(sub.billing_cycle_anchor, recurring, start);
        let id = format!("upcoming_{}", ids::generate(IdKind::Invoice));
        let mut invoice = self
            .invoice_for(scope, sub, (start, end), (id, BillingReason::Upcoming))
            .await?;
        invoice.status = InvoiceStatus::Draft;
        invoice.created = start;
        invoice.next_payment_attempt = Some(start);
        Ok(Some(invoice))
    }

    /// `POST /v1/invoices/create_preview` for `subscription` (of `customer`, when given): the
    /// invoice its next renewal would open; 400 `invoice_upcoming_none` when none will come.
    pub async fn preview_invoice(
        &self,
        ctx: &RequestContext,
        subscription: &str,
        customer: Option<&str>,
    ) -> CoreResult<Value> {
        let scope = ctx.scope();
        let record = self
            .referenced(
                scope,
                (
                    Collection::Subscriptions,
                    IdKind::Subscription,
                    "subscription",
                ),
                subscription,
                "subscription",
            )
            .await?;
        let sub: Subscription = crate::documents::document::from_body(&record.id, &record.body)?;
        if customer.is_some_and(|c| c != sub.customer) {
            return Err(CoreError::invalid(
                "customer",
                "parameter_invalid",
                "This subscription belongs to another customer.",
            ));
        }
        match self.next_invoice(scope, &sub).await? {
            Some(invoice) => preview_value(&invoice),
            // Stripe answers 404 with this code; a 400 names the parameter (the SDKs raise
            // the same InvalidRequestError for both).
            None => Err(CoreError::invalid(
                "subscription",
                "invoice_upcoming_none",
                "No upcoming invoice: the subscription ends, or has not started yet.",
            )),
        }
    }

    /// The `invoice_upcoming` task: [`UPCOMING_SECS`] before the renewal it was scheduled for.
    pub(crate) async fn invoice_upcoming(&self, task: &ClaimedTask) -> CoreResult<()> {
        let Some((sub, _)) = self.load_due::<Subscription>(task).await? else {
            return Ok(());
        };
        if sub.current_period_end != task.due_at + UPCOMING_SECS {
            return self.drop_task(task, "not the renewal it was for").await;
        }
        let Some(invoice) = self.next_invoice(&task.scope, &sub).await? else {
            return self.drop_task(task, "no renewal will come").await;
        };
        let mut ops = self.background(&task.scope);
        ops.event_json("invoice.upcoming", preview_value(&invoice)?, None)?
            .done(task);
        self.commit_background(ops).await
    }
}
