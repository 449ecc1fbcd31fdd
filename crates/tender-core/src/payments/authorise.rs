//! Authorising a card payment once its card is known ([`CardCharge`]): under the card-testing
//! guard when a browser asks, at the account's processors when it has connectors, else with the
//! built-in acquirer, whose answer starts the follow-up tasks (a hold that expires, an
//! authentication abandoned, the disputed test card's dispute); then recorded
//! ([`crate::payments::record`]).
//!
//! Depends on what [`crate::payments::create`] depends on; used only by it.

use crate::auth::hash_key;
use crate::card::ValidatedCard;
use crate::documents::batch::Batch;
use crate::error::{CoreError, CoreResult};
use crate::ids;
use crate::payments::acquirer::Authorization;
use crate::payments::create::{CardCharge, ChargeOptions};
use crate::payments::payment::{authorised, Authorised, Payment};
use crate::payments::payment::{AUTHENTICATION_TIMEOUT_SECS, AUTHORIZATION_TTL_SECS};
use crate::payments::Payments;
use crate::services::RequestContext;
use crate::task::TaskKind;

impl Payments<'_> {
    /// [`Self::authorise_card`] under the card-testing guard when a browser asks (a publishable
    /// key confirming with the client secret): refused at the account's limits before the card
    /// goes anywhere, and a decline counted ([`crate::risk`]).
    pub(super) async fn charge_card(
        &self,
        ctx: &RequestContext,
        route: Vec<crate::connectors::service::Routed>,
        charge: CardCharge,
        options: &ChargeOptions,
    ) -> CoreResult<Payment> {
        let fingerprint = charge
            .payment
            .payment_method
            .card
            .as_ref()
            .map(|c| c.fingerprint.clone())
            .unwrap_or_default();
        let attempt = self
            .browser_attempt(ctx, &fingerprint, &charge.payment.id)
            .await?;
        let result = self.authorise_card(ctx, route, charge, options).await;
        if let (Some(attempt), Err(CoreError::Card { .. })) = (&attempt, &result) {
            self.note_decline(attempt).await;
        }
        result
    }

    /// Authorises a card payment: at the account's processors when it has connectors, else
    /// with the built-in acquirer; then records it.
    async fn authorise_card(
        &self,
        ctx: &RequestContext,
        route: Vec<crate::connectors::service::Routed>,
        charge: CardCharge,
        options: &ChargeOptions,
    ) -> CoreResult<Payment> {
        if !route.is_empty() {
            return self
                .create_upstream(
                    ctx,
                    route,
                    crate::payments::upstream::UpstreamPayment {
                        payment: charge.payment,
                        source: crate::payments::upstream::UpstreamSource::Card(charge.card),
                        capture: options.capture,
                        approved_ops: charge.approved,
                        declined_ops: charge.declined,
                        preconditions: charge.preconditions,
                    },
                )
                .await;
        }
        let scope = ctx.scope();
        let CardCharge {
            mut payment,
            card,
            approved,
            declined,
            preconditions,
            claimed_token,
        } = charge;
        if self.acquirer.calls_out() {
            self.claim_key(ctx).await?;
        }
        let mut ops = self.batch(ctx);
        let answer = self
            .authorise_here(scope, &payment, &card, options, &mut ops)
            .await;
        let decline = match &answer {
            Authorised::Declined(d) => Some(d.error(&payment.id)),
            _ => None,
        };
        authorised(&mut payment, answer);
        // A card is saved or consumed only when the bank did not refuse the charge: a claimed
        // token the bank refused is given back.
        ops.extend(if decline.is_none() {
            approved
        } else {
            declined
        });
        self.record_authorised(
            ctx,
            payment,
            ops,
            decline,
            preconditions,
            &card,
            claimed_token,
        )
        .await
    }

    /// The built-in acquirer's answer for `card`, with the tasks it starts in `ops`: a hold
    /// expires, an authentication is abandoned, the disputed test card is disputed.
    async fn authorise_here(
        &self,
        scope: &crate::auth::Scope,
        payment: &Payment,
        card: &ValidatedCard,
        options: &ChargeOptions,
        ops: &mut Batch,
    ) -> Authorised {
        let now = self.now();
        let authorization = self.acquirer.authorize(card, scope.livemode()).await;
        if authorization == Authorization::Approved
            && !scope.livemode()
            && card.pan.expose() == crate::payments::acquirer::DISPUTED_CARD
        {
            // The disputed test card: its bank disputes the payment a moment later.
            ops.schedule(
                TaskKind::OpenDispute,
                &payment.id,
                now + crate::balance::disputes::DISPUTE_DELAY_SECS,
            );
        }
        match authorization {
            Authorization::Approved if options.capture => Authorised::Captured(payment.amount),
            Authorization::Approved => {
                ops.schedule(
                    TaskKind::ExpireAuthorization,
                    &payment.id,
                    now + AUTHORIZATION_TTL_SECS,
                );
                Authorised::Held
            }
            Authorization::RequiresAction => {
                let token = ids::random_base62(32);
                ops.seal(&payment.id, hash_key(&token)).schedule(
                    TaskKind::AbandonAuthentication,
                    &payment.id,
                    now + AUTHENTICATION_TIMEOUT_SECS,
                );
                Authorised::Authenticate(serde_json::json!({
                    "type": "redirect_to_url",
                    "redirect_to_url": {
                        "url": format!("{}/authenticate/{}/{}", self.config.receipt_base, payment.id, token),
                        "return_url": options.return_url,
                    }
                }))
            }
            Authorization::Declined(d) => Authorised::Declined(d),
        }
    }
}
