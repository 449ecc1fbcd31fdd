//! Subscriptions (`sub_`): update, cancel (creation is [`super::subscribe`]), and the tasks that move them through time —
//! `renew_subscription` at each period's end (and at the trial's end), `trial_will_end` three
//! days before it, `expire_incomplete` 23 hours after an unpaid start.
//!
//! A renewal is one batch: the new period on the subscription, the period's invoice (open), the
//! events, the next renewal and the invoice's first try (a `pay_invoice` task due at once). The
//! renewal task names the period end it is for: a stale or repeated one finds the subscription
//! already renewed and does nothing, so a period is never invoiced twice.

use crate::auth::Scope;
use crate::billing::invoice::{invoice_after, BillingReason, Invoice, InvoiceEvent, InvoiceStatus};
use crate::billing::model::{next_period_end, EmbeddedList};
use crate::billing::subscription::{
    subscription_after, Subscription, SubscriptionEvent, SubscriptionStatus,
};
use crate::billing::Billing;
use crate::documents::batch::Batch;
use crate::documents::document::{from_body, to_value};
use crate::error::{CoreError, CoreResult};
use crate::ids::{self, IdKind};
use crate::metadata;
use crate::services::RequestContext;
use crate::store::{ClaimedTask, Collection};
use crate::task::TaskKind;

/// `POST /subscriptions`, parsed.
#[derive(Debug, Default)]
pub struct CreateSubscription {
    pub customer: String,
    /// `(price, quantity)`; a quantity not given is 1.
    pub items: Vec<(String, Option<i64>)>,
    pub default_payment_method: Option<String>,
    pub trial_period_days: Option<i64>,
    pub cancel_at_period_end: bool,
    pub metadata: Vec<(String, String)>,
    /// Whether the first invoice is charged now or left for the customer to pay.
    pub payment_behavior: PaymentBehavior,
    /// What the trial's end does when the customer has no card to charge then.
    pub missing_payment_method: crate::billing::subscription::MissingPaymentMethod,
}

/// How a new subscription's first invoice is paid (Stripe's `payment_behavior`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum PaymentBehavior {
    /// Charged now on the customer's card; a failure leaves the subscription `incomplete`
    /// (Stripe's `allow_incomplete`).
    #[default]
    ChargeNow,
    /// Not charged: the invoice's payment is an intent the customer confirms (in the browser,
    /// with its client secret); the subscription is `incomplete` until it is paid (Stripe's
    /// `default_incomplete`). No saved card is needed.
    DefaultIncomplete,
    /// Charged now; a failure ends the subscription at once (`incomplete_expired`, its
    /// invoice void) and the request answers with the decline (Stripe's
    /// `error_if_incomplete`).
    ErrorIfIncomplete,
}

/// `POST /subscriptions/{id}`: only these change.
#[derive(Debug, Default)]
pub struct UpdateSubscription {
    pub cancel_at_period_end: Option<bool>,
    pub default_payment_method: Option<String>,
    pub metadata: Option<Vec<(String, String)>>,
}

pub(crate) fn state_error(s: &Subscription, what: &str) -> CoreError {
    CoreError::invalid(
        "subscription",
        "subscription_unexpected_state",
        format!(
            "This subscription's status is {}; {what} only before it ends.",
            s.status.as_str()
        ),
    )
}

/// What becomes of a subscription that ends with its customer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ended {
    /// Kept, canceled (`DELETE /customers/{id}`, a cancellation).
    Kept,
    /// Deleted with its test clock (as Stripe deletes a clock's customers' subscriptions).
    Deleted,
}

