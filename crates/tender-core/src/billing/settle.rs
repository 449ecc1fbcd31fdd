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
//! Depends on the invoice's rules ([`super::invoices`]), the payment as stored and the storage
//! port.

use crate::auth::Scope;
use crate::billing::invoice::{Invoice, InvoiceStatus};
use crate::billing::outcome::Outcome;
use crate::billing::Billing;
use crate::documents::batch::Batch;
use crate::documents::document::{from_body, to_body};
use crate::error::CoreResult;
use crate::payments::payment::{CancellationReason, Payment, PaymentStatus};
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
        if invoice.status != InvoiceStatus::Open || !counts {
            return self
                .drop_task(task, "the invoice no longer waits on it")
                .await;
        }
        let svc = self.for_customer_clock(scope, &invoice.customer).await?;
        let billing = svc.billing();
        let subscription = billing.invoice_subscription(scope, &invoice).await?;
        let (_, mut ops) = billing.apply_try(
            scope,
            (&invoice, record.version),
            subscription.as_ref().map(|(s, v)| (s, *v)),
            &Outcome::of(&payment),
            false,
        )?;
        ops.done(task);
        self.commit_background(ops).await
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

    /// Adds to `ops` the cancel of the intent `invoice` waits on, if it still waits for the
    /// customer (`requires_payment_method`, `requires_confirmation`, or declined): the invoice
    /// is being voided. `false`: it must not be, its payment succeeded and its settle task will
    /// mark it paid (a void now would keep the customer's money for a voided invoice).
    pub(crate) async fn cancel_waiting_intent(
        &self,
        scope: &Scope,
        invoice: &Invoice,
        ops: &mut Batch,
    ) -> CoreResult<bool> {
        let Some(id) = &invoice.payment else {
            return Ok(true);
        };
        let Some(record) = self
            .store
            .find_record(scope, Collection::Payments, id)
            .await?
        else {
            return Ok(true);
        };
        let mut payment: Payment = from_body(&record.id, &record.body)?;
        if payment.status == PaymentStatus::Succeeded {
            return Ok(false);
        }
        if !payment.awaits_confirmation() {
            return Ok(true);
        }
        payment.status = PaymentStatus::Canceled;
        payment.canceled_at = Some(self.now());
        payment.cancellation_reason = Some(CancellationReason::Abandoned);
        ops.update_stored(&payment, record.version, to_body(&payment)?)
            .event("payment.canceled", &payment)?;
        Ok(true)
    }
}
