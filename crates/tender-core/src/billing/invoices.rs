//! Invoices (`in_`): each try to collect one, through the normal payment path, and what the
//! try's outcome does to the invoice and its subscription.
//!
//! - A **try** ([`Billing::charge_try`]) creates a payment (`invoice` names the invoice) with
//!   the customer's card, under Tender's own idempotency key `invoice:{id}:{n}` for the n-th
//!   try ([`Services::begin_internal`]): run again after a crash, it gets the same payment back
//!   instead of charging twice.
//! - **Automatic tries** are the `pay_invoice` task, due at the invoice's
//!   `next_payment_attempt`. A failed one schedules the next on the dunning days after the
//!   first failure (`--dunning-days`, default 1, 3, 5, 7) and makes the subscription
//!   `past_due`; a hard decline, or the last day, makes the invoice `uncollectible` and the
//!   subscription `unpaid`. The first invoice of a subscription without a trial is tried once,
//!   in the request that creates it: declined, the subscription stays `incomplete`.
//! - **`POST /invoices/{id}/pay`** tries now (optionally with another card of the customer's):
//!   it counts as a try but leaves the dunning schedule as it is; a decline answers 402.
//! - The card an automatic try charges: the subscription's `default_payment_method` while it
//!   is still attached to the customer, else the customer's
//!   `invoice_settings.default_payment_method` (likewise), else the card the customer saved
//!   last — so a customer who saves a new card is charged on it at the next try.

use serde_json::json;

use crate::auth::{KeyKind, Principal, Scope};
use crate::billing::invoice::{
    invoice_after, invoice_state_error, Invoice, InvoiceEvent, InvoiceStatus,
};
use crate::billing::outcome::{tried, Outcome, Tried};
use crate::billing::subscription::{subscription_after, Subscription, SubscriptionStatus};
use crate::documents::batch::Batch;
use crate::documents::document::{from_body, to_body, to_value};
use crate::documents::idempotency::{Internal, Settled};
use crate::documents::kept::Kept;
use crate::error::{CoreError, CoreResult};
use crate::ids::{self, CustomerId, IdKind, PaymentMethodId};
use crate::money::Amount;
use crate::payment_methods::payment_method::PaymentMethod;
use crate::payments::create::{CreatePayment, PaymentMethodInput};

use crate::billing::Billing;
use crate::services::RequestContext;
use crate::store::{ClaimedTask, Collection, Field, ListQuery};
use crate::task::TaskKind;

/// The payment a try of `invoice` makes: its amount due, on the customer's `card`, naming the
/// invoice.
fn try_command(invoice: &Invoice, card: String) -> CoreResult<CreatePayment> {
    let amount = Amount::parse(invoice.amount_due, invoice.currency).map_err(|_| {
        CoreError::invalid(
            "amount_due",
            "amount_too_small",
            "This invoice's amount cannot be charged.",
        )
    })?;
    Ok(CreatePayment {
        amount,
        currency: invoice.currency,
        payment_method: PaymentMethodInput::Saved(PaymentMethodId::stored(card)),
        customer: Some(CustomerId::stored(invoice.customer.as_str())),
        description: Some(format!("Invoice {}", invoice.id)),
        metadata: Default::default(),
        capture: true,
        save_payment_method: false,
        return_url: None,
        invoice: Some(invoice.id.clone()),
        confirming: None,
    })
}