impl Billing<'_> {
    /// A new open invoice of `sub` for the period `[start, end)` (made for `reason`), and the writes that record
    /// it with its events (`invoice.created`, `invoice.finalized`; `invoice.paid` at once for an
    /// invoice of nothing) and its first try, due now; or, given `intent`, no automatic try:
    /// its payment is that intent, which the customer confirms.
    pub(crate) async fn open_invoice(
        &self,
        scope: &Scope,
        sub: &Subscription,
        (period, reason): ((i64, i64), BillingReason),
        intent: Option<&str>,
    ) -> CoreResult<(Invoice, Batch)> {
        let now = self.now();
        let id = ids::generate(IdKind::Invoice);
        let mut invoice = self.invoice_for(scope, sub, period, (id, reason)).await?;
        let free = invoice.amount_due == 0;
        if free {
            invoice.status = InvoiceStatus::Paid;
        }
        invoice.next_payment_attempt = (!free && intent.is_none()).then_some(now);
        invoice.payment = intent.filter(|_| !free).map(str::to_string);
        invoice.payments = invoice.payment.iter().cloned().collect();
        let mut ops = self.background(scope);
        invoice.number = Some(self.take_invoice_number(scope, &mut ops).await?);
        ops.insert(&invoice)?;
        let object = to_value(&invoice)?;
        let mut draft = object.clone();
        draft["status"] = "draft".into();
        ops.event_json("invoice.created", draft, None)?.event_json(
            "invoice.finalized",
            object.clone(),
            None,
        )?;
        if free {
            ops.event_json("invoice.paid", object, None)?;
        } else if intent.is_none() {
            ops.schedule(TaskKind::PayInvoice, &invoice.id, now);
        }
        Ok((invoice, ops))
    }

    /// The invoice `id` of `sub` for the period `[start, end)` as it would be opened now:
    /// its lines (the products named as they are called now) and total, `open`, no try yet.
    pub(crate) async fn invoice_for(
        &self,
        scope: &Scope,
        sub: &Subscription,
        (start, end): (i64, i64),
        (id, billing_reason): (String, BillingReason),
    ) -> CoreResult<Invoice> {
        let mut names = std::collections::HashMap::new();
        for item in &sub.items.data {
            let product = &item.price.product;
            if let Some(r) = self
                .store
                .find_record(scope, Collection::Products, product)
                .await?
            {
                let p: crate::billing::model::Product = from_body(&r.id, &r.body)?;
                names.insert(product.clone(), p.name);
            }
        }
        let lines = sub.lines(start, end, |product| names.get(product).cloned());
        Ok(Invoice {
            hosted_invoice_url: format!("{}/invoices/{id}", self.config.receipt_base),
            id,
            object: "invoice".into(),
            customer: sub.customer.clone(),
            subscription: Some(sub.id.clone()),
            billing_reason,
            status: InvoiceStatus::Open,
            number: None,
            currency: sub.currency,
            amount_due: lines.iter().map(|l| l.amount).sum(),
            amount_paid: 0,
            lines: EmbeddedList::new(lines),
            period_start: start,
            period_end: end,
            attempt_count: 0,
            next_payment_attempt: None,
            payment: None,
            payments: Vec::new(),
            first_failed_at: None,
            dunning_step: 0,
            created: self.now(),
            livemode: scope.livemode(),
        })
    }

    /// `POST /subscriptions/{id}`.
    pub async fn update_subscription(
        &self,
        ctx: &RequestContext,
        id: &str,
        cmd: UpdateSubscription,
    ) -> CoreResult<Subscription> {
        self.retry_on_conflict(|| async {
            let scope = ctx.scope();
            let (before, version): (Subscription, i64) = self
                .load(scope, Collection::Subscriptions, "subscription", id)
                .await?;
            let mut after = before.clone();
            if (cmd.cancel_at_period_end.is_some() || cmd.default_payment_method.is_some())
                && before.status.is_ended()
            {
                return Err(state_error(&before, "it can change"));
            }
            if let Some(c) = cmd.cancel_at_period_end {
                after.cancel_at_period_end = c;
            }
            if let Some(pm) = &cmd.default_payment_method {
                self.require_card_of(scope, &before.customer, pm, "default_payment_method")
                    .await?;
                after.default_payment_method = Some(pm.clone());
            }
            if let Some(m) = &cmd.metadata {
                after.metadata = metadata::merge(&before.metadata, m.clone())?;
            }
            let object = to_value(&after)?;
            let mut ops = self.batch(ctx);
            ops.change("customer.subscription.updated", (&before, &after), version)?;
            self.commit(ctx, ops, Ok(&object)).await?;
            Ok(after)
        })
        .await
    }

    /// `DELETE /subscriptions/{id}`: canceled now, nothing refunded; an open invoice of it is
    /// no longer tried automatically.
    pub async fn cancel_subscription(
        &self,
        ctx: &RequestContext,
        id: &str,
    ) -> CoreResult<Subscription> {
        self.retry_on_conflict(|| async {
            let scope = ctx.scope();
            let (before, version): (Subscription, i64) = self
                .load(scope, Collection::Subscriptions, "subscription", id)
                .await?;
            if before.status.is_ended() {
                return Err(state_error(&before, "it can be canceled"));
            }
            let svc = self.for_clock(scope, before.test_clock.as_deref()).await?;
            let (after, ops) = svc
                .billing()
                .cancel_ops(scope, &before, version, Some(ctx))
                .await?;
            self.commit(ctx, ops, Ok(&to_value(&after)?)).await?;
            Ok(after)
        })
        .await
    }

    /// The subscription canceled now, and the writes: its update, its latest invoice no
    /// longer tried, `customer.subscription.deleted`.
    pub(crate) async fn cancel_ops(
        &self,
        scope: &Scope,
        before: &Subscription,
        version: i64,
        ctx: Option<&RequestContext>,
    ) -> CoreResult<(Subscription, Batch)> {
        self.end_ops(scope, before, version, ctx, Ended::Kept).await
    }

    /// The subscription canceled now as [`Self::cancel_ops`] cancels it, then kept (canceled)
    /// or deleted as `fate` says; one that had already ended is only deleted, or left alone.
    pub(crate) async fn end_ops(
        &self,
        scope: &Scope,
        before: &Subscription,
        version: i64,
        ctx: Option<&RequestContext>,
        fate: Ended,
    ) -> CoreResult<(Subscription, Batch)> {
        let mut ops = self.batch_for(ctx, scope);
        if before.status.is_ended() && fate == Ended::Kept {
            return Err(state_error(before, "it can be canceled"));
        }
        if before.status.is_ended() {
            ops.delete::<Subscription>(&before.id, version);
            return Ok((before.clone(), ops));
        }
        let now = self.now();
        let mut after = before.clone();
        after.status = subscription_after(before.status, SubscriptionEvent::Canceled)
            .map_err(|_| state_error(before, "it can be canceled"))?;
        after.canceled_at = Some(now);
        after.ended_at = Some(now);
        match fate {
            Ended::Kept => ops.update(&after, version)?,
            Ended::Deleted => ops.delete::<Subscription>(&after.id, version),
        };
        ops.event("customer.subscription.deleted", &after)?;
        // An open invoice is no longer retried.
        if let Some((mut invoice, v)) = self.latest_invoice(scope, before).await? {
            if invoice.status == InvoiceStatus::Open && invoice.next_payment_attempt.is_some() {
                invoice.next_payment_attempt = None;
                ops.update(&invoice, v)?;
            }
        }
        Ok((after, ops))
    }

    /// The `renew_subscription` task: the period it was scheduled for has ended.
    pub(crate) async fn renew_subscription(&self, task: &ClaimedTask) -> CoreResult<()> {
        let scope = &task.scope;
        let Some((before, version)) = self.load_due::<Subscription>(task).await? else {
            return Ok(());
        };
        if before.status.is_ended()
            || before.status == SubscriptionStatus::Incomplete
            || before.current_period_end != task.due_at
        {
            return self.drop_task(task, "subscription not due").await;
        }
        if before.status == SubscriptionStatus::Paused {
            return self.resumption_lapsed(task, &before).await;
        }
        if self.trial_ends_without_card(task, &before, version).await? {
            return Ok(());
        }
        let customer_gone = self
            .store
            .find_record(scope, Collection::Customers, &before.customer)
            .await?
            .is_none();
        if before.cancel_at_period_end || customer_gone {
            let (_, mut ops) = self.cancel_ops(scope, &before, version, None).await?;
            ops.done(task);
            return self.commit_background(ops).await;
        }
        let Some(recurring) = before.recurring() else {
            return self
                .drop_task(task, "subscription without a schedule")
                .await;
        };
        let start = before.current_period_end;
        let end = next_period_end(before.billing_cycle_anchor, recurring, start);
        let mut after = before.clone();
        after.current_period_start = start;
        after.current_period_end = end;
        let (invoice, invoice_ops) = self
            .open_invoice(
                scope,
                &after,
                ((start, end), BillingReason::SubscriptionCycle),
                None,
            )
            .await?;
        after.latest_invoice = Some(invoice.id.clone());
        let event = if invoice.status == InvoiceStatus::Paid {
            SubscriptionEvent::InvoicePaid
        } else {
            SubscriptionEvent::Renewed
        };
        if let Ok(status) = subscription_after(before.status, event) {
            after.status = status;
        }
        let mut ops = self.background(scope);
        ops.change("customer.subscription.updated", (&before, &after), version)?;
        ops.extend(invoice_ops)
            .schedule(TaskKind::RenewSubscription, &after.id, end)
            .done(task);
        crate::billing::upcoming::schedule_upcoming(&mut ops, &after.id, (start, end));
        self.commit_background(ops).await
    }

    /// The `trial_will_end` task: three days before the trial ends.
    pub(crate) async fn trial_will_end(&self, task: &ClaimedTask) -> CoreResult<()> {
        let scope = &task.scope;
        let Some((sub, _)) = self.load_due::<Subscription>(task).await? else {
            return Ok(());
        };
        if sub.status != SubscriptionStatus::Trialing {
            return self.drop_task(task, "no longer trialing").await;
        }
        let mut ops = self.background(scope);
        ops.event("customer.subscription.trial_will_end", &sub)?
            .done(task);
        self.commit_background(ops).await
    }

    /// The `expire_incomplete` task: a first invoice still unpaid 23 hours on.
    pub(crate) async fn expire_incomplete(&self, task: &ClaimedTask) -> CoreResult<()> {
        let scope = &task.scope;
        let Some((before, version)) = self.load_due::<Subscription>(task).await? else {
            return Ok(());
        };
        if before.status != SubscriptionStatus::Incomplete {
            return self.drop_task(task, "no longer incomplete").await;
        }
        let Some(mut ops) = self.expire_ops(scope, &before, version).await? else {
            // Paid by the customer just now: its settle task activates it.
            return self
                .drop_task(task, "its first invoice was just paid")
                .await;
        };
        ops.done(task);
        self.commit_background(ops).await
    }

    /// The writes that end the incomplete `before` (`incomplete_expired`) and void its unpaid
    /// first invoice; `None` when a payment of that invoice succeeded meanwhile (its settle
    /// task activates the subscription).
    pub(crate) async fn expire_ops(
        &self,
        scope: &Scope,
        before: &Subscription,
        version: i64,
    ) -> CoreResult<Option<Batch>> {
        let mut after = before.clone();
        after.status = SubscriptionStatus::IncompleteExpired;
        after.ended_at = Some(self.now());
        let mut ops = self.background(scope);
        ops.change("customer.subscription.updated", (before, &after), version)?;
        if let Some((mut invoice, v)) = self.latest_invoice(scope, before).await? {
            if let Some(status) = invoice_after(invoice.status, InvoiceEvent::Voided) {
                invoice.status = status;
                invoice.next_payment_attempt = None;
                ops.update(&invoice, v)?.event("invoice.voided", &invoice)?;
                if !self
                    .cancel_waiting_intent(scope, &invoice, &mut ops)
                    .await?
                {
                    return Ok(None);
                }
            }
        }
        Ok(Some(ops))
    }

    /// The subscription's latest invoice and its version, unless it is gone.
    pub(crate) async fn latest_invoice(
        &self,
        scope: &Scope,
        subscription: &Subscription,
    ) -> CoreResult<Option<(Invoice, i64)>> {
        let Some(id) = &subscription.latest_invoice else {
            return Ok(None);
        };
        match self
            .store
            .find_record(scope, Collection::Invoices, id)
            .await?
        {
            Some(r) => Ok(Some((from_body(&r.id, &r.body)?, r.version))),
            None => Ok(None),
        }
    }
}
