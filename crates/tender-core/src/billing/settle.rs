//! Invoices their customer pays: a subscription's first invoice left for the customer
//! (`payment_behavior=default_incomplete`) is paid by an intent the customer confirms in the
//! browser, and a try that asked for 3-D Secure is finished by the customer on the
//! authentication page. Either way the payment settles outside billing; its batch schedules a
//! [`TaskKind::SettleInvoicePayment`] task, which applies the outcome here as a try by hand
//! would (the invoice paid and its subscription active, or the try's failure recorded).
//!
//! And the other way round: an invoice voided (by hand, or an incomplete subscription
//! expiring) cancels the intent it was waiting on, in the same batch, so that a customer can
//! never pay an invoice that no longer asks for money.
//!
//! **An invoice takes the customer's money once.** A try that asked for 3-D Secure may be
//! authenticated late, after another try (by hand, on the hosted page) was made. So:
//! - an invoice one of whose payments already succeeded is paid by it, never charged again
//!   ([`Billing::succeeded_payment`], asked before every try);
//! - the batch that marks an invoice paid cancels its other tries still waiting on the
//!   customer ([`Billing::cancel_other_tries`]);
//! - a payment that succeeds all the same after its invoice stopped asking for money (a race
//!   with a try, or a connector's payment authenticated at its processor) is refunded in full
//!   by its settle task (reason `duplicate`).
//!
//! Depends on the invoice's rules ([`super::invoices`]), the payment as stored, refunds (the
//! safety net) and the storage port.

use crate::auth::{KeyKind, Principal, Scope};
use crate::billing::invoice::{Invoice, InvoiceStatus};
use crate::billing::outcome::Outcome;
use crate::billing::Billing;
use crate::documents::batch::Batch;
use crate::documents::document::{from_body, to_body};
use crate::error::CoreResult;
use crate::ids::{self, IdKind};
use crate::payments::payment::{CancellationReason, Payment, PaymentStatus};
use crate::refunds::refund::RefundReason;
use crate::refunds::service::CreateRefund;
use crate::services::RequestContext;
use crate::store::{ClaimedTask, Collection};

