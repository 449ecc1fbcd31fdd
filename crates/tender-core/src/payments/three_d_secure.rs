//! 3-D Secure: the customer-facing authentication step of a `requires_action` payment. The
//! page (on the receipt host) is reached through an unguessable token in its URL; only the
//! token's SHA-256 is stored, sealed with the payment. Once used it is kept marked `used:`, so
//! that the same link can say "already confirmed" (and do nothing) instead of "not found".

use crate::auth::{hash_key, secrets_equal, Scope};
use crate::documents::document::{from_body, to_value};
use crate::error::CoreResult;
use crate::event::previous_attributes;
use crate::ids::{self, IdKind};
use crate::payments::payment::AUTHORIZATION_TTL_SECS;
use crate::payments::payment::{transition, CaptureMethod, Payment, PaymentStatus, Transition};
use crate::payments::Payments;
use crate::store::Collection;
use crate::task::TaskKind;

/// Prefix of a used token's stored hash.
const USED: &str = "used:";

impl Payments<'_> {
    /// The payment behind (`payment_id`, `token`) and whether that token is the live one or one
    /// that was used; `None` for an unknown pair.
    async fn token_state(
        &self,
        payment_id: &str,
        token: &str,
    ) -> CoreResult<Option<(Scope, crate::store::Record, bool)>> {
        if !ids::looks_like(IdKind::Payment, payment_id) || token.len() > 64 {
            return Ok(None);
        }
        let Some((scope, record)) = self
            .store
            .find_unscoped(Collection::Payments, payment_id)
            .await?
        else {
            return Ok(None);
        };
        let Some(stored) = self.store.find_sealed(&scope, payment_id).await? else {
            return Ok(None);
        };
        let hash = hash_key(token);
        if secrets_equal(hash.as_bytes(), stored.as_bytes()) {
            return Ok(Some((scope, record, false)));
        }
        let used = format!("{USED}{hash}");
        if secrets_equal(used.as_bytes(), stored.as_bytes()) {
            return Ok(Some((scope, record, true)));
        }
        Ok(None)
    }

    /// The payment behind a 3-D Secure link that was already used, or `None` (unknown link).
    pub async fn used_authentication(
        &self,
        payment_id: &str,
        token: &str,
    ) -> CoreResult<Option<Payment>> {
        match self.token_state(payment_id, token).await? {
            Some((_, record, true)) => Ok(Some(from_body(&record.id, &record.body)?)),
            _ => Ok(None),
        }
    }

    /// The payment awaiting authentication behind (`payment_id`, `token`), or `None` when the
    /// pair is unknown, used up, or the payment no longer waits.
    pub async fn find_authentication(
        &self,
        payment_id: &str,
        token: &str,
    ) -> CoreResult<Option<(Scope, Payment, i64)>> {
        let Some((scope, record, false)) = self.token_state(payment_id, token).await? else {
            return Ok(None);
        };
        let payment: Payment = from_body(&record.id, &record.body)?;
        if payment.status != PaymentStatus::RequiresAction {
            return Ok(None);
        }
        Ok(Some((scope, payment, record.version)))
    }

    /// The customer completed (`success`) or failed the authentication. Returns the payment
    /// after the change, or `None` when the link is not (or no longer) valid.
    pub async fn complete_authentication(
        &self,
        payment_id: &str,
        token: &str,
        success: bool,
    ) -> CoreResult<Option<Payment>> {
        self.retry_on_conflict(|| async {
            let Some((scope, before, version)) =
                self.find_authentication(payment_id, token).await?
            else {
                return Ok(None);
            };
            let capture = before.capture_method == CaptureMethod::Automatic;
            let mut after = before.clone();
            after.status =
                transition(before.status, Transition::Authenticate { success, capture })?;
            after.next_action = None;
            let mut batch = self.background(&scope);
            match after.status {
                PaymentStatus::Succeeded => after.amount_captured = after.amount,
                PaymentStatus::RequiresCapture => {
                    batch.schedule(
                        TaskKind::ExpireAuthorization,
                        &after.id,
                        self.now() + AUTHORIZATION_TTL_SECS,
                    );
                }
                _ => {
                    after.failure_code = Some("authentication_failed".into());
                    after.decline_code = Some("authentication_failed".into());
                    after.failure_message =
                        Some("The customer did not complete 3-D Secure authentication.".into());
                }
            }
            self.balance().book_charge(&mut batch, &mut after).await?;
            batch
                .update(&after, version)?
                .seal(&after.id, format!("{USED}{}", hash_key(token)));
            // Authorised for later capture: `payment.requires_capture`, with the old status in
            // `previous_attributes` (the customer authenticated).
            let object = to_value(&after)?;
            let renderer = self.renderer();
            let (event_type, previous) = match after.status {
                PaymentStatus::Succeeded => ("payment.succeeded", None),
                PaymentStatus::Failed => ("payment.failed", None),
                PaymentStatus::RequiresCapture => (
                    "payment.requires_capture",
                    previous_attributes(
                        &renderer.payment_value(&before)?,
                        &renderer.payment_value(&after)?,
                    ),
                ),
                _ => (
                    "payment.updated",
                    previous_attributes(
                        &renderer.payment_value(&before)?,
                        &renderer.payment_value(&after)?,
                    ),
                ),
            };
            batch.event_json(event_type, object, previous)?;
            // A payment of an invoice, authenticated: the invoice learns how it went.
            if after.invoice.is_some() {
                if let PaymentStatus::Succeeded | PaymentStatus::Failed = after.status {
                    batch.schedule(TaskKind::SettleInvoicePayment, &after.id, self.now());
                }
            }
            self.commit_background(batch).await?;
            Ok(Some(after))
        })
        .await
    }
}
