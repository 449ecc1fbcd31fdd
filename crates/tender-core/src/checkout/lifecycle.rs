//! How a session ends: complete (once: a versioned write from `open`, so of two that race only
//! one sends `checkout_session.completed`), or expired (by the shop, or by its task at
//! `expires_at`; a payment never authorised is canceled with it, one being authenticated holds
//! it open). A payment-mode session whose payment succeeded away from its page (the
//! customer authenticated, then closed the tab) is completed when it is next looked at: its
//! page, its task.

use crate::auth::Scope;
use crate::checkout::session::{CheckoutMode, CheckoutPaymentStatus, CheckoutSession};
use crate::checkout::Checkout;
use crate::documents::document::to_value;
use crate::error::{CoreError, CoreResult};
use crate::ids::CheckoutSessionId;
use crate::payments::payment::{
    transition, CancellationReason, Payment, PaymentStatus, Transition,
};
use crate::services::RequestContext;
use crate::store::{ClaimedTask, Collection};
use crate::task::TaskKind;

/// How long the expiry task waits again for a payment still being authenticated.
const RECHECK_SECS: i64 = 15 * 60;

/// What a finished try made, recorded on the session as it completes.
#[derive(Debug, Default)]
pub(crate) struct Made {
    pub customer: Option<String>,
    pub payment_intent: Option<String>,
    pub subscription: Option<String>,
    pub setup_intent: Option<String>,
}

/// Whether a payment waits on its customer's bank (3-D Secure under way): its session is not
/// expired under it.
fn in_flight(p: &Payment) -> bool {
    matches!(
        p.status,
        PaymentStatus::RequiresAction | PaymentStatus::Processing
    )
}

/// How a payment's state reads on its session: `Some` when the session is done.
pub(crate) fn paid_by(payment: &Payment) -> Option<CheckoutPaymentStatus> {
    match payment.status {
        PaymentStatus::Succeeded => Some(CheckoutPaymentStatus::Paid),
        PaymentStatus::RequiresCapture => Some(CheckoutPaymentStatus::Unpaid),
        _ => None,
    }
}

