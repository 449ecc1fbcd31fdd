//! The acquirer port and the built-in simulated acquirer (CONTRACT §4.2).
//!
//! An [`Acquirer`] takes a validated card and answers whether the issuer approved it, wants the
//! cardholder to authenticate first, or declined it (with a Stripe-style `code` /
//! `decline_code` / message). [`SimulatedAcquirer`] decides from the card number using the
//! contract's table of test cards; a real connector would implement the same trait.
//!
//! Depends on: [`crate::card`] (for [`ValidatedCard`]), `async-trait`.

use std::borrow::Cow;

use async_trait::async_trait;

use crate::card::ValidatedCard;

/// Why an authorisation was refused: the API error's `code`, `decline_code` and `message`.
///
/// The simulator's are constants; a processor's are what it sent (mapped by its connector).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Decline {
    /// The error code (`card_declined`, `expired_card`, `incorrect_cvc`, `processing_error`).
    pub code: Cow<'static, str>,
    /// The finer reason (`generic_decline`, `insufficient_funds`, …).
    pub decline_code: Cow<'static, str>,
    /// Human, Stripe-like message.
    pub message: Cow<'static, str>,
}

impl Decline {
    /// The API's answer to a payment `payment` refused with this decline: 402 `card_error`.
    pub fn error(&self, payment: &str) -> crate::error::CoreError {
        crate::error::CoreError::Card {
            code: self.code.clone(),
            decline_code: Some(self.decline_code.clone()),
            message: self.message.clone(),
            param: None,
            payment: Some(payment.to_string()),
        }
    }

    /// The cardholder failed (or refused) the authentication step of a `requires_action`
    /// payment (CONTRACT §4.2, 4000002500003155 with `outcome=fail`).
    pub const AUTHENTICATION_FAILED: Decline = Decline {
        code: Cow::Borrowed("authentication_failed"),
        decline_code: Cow::Borrowed("authentication_failed"),
        message: Cow::Borrowed(
            "We are unable to authenticate your payment method. Please choose a different \
             payment method and try again.",
        ),
    };

    /// Every enabled connector was unavailable (CONTRACT §8).
    pub const PROCESSOR_UNAVAILABLE: Decline = Decline {
        code: Cow::Borrowed("processing_error"),
        decline_code: Cow::Borrowed("processor_unavailable"),
        message: Cow::Borrowed(
            "The payment processor could not be reached; nothing was charged. Try again later.",
        ),
    };
}

/// The test card whose payments succeed and are then disputed.
pub const DISPUTED_CARD: &str = "4000000000000259";

/// The acquirer's answer.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Authorization {
    /// The funds are authorised.
    Approved,
    /// The cardholder must authenticate (3-D Secure style) before the answer is known.
    RequiresAction,
    /// Refused.
    Declined(Decline),
}

/// Something that authorises card payments.
#[async_trait]
pub trait Acquirer: Send + Sync {
    /// Asks for an authorisation of `card`. `livemode` is the mode of the API key used.
    async fn authorize(&self, card: &ValidatedCard, livemode: bool) -> Authorization;

    /// Checks a card before it is saved for later charges (a zero-amount verification).
    async fn verify(&self, card: &ValidatedCard, livemode: bool) -> Authorization {
        self.authorize(card, livemode).await
    }

    /// Releases an approved authorisation whose payment could not be recorded, so that no hold
    /// on the cardholder's account outlives the failed request. The built-in simulator holds
    /// nothing, so for it this does nothing.
    async fn reverse(&self, card: &ValidatedCard, livemode: bool) {
        let _ = (card, livemode);
    }

    /// Whether an authorisation reaches another system. A payment request with an idempotency
    /// key then claims the key before authorising (`Services::claim_key`), so two requests with
    /// one key never both reach the processor. Only an in-process decision (the simulator)
    /// may skip the claim: a concurrent duplicate computes and is discarded, taking no effect.
    fn calls_out(&self) -> bool {
        true
    }
}

const fn decline(
    code: &'static str,
    decline_code: &'static str,
    message: &'static str,
) -> Authorization {
    Authorization::Declined(Decline {
        code: Cow::Borrowed(code),
        decline_code: Cow::Borrowed(decline_code),
        message: Cow::Borrowed(message),
    })
}

const DECLINED: &str = "Your card was declined.";

