//! The hosted invoice page (`hosted_invoice_url`, on the receipt host): an invoice found by its
//! id alone (unguessable, like a payment's for its receipt), with who bills it and the card its
//! pay button would charge; and that button, which tries the open invoice now as
//! `POST /invoices/{id}/pay` does (a try that leaves the dunning schedule alone).
//!
//! Every rendering of the page carries a one-time token ([`crate::documents::page_token`]),
//! bound to the invoice and valid for an hour. The button sends it back, and a token is one
//! try: it names the try's idempotency record, so two presses of one page (or a replayed form)
//! charge once, the second answering as the first, or "in progress" while it runs (CONTRACT
//! §17).
//!
//! Depends on the storage port, the idempotency rules and the other billing use cases.

use crate::auth::{KeyKind, Principal};
use crate::billing::invoice::{Invoice, InvoiceStatus};
use crate::billing::Billing;
use crate::card::CardInput;
use crate::documents::document::{from_body, to_value};
use crate::documents::idempotency::{Internal, Settled};
use crate::error::{CoreError, CoreResult};
use crate::ids::{self, CustomerId, IdKind, PaymentMethodId};
use crate::payment_methods::payment_method::PaymentMethod;
use crate::risk::Surface;
use crate::services::RequestContext;
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

impl Billing<'_> {
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
        let (merchant, merchant_email) = self.payments().merchant(&scope.account).await?;
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

    /// A one-time token for a rendering of invoice `id`'s page
    /// ([`crate::documents::page_token`]).
    pub fn hosted_pay_token(&self, id: &str) -> String {
        self.page_token(id)
    }

    /// The hosted page's pay button: tries open invoice `id` now with the card on file, or
    /// with `card`, a new one typed on the page (saved to the invoice's customer first, which
    /// verifies it), as its account's `POST /invoices/{id}/pay` would, once per page token.
    /// `None` when there is no such invoice; a decline, or an invoice no longer open, is the
    /// error that call would answer; a token already used answers what its try answered (or
    /// 409 in progress).
    pub async fn pay_hosted_invoice(
        &self,
        id: &str,
        token: Option<&str>,
        card: Option<CardInput>,
        client: Option<&str>,
        request_id: String,
    ) -> CoreResult<Option<Invoice>> {
        if !ids::looks_like(IdKind::Invoice, id) {
            return Ok(None);
        }
        let Some((scope, _)) = self.store.find_unscoped(Collection::Invoices, id).await? else {
            return Ok(None);
        };
        let nonce = self.check_page_token(id, token)?;
        let name = format!("hosted-pay:{id}:{nonce}");
        let fingerprinted = serde_json::json!({"invoice": id});
        let claim = match self
            .begin_internal(
                &scope,
                &name,
                &name,
                "POST",
                "/invoices/pay",
                &fingerprinted,
            )
            .await?
        {
            // Pressed again: what the first press did stands (the page shows the invoice).
            Internal::Done(_) => return self.current_invoice(&scope, id).await,
            Internal::Run(claim) => claim,
        };
        let ctx = RequestContext {
            principal: Principal {
                scope: scope.clone(),
                key_kind: KeyKind::Secret,
            },
            request_id,
            idempotency: Some(claim.hold()),
            client: None,
        };
        let result = match card {
            Some(card) => self.pay_with_new_card(&ctx, id, card, client).await,
            None => self.pay_invoice(&ctx, id, None).await,
        };
        let shown = match &result {
            Ok(invoice) => Some(to_value(invoice)?),
            Err(_) => None,
        };
        let answer = self.encoder.encode(
            match (&shown, &result) {
                (Some(v), _) => Ok(v),
                (None, Err(e)) => Err(e),
                (None, Ok(_)) => unreachable!("an invoice is always shown"),
            },
            &ctx.request_id,
        );
        match claim.settle(answer.status, &answer.body).await {
            Settled::Send => result.map(Some),
            Settled::Replay(_) => self.current_invoice(&scope, id).await,
            Settled::Refuse(e) => Err(e),
        }
    }

    /// Invoice `id` tried with `card`, typed on the page, under the card-testing guard
    /// ([`crate::risk`]): refused when the address or the card was declined too often, and a
    /// decline counted for both.
    async fn pay_with_new_card(
        &self,
        ctx: &RequestContext,
        id: &str,
        card: CardInput,
        client: Option<&str>,
    ) -> CoreResult<Invoice> {
        let fingerprint = self.card_fingerprint(ctx.scope(), &card);
        let attempt = self
            .attempt(
                ctx.scope(),
                Surface::InvoicePage,
                client,
                fingerprint,
                Some(id),
            )
            .await?;
        self.check_attempt(&attempt)?;
        let result = match self.new_card(ctx, id, card).await {
            Ok(pm) => self.pay_invoice(ctx, id, Some(pm)).await,
            Err(e) => Err(e),
        };
        if let Err(CoreError::Card { .. }) = &result {
            self.note_decline(&attempt).await;
        }
        result
    }

    /// `card` saved to invoice `id`'s customer (its own writes, outside the try's key), which
    /// verifies it with the issuer: the new payment method's id.
    async fn new_card(
        &self,
        ctx: &RequestContext,
        id: &str,
        card: CardInput,
    ) -> CoreResult<String> {
        let plain = RequestContext {
            idempotency: None,
            ..ctx.clone()
        };
        let (invoice, _): (Invoice, i64) = self
            .load(ctx.scope(), Collection::Invoices, "invoice", id)
            .await?;
        if invoice.status != InvoiceStatus::Open {
            return Err(super::invoice::invoice_state_error(
                &invoice,
                "it can be paid",
            ));
        }
        let pm = self
            .payment_methods()
            .create_payment_method(&plain, card, Vec::new())
            .await?;
        self.payment_methods()
            .attach_payment_method(
                &plain,
                &PaymentMethodId::stored(pm.id.clone()),
                &CustomerId::stored(invoice.customer.clone()),
            )
            .await?;
        Ok(pm.id)
    }

    async fn current_invoice(
        &self,
        scope: &crate::auth::Scope,
        id: &str,
    ) -> CoreResult<Option<Invoice>> {
        let (invoice, _): (Invoice, i64) = self
            .load(scope, Collection::Invoices, "invoice", id)
            .await?;
        Ok(Some(invoice))
    }
}
