//! Payments before they are confirmed: Stripe's PaymentIntent flow (CONTRACT §13), where an
//! intent is created first (its amount, customer, perhaps its payment method) and confirmed
//! later, by the shop's server or the customer's browser.
//!
//! | created with | status | then |
//! |---|---|---|
//! | no payment method | `requires_payment_method` | [`Payments::confirm_payment`] with one |
//! | a payment method (`pm_…`) | `requires_confirmation` | [`Payments::confirm_payment`] |
//!
//! Confirming runs the ordinary create ([`Payments::create_payment`]) for the same payment: it
//! keeps its id and creation time and replaces its row ([`Confirming`]). A declined try leaves
//! it `failed`, which may be confirmed again with another method (Stripe's
//! `requires_payment_method` after a decline); the new try replaces the declined one, so a
//! PaymentIntent has one charge, its latest try. Before authorising, a confirmation takes the
//! intent's row (a version bump), so two concurrent confirmations never both reach the card's
//! authoriser: the second is `payment_unexpected_state`.
//!
//! Depends on `create` (the create it reuses), `payment_methods` (the card named) and the
//! storage port.

use crate::documents::document::{to_body, to_value};
use crate::error::{CoreError, CoreResult, StoreError};
use crate::ids::{CustomerId, PaymentId, PaymentMethodId};
use crate::money::{Amount, Currency};
use crate::payments::create::{Confirming, CreatePayment, PaymentMethodInput};
use crate::payments::payment::{CaptureMethod, Payment, PaymentStatus};
use crate::payments::Payments;
use crate::services::RequestContext;
use crate::store::Collection;

/// `POST /v1/payment_intents` without `confirm`: a checked create (its method unused) and the
/// saved payment method it names, if any.
#[derive(Debug)]
pub struct CreateIntent {
    pub payment: CreatePayment,
    pub payment_method: Option<PaymentMethodId>,
}

/// `POST /v1/payment_intents/{id}/confirm`.
#[derive(Debug, Default)]
pub struct ConfirmIntent {
    /// The method to pay with; `None`: the one the intent was created with.
    pub payment_method: Option<PaymentMethodInput>,
    pub return_url: Option<String>,
    /// Save the card to the intent's customer (`setup_future_usage`).
    pub save_payment_method: bool,
}

