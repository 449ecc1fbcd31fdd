//! Disputes (`dp_`, CONTRACT §9): a cardholder's bank takes a payment's money back, and the
//! merchant answers with evidence.
//!
//! - Opening one ([`BalanceBook::open_dispute`], the `open_dispute` task scheduled when a test-mode
//!   payment on the disputed test card is approved) withdraws the disputed amount and charges the
//!   account's dispute fee at once: an `adjustment` transaction and its posting (available →
//!   disputes + fees), in the batch that records the dispute and marks the payment `disputed`
//!   (which from then on refuses refunds). A payment not captured yet is looked at again later;
//!   one that never captures is never disputed.
//! - `POST /disputes/{id}` changes evidence and metadata while the dispute `needs_response`
//!   (metadata at any time); `submit: true` sends the evidence (→ `under_review`) and schedules
//!   the decision a moment later (`resolve_dispute`): in test mode `uncategorized_text` =
//!   `winning_evidence` wins (a second `adjustment` gives the amount back, the fee is kept),
//!   anything else loses (the withheld amount leaves the ledger for good). In live mode nobody
//!   decides here: the dispute stays `under_review`.
//! - `POST /disputes/{id}/close` accepts the loss while the dispute `needs_response`; a dispute
//!   nobody answers by `evidence_details.due_by` is lost the same way.
//!
//! A dispute opened at a connector's processor is mirrored from there
//! ([`crate::balance::processor_disputes`]) and answered there: evidence and closing it here
//! are refused (400 `dispute_at_processor`).
//!
//! Every change is one batch with its event (`dispute.created`, `dispute.updated`,
//! `dispute.closed`). Depends on the domain ([`crate::balance::transactions`]) and the storage
//! port.

use crate::auth::Scope;
use crate::balance::transactions::{self, At};
use serde::{Deserialize, Serialize};

pub use crate::balance::lifecycle::{dispute_after, DisputeEvent, DisputeStatus};

use crate::balance::transactions::BalanceTransaction;
use crate::balance::BalanceBook;
use crate::documents::batch::Batch;
use crate::documents::document::to_value;
use crate::error::{CoreError, CoreResult};
use crate::ids::{self, IdKind};
use crate::metadata;
use crate::metadata::Metadata;
use crate::money::Currency;
use crate::payments::payment::{Payment, PaymentStatus};
use crate::services::RequestContext;
use crate::store::{ClaimedTask, Collection};
use crate::task::TaskKind;

/// What a merchant submits against a dispute.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Evidence {
    pub customer_name: Option<String>,
    pub customer_email_address: Option<String>,
    pub product_description: Option<String>,
    pub uncategorized_text: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EvidenceDetails {
    /// Evidence must be submitted before this (Unix seconds).
    pub due_by: i64,
    pub submission_count: u32,
}

/// A dispute (`dp_…`) of a payment. Stored as shown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Dispute {
    pub id: String,
    pub object: String,
    pub amount: i64,
    pub currency: Currency,
    pub payment: String,
    /// The processor's id of a dispute opened at a connector's processor (CONTRACT §15), which
    /// is answered there; `None` for Tender's own.
    #[serde(default)]
    pub connector_reference: Option<String>,
    pub reason: String,
    pub status: DisputeStatus,
    pub evidence: Evidence,
    pub evidence_details: EvidenceDetails,
    /// The transactions it caused, oldest first: the withdrawal, then a reversal if won.
    pub balance_transactions: Vec<BalanceTransaction>,
    pub metadata: Metadata,
    pub created: i64,
    pub livemode: bool,
}

impl crate::documents::document::Document for Dispute {
    const COLLECTION: crate::store::Collection = crate::store::Collection::Disputes;

    fn id(&self) -> &str {
        &self.id
    }

    fn created(&self) -> i64 {
        self.created
    }

    fn index(&self) -> crate::store::IndexValues {
        use crate::store::IndexValues;
        IndexValues {
            payment: Some(self.payment.clone()),
            status: Some(self.status.as_str().to_string()),
            ..IndexValues::default()
        }
    }
}

/// In test mode, evidence whose `uncategorized_text` is this wins the dispute.
pub const WINNING_EVIDENCE: &str = "winning_evidence";

/// A test-mode payment on the disputed card is disputed this long after it is approved (and
/// captured); a submitted dispute is decided this long after its submission.
pub const DISPUTE_DELAY_SECS: i64 = 2;
/// How long a merchant has to answer a dispute.
pub const EVIDENCE_WINDOW_SECS: i64 = 7 * 24 * 3600;
/// Each evidence field is at most this many characters (the API's limit for any string, so the
/// dashboard's form, which does not pass through the API's parser, takes what the API takes).
const EVIDENCE_MAX_CHARS: usize = 5_000;

/// `POST /disputes/{id}`, parsed. Each evidence field given replaces the one kept (an empty
/// string clears it).
#[derive(Debug, Default)]
pub struct UpdateDispute {
    pub evidence: Option<Evidence>,
    pub metadata: Option<Vec<(String, String)>>,
    pub submit: bool,
}

