//! Subscriptions (`sub_`): create, update, cancel, and the tasks that move them through time —
//! `renew_subscription` at each period's end (and at the trial's end), `trial_will_end` three
//! days before it, `expire_incomplete` 23 hours after an unpaid start.
//!
//! A renewal is one batch: the new period on the subscription, the period's invoice (open), the
//! events, the next renewal and the invoice's first try (a `pay_invoice` task due at once). The
//! renewal task names the period end it is for: a stale or repeated one finds the subscription
//! already renewed and does nothing, so a period is never invoiced twice.

use crate::auth::Scope;
use crate::billing::invoice::{invoice_after, Invoice, InvoiceEvent, InvoiceStatus};
use crate::billing::model::{
    next_period_end, period_end, EmbeddedList, Price, PriceType, Recurring, INCOMPLETE_EXPIRY_SECS,
    MAX_ITEMS, MAX_QUANTITY, MAX_TRIAL_DAYS, TRIAL_WILL_END_SECS,
};
use crate::billing::subscription::{
    subscription_after, Subscription, SubscriptionEvent, SubscriptionItem, SubscriptionStatus,
};
use crate::billing::Billing;
use crate::customers::customer::Customer;
use crate::documents::batch::Batch;
use crate::documents::document::{from_body, to_value};
use crate::error::{CoreError, CoreResult};
use crate::ids::{self, IdKind};
use crate::metadata;
use crate::money::Currency;
use crate::services::RequestContext;
use crate::store::{ClaimedTask, Collection};
use crate::task::TaskKind;
use crate::validate::check_amount;

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
}

/// `POST /subscriptions/{id}`: only these change.
#[derive(Debug, Default)]
pub struct UpdateSubscription {
    pub cancel_at_period_end: Option<bool>,
    pub default_payment_method: Option<String>,
    pub metadata: Option<Vec<(String, String)>>,
}

fn state_error(s: &Subscription, what: &str) -> CoreError {
    CoreError::invalid(
        "subscription",
        "subscription_unexpected_state",
        format!(
            "This subscription's status is {}; {what} only before it ends.",
            s.status.as_str()
        ),
    )
}

