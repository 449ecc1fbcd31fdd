//! Paused subscriptions: a trial that ends while the customer has no card to charge does what
//! its `trial_settings.end_behavior.missing_payment_method` says — opens the first invoice all
//! the same (`create_invoice`, the default), cancels (`cancel`) or pauses (`pause`: `paused`,
//! no invoice, no renewal, `customer.subscription.paused`). Resuming (`POST
//! /subscriptions/{id}/resume`) starts a new period now (the billing cycle anchor moves to
//! now) and tries its invoice at once: paid, the subscription is `active` again
//! (`customer.subscription.resumed`); declined, it stays `paused` with the invoice open, to be
//! paid by hand or on its hosted page (which resumes it then) or voided. Still unpaid when the
//! new period ends, the invoice is voided and the subscription stays paused (as Stripe's
//! resumption invoice expires), so it can never turn active on a period already over.
//!
//! Depends on the subscription's state machine, the renewal's invoice
//! ([`super::subscriptions`]), the first try of [`super::subscribe`] and the storage port.

use crate::billing::invoice::{invoice_after, BillingReason, Invoice, InvoiceEvent, InvoiceStatus};
use crate::billing::model::next_period_end;
use crate::billing::subscription::{
    subscription_after, MissingPaymentMethod, Subscription, SubscriptionEvent, SubscriptionStatus,
};
use crate::billing::subscriptions::state_error;
use crate::billing::Billing;
use crate::documents::batch::Batch;
use crate::documents::document::to_value;
use crate::error::{CoreError, CoreResult};
use crate::services::RequestContext;
use crate::store::{ClaimedTask, Collection};
use crate::task::TaskKind;

