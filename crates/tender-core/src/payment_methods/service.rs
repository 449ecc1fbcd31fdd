//! Payment method use cases: tokenise a card (publishable keys may), attach to and detach from a
//! customer, and the vault: the number sealed with AES-256-GCM, opened only to charge it.
//!
//! An unattached method can pay once, after which its vault entry is deleted ("consumed");
//! detaching deletes it too, so a detached card can no longer be charged.

use crate::card::{CardInput, ValidatedCard};
use crate::clock::year_month;
use crate::documents::batch::Batch;
use crate::documents::document::{from_body, to_body, to_value};
use crate::error::{CoreError, CoreResult, StoreError};
use crate::ids::{self, CustomerId, IdKind, PaymentMethodId};
use crate::metadata;
use crate::payment_methods::payment_method::{PaymentMethod, ProcessorCard, Vaulted, VaultedCard};
use crate::payment_methods::PaymentMethods;
use crate::payments::acquirer::Authorization;
use crate::services::RequestContext;
use crate::store::Collection;
use crate::vault::Sealer;

/// What a payment method is charged with: the card from Tender's vault, or the payment method
/// a connector's processor keeps (CONTRACT §15).
pub(crate) enum Kept {
    Card(ValidatedCard),
    Processor(ProcessorCard),
}

/// A payment method loaded for charging: the document, its version, what it is charged with.
pub(crate) struct ChargeableMethod {
    pub method: PaymentMethod,
    pub version: i64,
    pub kept: Kept,
}

