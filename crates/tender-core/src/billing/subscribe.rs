//! `POST /subscriptions`: the items' prices checked, the subscription built in its customer's
//! time (a test clock's, if any), started (a trial, or its first invoice), recorded, and its
//! first invoice tried in the same request (its `pay_invoice` task does the same if the
//! process dies first).

use crate::auth::Scope;
use crate::billing::invoice::{BillingReason, Invoice, InvoiceStatus};
use crate::billing::model::{
    period_end, EmbeddedList, Price, PriceType, Recurring, INCOMPLETE_EXPIRY_SECS, MAX_ITEMS,
    MAX_QUANTITY, MAX_TRIAL_DAYS, TRIAL_WILL_END_SECS,
};
use crate::billing::numbering::lost_number_race;
use crate::billing::subscription::{
    Subscription, SubscriptionItem, SubscriptionStatus, TrialEndBehavior, TrialSettings,
};
use crate::billing::subscriptions::{CreateSubscription, PaymentBehavior};
use crate::billing::Billing;
use crate::customers::customer::Customer;
use crate::documents::batch::Batch;
use crate::documents::document::{from_body, to_value};
use crate::error::{CoreError, CoreResult};
use crate::ids::{self, IdKind};
use crate::metadata;
use crate::money::Currency;
use crate::services::RequestContext;
use crate::store::Collection;
use crate::task::TaskKind;
use crate::validate::check_amount;

