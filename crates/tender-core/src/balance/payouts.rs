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

use crate::balance::ledger::LedgerAccount;
use crate::balance::transactions::{self, At};
use serde::{Deserialize, Serialize};

pub use crate::balance::lifecycle::{payout_after, PayoutEvent, PayoutStatus};

use crate::documents::batch::Batch;
use crate::documents::document::to_value;
use crate::error::{CoreError, CoreResult, StoreError};
use crate::ids::{self, IdKind};
use crate::metadata::{self, Metadata};
use crate::money::{Amount, Currency};
use crate::secret::Secret;
use crate::services::RequestContext;
use crate::store::{ClaimedTask, Collection};
use crate::vault::Sealer;

use crate::balance::BalanceBook;
use crate::task::TaskKind;

/// Where a payout goes, as shown: never the whole IBAN.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PayoutDestination {
    pub last4: String,
    pub country: String,
    pub account_holder_name: String,
}

/// A payout (`po_…`) to the merchant's bank account. Stored as shown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Payout {
    pub id: String,
    pub object: String,
    pub amount: i64,
    pub currency: Currency,
    pub status: PayoutStatus,
    /// When the money is expected at the bank (Unix seconds).
    pub arrival_date: i64,
    /// The merchant's bank account; `None` for a connector's processor's payout, which goes
    /// where the processor's account says.
    pub destination: Option<PayoutDestination>,
    /// The connector whose processor made this payout of the money it holds (CONTRACT §15),
    /// mirrored read-only; `None` for Tender's own.
    #[serde(default)]
    pub connector: Option<String>,
    /// The processor's id of it (a Stripe `po_…`).
    #[serde(default)]
    pub connector_reference: Option<String>,
    pub balance_transaction: Option<String>,
    pub failure_balance_transaction: Option<String>,
    pub failure_code: Option<String>,
    pub failure_message: Option<String>,
    pub description: Option<String>,
    pub metadata: Metadata,
    pub created: i64,
    pub livemode: bool,
}

impl crate::documents::document::Document for Payout {
    const COLLECTION: crate::store::Collection = crate::store::Collection::Payouts;

    fn id(&self) -> &str {
        &self.id
    }

    fn created(&self) -> i64 {
        self.created
    }

    fn index(&self) -> crate::store::IndexValues {
        use crate::store::IndexValues;
        IndexValues {
            status: Some(self.status.as_str().to_string()),
            ..IndexValues::default()
        }
    }
}

/// A test-mode IBAN ending in this fails its payout (`account_closed`).
pub const FAILING_IBAN_SUFFIX: &str = "3001";

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