impl Billing<'_> {
    /// The card an automatic try of `customer`'s invoice charges (see the module's doc).
    pub(crate) async fn invoice_card(
        &self,
        scope: &Scope,
        customer: &str,
        preferred: Option<&str>,
    ) -> CoreResult<Option<PaymentMethod>> {
        // The subscription's card, else the customer's default, each while still attached;
        // the customer is read only when the first does not serve.
        if let Some(method) = self.attached_card(scope, customer, preferred).await? {
            return Ok(Some(method));
        }
        let default = match self
            .store
            .find_record(scope, Collection::Customers, customer)
            .await?
        {
            Some(r) => {
                from_body::<crate::customers::customer::Customer>(&r.id, &r.body)?
                    .invoice_settings
                    .default_payment_method
            }
            None => None,
        };
        if let Some(method) = self
            .attached_card(scope, customer, default.as_deref())
            .await?
        {
            return Ok(Some(method));
        }
        let page = self
            .store
            .list_records(
                scope,
                Collection::PaymentMethods,
                &ListQuery {
                    filters: vec![(Field::Customer, customer.to_string())],
                    limit: 1,
                    ..ListQuery::default()
                },
            )
            .await?;
        page.records
            .first()
            .map(|r| from_body(&r.id, &r.body))
            .transpose()
    }

    /// The card `pm`, if it is still attached to `customer`.
    async fn attached_card(
        &self,
        scope: &Scope,
        customer: &str,
        pm: Option<&str>,
    ) -> CoreResult<Option<PaymentMethod>> {
        let Some(pm) = pm else { return Ok(None) };
        let Some(r) = self
            .store
            .find_record(scope, Collection::PaymentMethods, pm)
            .await?
        else {
            return Ok(None);
        };
        let method: PaymentMethod = from_body(&r.id, &r.body)?;
        Ok((method.customer.as_deref() == Some(customer)).then_some(method))
    }

    /// 400 `payment_method_unexpected_state` naming `param` unless `pm` is a card saved to
    /// `customer`.
    pub(crate) async fn require_card_of(
        &self,
        scope: &Scope,
        customer: &str,
        pm: &str,
        param: &str,
    ) -> CoreResult<()> {
        let card = self.invoice_card(scope, customer, Some(pm)).await?;
        if card.map(|c| c.id).as_deref() != Some(pm) {
            return Err(CoreError::invalid(
                param,
                "payment_method_unexpected_state",
                format!("{param} must be a card saved to the customer {customer}."),
            ));
        }
        Ok(())
    }

    /// The `attempt`-th try of `invoice` with card `card`, through the normal payment path,
    /// under an idempotency key of its own (a try run twice charges once).
    pub(crate) async fn charge_try(
        &self,
        scope: &Scope,
        invoice: &Invoice,
        attempt: u32,
        card: Option<String>,
    ) -> CoreResult<Outcome> {
        if invoice.amount_due == 0 {
            return Ok(Outcome::Paid { payment: None });
        }
        let Some(card) = card else {
            return Ok(Outcome::Failed {
                payment: None,
                code: "invoice_payment_method_missing".into(),
                decline_code: None,
                message: "The customer has no saved card to charge this invoice with.".into(),
            });
        };
        // The name alone says which try: not the card, which may have changed between a try
        // cut short after its payment and its re-run (a new card saved meanwhile). The re-run
        // must get that payment back, not a mismatch that would leave the invoice stuck.
        let name = format!("invoice:{}:{attempt}", invoice.id);
        let legacy = format!("tender-invoice:{}:{attempt}", invoice.id);
        let fingerprinted = json!({"invoice": invoice.id, "attempt": attempt});
        let claim = match self
            .begin_internal(
                scope,
                &name,
                &legacy,
                "POST",
                "/v2/payments",
                &fingerprinted,
            )
            .await?
        {
            Internal::Done(kept) => return self.kept_outcome(scope, kept).await,
            Internal::Run(claim) => claim,
        };
        let ctx = RequestContext {
            principal: Principal {
                scope: scope.clone(),
                key_kind: KeyKind::Secret,
            },
            request_id: ids::generate(IdKind::Request),
            idempotency: Some(claim.hold()),
            client: None,
        };
        let result = self
            .payments()
            .create_payment(&ctx, try_command(invoice, card)?)
            .await;
        // A payment's batch keeps it under the key itself; what is left to keep is an error
        // no batch wrote (the card could not be used).
        let answer = match &result {
            Ok(p) => self.kept_payment(&to_body(p)?, None),
            Err(e) => self.encoder.encode(Err(e), &ctx.request_id),
        };
        match claim.settle(answer.status, &answer.body).await {
            Settled::Send => {}
            // Another run of this try finished first: its outcome stands.
            Settled::Replay(_) => {
                return self
                    .finished_try(scope, &name, &legacy, &fingerprinted)
                    .await
            }
            Settled::Refuse(e) => return Err(e),
        }
        Outcome::of_result(result)
    }

    /// The outcome of a try that ran before, from what it kept: the payment as stored (a
    /// declined one is named by its error), or the error of a try that made none.
    async fn kept_outcome(&self, scope: &Scope, kept: Kept) -> CoreResult<Outcome> {
        let payment_id = match kept {
            Kept::Payment { payment, .. } => return Ok(Outcome::of(&payment)),
            Kept::Current { id, body, .. } => return Ok(Outcome::of(&from_body(&id, &body)?)),
            // An error: the one wire shape read back, and only for what a stored payment
            // cannot say (a try that made none, whose card could not be used).
            Kept::Sent(stored) => {
                let body: serde_json::Value = serde_json::from_slice(&stored.body)
                    .map_err(|e| CoreError::internal("read a try's kept error", e))?;
                let error = &body["error"];
                let text = |key: &str| error[key].as_str().map(str::to_string);
                match text("payment") {
                    Some(id) => id,
                    None => {
                        return Ok(Outcome::Failed {
                            payment: None,
                            code: text("code").unwrap_or_else(|| "payment_failed".into()),
                            decline_code: text("decline_code"),
                            message: text("message").unwrap_or_default(),
                        })
                    }
                }
            }
        };
        let record = self
            .store
            .find_record(scope, Collection::Payments, &payment_id)
            .await?
            .ok_or_else(|| {
                CoreError::from(crate::error::StoreError::Corrupt(format!(
                    "the payment {payment_id} of an invoice's try is gone"
                )))
            })?;
        Ok(Outcome::of(&from_body(&record.id, &record.body)?))
    }

    /// The outcome of a try another run finished while this one ran.
    async fn finished_try(
        &self,
        scope: &Scope,
        name: &str,
        legacy: &str,
        fingerprinted: &serde_json::Value,
    ) -> CoreResult<Outcome> {
        match self
            .begin_internal(scope, name, legacy, "POST", "/v2/payments", fingerprinted)
            .await?
        {
            Internal::Done(kept) => self.kept_outcome(scope, kept).await,
            Internal::Run(_) => Err(CoreError::IdempotencyInProgress),
        }
    }

    /// What a try's outcome does: the invoice and its subscription after it, and the writes
    /// (with their events). `automatic`: a scheduled try, which moves the dunning schedule on;
    /// a try by hand does not.
    pub(crate) fn apply_try(
        &self,
        scope: &Scope,
        (invoice, invoice_version): (&Invoice, i64),
        subscription: Option<(&Subscription, i64)>,
        outcome: &Outcome,
        automatic: bool,
    ) -> CoreResult<(Invoice, Batch)> {
        // A first invoice, and a paused subscription's resumption invoice, are tried once.
        let first_invoice = subscription.is_some_and(|(s, _)| {
            matches!(
                s.status,
                SubscriptionStatus::Incomplete | SubscriptionStatus::Paused
            )
        });
        let Tried {
            after,
            events,
            retry,
            sub_event,
        } = tried(
            invoice,
            outcome,
            (automatic, first_invoice),
            self.now(),
            &self.config.dunning,
        )?;
        let mut ops = self.background(scope);
        ops.update(&after, invoice_version)?;
        if let Some(t) = retry {
            ops.schedule(TaskKind::PayInvoice, &after.id, t);
        }
        let object = to_value(&after)?;
        for kind in events {
            ops.event_json(kind, object.clone(), None)?;
        }
        if let (Some((sub, version)), Some(event)) = (subscription, sub_event) {
            if let Ok(status) = subscription_after(sub.status, event) {
                if status != sub.status {
                    let mut changed = sub.clone();
                    changed.status = status;
                    ops.change("customer.subscription.updated", (sub, &changed), version)?;
                    if sub.status == SubscriptionStatus::Paused {
                        ops.event("customer.subscription.resumed", &changed)?;
                    }
                }
            }
        }
        Ok((after, ops))
    }

    /// Tries the invoice the `pay_invoice` task names, if the task is still the one due.
    pub(crate) async fn pay_invoice_task(&self, task: &ClaimedTask) -> CoreResult<()> {
        let scope = &task.scope;
        let Some((invoice, version)) = self.load_due::<Invoice>(task).await? else {
            return Ok(());
        };
        if invoice.status != InvoiceStatus::Open
            || invoice.next_payment_attempt != Some(task.due_at)
        {
            return self.drop_task(task, "invoice no longer due").await;
        }
        let (_, _, mut ops) = self
            .try_invoice(scope, (&invoice, version), true, None)
            .await?;
        ops.done(task);
        self.commit_background(ops).await
    }

    /// One try of `invoice` with `card` (a card of its customer's, checked by the caller), or
    /// the card its customer would be charged on: the outcome, the invoice after it, and the
    /// writes it makes.
    pub(crate) async fn try_invoice(
        &self,
        scope: &Scope,
        (invoice, version): (&Invoice, i64),
        automatic: bool,
        card: Option<String>,
    ) -> CoreResult<(Outcome, Invoice, Batch)> {
        let subscription = self.invoice_subscription(scope, invoice).await?;
        let card = match card {
            Some(card) => Some(card),
            None => self
                .card_to_charge(scope, invoice, subscription.as_ref().map(|(s, _)| s))
                .await?
                .map(|c| c.id),
        };
        // Paid already by a try authenticated late (its settle task not run yet): by that
        // payment, never by charging again.
        let outcome = match self.succeeded_payment(scope, invoice).await? {
            Some(paid) => Outcome::Paid {
                payment: Some(paid),
            },
            None => {
                self.charge_try(scope, invoice, invoice.attempt_count + 1, card)
                    .await?
            }
        };
        let (after, mut ops) = self.apply_try(
            scope,
            (invoice, version),
            subscription.as_ref().map(|(s, v)| (s, *v)),
            &outcome,
            automatic,
        )?;
        self.cancel_other_tries(scope, &after, &mut ops).await?;
        Ok((outcome, after, ops))
    }

    /// The card a try of `invoice` (of `subscription`) charges when none is named: the
    /// subscription's `default_payment_method` while its customer's, else the customer's newest.
    pub(crate) async fn card_to_charge(
        &self,
        scope: &Scope,
        invoice: &Invoice,
        subscription: Option<&Subscription>,
    ) -> CoreResult<Option<PaymentMethod>> {
        let preferred = subscription.and_then(|s| s.default_payment_method.as_deref());
        self.invoice_card(scope, &invoice.customer, preferred).await
    }

    pub(crate) async fn invoice_subscription(
        &self,
        scope: &Scope,
        invoice: &Invoice,
    ) -> CoreResult<Option<(Subscription, i64)>> {
        let Some(id) = &invoice.subscription else {
            return Ok(None);
        };
        Ok(
            match self
                .store
                .find_record(scope, Collection::Subscriptions, id)
                .await?
            {
                Some(r) => Some((from_body(&r.id, &r.body)?, r.version)),
                None => None,
            },
        )
    }

    /// `POST /invoices/{id}/pay`: try now, with `payment_method` (a card of the invoice's
    /// customer) or the card an automatic try would charge.
    pub async fn pay_invoice(
        &self,
        ctx: &RequestContext,
        id: &str,
        payment_method: Option<String>,
    ) -> CoreResult<Invoice> {
        // A try commits its payment before the invoice: the request's key is claimed first.
        self.claim_key(ctx).await?;
        self.retry_on_conflict(|| async {
            let scope = ctx.scope();
            let (invoice, version): (Invoice, i64) = self
                .load(scope, Collection::Invoices, "invoice", id)
                .await?;
            if invoice.status != InvoiceStatus::Open {
                return Err(invoice_state_error(&invoice, "it can be paid"));
            }
            let (customer, _) = self
                .billing_customer(scope, &invoice.customer, "customer")
                .await?;
            let svc = self
                .for_clock(scope, customer.test_clock.as_deref())
                .await?;
            if let Some(pm) = &payment_method {
                svc.billing()
                    .require_card_of(scope, &invoice.customer, pm, "payment_method")
                    .await?;
            }
            let (outcome, after, ops) = svc
                .billing()
                .try_invoice(scope, (&invoice, version), false, payment_method.clone())
                .await?;
            match outcome.error() {
                None => {
                    self.commit(ctx, ops, Ok(&to_value(&after)?)).await?;
                    Ok(after)
                }
                Some(e) => {
                    self.commit(ctx, ops, Err(&e)).await?;
                    Err(e)
                }
            }
        })
        .await
    }

    /// `POST /v1/invoices/{id}/finalize`: a draft becomes `open` and is tried at once. Tender
    /// finalizes a subscription's invoice when it makes it (CONTRACT §10), so an invoice that is
    /// not a draft answers as Stripe does for one already finalized.
    pub async fn finalize_invoice(&self, ctx: &RequestContext, id: &str) -> CoreResult<Invoice> {
        self.retry_on_conflict(|| async {
            let (before, version): (Invoice, i64) = self
                .load(ctx.scope(), Collection::Invoices, "invoice", id)
                .await?;
            let Some(status) = invoice_after(before.status, InvoiceEvent::Finalized) else {
                return Err(CoreError::invalid(
                    "invoice",
                    "invoice_unexpected_state",
                    "This invoice is already finalized: only a draft invoice can be finalized.",
                ));
            };
            let mut after = before.clone();
            after.status = status;
            after.next_payment_attempt = Some(self.now());
            let mut ops = self.batch(ctx);
            after.number = Some(self.take_invoice_number(ctx.scope(), &mut ops).await?);
            let object = ops.change("invoice.finalized", (&before, &after), version)?;
            ops.schedule(TaskKind::PayInvoice, &after.id, self.now());
            self.commit(ctx, ops, Ok(&object)).await?;
            Ok(after)
        })
        .await
    }

    /// `POST /invoices/{id}/void`: an open invoice will never be paid.
    pub async fn void_invoice(&self, ctx: &RequestContext, id: &str) -> CoreResult<Invoice> {
        self.retry_on_conflict(|| async {
            let scope = ctx.scope();
            let (before, version): (Invoice, i64) = self
                .load(scope, Collection::Invoices, "invoice", id)
                .await?;
            let Some(status) = invoice_after(before.status, InvoiceEvent::Voided) else {
                return Err(invoice_state_error(&before, "it can be voided"));
            };
            let mut after = before.clone();
            after.status = status;
            after.next_payment_attempt = None;
            let object = to_value(&after)?;
            let mut ops = self.batch(ctx);
            ops.update(&after, version)?
                .event_json("invoice.voided", object.clone(), None)?;
            if !self.cancel_waiting_intent(scope, &before, &mut ops).await? {
                return Err(CoreError::invalid(
                    "invoice",
                    "invoice_unexpected_state",
                    "This invoice's payment succeeded: it is being marked paid, so it cannot be voided.",
                ));
            }
            self.commit(ctx, ops, Ok(&object)).await?;
            Ok(after)
        })
        .await
    }
}
