//! The guard's use: a try's keys (its client address, its card's keyed fingerprint), the
//! refusal at the limits, the count of a decline. Depends on the services (clocks, the
//! fingerprint key, the counters).

use super::{Attempt, DECLINES_PER_ADDRESS, DECLINES_PER_CARD};
use crate::auth::Scope;
use crate::card::{fingerprint, CardInput};
use crate::error::{CoreError, CoreResult};
use crate::services::Services;

impl Services {
    /// The try of `card` from client `address` on a public form of `scope`'s account.
    pub(crate) fn attempt(
        &self,
        scope: &Scope,
        address: Option<&str>,
        card: &CardInput,
    ) -> Attempt {
        let digits: String = card
            .number
            .expose()
            .chars()
            .filter(char::is_ascii_digit)
            .collect();
        let key = self.payments().fingerprint_key(&scope.account);
        let prefix = format!("{}:{}", scope.account, scope.livemode());
        Attempt {
            address: address.map(|a| format!("{prefix}:address:{a}")),
            card: format!("{prefix}:card:{}", fingerprint(&digits, &key)),
        }
    }

    /// 429 on the page (`card_testing_blocked`) when the try's address or card is at its limit.
    pub(crate) fn check_attempt(&self, attempt: &Attempt) -> CoreResult<()> {
        let now = self.wall_now();
        let by_address = attempt
            .address
            .as_deref()
            .and_then(|k| self.velocity.blocked(k, DECLINES_PER_ADDRESS, now));
        let by_card = self.velocity.blocked(&attempt.card, DECLINES_PER_CARD, now);
        match by_address.max(by_card) {
            None => Ok(()),
            Some(wait) => Err(CoreError::invalid(
                "card",
                "card_testing_blocked",
                format!(
                    "Too many declined cards. Please try again in {} minutes.",
                    (wait + 59) / 60
                ),
            )),
        }
    }

    /// The try was declined: counted under its address and its card.
    pub(crate) fn note_decline(&self, attempt: &Attempt) {
        let now = self.wall_now();
        if let Some(k) = &attempt.address {
            self.velocity.record(k, now);
        }
        self.velocity.record(&attempt.card, now);
    }
}
