//! Background work stored in the database: scheduled in the same batch as the change that needs
//! it, claimed by lease (so it survives restarts and runs once across nodes), and carried out in
//! a batch that also deletes the task (so it is never carried out twice).
//!
//! - expire an authorisation not captured within 7 days → `canceled`
//! - settle a bank transfer after the settlement delay → `succeeded` (or `failed`)
//! - cancel a 3-D Secure authentication nobody completed → `canceled` (`abandoned`)
//! - settle a pending bank-transfer refund → `succeeded`
//! - sync a connector's payment or refund the processor left unknown
//!   ([`crate::payments::upstream`])
//! - make a charge's money available after the availability delay ([`crate::balance::service`])
//! - move a payout on at the bank: in transit, then paid or failed ([`crate::balance::payouts`])
//! - open a dispute on a test payment of the disputed card, and decide a dispute
//!   ([`crate::balance::disputes`])
//! - renew a subscription, try an open invoice, warn of a trial's end, expire an unpaid start,
//!   advance a test clock ([`crate::billing`])

use crate::error::{CoreError, CoreResult, StoreError};
use crate::payments::payment::{CancellationReason, PaymentStatus, Transition};
use crate::services::Services;
use crate::store::ClaimedTask;
use crate::task::TaskKind;

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
            Some(TaskKind::AdvanceClock) => self.billing().advance_clock(task).await,
            _ => self.run_step(task).await,
        }
    }

    /// Carries out one task (any kind but an advance of a test clock).
    pub(crate) async fn run_step(&self, task: &ClaimedTask) -> CoreResult<()> {
        let result = self
            .retry_on_conflict(|| async {
                match TaskKind::parse(&task.kind) {
                    Some(TaskKind::ExpireAuthorization) => {
                        self.payments()
                            .task_transition(
                                task,
                                PaymentStatus::RequiresCapture,
                                Transition::Cancel,
                                Some(CancellationReason::Abandoned),
                            )
                            .await
                    }
                    Some(TaskKind::AbandonAuthentication) => {
                        self.payments()
                            .task_transition(
                                task,
                                PaymentStatus::RequiresAction,
                                Transition::Cancel,
                                Some(CancellationReason::Abandoned),
                            )
                            .await
                    }
                    Some(TaskKind::SettleBankTransfer) => {
                        self.payments()
                            .task_transition(
                                task,
                                PaymentStatus::Processing,
                                Transition::Settle { success: true },
                                None,
                            )
                            .await
                    }
                    Some(TaskKind::BounceBankTransfer) => {
                        self.payments()
                            .task_transition(
                                task,
                                PaymentStatus::Processing,
                                Transition::Settle { success: false },
                                None,
                            )
                            .await
                    }
                    Some(TaskKind::SettleRefund) => self.refunds().settle_refund(task).await,
                    Some(TaskKind::SyncPayment) => self.payments().sync_payment(task).await,
                    Some(TaskKind::SyncRefund) => self.refunds().sync_refund(task).await,
                    Some(TaskKind::WatchPayment) => self.refunds().watch_payment(task).await,
                    Some(TaskKind::MirrorPayouts) => self.balance().mirror_payouts(task).await,
                    Some(TaskKind::MakeAvailable) => self.balance().make_available(task).await,
                    Some(TaskKind::AdvancePayout) => self.balance().advance_payout(task).await,
                    Some(TaskKind::OpenDispute) => self.balance().open_dispute(task).await,
                    Some(TaskKind::ResolveDispute) => self.balance().resolve_dispute(task).await,
                    Some(TaskKind::RenewSubscription) => {
                        self.billing().renew_subscription(task).await
                    }
                    Some(TaskKind::PayInvoice) => self.billing().pay_invoice_task(task).await,
                    Some(TaskKind::TrialWillEnd) => self.billing().trial_will_end(task).await,
                    Some(TaskKind::ExpireIncomplete) => {
                        self.billing().expire_incomplete(task).await
                    }
                    Some(TaskKind::SettleInvoicePayment) => {
                        self.billing().settle_invoice_payment(task).await
                    }
                    Some(TaskKind::InvoiceUpcoming) => self.billing().invoice_upcoming(task).await,
                    Some(TaskKind::ExpireCheckoutSession) => {
                        self.checkout().expire_task(task).await
                    }
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
}
