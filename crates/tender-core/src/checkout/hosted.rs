//! What the hosted page of a session shows: the session found by its id alone (unguessable,
//! like a payment's for its receipt), brought up to date ([`Checkout::reconcile`]), and who
//! sells.

use crate::checkout::session::CheckoutSession;
use crate::checkout::Checkout;
use crate::documents::document::from_body;
use crate::error::CoreResult;
use crate::ids::{self, IdKind};
use crate::store::Collection;

/// A session and its seller, for its page.
#[derive(Debug, Clone)]
pub struct HostedCheckout {
    pub session: CheckoutSession,
    /// The business name (else its public e-mail); `None` when the account set neither.
    pub merchant: Option<String>,
    /// The account's public e-mail, for customers to write to.
    pub merchant_email: Option<String>,
    /// The message of the payment link that opened it, for its confirmation page.
    pub confirmation: Option<String>,
    /// Whether it took as many declines as the account lets one session take.
    pub exhausted: bool,
}

impl Checkout<'_> {
    /// Session `id` for its page, or `None` when there is no such session.
    pub async fn find_hosted_checkout(&self, id: &str) -> CoreResult<Option<HostedCheckout>> {
        if !ids::looks_like(IdKind::CheckoutSession, id) {
            return Ok(None);
        }
        let Some((scope, record)) = self
            .store
            .find_unscoped(Collection::CheckoutSessions, id)
            .await?
        else {
            return Ok(None);
        };
        let session: CheckoutSession = from_body(&record.id, &record.body)?;
        let session = self.reconcile(&scope, session).await?;
        let (merchant, merchant_email) = self.payments().merchant(&scope.account).await?;
        let confirmation = self.confirmation_of(&scope, &session).await?;
        let limit = self
            .accounts()
            .checkout_settings(&scope.account)
            .await?
            .declines_per_session;
        Ok(Some(HostedCheckout {
            exhausted: session.exhausted(limit),
            session,
            merchant,
            merchant_email,
            confirmation,
        }))
    }
}
