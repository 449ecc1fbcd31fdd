//! SetupIntent use cases: create (and confirm at once), confirm, cancel. The rules are the
//! table in [`super`]'s doc; a confirmation is one batch: the intent, the card attached to its
//! customer, and the event that says which way it went.

use crate::documents::batch::Batch;
use crate::documents::document::to_value;
use crate::error::{CoreError, CoreResult};
use crate::ids::{self, CustomerId, IdKind, PaymentMethodId, SetupIntentId};
use crate::metadata;
use crate::services::RequestContext;
use crate::setup_intents::setup_intent::{
    SetupCancellationReason, SetupError, SetupIntent, SetupIntentStatus, Usage,
};
use crate::setup_intents::SetupIntents;
use crate::store::Collection;

/// `POST /setup_intents`.
#[derive(Debug, Default)]
pub struct CreateSetupIntent {
    pub customer: Option<CustomerId>,
    pub payment_method: Option<PaymentMethodId>,
    pub usage: Usage,
    pub description: Option<String>,
    pub metadata: Vec<(String, String)>,
    /// Confirm it in the same request.
    pub confirm: bool,
}

/// `POST /setup_intents/{id}/confirm`.
#[derive(Debug, Default)]
pub struct ConfirmSetupIntent {
    /// The card to save; `None`: the one the intent was created with.
    pub payment_method: Option<PaymentMethodId>,
}