impl Billing<'_> {
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
    /// its first invoice), recorded, and its first invoice tried. Subscriptions started at once
    /// take their first invoices' numbers from one sequence: one whose batch lost that race
    /// wrote nothing and is made again. (Only that race: after its batch, a start is never run
    /// twice.)
    pub async fn create_subscription(
        &self,
        ctx: &RequestContext,
        cmd: CreateSubscription,
    ) -> CoreResult<Subscription> {
        let mut tries = 0;
        loop {
            match self.start_subscription_once(ctx, &cmd).await {
                Err(e) if lost_number_race(&e) && tries < NUMBER_RACE_RETRIES => {
                    tries += 1;
                    tokio::task::yield_now().await;
                }
                other => return other,
            }
        }
    }

    async fn start_subscription_once(
        &self,
        ctx: &RequestContext,
        cmd: &CreateSubscription,
    ) -> CoreResult<Subscription> {
        let scope = ctx.scope();
        let (customer, customer_version) = self
            .billing_customer(scope, &cmd.customer, "customer")
            .await?;
        let items = self.subscription_items(scope, &cmd.items).await?;
        let (currency, recurring) = self
            .check_subscription(scope, cmd, &customer, &items)
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
            pending_setup_intent: None,
            trial_settings: TrialSettings {
                end_behavior: TrialEndBehavior {
                    missing_payment_method: cmd.missing_payment_method,
                },
            },
            test_clock: customer.test_clock.clone(),
            metadata: metadata::on_create(cmd.metadata.clone())?,
            created: now,
            livemode: scope.livemode(),
        };
        let mut ops = svc.batch(ctx);
        ops.check(Collection::Customers, &customer.id, customer_version)
            .schedule(TaskKind::RenewSubscription, &sub.id, sub.current_period_end);
        let charge_now = svc
            .billing()
            .start_collecting(ctx, &mut sub, &mut ops, cmd.payment_behavior)
            .await?;
        ops.insert(&sub)?
            .event("customer.subscription.created", &sub)?;
        let started = (sub, charge_now, cmd.payment_behavior);
        self.record_subscription(ctx, &svc, ops, started, &cmd.customer)
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
            // Its invoices are charged off-session with a saved card: one a processor keeps
            // (CONTRACT §15), or one Tender may send.
            let card = self
                .invoice_card(scope, &customer.id, cmd.default_payment_method.as_deref())
                .await?;
            if card.and_then(|c| c.connector).is_none() {
                self.connectors()
                    .require_off_session_cards(scope, "default_payment_method")
                    .await?;
            }
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
            && cmd.payment_behavior != PaymentBehavior::DefaultIncomplete
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

    /// A new subscription started ([`Self::start_subscription`]) and how its money is
    /// collected: the first invoice to charge in this request, if any. Left to the customer
    /// (`default_incomplete`), that invoice's payment is an intent made in the same batch, and a
    /// trial gets a SetupIntent that collects the card (`pending_setup_intent`).
    async fn start_collecting(
        &self,
        ctx: &RequestContext,
        sub: &mut Subscription,
        ops: &mut Batch,
        behavior: PaymentBehavior,
    ) -> CoreResult<Option<Invoice>> {
        let intent = (behavior == PaymentBehavior::DefaultIncomplete)
            .then(|| ids::generate(IdKind::Payment));
        let first_invoice = self
            .start_subscription(ctx.scope(), sub, ops, intent.as_deref())
            .await?;
        if intent.is_some() && sub.trial_end.is_some() {
            let seti = self.setup_intents().pending_for(ctx, &sub.customer, ops)?;
            sub.pending_setup_intent = Some(seti);
        }
        Ok(match (&intent, first_invoice) {
            (Some(id), Some(invoice)) if invoice.status == InvoiceStatus::Open => {
                let payment = self.payments().invoice_intent(
                    ctx,
                    id,
                    (invoice.amount_due, invoice.currency),
                    &invoice.customer,
                    &invoice.id,
                )?;
                ops.insert_stored(&payment, crate::documents::document::to_body(&payment)?)
                    .event("payment.created", &payment)?;
                None
            }
            (_, first_invoice) => first_invoice,
        })
    }

    /// A new subscription's start, in `sub`'s time (`self` runs at its clock): a trial ends with
    /// a reminder before it; otherwise its first invoice is opened (paid at once when it is
    /// free) and returned.
    async fn start_subscription(
        &self,
        scope: &Scope,
        sub: &mut Subscription,
        ops: &mut Batch,
        intent: Option<&str>,
    ) -> CoreResult<Option<Invoice>> {
        let now = self.now();
        crate::billing::upcoming::schedule_upcoming(ops, &sub.id, (now, sub.current_period_end));
        Ok(match sub.trial_end {
            Some(end) => {
                if end - TRIAL_WILL_END_SECS > now {
                    ops.schedule(TaskKind::TrialWillEnd, &sub.id, end - TRIAL_WILL_END_SECS);
                }
                None
            }
            None => {
                let (invoice, invoice_ops) = self
                    .open_invoice(
                        scope,
                        sub,
                        (
                            (now, sub.current_period_end),
                            BillingReason::SubscriptionCreate,
                        ),
                        intent,
                    )
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
        (sub, first_invoice, behavior): (Subscription, Option<Invoice>, PaymentBehavior),
        customer: &str,
    ) -> CoreResult<Subscription> {
        let scope = ctx.scope();
        let Some(invoice) = first_invoice.filter(|i| i.status == InvoiceStatus::Open) else {
            let object = to_value(&sub)?;
            self.commit(ctx, ops, Ok(&object))
                .await
                .map_err(|e| customer_gone(e, customer))?;
            return Ok(sub);
        };
        // The first invoice is charged now: the subscription is recorded first (a retry after
        // a crash is answered with it as it is then), then tried once like its task would.
        self.claim_key(ctx).await?;
        self.commit_checkpoint(ctx, ops, Collection::Subscriptions, &sub.id)
            .await
            .map_err(|e| customer_gone(e, customer))?;
        svc.billing().first_try(scope, &invoice.id).await?;
        let (sub, _): (Subscription, i64) = self
            .load(scope, Collection::Subscriptions, "subscription", &sub.id)
            .await?;
        if behavior == PaymentBehavior::ErrorIfIncomplete
            && sub.status == SubscriptionStatus::Incomplete
        {
            return Err(svc.billing().end_failed_start(ctx, &sub.id).await);
        }
        self.commit(ctx, self.batch(ctx), Ok(&to_value(&sub)?))
            .await?;
        Ok(sub)
    }

    /// A start whose first invoice was declined, asked to fail then (`error_if_incomplete`):
    /// the subscription ends now (`incomplete_expired`, its invoice void) and the request
    /// answers with the decline, kept under its idempotency key.
    async fn end_failed_start(&self, ctx: &RequestContext, id: &str) -> CoreError {
        let ended = async {
            let scope = ctx.scope();
            let (sub, version): (Subscription, i64) = self
                .load(scope, Collection::Subscriptions, "subscription", id)
                .await?;
            let declined = match self.latest_invoice(scope, &sub).await? {
                Some((invoice, _)) => self.decline_of(scope, &invoice).await?,
                None => None,
            };
            let decline = declined.unwrap_or_else(|| {
                CoreError::invalid(
                    "default_payment_method",
                    "invoice_payment_method_missing",
                    "The subscription's first invoice could not be paid.",
                )
            });
            let ops = self
                .expire_ops(scope, &sub, version)
                .await?
                .unwrap_or_else(|| self.batch(ctx));
            self.commit(ctx, ops, Err(&decline)).await?;
            Ok::<_, CoreError>(decline)
        };
        match ended.await {
            Ok(decline) | Err(decline) => decline,
        }
    }

    /// The error the latest try of `invoice` was declined with, if it was.
    async fn decline_of(&self, scope: &Scope, invoice: &Invoice) -> CoreResult<Option<CoreError>> {
        let Some(id) = &invoice.payment else {
            return Ok(None);
        };
        let (payment, _): (crate::payments::payment::Payment, i64) = self
            .load(scope, Collection::Payments, "payment", id)
            .await?;
        Ok(crate::billing::outcome::Outcome::of(&payment).error())
    }

    /// The first try of a new subscription's invoice, in the request that created it (its
    /// `pay_invoice` task, due at once, does the same if this process dies first; whichever
    /// comes second finds the invoice tried).
    pub(crate) async fn first_try(&self, scope: &Scope, invoice_id: &str) -> CoreResult<()> {
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
}

/// How many times a start that lost the invoice number race is made again.
const NUMBER_RACE_RETRIES: usize = 64;

/// A subscription's batch that lost its check of `customer` (deleted or changed since it was
/// read) is the client's error; any other conflict (the invoice sequence) is run again.
fn customer_gone(e: CoreError, customer: &str) -> CoreError {
    match e {
        CoreError::Store(crate::error::StoreError::Conflict(id)) if id == customer => {
            CoreError::missing_reference("customer", "customer", customer)
        }
        other => other,
    }
}
