//! The guard's use: a try's keys (its client address, its card's keyed fingerprint) and the
//! account's limits, the refusal at the limits, the count of a decline and the `risk.blocked`
//! event of the decline that reaches one. Depends on the services (clocks, the fingerprint key,
//! the counters, the account's settings, the event write).

use super::block::{BlockReason, RiskBlock, Surface};
use super::Attempt;
use crate::auth::{KeyKind, Scope};
use crate::card::{fingerprint, CardInput};
use crate::error::{CoreError, CoreResult};
use crate::ids::{self, IdKind};
use crate::services::{RequestContext, Services};

impl Services {
    /// The keyed fingerprint of `card` in `scope`'s account (as its PaymentMethod would show).
    pub(crate) fn card_fingerprint(&self, scope: &Scope, card: &CardInput) -> String {
        let digits: String = card
            .number
            .expose()
            .chars()
            .filter(char::is_ascii_digit)
            .collect();
        fingerprint(&digits, &self.payments().fingerprint_key(&scope.account))
    }

    /// The try of the card `fingerprint` from client `address` on `surface` of `scope`'s
    /// account, for `reference`, under the account's limits.
    pub(crate) async fn attempt(
        &self,
        scope: &Scope,
        surface: Surface,
        address: Option<&str>,
        fingerprint: String,
        reference: Option<&str>,
    ) -> CoreResult<Attempt> {
        let limits = self.accounts().checkout_settings(&scope.account).await?;
        let prefix = format!("{}:{}", scope.account, scope.livemode());
        Ok(Attempt {
            scope: scope.clone(),
            surface,
            client: address.map(str::to_string),
            address_key: address.map(|a| format!("{prefix}:address:{a}")),
            card_key: format!("{prefix}:card:{fingerprint}"),
            fingerprint,
            reference: reference.map(str::to_string),
            per_address: limits.declines_per_address,
            per_card: limits.declines_per_card,
        })
    }

    /// A browser's try (a publishable key) at confirming with the card `fingerprint`, checked
    /// against the limits; `None` for a shop's server (a secret key), which the guard leaves be.
    pub(crate) async fn browser_attempt(
        &self,
        ctx: &RequestContext,
        fingerprint: &str,
        reference: &str,
    ) -> CoreResult<Option<Attempt>> {
        if ctx.principal.key_kind != KeyKind::Publishable {
            return Ok(None);
        }
        let attempt = self
            .attempt(
                ctx.scope(),
                Surface::Api,
                ctx.client.as_deref(),
                fingerprint.to_string(),
                Some(reference),
            )
            .await?;
        self.check_attempt(&attempt)?;
        Ok(Some(attempt))
    }

    /// 429 `card_testing_blocked` when the try's address or card is at its limit.
    pub(crate) fn check_attempt(&self, attempt: &Attempt) -> CoreResult<()> {
        let now = self.wall_now();
        let by_address = attempt
            .address_key
            .as_deref()
            .and_then(|k| self.velocity.blocked(k, attempt.per_address, now));
        let by_card = self
            .velocity
            .blocked(&attempt.card_key, attempt.per_card, now);
        match by_address.max(by_card) {
            None => Ok(()),
            Some(wait) => Err(CoreError::Blocked {
                code: "card_testing_blocked",
                message: format!(
                    "Too many declined cards. Please try again in {} minutes.",
                    (wait + 59) / 60
                )
                .into(),
            }),
        }
    }

    /// The try was declined: counted under its address and its card; the decline that brings
    /// either to its limit is told as a `risk.blocked` event.
    pub(crate) async fn note_decline(&self, attempt: &Attempt) {
        let now = self.wall_now();
        if let Some(k) = &attempt.address_key {
            if self.velocity.record(k, now) == attempt.per_address as usize {
                self.tell_block(
                    attempt,
                    BlockReason::DeclinesPerAddress,
                    attempt.per_address,
                )
                .await;
            }
        }
        if self.velocity.record(&attempt.card_key, now) == attempt.per_card as usize {
            self.tell_block(attempt, BlockReason::DeclinesPerCard, attempt.per_card)
                .await;
        }
    }

    /// `risk.blocked` for `attempt` reaching `reason`'s `limit`. The block holds whether or not
    /// the event is written; a failure to write it is logged.
    pub(crate) async fn tell_block(&self, attempt: &Attempt, reason: BlockReason, limit: u32) {
        let now = self.wall_now();
        let block = RiskBlock {
            id: ids::generate(IdKind::RiskBlock),
            object: "risk_block".into(),
            reason,
            limit,
            surface: attempt.surface,
            client_address: attempt.client.clone(),
            card_fingerprint: attempt.fingerprint.clone(),
            reference: attempt.reference.clone(),
            blocked_until: (reason != BlockReason::DeclinesPerSession)
                .then_some(now + super::WINDOW_SECS),
            livemode: attempt.scope.livemode(),
            created: self.now(),
        };
        let mut batch = self.background(&attempt.scope);
        let written = match batch.event("risk.blocked", &block) {
            Ok(_) => self.commit_background(batch).await,
            Err(e) => Err(e),
        };
        if let Err(e) = written {
            tracing::warn!(block = %block.id, error = %crate::error::error_chain(&e), "risk.blocked event not recorded");
        }
    }
}
