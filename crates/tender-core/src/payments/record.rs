//! Recording a new payment once its card was authorised (or declined), or its bank transfer
//! started: one batch with its event, its booking and whatever depends on the outcome. The batch
//! holds only while what the payment was decided on still does (its customer, a saved card
//! still attached); an authorised payment that cannot be recorded is reversed, so no hold
//! outlives its request.

use crate::card::ValidatedCard;
use crate::documents::batch::Batch;
use crate::documents::document::{to_body, to_value};
use crate::error::{CoreError, CoreResult, StoreError};
use crate::ids::{self, CustomerId, IdKind, PaymentMethodId};
use crate::payments::payment::{
    BankTransferDetails, CaptureMethod, Payment, PaymentMethodSnapshot, PaymentStatus,
};
use crate::payments::Payments;
use crate::secret::Secret;
use crate::services::RequestContext;
use crate::store::Collection;
use crate::task::TaskKind;

impl Payments<'_> {
    /// Records a payment whose card was already authorised (or declined). Its batch holds
    /// only while what it was decided on still does (`preconditions`): a customer deleted or a
    /// saved card detached meanwhile makes it fail, and then the client is told why. A
    /// concurrent change that invalidates nothing (metadata, say) just means recording again
    /// with the new versions. Whenever the payment cannot be recorded, an approved authorisation
    /// is reversed (no hold outlives the request) and a claimed one-time token given back.
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn record_authorised(
        &self,
        ctx: &RequestContext,
        payment: Payment,
        ops: Batch,
        decline: Option<CoreError>,
        mut preconditions: Vec<(Collection, String, i64)>,
        card: &ValidatedCard,
        claimed_token: Option<String>,
    ) -> CoreResult<Payment> {
        let approved = decline.is_none();
        let result = match decline {
            // A declined payment is recorded whatever happened meanwhile.
            Some(decline) => {
                self.finish_create(ctx, payment.clone(), ops, Some(decline))
                    .await
            }
            None => {
                let mut attempts = 0;
                loop {
                    attempts += 1;
                    let mut batch = ops.clone();
                    for (collection, id, version) in &preconditions {
                        batch.check(*collection, id, *version);
                    }
                    match self.finish_create(ctx, payment.clone(), batch, None).await {
                        Err(CoreError::Store(StoreError::Conflict(_))) if attempts < 16 => {
                            match self
                                .refresh_preconditions(ctx, &payment, &preconditions)
                                .await
                            {
                                Ok(fresh) => preconditions = fresh,
                                Err(e) => break Err(e),
                            }
                        }
                        other => break other,
                    }
                }
            }
        };
        // A decline answers `Err(Card)` once it is recorded; any other error recorded nothing.
        let recorded = matches!(&result, Ok(_) | Err(CoreError::Card { .. }));
        if !recorded {
            if approved {
                tracing::warn!(payment = %payment.id, "an authorised payment could not be recorded; reversing the authorisation");
                self.acquirer.reverse(card, ctx.scope().livemode()).await;
            }
            if let Some(pm) = &claimed_token {
                let mut restore = self.background(ctx.scope());
                restore.seal(pm, self.payment_methods().seal_card(card)?);
                if let Err(e) = self.commit_background(restore).await {
                    tracing::warn!(error = %crate::error::error_chain(&e), payment_method = %pm, "could not give back a claimed payment method");
                }
            }
        }
        result
    }

    /// The preconditions of a payment again, with their current versions; the error the client
    /// gets when one no longer holds (customer deleted, card detached or moved to another).
    pub(crate) async fn refresh_preconditions(
        &self,
        ctx: &RequestContext,
        payment: &Payment,
        preconditions: &[(Collection, String, i64)],
    ) -> CoreResult<Vec<(Collection, String, i64)>> {
        let mut fresh = Vec::with_capacity(preconditions.len());
        for (collection, id, _) in preconditions {
            let version = match collection {
                Collection::Customers => {
                    self.require_customer(ctx, &CustomerId::stored(id.as_str()))
                        .await?
                }
                _ => {
                    let pm = PaymentMethodId::stored(id.as_str());
                    let chargeable = self
                        .payment_methods()
                        .load_chargeable(ctx, &pm, "payment_method")
                        .await?;
                    if chargeable.method.customer != payment.customer {
                        return Err(CoreError::invalid(
                            "payment_method",
                            "payment_method_unexpected_state",
                            "This payment method is no longer attached to the customer.",
                        ));
                    }
                    chargeable.version
                }
            };
            fresh.push((*collection, id.clone(), version));
        }
        Ok(fresh)
    }

    /// Records a new payment with its event and answers with it (or with the decline).
    pub(crate) async fn finish_create(
        &self,
        ctx: &RequestContext,
        mut payment: Payment,
        mut ops: Batch,
        decline: Option<CoreError>,
    ) -> CoreResult<Payment> {
        // What it captured is booked on the balance in the same batch (CONTRACT §9).
        self.balance().book_charge(&mut ops, &mut payment).await?;
        // Serialised once: the row, and the answer kept under the idempotency key (rendered on
        // a replay); the event carries the same stored form.
        let stored = to_body(&payment)?;
        let object = to_value(&payment)?;
        match payment.stored_version {
            None => ops.insert_stored(&payment, stored.clone()),
            Some(version) => ops.update_stored(&payment, version, stored.clone()),
        };
        let event_type = match payment.status {
            PaymentStatus::Succeeded => Some("payment.succeeded"),
            PaymentStatus::Failed => Some("payment.failed"),
            PaymentStatus::RequiresAction => Some("payment.requires_action"),
            PaymentStatus::RequiresCapture => Some("payment.requires_capture"),
            PaymentStatus::Processing => Some("payment.processing"),
            _ => None,
        };
        if payment.stored_version.is_none() {
            ops.event_json("payment.created", object.clone(), None)?;
        }
        let mut event = None;
        if let Some(event_type) = event_type {
            event = Some(ops.event_id(event_type, object, None)?);
        }
        // A customer's confirmation of an invoice's intent settles the invoice, in a task
        // (billing's, which payments do not reach into); so does every invoice payment that
        // succeeds, so that one racing another try to pay the same invoice is refunded.
        if payment.invoice.is_some() {
            let confirmed = payment.stored_version.is_some();
            match payment.status {
                PaymentStatus::Succeeded => {
                    ops.schedule(TaskKind::SettleInvoicePayment, &payment.id, self.now());
                }
                PaymentStatus::Failed if confirmed => {
                    ops.schedule(TaskKind::SettleInvoicePayment, &payment.id, self.now());
                }
                _ => {}
            }
        }
        match decline {
            None => {
                self.commit_payment(ctx, ops, &stored, event.as_deref())
                    .await?;
                Ok(payment)
            }
            Some(err) => {
                self.commit(ctx, ops, Err(&err)).await?;
                Err(err)
            }
        }
    }

    /// A bank transfer: validated IBAN, created `processing`, settled later by a task.
    pub(crate) async fn start_bank_transfer(
        &self,
        ctx: &RequestContext,
        mut payment: Payment,
        iban: &Secret,
        account_holder_name: String,
    ) -> CoreResult<Payment> {
        let iban = crate::validate::iban::validate(iban.expose()).map_err(|_| {
            CoreError::invalid(
                "payment_method[bank_transfer][iban]",
                "parameter_invalid",
                "The IBAN is not valid (length for its country, or check digits).",
            )
        })?;
        if account_holder_name.trim().is_empty() {
            return Err(CoreError::invalid(
                "payment_method[bank_transfer][account_holder_name]",
                "parameter_missing",
                "Missing required param: payment_method[bank_transfer][account_holder_name].",
            ));
        }
        if !payment.capture_method.eq(&CaptureMethod::Automatic) {
            return Err(CoreError::invalid(
                "capture",
                "parameter_invalid",
                "Bank transfers cannot be authorised for later capture.",
            ));
        }
        payment.status = PaymentStatus::Processing;
        payment.payment_method = PaymentMethodSnapshot {
            id: ids::generate(IdKind::PaymentMethod),
            kind: "bank_transfer".into(),
            card: None,
            bank_transfer: Some(BankTransferDetails {
                last4: iban.last4.clone(),
                country: iban.country.to_string(),
                account_holder_name,
            }),
            connector_token: None,
        };
        // Whether the transfer will bounce is decided now (test IBANs ending in 3001) and
        // carried by the task, so the full IBAN never needs to be stored.
        let kind = if !payment.livemode && iban.normalized.expose().ends_with("3001") {
            TaskKind::BounceBankTransfer
        } else {
            TaskKind::SettleBankTransfer
        };
        let due = payment.created + self.config.bank_settlement_delay;
        let mut ops = self.batch(ctx);
        ops.schedule(kind, &payment.id, due);
        self.finish_create(ctx, payment, ops, None).await
    }
}