/// CONTRACT §4.2: every test card and what a test-mode charge on it does.
static TEST_CARDS: &[(&str, Authorization)] = &[
    ("4242424242424242", Authorization::Approved),
    ("4000056655665556", Authorization::Approved),
    ("5555555555554444", Authorization::Approved),
    ("2223003122003222", Authorization::Approved),
    ("5200828282828210", Authorization::Approved),
    ("378282246310005", Authorization::Approved),
    ("6011111111111117", Authorization::Approved),
    ("3056930009020004", Authorization::Approved),
    ("36227206271667", Authorization::Approved),
    ("3566002020360505", Authorization::Approved),
    ("6200000000000005", Authorization::Approved),
    // Succeeds, and its payment is then disputed (CONTRACT §9; `service::disputes`).
    (DISPUTED_CARD, Authorization::Approved),
    (
        "4000000000000002",
        decline("card_declined", "generic_decline", DECLINED),
    ),
    (
        "4000000000009995",
        decline(
            "card_declined",
            "insufficient_funds",
            "Your card has insufficient funds.",
        ),
    ),
    (
        "4000000000009987",
        decline("card_declined", "lost_card", DECLINED),
    ),
    (
        "4000000000009979",
        decline("card_declined", "stolen_card", DECLINED),
    ),
    (
        "4100000000000019",
        decline("card_declined", "fraudulent", DECLINED),
    ),
    (
        "4000000000000069",
        decline("expired_card", "expired_card", "Your card has expired."),
    ),
    (
        "4000000000000127",
        decline(
            "incorrect_cvc",
            "incorrect_cvc",
            "Your card's security code is incorrect.",
        ),
    ),
    (
        "4000000000000119",
        decline(
            "processing_error",
            "processing_error",
            "An error occurred while processing your card. Try again in a little bit.",
        ),
    ),
    // Saving it to a customer succeeds (handled by the caller); every charge declines.
    (
        "4000000000000341",
        decline("card_declined", "generic_decline", DECLINED),
    ),
    // The same, declining as a lost card: a hard decline subscriptions never retry.
    (
        "4000000000004905",
        decline("card_declined", "lost_card", DECLINED),
    ),
    ("4000002500003155", Authorization::RequiresAction),
];

/// Test mode, a number not in the test-card table.
const TEST_MODE_LIVE_CARD: Authorization = decline(
    "card_declined",
    "test_mode_live_card",
    "Your card was declined. Your request was in test mode, but used a non-test card. \
     Use one of the documented test cards.",
);

/// Live mode, a number from the test-card table.
const LIVE_MODE_TEST_CARD: Authorization = decline(
    "card_declined",
    "live_mode_test_card",
    "Your card was declined. Your request was in live mode, but used a known test card.",
);

fn lookup(pan: &str) -> Option<Authorization> {
    TEST_CARDS
        .iter()
        .find(|(number, _)| *number == pan)
        .map(|(_, outcome)| outcome.clone())
}

/// Whether `pan` (digits only) is one of the contract's test card numbers.
pub fn is_test_card(pan: &str) -> bool {
    lookup(pan).is_some()
}

/// The built-in acquirer. Test mode: the contract's table, any other number declines
/// `test_mode_live_card`. Live mode: table numbers decline `live_mode_test_card`, any other
/// (already Luhn-checked) number is approved.
#[derive(Debug, Clone, Copy, Default)]
pub struct SimulatedAcquirer;

impl SimulatedAcquirer {
    /// The decision, synchronously (what [`Acquirer::authorize`] returns).
    pub fn decide(pan: &str, livemode: bool) -> Authorization {
        match (livemode, lookup(pan)) {
            (false, Some(outcome)) => outcome,
            (false, None) => TEST_MODE_LIVE_CARD,
            (true, Some(_)) => LIVE_MODE_TEST_CARD,
            (true, None) => Authorization::Approved,
        }
    }
}

#[async_trait]
impl Acquirer for SimulatedAcquirer {
    async fn authorize(&self, card: &ValidatedCard, livemode: bool) -> Authorization {
        Self::decide(card.pan.expose(), livemode)
    }

    /// The simulator decides in process, from the card number alone.
    fn calls_out(&self) -> bool {
        false
    }