/// A payout's destination, checked: a valid IBAN (kept apart, sealed) and its holder's name.
pub(crate) fn check_destination(
    iban: &str,
    account_holder_name: &str,
) -> CoreResult<(crate::validate::iban::Iban, PayoutDestination)> {
    let iban = crate::validate::iban::validate(iban).map_err(|_| {
        CoreError::invalid(
            "destination[iban]",
            "parameter_invalid",
            "The IBAN is not valid (length for its country, or check digits).",
        )
    })?;
    let holder = account_holder_name.trim();
    if holder.is_empty() || holder.chars().count() > 200 {
        return Err(CoreError::invalid(
            "destination[account_holder_name]",
            "parameter_invalid",
            "destination[account_holder_name] must be 1 to 200 characters.",
        ));
    }
    let destination = PayoutDestination {
        last4: iban.last4.clone(),
        country: iban.country.to_string(),
        account_holder_name: holder.to_string(),
    };
    Ok((iban, destination))
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

impl BalanceBook<'_> {
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
        let (iban, destination) = check_destination(cmd.iban.expose(), &cmd.account_holder_name)?;
        crate::validate::check_text("description", cmd.description.as_deref(), 1000)?;
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
                held_by: None,
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
            destination: Some(destination),
            connector: None,
            connector_reference: None,
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
        let mut batch = self.batch(ctx);
        batch.insert(&payout)?.book(booking)?;
        batch
            .require_balance(LedgerAccount::Available, cmd.currency, 0)
            .seal(
                &id,
                self.iban_sealer().seal(iban.normalized.expose().as_bytes()),
            )
            .schedule(TaskKind::AdvancePayout, &id, now + delay)
            .event_json("payout.created", object.clone(), None)?;
        match self.commit(ctx, batch, Ok(&object)).await {
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
            if let Some(connector) = &before.connector {
                return Err(CoreError::invalid(
                    "payout",
                    "payout_at_processor",
                    format!("This payout was made by the processor of connector {connector}: Tender mirrors it and cannot cancel it."),
                ));
            }
            if payout_after(before.status, PayoutEvent::Canceled).is_none() {
                return Err(payout_state_error(&before, "canceled"));
            }
            let mut batch = self.batch(ctx);
            let after =
                self.return_payout(&mut batch, &before, version, PayoutEvent::Canceled, None)?;
            let object = to_value(&after)?;
            batch.event_json("payout.canceled", object.clone(), None)?;
            self.commit(ctx, batch, Ok(&object)).await?;
            Ok(after)
        })
        .await
    }

    /// The payout as failed or canceled, written to `batch` with what gives its money back.
    pub(crate) fn return_payout(
        &self,
        batch: &mut Batch,
        before: &Payout,
        version: i64,
        event: PayoutEvent,
        failure: Option<(&str, &str)>,
    ) -> CoreResult<Payout> {
        let txn_id = ids::generate(IdKind::BalanceTransaction);
        let booking = transactions::payout_failure(
            At {
                txn_id: &txn_id,
                now: self.now(),
                livemode: batch.scope().livemode(),
                held_by: before.connector.as_deref(),
            },
            &before.id,
            before.currency,
            before.amount,
            before.status == PayoutStatus::Paid,
        )
        .map_err(|e| CoreError::internal("build a ledger posting", e))?;
        let mut after = before.clone();
        after.status = payout_after(before.status, event)
            .ok_or_else(|| payout_state_error(before, "given back"))?;
        after.failure_balance_transaction = Some(txn_id);
        if let Some((code, message)) = failure {
            after.failure_code = Some(code.into());
            after.failure_message = Some(message.into());
        }
        batch.update(&after, version)?.book(booking)?;
        Ok(after)
    }

    /// The payout task: `pending` → `in_transit`, then `in_transit` → `paid` (or `failed`).
    pub(crate) async fn advance_payout(&self, task: &ClaimedTask) -> CoreResult<()> {
        let Some((before, version)) = self.load_due::<Payout>(task).await? else {
            return Ok(());
        };
        let mut batch = self.background(&task.scope);
        let fails = !task.scope.livemode()
            && before
                .destination
                .as_ref()
                .is_some_and(|d| d.last4.ends_with(FAILING_IBAN_SUFFIX));
        let event = match before.status {
            PayoutStatus::Pending => PayoutEvent::Sent,
            PayoutStatus::InTransit if fails => PayoutEvent::Failed,
            _ => PayoutEvent::Paid,
        };
        let Some(status) = payout_after(before.status, event) else {
            return self.drop_task(task, "payout already settled").await;
        };
        let mut after = before.clone();
        after.status = status;
        let event = match event {
            PayoutEvent::Sent => {
                batch.update(&after, version)?.schedule(
                    TaskKind::AdvancePayout,
                    &after.id,
                    self.now() + self.config.bank_settlement_delay.max(1),
                );
                "payout.updated"
            }
            PayoutEvent::Failed => {
                after = self.return_payout(
                    &mut batch,
                    &before,
                    version,
                    PayoutEvent::Failed,
                    Some(("account_closed", "The bank account has been closed.")),
                )?;
                "payout.failed"
            }
            _ => {
                batch.update(&after, version)?;
                if let Some(posting) =
                    transactions::payout_paid(self.now(), &after.id, after.currency, after.amount)
                        .map_err(|e| CoreError::internal("build a ledger posting", e))?
                {
                    batch.post(posting);
                }
                "payout.paid"
            }
        };
        let object = to_value(&after)?;
        let previous = crate::event::previous_attributes(&to_value(&before)?, &object);
        let previous = (event == "payout.updated").then_some(previous).flatten();
        batch.event_json(event, object, previous)?.done(task);
        self.commit_background(batch).await
    }
}