impl SetupIntents<'_> {
    /// Records a SetupIntent, confirming it at once with `confirm`.
    pub async fn create_setup_intent(
        &self,
        ctx: &RequestContext,
        cmd: CreateSetupIntent,
    ) -> CoreResult<SetupIntent> {
        let mut batch = self.batch(ctx);
        if let Some(customer) = &cmd.customer {
            let version = self.payments().require_customer(ctx, customer).await?;
            batch.check(Collection::Customers, customer, version);
        }
        let mut intent = self.new_setup_intent(ctx, cmd.customer.map(CustomerId::into_string));
        if let Some(pm) = &cmd.payment_method {
            intent.status = SetupIntentStatus::RequiresConfirmation;
            intent.payment_method = Some(pm.to_string());
        }
        intent.usage = cmd.usage;
        intent.description = cmd.description;
        intent.metadata = metadata::on_create(cmd.metadata)?;
        batch.event("setup_intent.created", &intent)?;
        let declined = match (&cmd.payment_method, cmd.confirm) {
            (Some(pm), true) => self.attempt(ctx, &mut intent, pm, &mut batch).await?,
            (None, true) => return Err(no_method()),
            (Some(pm), false) => {
                self.payment_methods()
                    .load_chargeable(ctx, pm, "payment_method")
                    .await?;
                None
            }
            (None, false) => None,
        };
        batch.insert(&intent)?;
        self.finish(ctx, batch, &intent, declined).await
    }

    /// A new SetupIntent for `customer`, waiting for a card (`requires_payment_method`,
    /// `off_session`); not written. A subscription's trial started without a card makes one in
    /// its own batch ([`SetupIntents::pending_for`]).
    pub(crate) fn new_setup_intent(
        &self,
        ctx: &RequestContext,
        customer: Option<String>,
    ) -> SetupIntent {
        SetupIntent {
            id: ids::generate(IdKind::SetupIntent),
            object: "setup_intent".into(),
            status: SetupIntentStatus::RequiresPaymentMethod,
            customer,
            payment_method: None,
            usage: Usage::OffSession,
            description: None,
            metadata: Default::default(),
            last_setup_error: None,
            cancellation_reason: None,
            canceled_at: None,
            livemode: ctx.scope().livemode(),
            created: self.now(),
        }
    }

    /// The SetupIntent that collects `customer`'s card for a trial started without one, added
    /// to `batch` with its `setup_intent.created`: its id.
    pub(crate) fn pending_for(
        &self,
        ctx: &RequestContext,
        customer: &str,
        batch: &mut Batch,
    ) -> CoreResult<String> {
        let intent = self.new_setup_intent(ctx, Some(customer.to_string()));
        batch
            .insert(&intent)?
            .event("setup_intent.created", &intent)?;
        Ok(intent.id)
    }

    /// Confirms a SetupIntent: verifies the card and saves it, or records its decline.
    pub async fn confirm_setup_intent(
        &self,
        ctx: &RequestContext,
        id: &SetupIntentId,
        cmd: ConfirmSetupIntent,
    ) -> CoreResult<SetupIntent> {
        self.retry_on_conflict(|| async {
            let (mut intent, version): (SetupIntent, i64) = self
                .load(ctx.scope(), Collection::SetupIntents, "setup_intent", id)
                .await?;
            intent.require_open("confirmed")?;
            let method = match (&cmd.payment_method, &intent.payment_method) {
                (Some(pm), _) => pm.clone(),
                (None, Some(pm)) => PaymentMethodId::stored(pm.clone()),
                (None, None) => return Err(no_method()),
            };
            let mut batch = self.batch(ctx);
            let declined = self.attempt(ctx, &mut intent, &method, &mut batch).await?;
            batch.update(&intent, version)?;
            self.finish(ctx, batch, &intent, declined).await
        })
        .await
    }

    /// Cancels a SetupIntent that has not succeeded.
    pub async fn cancel_setup_intent(
        &self,
        ctx: &RequestContext,
        id: &SetupIntentId,
        reason: Option<SetupCancellationReason>,
    ) -> CoreResult<SetupIntent> {
        self.retry_on_conflict(|| async {
            let (mut intent, version): (SetupIntent, i64) = self
                .load(ctx.scope(), Collection::SetupIntents, "setup_intent", id)
                .await?;
            intent.require_open("canceled")?;
            let before = intent.clone();
            intent.cancel(reason, self.wall_now());
            let mut batch = self.batch(ctx);
            let object = batch.change("setup_intent.canceled", (&before, &intent), version)?;
            self.commit(ctx, batch, Ok(&object)).await?;
            Ok(intent)
        })
        .await
    }

    /// One try of `pm` for `intent`, its writes added to `batch`: the card verified and
    /// attached to the intent's customer (`succeeded`), or its decline recorded, which is
    /// returned. A method that cannot be used at all (missing, spent, another customer's)
    /// fails the request without a write.
    async fn attempt(
        &self,
        ctx: &RequestContext,
        intent: &mut SetupIntent,
        pm: &PaymentMethodId,
        batch: &mut Batch,
    ) -> CoreResult<Option<CoreError>> {
        let methods = self.payment_methods();
        let chargeable = match methods.load_verified(ctx, pm, "payment_method").await {
            // A card saved for later must be one Tender can charge later: one a processor
            // keeps, or one Tender may send.
            Ok(chargeable) if chargeable.method.connector.is_some() => chargeable,
            Ok(chargeable) => {
                self.connectors()
                    .require_off_session_cards(ctx.scope(), "payment_method")
                    .await?;
                chargeable
            }
            Err(CoreError::Card {
                code,
                decline_code,
                message,
                ..
            }) => {
                let error = SetupError {
                    code: code.to_string(),
                    decline_code: decline_code.as_deref().map(str::to_string),
                    message: message.to_string(),
                    payment_method: Some(pm.to_string()),
                };
                intent.fail(error);
                batch.event("setup_intent.setup_failed", intent)?;
                return Ok(Some(CoreError::Card {
                    code,
                    decline_code,
                    message,
                    param: None,
                    payment: Some(intent.id.clone()),
                }));
            }
            Err(other) => return Err(other),
        };
        let mut method = chargeable.method;
        match (&method.customer, &intent.customer) {
            (Some(owner), Some(customer)) if owner == customer => {}
            (None, Some(customer)) => {
                method.customer = Some(customer.clone());
                batch
                    .update(&method, chargeable.version)?
                    .event("payment_method.attached", &method)?;
            }
            (None, None) => {}
            (Some(_), _) => {
                return Err(CoreError::invalid(
                    "payment_method",
                    "payment_method_unexpected_state",
                    "This payment method is attached to a customer other than this SetupIntent's: create the SetupIntent for that customer.",
                ))
            }
        }
        intent.succeed(method.id);
        batch.event("setup_intent.succeeded", intent)?;
        Ok(None)
    }

    /// Commits a create or confirmation: the intent, or its decline (kept as the answer).
    async fn finish(
        &self,
        ctx: &RequestContext,
        batch: Batch,
        intent: &SetupIntent,
        declined: Option<CoreError>,
    ) -> CoreResult<SetupIntent> {
        match declined {
            None => {
                self.commit(ctx, batch, Ok(&to_value(intent)?)).await?;
                Ok(intent.clone())
            }
            Some(decline) => {
                self.commit(ctx, batch, Err(&decline)).await?;
                Err(decline)
            }
        }
    }
}

fn no_method() -> CoreError {
    CoreError::invalid(
        "payment_method",
        "parameter_missing",
        "This SetupIntent has no payment method to be confirmed with: give payment_method.",
    )
}