fn state_error(d: &Dispute, what: &str) -> CoreError {
    CoreError::invalid(
        "dispute",
        "dispute_unexpected_state",
        format!(
            "This dispute's status is {}; {what} only while it needs a response.",
            d.status.as_str()
        ),
    )
}

/// A dispute opened at a processor is answered there: Tender mirrors it, never decides it.
fn at_processor(d: &Dispute) -> CoreResult<()> {
    match &d.connector_reference {
        None => Ok(()),
        Some(reference) => Err(CoreError::invalid(
            "dispute",
            "dispute_at_processor",
            format!(
                "This dispute was opened at the connector's processor ({reference}): submit evidence or accept it there; Tender shows what the processor decides."
            ),
        )),
    }
}

pub(crate) fn posting_failed(e: crate::balance::ledger::PostingError) -> CoreError {
    CoreError::internal("build a ledger posting", e)
}

/// `given` over `kept`, field by field; an empty string clears a field.
fn merge_evidence(kept: &Evidence, given: Evidence) -> CoreResult<Evidence> {
    let field = |name: &str, kept: &Option<String>, given: Option<String>| match given {
        None => Ok(kept.clone()),
        Some(s) if s.is_empty() => Ok(None),
        Some(s) if s.chars().count() > EVIDENCE_MAX_CHARS => Err(CoreError::invalid(
            format!("evidence[{name}]"),
            "parameter_invalid",
            format!("evidence[{name}] must be at most {EVIDENCE_MAX_CHARS} characters."),
        )),
        Some(s) => Ok(Some(s)),
    };
    Ok(Evidence {
        customer_name: field("customer_name", &kept.customer_name, given.customer_name)?,
        customer_email_address: field(
            "customer_email_address",
            &kept.customer_email_address,
            given.customer_email_address,
        )?,
        product_description: field(
            "product_description",
            &kept.product_description,
            given.product_description,
        )?,
        uncategorized_text: field(
            "uncategorized_text",
            &kept.uncategorized_text,
            given.uncategorized_text,
        )?,
    })
}