impl Checkout<'_> {
    /// Completes open session `id` of `scope` with what its try `made`; a session already
    /// complete is returned as it is (no second event).
    pub(crate) async fn complete_session(
        &self,
        ctx: Option<&RequestContext>,
        scope: &Scope,
        id: &str,
        made: &Made,
        payment_status: CheckoutPaymentStatus,
    ) -> CoreResult<CheckoutSession> {
        self.retry_on_conflict(|| async {
            let (mut session, version): (CheckoutSession, i64) = self
                .load(scope, Collection::CheckoutSessions, "checkout_session", id)
                .await?;
            if session.status != crate::checkout::session::CheckoutStatus::Open {
                return Ok(session);
            }
            for (field, value) in [
                (&mut session.customer, &made.customer),
                (&mut session.payment_intent, &made.payment_intent),
                (&mut session.subscription, &made.subscription),
                (&mut session.setup_intent, &made.setup_intent),
            ] {
                if value.is_some() {
                    field.clone_from(value);
                }
            }
            session.complete(payment_status, self.now());
            let mut batch = self.batch_for(ctx, scope);
            batch
                .update(&session, version)?
                .event("checkout_session.completed", &session)?;
            self.commit_background(batch).await?;
            Ok(session)
        })
        .await
    }

    /// A payment-mode session whose payment went through since it was last written, completed
    /// now; any other session as it is.
    pub(crate) async fn reconcile(
        &self,
        scope: &Scope,
        session: CheckoutSession,
    ) -> CoreResult<CheckoutSession> {
        let (Some(payment_id), CheckoutMode::Payment, true) = (
            session.payment_intent.clone(),
            session.mode,
            session.status == crate::checkout::session::CheckoutStatus::Open,
        ) else {
            return Ok(session);
        };
        let (payment, _): (Payment, i64) = self
            .load(scope, Collection::Payments, "payment", &payment_id)
            .await?;
        match paid_by(&payment) {
            Some(status) => {
                let made = Made {
                    customer: payment.customer.clone(),
                    ..Made::default()
                };
                self.complete_session(None, scope, &session.id, &made, status)
                    .await
            }
            None => Ok(session),
        }
    }

    /// `GET /checkout_sessions/{id}`: the session, [reconciled](Self::reconcile).
    pub async fn checkout_session(
        &self,
        ctx: &RequestContext,
        id: &CheckoutSessionId,
    ) -> CoreResult<CheckoutSession> {
        let (session, _): (CheckoutSession, i64) = self
            .load(
                ctx.scope(),
                Collection::CheckoutSessions,
                "checkout_session",
                id,
            )
            .await?;
        self.reconcile(ctx.scope(), session).await
    }

    /// `POST /checkout_sessions/{id}/expire`: an open session expired now.
    pub async fn expire_checkout_session(
        &self,
        ctx: &RequestContext,
        id: &CheckoutSessionId,
    ) -> CoreResult<CheckoutSession> {
        self.retry_on_conflict(|| async {
            let (session, version): (CheckoutSession, i64) = self
                .load(
                    ctx.scope(),
                    Collection::CheckoutSessions,
                    "checkout_session",
                    id,
                )
                .await?;
            let session = self.reconcile(ctx.scope(), session).await?;
            session.require_open(self.now(), "expired")?;
            let payment = self.session_payment(ctx.scope(), &session).await?;
            if payment.as_ref().is_some_and(|(p, _)| in_flight(p)) {
                return Err(CoreError::invalid(
                    "session",
                    "checkout_session_unexpected_state",
                    "This Checkout Session's payment is being authenticated by the customer's bank, so it cannot be expired now.",
                ));
            }
            let mut batch = self.batch(ctx);
            let session = self.expire_into(&mut batch, session, version, payment)?;
            self.commit(ctx, batch, Ok(&to_value(&session)?)).await?;
            Ok(session)
        })
        .await
    }

    /// The `expire_checkout_session` task, at `expires_at`: the session expired, unless its
    /// payment went through (completed instead) or is still being authenticated (looked at
    /// again later).
    pub(crate) async fn expire_task(&self, task: &ClaimedTask) -> CoreResult<()> {
        let Some((session, version)) = self.load_due::<CheckoutSession>(task).await? else {
            return Ok(());
        };
        // An open session comes back from reconcile unwritten: `version` still holds.
        let session = self.reconcile(&task.scope, session).await?;
        if session.status != crate::checkout::session::CheckoutStatus::Open {
            return self.drop_task(task, "the session is already over").await;
        }
        let mut batch = self.background(&task.scope);
        let payment = self.session_payment(&task.scope, &session).await?;
        if payment.as_ref().is_some_and(|(p, _)| in_flight(p)) {
            batch
                .schedule(
                    TaskKind::ExpireCheckoutSession,
                    &session.id,
                    self.now() + RECHECK_SECS,
                )
                .done(task);
            return self.commit_background(batch).await;
        }
        self.expire_into(&mut batch, session, version, payment)?;
        batch.done(task);
        self.commit_background(batch).await
    }

    /// The writes that expire `session` (at `version`): the session, its event, and its
    /// payment if it was never authorised (canceled, `abandoned`, as Stripe cancels an expired
    /// session's PaymentIntent), in one batch.
    fn expire_into(
        &self,
        batch: &mut crate::documents::batch::Batch,
        mut session: CheckoutSession,
        version: i64,
        payment: Option<(Payment, i64)>,
    ) -> CoreResult<CheckoutSession> {
        session.expire();
        batch
            .update(&session, version)?
            .event("checkout_session.expired", &session)?;
        if let Some((mut p, payment_version)) = payment {
            if p.awaits_confirmation() && p.connector.is_none() {
                p.status = transition(p.status, Transition::Cancel)?;
                p.canceled_at = Some(self.now());
                p.cancellation_reason = Some(CancellationReason::Abandoned);
                batch
                    .update(&p, payment_version)?
                    .event("payment.canceled", &p)?;
            }
        }
        Ok(session)
    }

    /// The session's payment (payment mode, once its first try made one) and its version.
    async fn session_payment(
        &self,
        scope: &Scope,
        session: &CheckoutSession,
    ) -> CoreResult<Option<(Payment, i64)>> {
        match &session.payment_intent {
            Some(id) => Ok(Some(
                self.load(scope, Collection::Payments, "payment", id)
                    .await?,
            )),
            None => Ok(None),
        }
    }
}