impl Payments<'_> {
    /// Records a payment to be confirmed later: `requires_payment_method`, or
    /// `requires_confirmation` with the saved payment method it names (checked now).
    pub async fn create_intent(
        &self,
        ctx: &RequestContext,
        cmd: CreateIntent,
    ) -> CoreResult<Payment> {
        let mut ops = self.batch(ctx);
        if let Some(customer) = &cmd.payment.customer {
            let version = self.require_customer(ctx, customer).await?;
            ops.check(Collection::Customers, customer, version);
        }
        let save = cmd.payment.save_payment_method;
        if save && cmd.payment.customer.is_none() {
            return Err(CoreError::invalid(
                "customer",
                "parameter_missing",
                "setup_future_usage saves the card to a customer: give customer.",
            ));
        }
        let (mut payment, _, _) = self.new_payment(ctx, cmd.payment);
        payment.status = PaymentStatus::RequiresPaymentMethod;
        payment.save_payment_method = save;
        if let Some(pm) = &cmd.payment_method {
            let chargeable = self
                .payment_methods()
                .load_chargeable(ctx, pm, "payment_method")
                .await?;
            let method = chargeable.method;
            if method.customer.is_some() && method.customer != payment.customer {
                return Err(CoreError::invalid(
                    "payment_method",
                    "payment_method_unexpected_state",
                    "This payment method is attached to another customer: give that customer.",
                ));
            }
            payment.payment_method.id = method.id.clone();
            payment.payment_method.card = Some(method.card.clone());
            payment.status = PaymentStatus::RequiresConfirmation;
        }
        let stored = to_body(&payment)?;
        ops.insert_stored(&payment, stored.clone());
        let event = ops.event_id("payment.created", to_value(&payment)?, None)?;
        self.commit_payment(ctx, ops, &stored, Some(&event)).await?;
        Ok(payment)
    }

    /// The intent an invoice is paid with when its customer pays it (a subscription's first
    /// invoice with `payment_behavior=default_incomplete`): `requires_payment_method`, for the
    /// invoice's amount, with the id the invoice already names. Built, not written: the
    /// subscription's batch inserts it. When a confirmation settles it, the invoice is settled
    /// by a task ([`crate::task::TaskKind::SettleInvoicePayment`]).
    pub(crate) fn invoice_intent(
        &self,
        ctx: &RequestContext,
        id: &str,
        (amount, currency): (i64, Currency),
        customer: &str,
        invoice: &str,
    ) -> CoreResult<Payment> {
        let amount = Amount::parse(amount, currency).map_err(|e| {
            CoreError::invalid("amount", e.code(), "The invoice's amount is out of bounds.")
        })?;
        let cmd = CreatePayment {
            amount,
            currency,
            payment_method: PaymentMethodInput::ConnectorToken(String::new()),
            customer: Some(CustomerId::stored(customer)),
            description: Some(format!("Invoice {invoice}")),
            metadata: Default::default(),
            capture: true,
            // Saved to the customer when it pays: the renewals are charged on it.
            save_payment_method: true,
            return_url: None,
            invoice: Some(invoice.to_string()),
            confirming: None,
        };
        let (mut payment, _, _) = self.new_payment(ctx, cmd);
        payment.id = id.to_string();
        payment.status = PaymentStatus::RequiresPaymentMethod;
        Ok(payment)
    }

    /// Confirms a payment created earlier (see the module doc).
    pub async fn confirm_payment(
        &self,
        ctx: &RequestContext,
        id: &PaymentId,
        cmd: ConfirmIntent,
    ) -> CoreResult<Payment> {
        let (payment, version): (Payment, i64) = self
            .load(ctx.scope(), Collection::Payments, "payment", id)
            .await?;
        if !payment.awaits_confirmation() {
            return Err(CoreError::UnexpectedState {
                message: format!(
                    "This payment's status is {}, so it cannot be confirmed.",
                    payment.status.as_str()
                ),
            });
        }
        let method =
            match cmd.payment_method {
                Some(method) => method,
                None if !payment.payment_method.id.is_empty()
                    && payment.status == PaymentStatus::RequiresConfirmation =>
                {
                    PaymentMethodInput::Saved(PaymentMethodId::referenced(
                        payment.payment_method.id.clone(),
                        "payment_method",
                    )?)
                }
                None => return Err(CoreError::invalid(
                    "payment_method",
                    "parameter_missing",
                    "This payment has no payment method to be confirmed with: give payment_method.",
                )),
            };
        let version = self.take_for_confirmation(ctx, &payment, version).await?;
        let amount = Amount::parse(payment.amount, payment.currency).map_err(|e| {
            CoreError::invalid("amount", e.code(), "The stored amount is out of bounds.")
        })?;
        let create = CreatePayment {
            amount,
            currency: payment.currency,
            payment_method: method,
            customer: payment.customer.as_deref().map(CustomerId::stored),
            description: payment.description.clone(),
            metadata: payment.metadata.clone(),
            capture: payment.capture_method == CaptureMethod::Automatic,
            save_payment_method: cmd.save_payment_method || payment.save_payment_method,
            return_url: cmd.return_url.or(payment.return_url.clone()),
            invoice: payment.invoice.clone(),
            confirming: Some(Confirming {
                id: payment.id.clone(),
                created: payment.created,
                version,
            }),
        };
        self.create_payment(ctx, create).await
    }

    /// The intent's row bumped to a new version, so that of two concurrent confirmations only
    /// one goes on to the card's authoriser; the version after the bump.
    async fn take_for_confirmation(
        &self,
        ctx: &RequestContext,
        payment: &Payment,
        version: i64,
    ) -> CoreResult<i64> {
        let mut bump = self.background(ctx.scope());
        bump.update_stored(payment, version, to_body(payment)?);
        match self.commit_background(bump).await {
            Ok(()) => Ok(version + 1),
            Err(CoreError::Store(StoreError::Conflict(_))) => Err(CoreError::UnexpectedState {
                message: "This payment changed while it was being confirmed (another confirmation?): retrieve it and try again.".into(),
            }),
            Err(e) => Err(e),
        }
    }
}
