//! Refund use cases: a refund and the payment's refunded total change in one batch, guarded by
//! the payment's version, so concurrent refunds can never add up to more than was captured.

use crate::auth::Scope;
use crate::documents::document::{from_body, to_value};
use crate::error::{CoreError, CoreResult};
use crate::ids::{self, IdKind};
use crate::metadata;
use crate::payments::payment::{Payment, PaymentStatus};
use crate::refunds::refund::{refund_after, Refund, RefundEvent, RefundReason, RefundStatus};
use crate::refunds::Refunds;
use crate::services::RequestContext;
use crate::store::{ClaimedTask, Collection};
use serde_json::json;

/// `POST /refunds`, parsed.
#[derive(Debug)]
pub struct CreateRefund {
    pub payment: String,
    pub amount: Option<i64>,
    pub reason: Option<RefundReason>,
    pub metadata: Vec<(String, String)>,
}

impl Refunds<'_> {
    /// `POST /refunds`.
    pub async fn create_refund(
        &self,
        ctx: &RequestContext,
        cmd: CreateRefund,
    ) -> CoreResult<Refund> {
        let metadata = metadata::on_create(cmd.metadata.clone())?;
        if let Some(amount) = cmd.amount {
            if amount < 1 {
                return Err(CoreError::invalid(
                    "amount",
                    "amount_too_small",
                    "Refund amount must be at least 1.",
                ));
            }
        }
        let recorded = self
            .retry_on_conflict(|| async {
                let scope = ctx.scope();
                let (before, version) = self.payment_to_refund(scope, &cmd.payment).await?;
                let amount = refund_amount(&before, cmd.amount)?;
                let bank = before.payment_method.kind == "bank_transfer";
                let upstream = before.connector.is_some();
                if upstream {
                    // Sent to the processor after this request's own commit: claim the key first.
                    self.claim_key(ctx).await?;
                }
                let mut refund =
                    new_refund(&before, amount, cmd.reason, metadata.clone(), self.now());
                let mut batch = self.batch(ctx);
                // The amount leaves the balance now, pending or not (CONTRACT §9).
                let mut booking = self.background(scope);
                self.balance()
                    .book_refund(&mut booking, &mut refund, before.held_by())?;
                let mut after = before.clone();
                after.amount_refunded += amount;
                after.refunded = after.amount_refunded == after.amount_captured;
                let object = to_value(&refund)?;
                let refunded = json!({
                    "amount_refunded": before.amount_refunded,
                    "refunded": before.refunded,
                });
                batch
                    .update(&after, version)?
                    .insert(&refund)?
                    .event_json("refund.created", object.clone(), None)?
                    .event_json("payment.refunded", to_value(&after)?, Some(refunded))?
                    .extend(booking);
                if bank {
                    batch.schedule(
                        crate::task::TaskKind::SettleRefund,
                        &refund.id,
                        refund.created + self.config.bank_settlement_delay,
                    );
                }
                if upstream {
                    let task = self.record_refund_upstream(ctx, &refund, batch).await?;
                    return Ok((refund, Some((before, task))));
                }
                self.commit(ctx, batch, Ok(&object)).await?;
                Ok((refund, None))
            })
            .await?;
        match recorded {
            (refund, None) => Ok(refund),
            (refund, Some((payment, task))) => {
                self.send_refund_upstream(ctx, &payment, refund, task).await
            }
        }
    }

    /// The payment `id` names and its version, or a 404 naming the `payment` parameter.
    async fn payment_to_refund(&self, scope: &Scope, id: &str) -> CoreResult<(Payment, i64)> {
        let missing = || CoreError::missing_reference("payment", "payment", id);
        if !ids::looks_like(IdKind::Payment, id) {
            return Err(missing());
        }
        match self
            .store
            .find_record(scope, Collection::Payments, id)
            .await?
        {
            Some(r) => Ok((from_body(&r.id, &r.body)?, r.version)),
            None => Err(missing()),
        }
    }

    /// `POST /refunds/{id}`: metadata only.
    pub async fn update_refund(
        &self,
        ctx: &RequestContext,
        id: &str,
        metadata_input: Vec<(String, String)>,
    ) -> CoreResult<Refund> {
        self.retry_on_conflict(|| async {
            let (before, version): (Refund, i64) = self
                .load(ctx.scope(), Collection::Refunds, "refund", id)
                .await?;
            let mut after = before.clone();
            after.metadata = metadata::merge(&before.metadata, metadata_input.clone())?;
            let object = to_value(&after)?;
            let mut batch = self.batch(ctx);
            batch.update(&after, version)?;
            self.commit(ctx, batch, Ok(&object)).await?;
            Ok(after)
        })
        .await
    }

    pub(crate) async fn settle_refund(&self, task: &ClaimedTask) -> CoreResult<()> {
        let Some((mut refund, version)) = self.load_due::<Refund>(task).await? else {
            return Ok(());
        };
        let Some(status) = refund_after(refund.status, RefundEvent::Settled) else {
            return self.drop_task(task, "refund already settled").await;
        };
        let before = to_value(&refund)?;
        refund.status = status;
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

/// The refund of `amount` of `payment`: card refunds are immediate; bank transfers settle
/// after the delay; a processor's refund is pending until it answers.
pub(crate) fn new_refund(
    payment: &Payment,
    amount: i64,
    reason: Option<RefundReason>,
    metadata: crate::metadata::Metadata,
    created: i64,
) -> Refund {
    let pending = payment.payment_method.kind == "bank_transfer" || payment.connector.is_some();
    Refund {
        id: ids::generate(IdKind::Refund),
        object: "refund".into(),
        amount,
        currency: payment.currency,
        payment: payment.id.clone(),
        status: if pending {
            RefundStatus::Pending
        } else {
            RefundStatus::Succeeded
        },
        reason,
        metadata,
        livemode: payment.livemode,
        created,
        connector: payment.connector.clone(),
        connector_reference: None,
        balance_transaction: None,
        failure_balance_transaction: None,
    }
}

/// What may be refunded of `payment`, asked for `asked` (all that is left when not given):
/// only a succeeded payment that is not disputed, and never more than is left.
fn refund_amount(payment: &Payment, asked: Option<i64>) -> CoreResult<i64> {
    if payment.status != PaymentStatus::Succeeded {
        return Err(CoreError::UnexpectedState {
            message: format!(
                "This payment's status is {}; only succeeded payments can be refunded.",
                payment.status.as_str()
            ),
        });
    }
    if payment.disputed {
        return Err(CoreError::invalid(
            "payment",
            "charge_disputed",
            "This payment is disputed: the disputed amount can no longer be refunded.",
        ));
    }
    let left = payment.refundable();
    let amount = asked.unwrap_or(left);
    if amount > left || left == 0 {
        return Err(CoreError::invalid(
            "amount",
            "amount_too_large",
            format!("Refund amount ({amount}) is greater than what is left to refund ({left})."),
        ));
    }
    Ok(amount)
}
