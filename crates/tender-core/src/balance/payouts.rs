//! Payouts (`po_`, CONTRACT §9): money sent from the available balance to the merchant's bank.
//!
//! - Creating one books its `payout` transaction and posting (available → payouts in transit)
//!   in the batch that records it, with [`WriteOp::RequireBalance`] on the available balance:
//!   the store refuses the whole batch when the money is not there, and serialises racing
//!   payouts of one balance, so two can never spend the same money (400 `balance_insufficient`).
//! - The IBAN is kept sealed under the vault key (owner: the payout); the document shows its
//!   country and last four characters only.
//! - A stored task moves it `pending` → `in_transit` → `paid` a bank delay apart
//!   (`--bank-settlement-delay`); in test mode an IBAN ending in `3001` fails at the bank
//!   (`account_closed`) and a `payout_failure` transaction gives the money back. Cancel is
//!   allowed while `pending` and gives it back the same way.
//!
//! Depends on the domain ([`crate::balance::transactions`]) and the storage port.

use crate::auth::Scope;
use crate::balance::ledger::LedgerAccount;
use crate::balance::transactions::{
    self, At, Payout, PayoutDestination, PayoutStatus, FAILING_IBAN_SUFFIX,
};
use crate::error::{CoreError, CoreResult, StoreError};
use crate::ids::{self, IdKind};
use crate::metadata::{self, Metadata};
use crate::money::{Amount, Currency};
use crate::secret::Secret;
use crate::services::{from_body, to_body, to_value, RequestContext, Services};
use crate::store::{ClaimedTask, Collection, IndexValues, WriteOp};
use crate::vault::Sealer;

use crate::tasks::TaskKind;

/// `POST /payouts`, parsed.
#[derive(Debug)]
pub struct CreatePayout {
    pub amount: Amount,
    pub currency: Currency,
    pub iban: Secret,
    pub account_holder_name: String,
    pub description: Option<String>,
    pub metadata: Vec<(String, String)>,
}

fn payout_index(p: &Payout) -> IndexValues {
    IndexValues {
        status: Some(p.status.as_str().to_string()),
        ..IndexValues::default()
    }
}

fn payout_state_error(p: &Payout, action: &str) -> CoreError {
    CoreError::invalid(
        "payout",
        "payout_unexpected_state",
        format!(
            "This payout's status is {}; only pending payouts can be {action}.",
            p.status.as_str()
        ),
    )
}

impl Services {
    fn iban_sealer(&self) -> Sealer {
        Sealer::new(&self.config.vault_key, "payout destination")
    }

    /// `POST /payouts`.
    pub async fn create_payout(
        &self,
        ctx: &RequestContext,
        cmd: CreatePayout,
    ) -> CoreResult<Payout> {
        let scope = ctx.scope();
        let iban = crate::validate::iban::validate(cmd.iban.expose()).map_err(|_| {
            CoreError::invalid(
                "destination[iban]",
                "parameter_invalid",
                "The IBAN is not valid (length for its country, or check digits).",
            )
        })?;
        let holder = cmd.account_holder_name.trim();
        if holder.is_empty() || holder.chars().count() > 200 {
            return Err(CoreError::invalid(
                "destination[account_holder_name]",
                "parameter_invalid",
                "destination[account_holder_name] must be 1 to 200 characters.",
            ));
        }
        crate::payments::create::check_text("description", cmd.description.as_deref(), 1000)?;
        let metadata: Metadata = metadata::on_create(cmd.metadata)?;
        let now = self.now();
        let id = ids::generate(IdKind::Payout);
        let txn_id = ids::generate(IdKind::BalanceTransaction);
        let amount = cmd.amount.get();
        let booking = transactions::payout(
            At {
                txn_id: &txn_id,
                now,
                livemode: scope.livemode(),
            },
            &id,
            cmd.currency,
            amount,
        )
        .map_err(|e| CoreError::internal("build a ledger posting", e))?;
        let delay = self.config.bank_settlement_delay.max(1);
        let payout = Payout {
            id: id.clone(),
            object: "payout".into(),
            amount,
            currency: cmd.currency,
            status: PayoutStatus::Pending,
            arrival_date: now + 2 * delay,
            destination: PayoutDestination {
                last4: iban.last4.clone(),
                country: iban.country.to_string(),
                account_holder_name: holder.to_string(),
            },
            balance_transaction: Some(txn_id),
            failure_balance_transaction: None,
            failure_code: None,
            failure_message: None,
            description: cmd.description,
            metadata,
            created: now,
            livemode: scope.livemode(),
        };
        let object = to_value(&payout)?;
        let mut ops = vec![WriteOp::Insert {
            collection: Collection::Payouts,
            id: id.clone(),
            created: now,
            index: payout_index(&payout),
            body: to_body(&payout)?,
        }];
        ops.extend(self.booking_ops(booking)?);
        ops.push(WriteOp::RequireBalance {
            account: LedgerAccount::Available,
            currency: cmd.currency,
            at_least: 0,
        });
        ops.push(WriteOp::Seal {
            owner: id.clone(),
            sealed: self.iban_sealer().seal(iban.normalized.expose().as_bytes()),
        });
        ops.push(self.schedule_op(TaskKind::AdvancePayout, &id, now + delay));
        ops.push(self.event_op(Some(ctx), scope, "payout.created", object.clone(), None)?);
        match self.commit(ctx, ops, Ok(&object)).await {
            Err(CoreError::Store(StoreError::BalanceInsufficient(_))) => Err(CoreError::invalid(
                "amount",
                "balance_insufficient",
                format!(
                    "The available balance in {} is less than the payout's {amount}.",
                    cmd.currency.code()
                ),
            )),
            Err(e) => Err(e),
            Ok(()) => Ok(payout),
        }
    }

