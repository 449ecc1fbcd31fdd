//! The hosted invoice page (`hosted_invoice_url`, on the receipt host): an invoice found by its
//! id alone (unguessable, like a payment's for its receipt), with who bills it and the card its
//! pay button would charge; and that button, which tries the open invoice now as
//! `POST /invoices/{id}/pay` does (a try that leaves the dunning schedule alone).
//!
//! Depends on the storage port and the other billing use cases.

use crate::auth::{KeyKind, Principal};
use crate::billing::{Invoice, InvoiceStatus};
use crate::error::CoreResult;
use crate::ids::{self, IdKind};
use crate::payment_method::PaymentMethod;
use crate::service::{from_body, RequestContext, Services};
use crate::store::Collection;

/// What the hosted invoice page shows.
#[derive(Debug, Clone)]
pub struct HostedInvoice {
    pub invoice: Invoice,
    /// The business name (else its public e-mail); `None` when the account set neither.
    pub merchant: Option<String>,
    /// The account's public e-mail, for customers to write to.
    pub merchant_email: Option<String>,
    /// The card the pay button charges (open invoices only; `None`: no card on file).
    pub card: Option<PaymentMethod>,
}

impl Services {
    /// The invoice `id` for its hosted page, or `None` when there is no such invoice.
    pub async fn find_hosted_invoice(&self, id: &str) -> CoreResult<Option<HostedInvoice>> {
        if !ids::looks_like(IdKind::Invoice, id) {
            return Ok(None);
        }
        let Some((scope, record)) = self.store.find_unscoped(Collection::Invoices, id).await?
        else {
            return Ok(None);
        };
        let invoice: Invoice = from_body(&record.id, &record.body)?;
        let (merchant, merchant_email) = self.merchant(&scope.account).await?;
        let mut card = None;
        if invoice.status == InvoiceStatus::Open {
            let subscription = self.invoice_subscription(&scope, &invoice).await?;
            card = self
                .card_to_charge(&scope, &invoice, subscription.as_ref().map(|(s, _)| s))
                .await?;
        }
        Ok(Some(HostedInvoice {
            invoice,
            merchant,
            merchant_email,
            card,
        }))
    }

    /// The hosted page's pay button: tries open invoice `id` now with the card on file, as its
    /// account's `POST /invoices/{id}/pay` would. `None` when there is no such invoice; a
    /// decline, or an invoice no longer open, is the error that call would answer.
    pub async fn pay_hosted_invoice(
        &self,
        id: &str,
        request_id: String,
    ) -> CoreResult<Option<Invoice>> {
        if !ids::looks_like(IdKind::Invoice, id) {
            return Ok(None);
        }
        let Some((scope, _)) = self.store.find_unscoped(Collection::Invoices, id).await? else {
            return Ok(None);
        };
        let ctx = RequestContext {
            principal: Principal {
                scope,
                key_kind: KeyKind::Secret,
            },
            request_id,
            idempotency: None,
        };
        self.pay_invoice(&ctx, id, None).await.map(Some)
    }
}