impl PaymentMethods<'_> {
    fn card_sealer(&self) -> Sealer {
        Sealer::new(&self.config.vault_key, "card vault")
    }

    pub(crate) fn seal_card(&self, card: &ValidatedCard) -> CoreResult<String> {
        let vaulted = VaultedCard {
            pan: card.pan.expose().to_string(),
            exp_month: card.exp_month,
            exp_year: card.exp_year,
        };
        Ok(self.card_sealer().seal(to_body(&vaulted)?.as_bytes()))
    }

    /// Seals where a processor keeps a card.
    pub(crate) fn seal_processor_card(&self, card: &ProcessorCard) -> CoreResult<String> {
        Ok(self.card_sealer().seal(to_body(card)?.as_bytes()))
    }

    pub(crate) fn open_card(&self, sealed: &str) -> CoreResult<Kept> {
        let plain = self.card_sealer().open(sealed).map_err(|_| {
            StoreError::Corrupt("a vaulted card cannot be opened with this vault key".into())
        })?;
        let v: Vaulted =
            serde_json::from_slice(&plain).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        match v {
            Vaulted::Processor(at) => Ok(Kept::Processor(at)),
            Vaulted::Card(v) => ValidatedCard::from_vault(&v.pan, v.exp_month, v.exp_year)
                .map(Kept::Card)
                .ok_or_else(|| {
                    StoreError::Corrupt("a vaulted card number is invalid".into()).into()
                }),
        }
    }

    /// A new payment method document for a validated card.
    pub(crate) fn new_payment_method(
        &self,
        ctx: &RequestContext,
        card: &ValidatedCard,
        customer: Option<String>,
        metadata: crate::metadata::Metadata,
    ) -> PaymentMethod {
        PaymentMethod {
            id: ids::generate(IdKind::PaymentMethod),
            object: "payment_method".into(),
            kind: "card".into(),
            card: self.payments().card_details(&ctx.scope().account, card),
            customer,
            connector: None,
            metadata,
            livemode: ctx.scope().livemode(),
            created: self.now(),
        }
    }

    /// `POST /payment_methods`: validates and vaults a card (not attached to anyone yet).
    pub async fn create_payment_method(
        &self,
        ctx: &RequestContext,
        card: CardInput,
        metadata_input: Vec<(String, String)>,
    ) -> CoreResult<PaymentMethod> {
        let metadata = metadata::on_create(metadata_input)?;
        // Here the card is a top-level parameter: `card[number]`, not `payment_method[card][number]`.
        let card = self
            .payments()
            .validate_card_now(&card)
            .map_err(|e| match e {
                CoreError::Card {
                    code,
                    decline_code,
                    message,
                    param,
                    payment,
                } => CoreError::Card {
                    code,
                    decline_code,
                    message,
                    param: param.map(|p| match p {
                        "payment_method[card][number]" => "card[number]",
                        "payment_method[card][exp_month]" => "card[exp_month]",
                        "payment_method[card][exp_year]" => "card[exp_year]",
                        "payment_method[card][cvc]" => "card[cvc]",
                        other => other,
                    }),
                    payment,
                },
                other => other,
            })?;
        let pm = self.new_payment_method(ctx, &card, None, metadata);
        let mut batch = self.batch(ctx);
        batch.insert(&pm)?.seal(&pm.id, self.seal_card(&card)?);
        self.commit(ctx, batch, Ok(&to_value(&pm)?)).await?;
        Ok(pm)
    }

    /// Loads a method with its vaulted card; 400 when it cannot be charged any more.
    pub(crate) async fn load_chargeable(
        &self,
        ctx: &RequestContext,
        id: &PaymentMethodId,
        param: &str,
    ) -> CoreResult<ChargeableMethod> {
        let scope = ctx.scope();
        let record = self
            .store
            .find_record(scope, Collection::PaymentMethods, id)
            .await?;
        let Some(record) = record else {
            return Err(CoreError::missing_reference(param, "payment_method", id));
        };
        let method: PaymentMethod = from_body(&record.id, &record.body)?;
        let Some(sealed) = self.store.find_sealed(scope, id).await? else {
            return Err(CoreError::invalid(
                param,
                "payment_method_unusable",
                "This payment method was already used or detached; it cannot be charged again.",
            ));
        };
        let kept = self.open_card(&sealed)?;
        let (year, month) = year_month(self.now());
        let expired = (
            i32::from(method.card.exp_year),
            u32::from(method.card.exp_month),
        ) < (year, month);
        if expired {
            return Err(CoreError::Card {
                code: "expired_card".into(),
                decline_code: None,
                message: "Your card has expired.".into(),
                param: Some("payment_method"),
                payment: None,
            });
        }
        Ok(ChargeableMethod {
            method,
            version: record.version,
            kept,
        })
    }

    /// [`Self::load_chargeable`], then the card verified with its issuer (a zero-amount check,
    /// nothing charged): a decline is [`CoreError::Card`], as an expired card is. A browser's
    /// verification (a SetupIntent confirmed with a publishable key) is under the card-testing
    /// guard ([`crate::risk`]).
    pub(crate) async fn load_verified(
        &self,
        ctx: &RequestContext,
        id: &PaymentMethodId,
        param: &str,
    ) -> CoreResult<ChargeableMethod> {
        let chargeable = self.load_chargeable(ctx, id, param).await?;
        // The processor that keeps it verified it when it kept it.
        let Kept::Card(card) = &chargeable.kept else {
            return Ok(chargeable);
        };
        let attempt = self
            .browser_attempt(
                ctx,
                &chargeable.method.card.fingerprint,
                &chargeable.method.id,
            )
            .await?;
        match self.acquirer.verify(card, ctx.scope().livemode()).await {
            Authorization::Declined(d) => {
                if let Some(attempt) = &attempt {
                    self.note_decline(attempt).await;
                }
                Err(CoreError::Card {
                    code: d.code,
                    decline_code: Some(d.decline_code),
                    message: d.message,
                    param: None,
                    payment: None,
                })
            }
            _ => Ok(chargeable),
        }
    }

    /// `POST /payment_methods/{id}/attach`.
    pub async fn attach_payment_method(
        &self,
        ctx: &RequestContext,
        id: &PaymentMethodId,
        customer: &CustomerId,
    ) -> CoreResult<PaymentMethod> {
        self.payments().require_customer(ctx, customer).await?;
        // Attached to be charged later: only where a saved card can be.
        self.connectors()
            .require_off_session_cards(ctx.scope(), "payment_method")
            .await?;
        self.retry_on_conflict(|| async {
            let (mut pm, version): (PaymentMethod, i64) = self
                .load(
                    ctx.scope(),
                    Collection::PaymentMethods,
                    "payment_method",
                    id,
                )
                .await?;
            match &pm.customer {
                Some(c) if c == customer => return Ok(pm),
                Some(_) => {
                    return Err(CoreError::invalid(
                        "customer",
                        "payment_method_unexpected_state",
                        "This payment method is attached to another customer; detach it first.",
                    ))
                }
                None => {}
            }
            self.load_verified(ctx, id, "payment_method").await?;
            pm.customer = Some(customer.to_string());
            let mut batch = self.batch(ctx);
            batch
                .update(&pm, version)?
                .event("payment_method.attached", &pm)?;
            self.commit(ctx, batch, Ok(&to_value(&pm)?)).await?;
            Ok(pm)
        })
        .await
    }

    /// The writes that detach `pm` (and forget its card), for detach and customer deletion.
    pub(crate) fn detach(
        batch: &mut Batch,
        mut pm: PaymentMethod,
        version: i64,
    ) -> CoreResult<PaymentMethod> {
        pm.customer = None;
        batch
            .update(&pm, version)?
            .unseal(&pm.id)
            .event("payment_method.detached", &pm)?;
        Ok(pm)
    }

    /// `POST /payment_methods/{id}/detach`.
    pub async fn detach_payment_method(
        &self,
        ctx: &RequestContext,
        id: &str,
    ) -> CoreResult<PaymentMethod> {
        self.retry_on_conflict(|| async {
            let (pm, version): (PaymentMethod, i64) = self
                .load(
                    ctx.scope(),
                    Collection::PaymentMethods,
                    "payment_method",
                    id,
                )
                .await?;
            if pm.customer.is_none() {
                return Err(CoreError::invalid(
                    "payment_method",
                    "payment_method_unexpected_state",
                    "This payment method is not attached to a customer.",
                ));
            }
            let mut batch = self.batch(ctx);
            let pm = Self::detach(&mut batch, pm, version)?;
            self.commit(ctx, batch, Ok(&to_value(&pm)?)).await?;
            Ok(pm)
        })
        .await
    }
}