impl Billing<'_> {
    /// A new open invoice of `sub` for the period `[start, end)`, and the writes that record
    /// it with its events (`invoice.created`, `invoice.finalized`; `invoice.paid` at once for an
    /// invoice of nothing) and its first try, due now.
    async fn open_invoice(
        &self,
        scope: &Scope,
        sub: &Subscription,
        start: i64,
        end: i64,
    ) -> CoreResult<(Invoice, Batch)> {
        let now = self.now();
        let id = ids::generate(IdKind::Invoice);
        // The lines name the products as they are called now.
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
        let amount: i64 = lines.iter().map(|l| l.amount).sum();
        let free = amount == 0;
        let invoice = Invoice {
            hosted_invoice_url: format!("{}/invoices/{id}", self.config.receipt_base),
            id,
            object: "invoice".into(),
            customer: sub.customer.clone(),
            subscription: Some(sub.id.clone()),
            status: if free {
                InvoiceStatus::Paid
            } else {
                InvoiceStatus::Open
            },
            currency: sub.currency,
            amount_due: amount,
            amount_paid: 0,
            lines: EmbeddedList::new(lines),
            period_start: start,
            period_end: end,
            attempt_count: 0,
            next_payment_attempt: (!free).then_some(now),
            payment: None,
            payments: Vec::new(),
            first_failed_at: None,
            dunning_step: 0,
            created: now,
            livemode: scope.livemode(),
        };
        let mut ops = self.background(scope);
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
        } else {
            ops.schedule(TaskKind::PayInvoice, &invoice.id, now);
        }
        Ok((invoice, ops))
    }

    /// The prices of the items, checked: each exists here, is active and recurring, and all
    /// share the first one's currency and schedule.
    async fn subscription_items(
        &self,
        scope: &Scope,
        items: &[(String, Option<i64>)],
    ) -> CoreResult<Vec<SubscriptionItem>> {
        if items.is_empty() || items.len() > MAX_ITEMS {
            return Err(CoreError::invalid(
                "items",
                "parameter_invalid",
                format!("A subscription has 1 to {MAX_ITEMS} items."),
            ));
        }
        let mut out: Vec<SubscriptionItem> = Vec::with_capacity(items.len());
        for (i, (price_id, quantity)) in items.iter().enumerate() {
            let param = format!("items[{i}][price]");
            let record = self
                .referenced(
                    scope,
                    (Collection::Prices, IdKind::Price, "price"),
                    price_id,
                    &param,
                )
                .await?;
            let price: Price = from_body(&record.id, &record.body)?;
            let invalid =
                |message: String| CoreError::invalid(&param, "parameter_invalid", message);
            if price.kind != PriceType::Recurring {
                return Err(invalid(format!(
                    "{price_id} is a one-time price; a subscription needs recurring prices."
                )));
            }
            if !price.active {
                return Err(invalid(format!("{price_id} is not active.")));
            }
            if let Some(first) = out.first() {
                if first.price.currency != price.currency {
                    return Err(invalid(format!(
                        "{price_id} is in {}, the subscription in {}: all items share one currency.",
                        price.currency.code(),
                        first.price.currency.code()
                    )));
                }
                if first.price.recurring != price.recurring {
                    return Err(invalid(format!(
                        "{price_id} bills on another schedule than {}: all items share one interval.",
                        first.price.id
                    )));
                }
            }
            if out.iter().any(|i| i.price.id == price.id) {
                return Err(invalid(format!("{price_id} is already an item.")));
            }
            let quantity = quantity.unwrap_or(1);
            if !(1..=MAX_QUANTITY).contains(&quantity) {
                return Err(CoreError::invalid(
                    format!("items[{i}][quantity]"),
                    "parameter_invalid",
                    format!("quantity must be 1 to {MAX_QUANTITY}."),
                ));
            }
            out.push(SubscriptionItem {
                id: ids::generate(IdKind::SubscriptionItem),
                object: "subscription_item".into(),
                price,
                quantity,
            });
        }
        Ok(out)
    }

    /// `POST /subscriptions`: checked, built in its customer's time, started (a trial, or
    /// its first invoice), recorded, and its first invoice tried.
    pub async fn create_subscription(
        &self,
        ctx: &RequestContext,
        cmd: CreateSubscription,
    ) -> CoreResult<Subscription> {
        let scope = ctx.scope();
        let (customer, customer_version) = self
            .billing_customer(scope, &cmd.customer, "customer")
            .await?;
        let items = self.subscription_items(scope, &cmd.items).await?;
        let (currency, recurring) = self
            .check_subscription(scope, &cmd, &customer, &items)
            .await?;
        // A test clock's customer subscribes in the clock's time.
        let svc = self
            .for_clock(scope, customer.test_clock.as_deref())
            .await?;
        let now = svc.now();
        let trial_end = cmd.trial_period_days.map(|d| now + d * 86_400);
        let anchor = trial_end.unwrap_or(now);
        let mut sub = Subscription {
            id: ids::generate(IdKind::Subscription),
            object: "subscription".into(),
            customer: customer.id.clone(),
            status: if trial_end.is_some() {
                SubscriptionStatus::Trialing
            } else {
                SubscriptionStatus::Incomplete
            },
            items: EmbeddedList::new(items),
            currency,
            billing_cycle_anchor: anchor,
            current_period_start: now,
            current_period_end: trial_end.unwrap_or_else(|| period_end(anchor, recurring, 1)),
            trial_start: trial_end.map(|_| now),
            trial_end,
            cancel_at_period_end: cmd.cancel_at_period_end,
            canceled_at: None,
            ended_at: None,
            latest_invoice: None,
            default_payment_method: cmd.default_payment_method.clone(),
            test_clock: customer.test_clock.clone(),
            metadata: metadata::on_create(cmd.metadata)?,
            created: now,
            livemode: scope.livemode(),
        };
        let mut ops = svc.batch(ctx);
        ops.check(Collection::Customers, &customer.id, customer_version)
            .schedule(TaskKind::RenewSubscription, &sub.id, sub.current_period_end);
        let first_invoice = svc
            .billing()
            .start_subscription(scope, &mut sub, &mut ops)
            .await?;
        ops.insert(&sub)?
            .event("customer.subscription.created", &sub)?;
        self.record_subscription(ctx, &svc, ops, sub, first_invoice, &cmd.customer)
            .await
    }

    /// What `POST /subscriptions` asks that its prices and the customer must allow: recurring
    /// prices, an amount in bounds, a card of the customer's (unless a trial comes first);
    /// the currency and interval.
    async fn check_subscription(
        &self,
        scope: &Scope,
        cmd: &CreateSubscription,
        customer: &Customer,
        items: &[SubscriptionItem],
    ) -> CoreResult<(Currency, Recurring)> {
        let first = &items[0].price;
        let (currency, Some(recurring)) = (first.currency, first.recurring) else {
            return Err(CoreError::invalid(
                "items",
                "parameter_invalid",
                "A subscription needs recurring prices.",
            ));
        };
        let amount: i64 = items.iter().map(|i| i.price.unit_amount * i.quantity).sum();
        if amount > 0 {
            check_amount("items", amount, currency)?;
        }
        if let Some(pm) = &cmd.default_payment_method {
            self.require_card_of(scope, &customer.id, pm, "default_payment_method")
                .await?;
        }
        if let Some(days) = cmd.trial_period_days {
            if !(1..=MAX_TRIAL_DAYS).contains(&days) {
                return Err(CoreError::invalid(
                    "trial_period_days",
                    "parameter_invalid",
                    format!("trial_period_days must be 1 to {MAX_TRIAL_DAYS}."),
                ));
            }
        } else if amount > 0
            && self
                .invoice_card(scope, &customer.id, cmd.default_payment_method.as_deref())
                .await?
                .is_none()
        {
            return Err(CoreError::invalid(
                "default_payment_method",
                "parameter_missing",
                "This customer has no saved card: save one (or give trial_period_days) before subscribing.",
            ));
        }
        Ok((currency, recurring))
    }

    /// A new subscription's start, in `sub`'s time (`self` runs at its clock): a trial ends with
    /// a reminder before it; otherwise its first invoice is opened (paid at once when it is
    /// free) and returned.
    async fn start_subscription(
        &self,
        scope: &Scope,
        sub: &mut Subscription,
        ops: &mut Batch,
    ) -> CoreResult<Option<Invoice>> {
        let now = self.now();
        Ok(match sub.trial_end {
            Some(end) => {
                if end - TRIAL_WILL_END_SECS > now {
                    ops.schedule(TaskKind::TrialWillEnd, &sub.id, end - TRIAL_WILL_END_SECS);
                }
                None
            }
            None => {
                let (invoice, invoice_ops) = self
                    .open_invoice(scope, sub, now, sub.current_period_end)
                    .await?;
                sub.latest_invoice = Some(invoice.id.clone());
                if invoice.status == InvoiceStatus::Paid {
                    sub.status = SubscriptionStatus::Active;
                } else {
                    ops.schedule(
                        TaskKind::ExpireIncomplete,
                        &sub.id,
                        now + INCOMPLETE_EXPIRY_SECS,
                    );
                }
                ops.extend(invoice_ops);
                Some(invoice)
            }
        })
    }

    /// Records a new subscription (a 404 naming `customer` if the customer went meanwhile);
    /// an open first invoice is charged in this request.
    async fn record_subscription(
        &self,
        ctx: &RequestContext,
        svc: &crate::services::Services,
        ops: Batch,
        sub: Subscription,
        first_invoice: Option<Invoice>,
        customer: &str,
    ) -> CoreResult<Subscription> {
        let scope = ctx.scope();
        let Some(invoice) = first_invoice.filter(|i| i.status == InvoiceStatus::Open) else {
            let object = to_value(&sub)?;
            match self.commit(ctx, ops, Ok(&object)).await {
                Err(CoreError::Store(crate::error::StoreError::Conflict(_))) => {
                    return Err(CoreError::missing_reference(
                        "customer", "customer", customer,
                    ))
                }
                other => other?,
            }
            return Ok(sub);
        };
        // The first invoice is charged now: the subscription is recorded first (a retry after
        // a crash is answered with it as it is then), then tried once like its task would.
        self.claim_key(ctx).await?;
        match self
            .commit_checkpoint(ctx, ops, Collection::Subscriptions, &sub.id)
            .await
        {
            Err(CoreError::Store(crate::error::StoreError::Conflict(_))) => {
                return Err(CoreError::missing_reference(
                    "customer", "customer", customer,
                ))
            }
            other => other?,
        }
        svc.billing().first_try(scope, &invoice.id).await?;
        let (sub, _): (Subscription, i64) = self
            .load(scope, Collection::Subscriptions, "subscription", &sub.id)
            .await?;
        self.commit(ctx, self.batch(ctx), Ok(&to_value(&sub)?))
            .await?;
        Ok(sub)
    }

    /// The first try of a new subscription's invoice, in the request that created it (its
    /// `pay_invoice` task, due at once, does the same if this process dies first; whichever
    /// comes second finds the invoice tried).
    async fn first_try(&self, scope: &Scope, invoice_id: &str) -> CoreResult<()> {
        self.retry_on_conflict(|| async {
            let (invoice, version): (Invoice, i64) = self
                .load(scope, Collection::Invoices, "invoice", invoice_id)
                .await?;
            if invoice.status != InvoiceStatus::Open || invoice.attempt_count > 0 {
                return Ok(());
            }
            match self
                .try_invoice(scope, (&invoice, version), true, None)
                .await
            {
                Ok((_, _, ops)) => self.commit_background(ops).await,
                // Its task is trying it right now: that try is the first.
                Err(CoreError::IdempotencyInProgress) => Ok(()),
                Err(e) => Err(e),
            }
        })
        .await
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
        let now = self.now();
        let mut after = before.clone();
        after.status = subscription_after(before.status, SubscriptionEvent::Canceled)
            .map_err(|_| state_error(before, "it can be canceled"))?;
        after.canceled_at = Some(now);
        after.ended_at = Some(now);
        let mut ops = self.batch_for(ctx, scope);
        ops.update(&after, version)?
            .event("customer.subscription.deleted", &after)?;
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
        let (invoice, invoice_ops) = self.open_invoice(scope, &after, start, end).await?;
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
        let now = self.now();
        let mut after = before.clone();
        after.status = SubscriptionStatus::IncompleteExpired;
        after.ended_at = Some(now);
        let mut ops = self.background(scope);
        ops.change("customer.subscription.updated", (&before, &after), version)?;
        // Its unpaid first invoice is voided.
        if let Some((mut invoice, v)) = self.latest_invoice(scope, &before).await? {
            if let Some(status) = invoice_after(invoice.status, InvoiceEvent::Voided) {
                invoice.status = status;
                invoice.next_payment_attempt = None;
                ops.update(&invoice, v)?.event("invoice.voided", &invoice)?;
            }
        }
        ops.done(task);
        self.commit_background(ops).await
    }

    /// The subscription's latest invoice and its version, unless it is gone.
    async fn latest_invoice(
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
