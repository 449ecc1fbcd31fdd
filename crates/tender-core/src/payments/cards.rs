//! The cards of payments: validated now (with the test cards' rules), described without the
//! number (fingerprint under the account's key), a one-time `pm_…` claimed before it is
//! charged, a new card saved for a customer.

use crate::card::{fingerprint, validate_card, CardInput, ValidatedCard};
use crate::clock::year_month;
use crate::documents::batch::Batch;
use crate::error::{CoreError, CoreResult, StoreError};
use crate::ids::PaymentMethodId;
use crate::payments::payment::{CardDetails, Payment};
use crate::payments::Payments;
use crate::services::RequestContext;

impl Payments<'_> {
    /// Per-account key for card fingerprints: equal cards match within an account only.
    pub(crate) fn fingerprint_key(&self, account: &str) -> [u8; 32] {
        crate::vault::derive_key(
            &self.config.vault_key,
            &format!("card fingerprint:{account}"),
        )
    }

    pub(crate) fn card_details(&self, account: &str, card: &ValidatedCard) -> CardDetails {
        CardDetails {
            brand: card.brand,
            last4: card.last4.clone(),
            exp_month: card.exp_month,
            exp_year: card.exp_year,
            fingerprint: fingerprint(card.pan.expose(), &self.fingerprint_key(account)),
            country: card.country.to_string(),
            funding: card.funding.to_string(),
        }
    }

    /// Validates a card as of the clock's current month (402 `card_error` naming the field).
    pub(crate) fn validate_card_now(&self, input: &CardInput) -> CoreResult<ValidatedCard> {
        let (year, month) = year_month(self.now());
        validate_card(input, year, month).map_err(|e| CoreError::Card {
            code: e.code().into(),
            decline_code: None,
            message: e.message().into(),
            param: Some(e.param()),
            payment: None,
        })
    }

    /// Takes a one-time `pm_…` for this payment before the card is authorised, in a commit of
    /// its own: its vaulted number is forgotten (so it is consumed) and its version moves on.
    /// Of several requests charging one token at once, one claims it; the others find it used
    /// (400 `payment_method_unusable`) and none of them is authorised.
    pub(crate) async fn claim_token(
        &self,
        ctx: &RequestContext,
        method: &crate::payment_methods::payment_method::PaymentMethod,
        version: i64,
    ) -> CoreResult<i64> {
        let mut claim = self.background(ctx.scope());
        claim.unseal(&method.id).update(method, version)?;
        match self.commit_background(claim).await {
            Ok(()) => Ok(version + 1),
            // Someone else moved it first: say what it is now (used, or attached meanwhile).
            Err(CoreError::Store(StoreError::Conflict(_))) => {
                let pm_id = PaymentMethodId::stored(method.id.as_str());
                let pm_id = &pm_id;
                self.payment_methods()
                    .load_chargeable(ctx, pm_id, "payment_method")
                    .await?;
                Err(CoreError::invalid(
                    "payment_method",
                    "payment_method_unusable",
                    "This payment method is being used by another payment; a one-time payment method can be charged once.",
                ))
            }
            Err(e) => Err(e),
        }
    }

    /// Saves a payment's new card for `customer` (`save_payment_method`), in `batch`.
    pub(crate) fn save_card(
        &self,
        batch: &mut Batch,
        ctx: &RequestContext,
        card: &ValidatedCard,
        payment: &Payment,
        customer: Option<String>,
    ) -> CoreResult<()> {
        let mut method =
            self.payment_methods()
                .new_payment_method(ctx, card, customer, Default::default());
        method.id = payment.payment_method.id.clone();
        method.created = payment.created;
        batch
            .insert(&method)?
            .seal(&method.id, self.payment_methods().seal_card(card)?);
        Ok(())
    }
}