impl Billing<'_> {
    /// At the trial's end (the renewal task `task` of `before`): when the customer has no card
    /// to charge and the subscription is set to pause or cancel then, does so and says `true`;
    /// `false` leaves the renewal to open the first invoice.
    pub(crate) async fn trial_ends_without_card(
        &self,
        task: &ClaimedTask,
        before: &Subscription,
        version: i64,
    ) -> CoreResult<bool> {
        let behavior = before.trial_settings.end_behavior.missing_payment_method;
        if before.status != SubscriptionStatus::Trialing
            || behavior == MissingPaymentMethod::CreateInvoice
            || self
                .invoice_card(
                    &task.scope,
                    &before.customer,
                    before.default_payment_method.as_deref(),
                )
                .await?
                .is_some()
        {
            return Ok(false);
        }
        let mut ops = match behavior {
            MissingPaymentMethod::Pause => {
                let mut after = before.clone();
                after.status = subscription_after(before.status, SubscriptionEvent::Paused)
                    .map_err(|_| state_error(before, "it can be paused"))?;
                let mut ops = self.background(&task.scope);
                ops.change("customer.subscription.updated", (before, &after), version)?;
                ops.event("customer.subscription.paused", &after)?;
                ops
            }
            _ => self.cancel_ops(&task.scope, before, version, None).await?.1,
        };
        ops.done(task);
        self.commit_background(ops).await?;
        Ok(true)
    }

    /// The renewal task of a subscription still paused when the period it was resumed for
    /// ended: its unpaid resumption invoice is voided (its waiting tries canceled); it stays
    /// paused. A payment of it that succeeded meanwhile is left to its settle task.
    pub(crate) async fn resumption_lapsed(
        &self,
        task: &ClaimedTask,
        sub: &Subscription,
    ) -> CoreResult<()> {
        let scope = &task.scope;
        let mut ops = self.background(scope);
        if let Some((mut invoice, v)) = self.latest_invoice(scope, sub).await? {
            if let Some(status) = invoice_after(invoice.status, InvoiceEvent::Voided) {
                if !self
                    .cancel_waiting_intent(scope, &invoice, &mut ops)
                    .await?
                {
                    return self
                        .drop_task(task, "its resumption invoice was just paid")
                        .await;
                }
                invoice.status = status;
                invoice.next_payment_attempt = None;
                ops.update(&invoice, v)?.event("invoice.voided", &invoice)?;
            }
        }
        ops.done(task);
        self.commit_background(ops).await
    }

    /// `before` resumed now (`self` runs at its clock): a new period from now, its invoice
    /// opened (paid at once when it is free), and the writes.
    async fn resumed(
        &self,
        ctx: &RequestContext,
        before: &Subscription,
        version: i64,
    ) -> CoreResult<(Subscription, Batch, Invoice)> {
        let Some(recurring) = before.recurring() else {
            return Err(state_error(before, "it can be resumed"));
        };
        let now = self.now();
        let end = next_period_end(now, recurring, now);
        let mut after = before.clone();
        after.billing_cycle_anchor = now;
        after.current_period_start = now;
        after.current_period_end = end;
        let (invoice, invoice_ops) = self
            .open_invoice(
                ctx.scope(),
                &after,
                ((now, end), BillingReason::SubscriptionCycle),
                None,
            )
            .await?;
        after.latest_invoice = Some(invoice.id.clone());
        if invoice.status == InvoiceStatus::Paid {
            after.status = SubscriptionStatus::Active;
        }
        let mut ops = self.batch(ctx);
        ops.change("customer.subscription.updated", (before, &after), version)?;
        if after.status == SubscriptionStatus::Active {
            ops.event("customer.subscription.resumed", &after)?;
        }
        ops.extend(invoice_ops)
            .schedule(TaskKind::RenewSubscription, &after.id, end);
        crate::billing::upcoming::schedule_upcoming(&mut ops, &after.id, (now, end));
        Ok((after, ops, invoice))
    }

    /// `POST /subscriptions/{id}/resume`: a paused subscription starts a new period now, whose
    /// invoice is tried at once (see the module's doc). 400 on one that is not paused, or
    /// whose resumption invoice is still open (pay or void it first).
    pub async fn resume_subscription(
        &self,
        ctx: &RequestContext,
        id: &str,
    ) -> CoreResult<Subscription> {
        let scope = ctx.scope();
        // Recorded first (a retry after a crash is answered with it as it is then), then its
        // invoice tried once, as a new subscription's first invoice is.
        self.claim_key(ctx).await?;
        let (invoice, svc) = self
            .retry_on_conflict(|| async {
                let (before, version): (Subscription, i64) = self
                    .load(scope, Collection::Subscriptions, "subscription", id)
                    .await?;
                if before.status != SubscriptionStatus::Paused {
                    return Err(CoreError::invalid(
                        "subscription",
                        "subscription_unexpected_state",
                        format!(
                            "This subscription's status is {}; only a paused subscription can be resumed.",
                            before.status.as_str()
                        ),
                    ));
                }
                if let Some((open, _)) = self.latest_invoice(scope, &before).await? {
                    if open.status == InvoiceStatus::Open {
                        return Err(CoreError::invalid(
                            "subscription",
                            "subscription_unexpected_state",
                            format!(
                                "Its resumption invoice {} is open: pay or void it first.",
                                open.id
                            ),
                        ));
                    }
                }
                let svc = self.for_clock(scope, before.test_clock.as_deref()).await?;
                let (after, ops, invoice) = svc.billing().resumed(ctx, &before, version).await?;
                self.commit_checkpoint(ctx, ops, Collection::Subscriptions, &after.id)
                    .await?;
                Ok((invoice, svc))
            })
            .await?;
        if invoice.status == InvoiceStatus::Open {
            svc.billing().first_try(scope, &invoice.id).await?;
        }
        let (resumed, _): (Subscription, i64) = self
            .load(scope, Collection::Subscriptions, "subscription", id)
            .await?;
        self.commit(ctx, self.batch(ctx), Ok(&to_value(&resumed)?))
            .await?;
        Ok(resumed)
    }
}