impl BalanceBook<'_> {
    /// The `open_dispute` task: the cardholder's bank disputes the payment's captured amount
    /// (less what was refunded).
    pub(crate) async fn open_dispute(&self, task: &ClaimedTask) -> CoreResult<()> {
        let scope = &task.scope;
        let Some((before, version)) = self.load_due::<Payment>(task).await? else {
            return Ok(());
        };
        let amount = before.amount_captured - before.amount_refunded;
        match before.status {
            _ if before.disputed => return self.drop_task(task, "already disputed").await,
            PaymentStatus::RequiresCapture
            | PaymentStatus::RequiresAction
            | PaymentStatus::Processing => {
                // Not captured yet: look again when it may be.
                let mut batch = self.background(scope);
                batch.done(task).schedule(
                    TaskKind::OpenDispute,
                    &before.id,
                    self.now() + self.balance().available_delay(scope.livemode()),
                );
                return self.commit_background(batch).await;
            }
            _ if amount <= 0 => return self.drop_task(task, "nothing captured to dispute").await,
            _ => {}
        }
        let now = self.now();
        let id = ids::generate(IdKind::Dispute);
        let txn_id = ids::generate(IdKind::BalanceTransaction);
        let fee = self.balance().pricing(&scope.account).await?.dispute;
        let booking = transactions::dispute(
            At {
                txn_id: &txn_id,
                now,
                livemode: scope.livemode(),
                held_by: None,
            },
            &id,
            &before.id,
            before.currency,
            amount,
            fee,
        )
        .map_err(posting_failed)?;
        let dispute = Dispute {
            id: id.clone(),
            object: "dispute".into(),
            amount,
            currency: before.currency,
            payment: before.id.clone(),
            connector_reference: None,
            reason: "fraudulent".into(),
            status: DisputeStatus::NeedsResponse,
            evidence: Evidence::default(),
            evidence_details: EvidenceDetails {
                due_by: now + EVIDENCE_WINDOW_SECS,
                submission_count: 0,
            },
            balance_transactions: booking.transaction.iter().cloned().collect(),
            metadata: Default::default(),
            created: now,
            livemode: scope.livemode(),
        };
        let mut payment = before;
        payment.disputed = true;
        let mut batch = self.background(scope);
        batch.insert(&dispute)?.update(&payment, version)?;
        batch
            .schedule(TaskKind::ResolveDispute, &id, now + EVIDENCE_WINDOW_SECS)
            .done(task)
            .book(booking)?
            .event("dispute.created", &dispute)?;
        self.commit_background(batch).await
    }

    /// One dispute of the scope.
    pub async fn retrieve_dispute(&self, scope: &Scope, id: &str) -> CoreResult<Dispute> {
        let (d, _) = self
            .load(scope, Collection::Disputes, "dispute", id)
            .await?;
        Ok(d)
    }

    /// `POST /disputes/{id}`: evidence, metadata, and submitting the evidence.
    pub async fn update_dispute(
        &self,
        ctx: &RequestContext,
        id: &str,
        cmd: UpdateDispute,
    ) -> CoreResult<Dispute> {
        self.retry_on_conflict(|| async {
            let scope = ctx.scope();
            let (before, version): (Dispute, i64) = self
                .load(scope, Collection::Disputes, "dispute", id)
                .await?;
            let mut after = before.clone();
            if cmd.evidence.is_some() || cmd.submit {
                at_processor(&before)?;
            }
            if let Some(evidence) = &cmd.evidence {
                if before.status != DisputeStatus::NeedsResponse {
                    return Err(state_error(&before, "evidence can be changed"));
                }
                after.evidence = merge_evidence(&before.evidence, evidence.clone())?;
            }
            if let Some(input) = &cmd.metadata {
                after.metadata = metadata::merge(&before.metadata, input.clone())?;
            }
            let mut batch = self.batch(ctx);
            if cmd.submit {
                if before.status != DisputeStatus::NeedsResponse {
                    return Err(state_error(&before, "evidence can be submitted"));
                }
                after.status = dispute_after(before.status, DisputeEvent::Submitted)
                    .ok_or_else(|| state_error(&before, "evidence can be submitted"))?;
                after.evidence_details.submission_count += 1;
                batch.schedule(
                    TaskKind::ResolveDispute,
                    &after.id,
                    self.now() + DISPUTE_DELAY_SECS,
                );
            }
            let object = batch.change("dispute.updated", (&before, &after), version)?;
            self.commit(ctx, batch, Ok(&object)).await?;
            Ok(after)
        })
        .await
    }

    /// `POST /disputes/{id}/close`: the merchant accepts the loss.
    pub async fn close_dispute(&self, ctx: &RequestContext, id: &str) -> CoreResult<Dispute> {
        self.retry_on_conflict(|| async {
            let scope = ctx.scope();
            let (before, version): (Dispute, i64) = self
                .load(scope, Collection::Disputes, "dispute", id)
                .await?;
            at_processor(&before)?;
            if before.status != DisputeStatus::NeedsResponse {
                return Err(state_error(&before, "it can be closed"));
            }
            let mut batch = self.batch(ctx);
            let after = self.decide(&mut batch, &before, version, false)?;
            let object = to_value(&after)?;
            batch.event_json("dispute.closed", object.clone(), None)?;
            self.commit(ctx, batch, Ok(&object)).await?;
            Ok(after)
        })
        .await
    }

    /// The `resolve_dispute` task: a submitted dispute is decided (test mode), or one nobody
    /// answered by its due date is lost.
    pub(crate) async fn resolve_dispute(&self, task: &ClaimedTask) -> CoreResult<()> {
        let scope = &task.scope;
        let Some((before, version)) = self.load_due::<Dispute>(task).await? else {
            return Ok(());
        };
        let won = match before.status {
            DisputeStatus::UnderReview if !scope.livemode() => {
                before.evidence.uncategorized_text.as_deref() == Some(WINNING_EVIDENCE)
            }
            DisputeStatus::NeedsResponse if self.now() >= before.evidence_details.due_by => false,
            _ => return self.drop_task(task, "nothing to decide").await,
        };
        let mut batch = self.background(scope);
        let after = self.decide(&mut batch, &before, version, won)?;
        batch.event("dispute.closed", &after)?.done(task);
        self.commit_background(batch).await
    }

    /// The dispute won or lost, written to `batch` with what moves its money: back to the
    /// balance when won (the fee is kept), out of the ledger when lost.
    fn decide(
        &self,
        batch: &mut Batch,
        before: &Dispute,
        version: i64,
        won: bool,
    ) -> CoreResult<Dispute> {
        let now = self.now();
        let livemode = batch.scope().livemode();
        let mut after = before.clone();
        if won {
            after.status = dispute_after(before.status, DisputeEvent::Won)
                .ok_or_else(|| state_error(before, "it can be won"))?;
            let txn_id = ids::generate(IdKind::BalanceTransaction);
            let booking = transactions::dispute_won(
                At {
                    txn_id: &txn_id,
                    now,
                    livemode,
                    held_by: None,
                },
                &before.id,
                &before.payment,
                before.currency,
                before.amount,
            )
            .map_err(posting_failed)?;
            after
                .balance_transactions
                .extend(booking.transaction.iter().cloned());
            batch.update(&after, version)?.book(booking)?;
        } else {
            after.status = dispute_after(before.status, DisputeEvent::Lost)
                .ok_or_else(|| state_error(before, "it can be lost"))?;
            batch.update(&after, version)?;
            if let Some(posting) =
                transactions::dispute_lost(now, &before.id, before.currency, before.amount)
                    .map_err(posting_failed)?
            {
                batch.post(posting);
            }
        }
        Ok(after)
    }
}