    /// Saving succeeds for 4000000000000341 and 4000000000004905 (whose charges all decline)
    /// and for the 3-D Secure
    /// card (authentication happens on each charge); otherwise as a charge would go.
    async fn verify(&self, card: &ValidatedCard, livemode: bool) -> Authorization {
        match Self::decide(card.pan.expose(), livemode) {
            Authorization::RequiresAction => Authorization::Approved,
            _ if !livemode
                && matches!(card.pan.expose(), "4000000000000341" | "4000000000004905") =>
            {
                Authorization::Approved
            }
            other => other,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::card::{brand_of, validate_card, CardBrand, CardInput};
    use crate::secret::Secret;

    fn card(number: &str) -> ValidatedCard {
        let cvc = if brand_of(number) == CardBrand::Amex {
            "1234"
        } else {
            "123"
        };
        let input = CardInput {
            number: Secret::from(number),
            exp_month: 12,
            exp_year: 2040,
            cvc: Secret::from(cvc),
        };
        validate_card(&input, 2025, 1).unwrap()
    }

    async fn test_mode(number: &str) -> Authorization {
        SimulatedAcquirer.authorize(&card(number), false).await
    }

    async fn live_mode(number: &str) -> Authorization {
        SimulatedAcquirer.authorize(&card(number), true).await
    }

    fn declined(a: Authorization) -> (String, String) {
        match a {
            Authorization::Declined(d) => (d.code.into_owned(), d.decline_code.into_owned()),
            other => panic!("expected a decline, got {other:?}"),
        }
    }

    const SUCCESS: [&str; 12] = [
        "4242424242424242",
        "4000056655665556",
        "5555555555554444",
        "2223003122003222",
        "5200828282828210",
        "378282246310005",
        "6011111111111117",
        "3056930009020004",
        "36227206271667",
        "3566002020360505",
        "6200000000000005",
        "4000000000000259",
    ];

    const DECLINES: [(&str, &str, &str); 10] = [
        ("4000000000000002", "card_declined", "generic_decline"),
        ("4000000000009995", "card_declined", "insufficient_funds"),
        ("4000000000009987", "card_declined", "lost_card"),
        ("4000000000009979", "card_declined", "stolen_card"),
        ("4100000000000019", "card_declined", "fraudulent"),
        ("4000000000000069", "expired_card", "expired_card"),
        ("4000000000000127", "incorrect_cvc", "incorrect_cvc"),
        ("4000000000000119", "processing_error", "processing_error"),
        ("4000000000000341", "card_declined", "generic_decline"),
        ("4000000000004905", "card_declined", "lost_card"),
    ];

    #[tokio::test]
    async fn test_mode_success_cards() {
        for n in SUCCESS {
            assert_eq!(test_mode(n).await, Authorization::Approved, "{n}");
            assert!(is_test_card(n));
        }
    }

    #[tokio::test]
    async fn test_mode_decline_cards() {
        for (n, code, decline_code) in DECLINES {
            assert_eq!(
                declined(test_mode(n).await),
                (code.to_string(), decline_code.to_string()),
                "{n}"
            );
            assert!(is_test_card(n));
        }
    }

    #[tokio::test]
    async fn test_mode_requires_action() {
        assert_eq!(
            test_mode("4000002500003155").await,
            Authorization::RequiresAction
        );
        assert!(is_test_card("4000002500003155"));
    }

    #[tokio::test]
    async fn test_mode_other_numbers_decline() {
        for n in ["4111111111111111", "5105105105105100", "1234567890123452"] {
            assert!(!is_test_card(n));
            assert_eq!(
                declined(test_mode(n).await),
                ("card_declined".into(), "test_mode_live_card".into()),
                "{n}"
            );
        }
    }

    #[tokio::test]
    async fn live_mode_rules() {
        for n in SUCCESS
            .iter()
            .copied()
            .chain(DECLINES.iter().map(|d| d.0))
            .chain(["4000002500003155"])
        {
            assert_eq!(
                declined(live_mode(n).await),
                ("card_declined".into(), "live_mode_test_card".into()),
                "{n}"
            );
        }
        assert_eq!(live_mode("4111111111111111").await, Authorization::Approved);
    }

    #[test]
    fn table_is_consistent() {
        // Every table number is a valid card, and the table covers every contract row.
        assert_eq!(TEST_CARDS.len(), 23);
        for (n, _) in TEST_CARDS {
            let _ = card(n);
        }
        let mut numbers: Vec<_> = TEST_CARDS.iter().map(|t| t.0).collect();
        numbers.sort_unstable();
        numbers.dedup();
        assert_eq!(numbers.len(), TEST_CARDS.len());
    }

    #[test]
    fn messages() {
        let msg = |n: &str| match SimulatedAcquirer::decide(n, false) {
            Authorization::Declined(d) => d.message.into_owned(),
            _ => String::new(),
        };
        assert_eq!(msg("4000000000000002"), "Your card was declined.");
        assert_eq!(msg("4000000000009995"), "Your card has insufficient funds.");
        assert_eq!(msg("4000000000000069"), "Your card has expired.");
        assert_eq!(
            msg("4000000000000127"),
            "Your card's security code is incorrect."
        );
        assert!(msg("4111111111111111").starts_with("Your card was declined."));
        assert_eq!(Decline::AUTHENTICATION_FAILED.code, "authentication_failed");
    }
}