impl Billing<'_> {
    /// The `settle_invoice_payment` task: the payment it names settled; its invoice, if it is
    /// still open and waiting on that payment, is paid or records the failed try.
    pub(crate) async fn settle_invoice_payment(&self, task: &ClaimedTask) -> CoreResult<()> {
        let scope = &task.scope;
        let Some((payment, _)) = self.load_due::<Payment>(task).await? else {
            return Ok(());
        };
        let Some(invoice_id) = &payment.invoice else {
            return self.drop_task(task, "not an invoice's payment").await;
        };
        let Some(record) = self
            .store
            .find_record(scope, Collection::Invoices, invoice_id)
            .await?
        else {
            return self.drop_task(task, "its invoice is gone").await;
        };
        let invoice: Invoice = from_body(&record.id, &record.body)?;
        // A success pays the open invoice whichever of its tries it was (an earlier try
        // authenticated late still paid); a failure counts only as its latest try.
        let latest = invoice.payment.as_deref() == Some(payment.id.as_str());
        let counts = match payment.status {
            PaymentStatus::Succeeded => latest || invoice.payments.contains(&payment.id),
            PaymentStatus::Failed => latest,
            _ => false,
        };
        if payment.status == PaymentStatus::Succeeded
            && invoice.status != InvoiceStatus::Open
            && invoice.payment.as_deref() != Some(payment.id.as_str())
        {
            return self.refund_extra(task, &payment).await;
        }
        if invoice.status != InvoiceStatus::Open || !counts {
            return self
                .drop_task(task, "the invoice no longer waits on it")
                .await;
        }
        let svc = self.for_customer_clock(scope, &invoice.customer).await?;
        let billing = svc.billing();
        let subscription = billing.invoice_subscription(scope, &invoice).await?;
        let (after, mut ops) = billing.apply_try(
            scope,
            (&invoice, record.version),
            subscription.as_ref().map(|(s, v)| (s, *v)),
            &Outcome::of(&payment),
            false,
        )?;
        self.cancel_other_tries(scope, &after, &mut ops).await?;
        ops.done(task);
        self.commit_background(ops).await
    }

    /// A payment of an invoice that no longer asks for money (paid by another of its
    /// payments, or voided) succeeded all the same: all of it still refundable goes back.
    async fn refund_extra(&self, task: &ClaimedTask, payment: &Payment) -> CoreResult<()> {
        if payment.refundable() > 0 {
            tracing::warn!(payment = %payment.id, "an invoice's payment succeeded after the invoice was settled: refunded");
            let ctx = RequestContext {
                principal: Principal {
                    scope: task.scope.clone(),
                    key_kind: KeyKind::Secret,
                },
                request_id: ids::generate(IdKind::Request),
                idempotency: None,
                client: None,
            };
            let refund = CreateRefund {
                payment: payment.id.clone(),
                amount: None,
                reason: Some(RefundReason::Duplicate),
                metadata: vec![("tender_reason".into(), "invoice_already_settled".into())],
            };
            self.refunds().create_refund(&ctx, refund).await?;
        }
        self.drop_task(task, "refunded: its invoice was settled already")
            .await
    }

    /// The payment of `invoice` that succeeded, if one did (a try authenticated late, its
    /// settle task not run yet).
    pub(crate) async fn succeeded_payment(
        &self,
        scope: &Scope,
        invoice: &Invoice,
    ) -> CoreResult<Option<String>> {
        for id in invoice.payments.iter().rev() {
            if let Some(r) = self
                .store
                .find_record(scope, Collection::Payments, id)
                .await?
            {
                let payment: Payment = from_body(&r.id, &r.body)?;
                if payment.status == PaymentStatus::Succeeded {
                    return Ok(Some(payment.id));
                }
            }
        }
        Ok(None)
    }

    /// Adds to `ops`, when `invoice` (as it will be written) is paid, the cancel of its other
    /// tries still waiting on the customer (3-D Secure not done, an intent not confirmed), so
    /// that none can take the customer's money too. A connector's is left to its processor
    /// (whose authentication page it is); should it succeed, its settle task refunds it.
    pub(crate) async fn cancel_other_tries(
        &self,
        scope: &Scope,
        invoice: &Invoice,
        ops: &mut Batch,
    ) -> CoreResult<()> {
        if invoice.status != InvoiceStatus::Paid {
            return Ok(());
        }
        self.cancel_waiting(scope, invoice, invoice.payment.as_deref(), ops)
            .await
    }

    /// Adds to `ops` the cancel of `invoice`'s tries (but `except`) still waiting on the
    /// customer, each with its `payment.canceled`; a connector's is left to its processor.
    async fn cancel_waiting(
        &self,
        scope: &Scope,
        invoice: &Invoice,
        except: Option<&str>,
        ops: &mut Batch,
    ) -> CoreResult<()> {
        for id in &invoice.payments {
            if except == Some(id.as_str()) {
                continue;
            }
            let Some(record) = self
                .store
                .find_record(scope, Collection::Payments, id)
                .await?
            else {
                continue;
            };
            let mut payment: Payment = from_body(&record.id, &record.body)?;
            let waiting = matches!(
                payment.status,
                PaymentStatus::RequiresAction
                    | PaymentStatus::RequiresPaymentMethod
                    | PaymentStatus::RequiresConfirmation
            );
            if !waiting || payment.connector.is_some() {
                continue;
            }
            payment.status = PaymentStatus::Canceled;
            payment.canceled_at = Some(self.now());
            payment.cancellation_reason = Some(match except {
                Some(_) => CancellationReason::Duplicate,
                None => CancellationReason::Abandoned,
            });
            ops.update_stored(&payment, record.version, to_body(&payment)?)
                .event("payment.canceled", &payment)?;
        }
        Ok(())
    }

    /// The services in the time of `customer`'s test clock, if it has one.
    async fn for_customer_clock(
        &self,
        scope: &Scope,
        customer: &str,
    ) -> CoreResult<crate::services::Services> {
        let (customer, _) = self.billing_customer(scope, customer, "customer").await?;
        self.for_clock(scope, customer.test_clock.as_deref()).await
    }

    /// Adds to `ops` the cancel of every try of `invoice` still waiting on its customer: the
    /// invoice is being voided. `false`: it must not be, one of its payments succeeded and its
    /// settle task will mark it paid (a void now would keep the customer's money for a voided
    /// invoice).
    pub(crate) async fn cancel_waiting_intent(
        &self,
        scope: &Scope,
        invoice: &Invoice,
        ops: &mut Batch,
    ) -> CoreResult<bool> {
        if self.succeeded_payment(scope, invoice).await?.is_some() {
            return Ok(false);
        }
        self.cancel_waiting(scope, invoice, None, ops).await?;
        Ok(true)
    }
}
