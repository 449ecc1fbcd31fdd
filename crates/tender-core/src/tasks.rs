//! Background work stored in the database: scheduled in the same batch as the change that needs
//! it, claimed by lease (so it survives restarts and runs once across nodes), and carried out in
//! a batch that also deletes the task (so it is never carried out twice).
//!
//! - expire an authorisation not captured within 7 days → `canceled`
//! - settle a bank transfer after the settlement delay → `succeeded` (or `failed`)
//! - cancel a 3-D Secure authentication nobody completed → `canceled` (`abandoned`)
//! - settle a pending bank-transfer refund → `succeeded`
//! - sync a connector's payment or refund the processor left unknown ([`crate::payments::upstream`])
//! - make a charge's money available after the availability delay ([`crate::balance::service`])
//! - move a payout on at the bank: in transit, then paid or failed ([`crate::balance::payouts`])
//! - open a dispute on a test payment of the disputed card, and decide a dispute
//!   ([`crate::balance::disputes`])
//! - renew a subscription, try an open invoice, warn of a trial's end, expire an unpaid start,
//!   advance a test clock ([`crate::billing`])

use crate::documents::document::to_value;
use crate::error::{CoreError, CoreResult, StoreError};
use crate::payments::payment::{
    transition, CancellationReason, Payment, PaymentStatus, Transition,
};
use crate::refunds::refund::{Refund, RefundStatus};
use crate::services::Services;
use crate::store::ClaimedTask;

/// Uncaptured authorisations are released after 7 days.
pub const AUTHORIZATION_TTL_SECS: i64 = 7 * 24 * 3600;
/// A 3-D Secure authentication not completed within an hour is abandoned.
pub const AUTHENTICATION_TIMEOUT_SECS: i64 = 3600;
/// How long a runner holds a task before another may take it over, by default
/// (`ServiceConfig::task_lease_secs`).
pub const TASK_LEASE_SECS: i64 = 60;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskKind {
    ExpireAuthorization,
    SettleBankTransfer,
    BounceBankTransfer,
    AbandonAuthentication,
    SettleRefund,
    /// Ask a connector's processor where a payment it left unknown is (CONTRACT §8).
    SyncPayment,
    /// Send (again) a connector's pending refund until the processor settles it.
    SyncRefund,
    /// A pending charge's money becomes available (CONTRACT §9).
    MakeAvailable,
    /// A payout moves on at the bank: in transit, then paid or failed.
    AdvancePayout,
    /// The cardholder's bank disputes a payment (the disputed test card).
    OpenDispute,
    /// A submitted dispute is decided, or an unanswered one lost at its due date.
    ResolveDispute,
    /// A subscription's period (or trial) ends: the next period and its invoice.
    RenewSubscription,
    /// An automatic try of an open invoice.
    PayInvoice,
    /// `customer.subscription.trial_will_end`, three days before the trial ends.
    TrialWillEnd,
    /// A subscription whose first invoice is unpaid 23 hours on expires.
    ExpireIncomplete,
    /// A test clock runs its customers' tasks up to its target time.
    AdvanceClock,
}

impl TaskKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TaskKind::ExpireAuthorization => "expire_authorization",
            TaskKind::SettleBankTransfer => "settle_bank_transfer",
            TaskKind::BounceBankTransfer => "bounce_bank_transfer",
            TaskKind::AbandonAuthentication => "abandon_authentication",
            TaskKind::SettleRefund => "settle_refund",
            TaskKind::SyncPayment => "sync_payment",
            TaskKind::SyncRefund => "sync_refund",
            TaskKind::MakeAvailable => "make_available",
            TaskKind::AdvancePayout => "advance_payout",
            TaskKind::OpenDispute => "open_dispute",
            TaskKind::ResolveDispute => "resolve_dispute",
            TaskKind::RenewSubscription => "renew_subscription",
            TaskKind::PayInvoice => "pay_invoice",
            TaskKind::TrialWillEnd => "trial_will_end",
            TaskKind::ExpireIncomplete => "expire_incomplete",
            TaskKind::AdvanceClock => "advance_clock",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [
            TaskKind::ExpireAuthorization,
            TaskKind::SettleBankTransfer,
            TaskKind::BounceBankTransfer,
            TaskKind::AbandonAuthentication,
            TaskKind::SettleRefund,
            TaskKind::SyncPayment,
            TaskKind::SyncRefund,
            TaskKind::MakeAvailable,
            TaskKind::AdvancePayout,
            TaskKind::OpenDispute,
            TaskKind::ResolveDispute,
            TaskKind::RenewSubscription,
            TaskKind::PayInvoice,
            TaskKind::TrialWillEnd,
            TaskKind::ExpireIncomplete,
            TaskKind::AdvanceClock,
        ]
        .into_iter()
        .find(|k| k.as_str() == s)
    }
}