    /// `POST /payouts/{id}/cancel`: only while pending; the money comes back.
    pub async fn cancel_payout(&self, ctx: &RequestContext, id: &str) -> CoreResult<Payout> {
        self.retry_on_conflict(|| async {
            let (before, version): (Payout, i64) = self
                .load(ctx.scope(), Collection::Payouts, "payout", id)
                .await?;
            if before.status != PayoutStatus::Pending {
                return Err(payout_state_error(&before, "canceled"));
            }
            let (after, ops) =
                self.return_payout(ctx.scope(), &before, version, PayoutStatus::Canceled, None)?;
            let object = to_value(&after)?;
            let mut ops = ops;
            ops.push(self.event_op(
                Some(ctx),
                ctx.scope(),
                "payout.canceled",
                object.clone(),
                None,
            )?);
            self.commit(ctx, ops, Ok(&object)).await?;
            Ok(after)
        })
        .await
    }

    /// The payout as failed or canceled, and the writes that give its money back.
    fn return_payout(
        &self,
        scope: &Scope,
        before: &Payout,
        version: i64,
        status: PayoutStatus,
        failure: Option<(&str, &str)>,
    ) -> CoreResult<(Payout, Vec<WriteOp>)> {
        let txn_id = ids::generate(IdKind::BalanceTransaction);
        let booking = transactions::payout_failure(
            At {
                txn_id: &txn_id,
                now: self.now(),
                livemode: scope.livemode(),
            },
            &before.id,
            before.currency,
            before.amount,
        )
        .map_err(|e| CoreError::internal("build a ledger posting", e))?;
        let mut after = before.clone();
        after.status = status;
        after.failure_balance_transaction = Some(txn_id);
        if let Some((code, message)) = failure {
            after.failure_code = Some(code.into());
            after.failure_message = Some(message.into());
        }
        let mut ops = vec![WriteOp::Update {
            collection: Collection::Payouts,
            id: after.id.clone(),
            expected_version: version,
            index: payout_index(&after),
            body: to_body(&after)?,
        }];
        ops.extend(self.booking_ops(booking)?);
        Ok((after, ops))
    }

    /// The payout task: `pending` → `in_transit`, then `in_transit` → `paid` (or `failed`).
    pub(crate) async fn advance_payout(&self, task: &ClaimedTask) -> CoreResult<()> {
        let Some(record) = self
            .store
            .find_record(&task.scope, Collection::Payouts, &task.object_id)
            .await?
        else {
            return self.drop_task(task, "payout missing").await;
        };
        let before: Payout = from_body(&record.id, &record.body)?;
        let scope = &task.scope;
        let done = WriteOp::DeleteTask {
            id: task.id.clone(),
        };
        let fails = !scope.livemode() && before.destination.last4.ends_with(FAILING_IBAN_SUFFIX);
        let (after, mut ops, event) = match before.status {
            PayoutStatus::Pending => {
                let mut after = before.clone();
                after.status = PayoutStatus::InTransit;
                let ops = vec![
                    WriteOp::Update {
                        collection: Collection::Payouts,
                        id: after.id.clone(),
                        expected_version: record.version,
                        index: payout_index(&after),
                        body: to_body(&after)?,
                    },
                    self.schedule_op(
                        TaskKind::AdvancePayout,
                        &after.id,
                        self.now() + self.config.bank_settlement_delay.max(1),
                    ),
                ];
                (after, ops, "payout.updated")
            }
            PayoutStatus::InTransit if fails => {
                let (after, ops) = self.return_payout(
                    scope,
                    &before,
                    record.version,
                    PayoutStatus::Failed,
                    Some(("account_closed", "The bank account has been closed.")),
                )?;
                (after, ops, "payout.failed")
            }
            PayoutStatus::InTransit => {
                let mut after = before.clone();
                after.status = PayoutStatus::Paid;
                let mut ops = vec![WriteOp::Update {
                    collection: Collection::Payouts,
                    id: after.id.clone(),
                    expected_version: record.version,
                    index: payout_index(&after),
                    body: to_body(&after)?,
                }];
                ops.extend(
                    transactions::payout_paid(self.now(), &after.id, after.currency, after.amount)
                        .map_err(|e| CoreError::internal("build a ledger posting", e))?
                        .map(WriteOp::Post),
                );
                (after, ops, "payout.paid")
            }
            _ => return self.drop_task(task, "payout already settled").await,
        };
        let previous = crate::event::previous_attributes(&to_value(&before)?, &to_value(&after)?);
        let previous = (event == "payout.updated").then_some(previous).flatten();
        ops.push(self.event_op(None, scope, event, to_value(&after)?, previous)?);
        ops.push(done);
        self.commit_background(scope, ops).await
    }
}
