//! A payment after its creation: update (description, metadata, customer while unset),
//! capture, cancel, and the tasks that move it by themselves: an authorisation expiring, a 3-D
//! Secure authentication abandoned, a bank transfer settled or returned.

use crate::documents::document::{from_body, to_body, to_value};
use crate::error::{CoreError, CoreResult};
use crate::event::previous_attributes;
use crate::ids::{CustomerId, PaymentId};
use crate::metadata;
use crate::payments::payment::{
    transition, CancellationReason, Payment, PaymentStatus, Transition,
};
use crate::payments::Payments;
use crate::services::RequestContext;
use crate::store::{ClaimedTask, Collection};
use crate::validate::{check_amount, check_text};

/// `POST /payments/{id}`, parsed: only the fields given.
#[derive(Debug, Default)]
pub struct UpdatePayment {
    pub description: Option<Option<String>>,
    pub metadata: Option<Vec<(String, String)>>,
    pub customer: Option<CustomerId>,
}

impl Payments<'_> {
    /// `POST /payments/{id}`: description, metadata, and customer while unset.
    pub async fn update_payment(
        &self,
        ctx: &RequestContext,
        id: &PaymentId,
        cmd: UpdatePayment,
    ) -> CoreResult<Payment> {
        check_text(
            "description",
            cmd.description.as_ref().and_then(|d| d.as_deref()),
            1000,
        )?;
        if let Some(customer) = &cmd.customer {
            self.require_customer(ctx, customer).await?;
        }
        self.retry_on_conflict(|| async {
            let (before, version): (Payment, i64) = self
                .load(ctx.scope(), Collection::Payments, "payment", id)
                .await?;
            let mut after = before.clone();
            if let Some(description) = &cmd.description {
                after.description = description.clone();
            }
            if let Some(input) = &cmd.metadata {
                after.metadata = metadata::merge(&before.metadata, input.clone())?;
            }
            if let Some(customer) = &cmd.customer {
                match &before.customer {
                    Some(existing) if existing != customer => {
                        return Err(CoreError::invalid(
                            "customer",
                            "parameter_invalid",
                            "A payment's customer cannot be changed once set.",
                        ))
                    }
                    _ => after.customer = Some(customer.to_string()),
                }
            }
            if after == before {
                return Ok(after);
            }
            self.save_payment_change(ctx, &before, after, version, &["payment.updated"])
                .await
        })
        .await
    }

    /// `POST /payments/{id}/capture`.
    pub async fn capture_payment(
        &self,
        ctx: &RequestContext,
        id: &PaymentId,
        amount: Option<i64>,
    ) -> CoreResult<Payment> {
        // A connector's payment is captured at its processor first (its upstream key makes a
        // retried capture one capture); what the processor took is then recorded.
        let mut amount = amount;
        let mut settlement = None;
        let (current, _): (Payment, i64) = self
            .load(ctx.scope(), Collection::Payments, "payment", id)
            .await?;
        if current.connector.is_some() {
            transition(current.status, Transition::Capture)?;
            let wanted = amount.unwrap_or(current.amount);
            if wanted <= current.amount {
                check_amount("amount", wanted, current.currency)?;
                let (captured, booked) =
                    self.capture_upstream(ctx.scope(), &current, wanted).await?;
                amount = Some(captured);
                settlement = booked;
            }
        }
        self.retry_on_conflict(|| async {
            let (before, version): (Payment, i64) = self
                .load(ctx.scope(), Collection::Payments, "payment", id)
                .await?;
            let status = transition(before.status, Transition::Capture)?;
            let amount = amount.unwrap_or(before.amount);
            if amount > before.amount {
                return Err(CoreError::invalid(
                    "amount",
                    "amount_too_large",
                    format!(
                        "Capture amount cannot exceed the authorised {}.",
                        before.amount
                    ),
                ));
            }
            check_amount("amount", amount, before.currency)?;
            let mut after = before.clone();
            after.status = status;
            after.amount_captured = amount;
            after.processor_settlement = settlement.clone();
            self.save_payment_change(
                ctx,
                &before,
                after,
                version,
                &["payment.succeeded", "payment.captured"],
            )
            .await
        })
        .await
    }

    /// `POST /payments/{id}/cancel`.
    pub async fn cancel_payment(
        &self,
        ctx: &RequestContext,
        id: &PaymentId,
        reason: Option<CancellationReason>,
    ) -> CoreResult<Payment> {
        let (current, _): (Payment, i64) = self
            .load(ctx.scope(), Collection::Payments, "payment", id)
            .await?;
        if current.connector.is_some() {
            transition(current.status, Transition::Cancel)?;
            self.void_upstream(ctx.scope(), &current).await?;
        }
        self.retry_on_conflict(|| async {
            let (before, version): (Payment, i64) = self
                .load(ctx.scope(), Collection::Payments, "payment", id)
                .await?;
            let mut after = before.clone();
            after.status = transition(before.status, Transition::Cancel)?;
            after.canceled_at = Some(self.now());
            after.cancellation_reason = reason;
            self.save_payment_change(ctx, &before, after, version, &["payment.canceled"])
                .await
        })
        .await
    }

    /// Writes an updated payment with its event (and `previous_attributes` on `*.updated`).
    async fn save_payment_change(
        &self,
        ctx: &RequestContext,
        before: &Payment,
        mut after: Payment,
        version: i64,
        events: &[&str],
    ) -> CoreResult<Payment> {
        // A capture is booked on the balance in the same batch (CONTRACT §9).
        let mut batch = self.batch(ctx);
        self.balance().book_charge(&mut batch, &mut after).await?;
        let previous = if events.iter().any(|e| e.ends_with(".updated")) {
            let renderer = self.renderer();
            previous_attributes(
                &renderer.payment_value(before)?,
                &renderer.payment_value(&after)?,
            )
        } else {
            None
        };
        let stored = to_body(&after)?;
        batch.update_stored(&after, version, stored.clone());
        // The first event is the one the answer names; the others tell the same change.
        let object = to_value(&after)?;
        let mut ids = Vec::with_capacity(events.len());
        for event_type in events {
            ids.push(batch.event_id(event_type, object.clone(), previous.clone())?);
        }
        self.commit_payment(ctx, batch, &stored, ids.first().map(String::as_str))
            .await?;
        Ok(after)
    }

    /// Who the receipt host's pages name as the merchant: the business name (else its public
    /// e-mail) and the public e-mail, never the login e-mail.
    pub(crate) async fn merchant(
        &self,
        account: &str,
    ) -> CoreResult<(Option<String>, Option<String>)> {
        Ok(match self.store.find_account(account).await? {
            Some(a) => (a.name.or_else(|| a.public_email.clone()), a.public_email),
            None => (None, None),
        })
    }

    /// A payment, typed (receipts and the dashboard use this).
    pub async fn get_payment(&self, scope: &crate::auth::Scope, id: &str) -> CoreResult<Payment> {
        let body = self
            .retrieve_raw(scope, Collection::Payments, "payment", id)
            .await?;
        from_body(id, &body)
    }

    /// Moves the task's payment from `expected` by `t`, with its event; drops the task when the
    /// payment has moved on by itself (captured, authenticated…).
    pub(crate) async fn task_transition(
        &self,
        task: &ClaimedTask,
        expected: PaymentStatus,
        t: Transition,
        reason: Option<CancellationReason>,
    ) -> CoreResult<()> {
        let Some((before, version)) = self.load_due::<Payment>(task).await? else {
            return Ok(());
        };
        if before.status != expected {
            return self.drop_task(task, "payment already moved on").await;
        }
        if matches!(t, Transition::Cancel) {
            // A connector's payment is released at its processor first.
            self.release_before_cancel(&task.scope, &before, reason)
                .await?;
        }
        let mut after = before.clone();
        after.status = transition(before.status, t)?;
        match after.status {
            PaymentStatus::Canceled => {
                after.canceled_at = Some(self.now());
                after.cancellation_reason = reason;
            }
            PaymentStatus::Succeeded => after.amount_captured = after.amount,
            PaymentStatus::Failed => {
                after.failure_code = Some("insufficient_funds".into());
                after.decline_code = Some("insufficient_funds".into());
                after.failure_message =
                    Some("The bank transfer was returned: insufficient funds.".into());
            }
            _ => {}
        }
        let event_type = match after.status {
            PaymentStatus::Canceled => "payment.canceled",
            PaymentStatus::Succeeded => "payment.succeeded",
            _ => "payment.failed",
        };
        // A settled bank transfer is booked on the balance in the same batch (CONTRACT §9).
        let mut batch = self.background(&task.scope);
        self.balance().book_charge(&mut batch, &mut after).await?;
        batch
            .update(&after, version)?
            .event(event_type, &after)?
            .unseal(&after.id)
            .done(task);
        self.commit_background(batch).await
    }
}