impl Services {
    /// Claims and carries out due tasks; returns how many it handled.
    pub async fn run_due_tasks(&self, limit: usize) -> CoreResult<usize> {
        let now = self.now();
        let tasks = self
            .store
            .claim_tasks(now, now + self.config.task_lease_secs, limit)
            .await?;
        let n = tasks.len();
        for task in tasks {
            if let Err(e) = self.run_task(&task).await {
                tracing::warn!(task = %task.id, kind = %task.kind, error = %crate::error::error_chain(&e), "background task failed; it will be retried");
            }
        }
        Ok(n)
    }

    async fn run_task(&self, task: &ClaimedTask) -> CoreResult<()> {
        match TaskKind::parse(&task.kind) {
            // An advance runs other tasks ([`Services::run_step`]), never itself.
            Some(TaskKind::AdvanceClock) => self.advance_clock(task).await,
            _ => self.run_step(task).await,
        }
    }

    /// Carries out one task (any kind but an advance of a test clock).
    pub(crate) async fn run_step(&self, task: &ClaimedTask) -> CoreResult<()> {
        let result = self
            .retry_on_conflict(|| async {
                match TaskKind::parse(&task.kind) {
                    Some(TaskKind::ExpireAuthorization) => {
                        self.task_transition(
                            task,
                            PaymentStatus::RequiresCapture,
                            Transition::Cancel,
                            Some(CancellationReason::Abandoned),
                        )
                        .await
                    }
                    Some(TaskKind::AbandonAuthentication) => {
                        self.task_transition(
                            task,
                            PaymentStatus::RequiresAction,
                            Transition::Cancel,
                            Some(CancellationReason::Abandoned),
                        )
                        .await
                    }
                    Some(TaskKind::SettleBankTransfer) => {
                        self.task_transition(
                            task,
                            PaymentStatus::Processing,
                            Transition::Settle { success: true },
                            None,
                        )
                        .await
                    }
                    Some(TaskKind::BounceBankTransfer) => {
                        self.task_transition(
                            task,
                            PaymentStatus::Processing,
                            Transition::Settle { success: false },
                            None,
                        )
                        .await
                    }
                    Some(TaskKind::SettleRefund) => self.settle_refund(task).await,
                    Some(TaskKind::SyncPayment) => self.sync_payment(task).await,
                    Some(TaskKind::SyncRefund) => self.sync_refund(task).await,
                    Some(TaskKind::MakeAvailable) => self.make_available(task).await,
                    Some(TaskKind::AdvancePayout) => self.advance_payout(task).await,
                    Some(TaskKind::OpenDispute) => self.open_dispute(task).await,
                    Some(TaskKind::ResolveDispute) => self.resolve_dispute(task).await,
                    Some(TaskKind::RenewSubscription) => self.renew_subscription(task).await,
                    Some(TaskKind::PayInvoice) => self.pay_invoice_task(task).await,
                    Some(TaskKind::TrialWillEnd) => self.trial_will_end(task).await,
                    Some(TaskKind::ExpireIncomplete) => self.expire_incomplete(task).await,
                    Some(TaskKind::AdvanceClock) | None => {
                        self.drop_task(task, "unknown task kind").await
                    }
                }
            })
            .await;
        match result {
            // Another runner finished the task first (its DeleteTask made ours conflict).
            Err(CoreError::Store(StoreError::Conflict(id))) if id == task.id => Ok(()),
            other => other,
        }
    }

    /// Moves the task's payment from `expected` by `t`, with its event; drops the task when the
    /// payment has moved on by itself (captured, authenticated…).
    async fn task_transition(
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
        self.book_charge(&mut batch, &mut after).await?;
        batch
            .update(&after, version)?
            .event(event_type, &after)?
            .unseal(&after.id)
            .done(task);
        self.commit_background(batch).await
    }

    async fn settle_refund(&self, task: &ClaimedTask) -> CoreResult<()> {
        let Some((mut refund, version)) = self.load_due::<Refund>(task).await? else {
            return Ok(());
        };
        if refund.status != RefundStatus::Pending {
            return self.drop_task(task, "refund already settled").await;
        }
        let before = to_value(&refund)?;
        refund.status = RefundStatus::Succeeded;
        let object = to_value(&refund)?;
        let previous = crate::event::previous_attributes(&before, &object);
        let mut batch = self.background(&task.scope);
        batch
            .event_json("refund.updated", object, previous)?
            .update(&refund, version)?
            .done(task);
        self.commit_background(batch).await
    }
}
