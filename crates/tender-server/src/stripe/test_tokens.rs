//! Stripe's test-mode payment method and token names (`pm_card_visa`, `tok_visa`…), which a
//! shop's test suite passes instead of card numbers, as the test cards they stand for
//! (CONTRACT §4.2). Test mode only: in live mode they are ids like any other, and none exists.

use tender_core::card::CardInput;
use tender_core::secret::Secret;

/// Each name and its card number.
pub const TOKENS: &[(&str, &str)] = &[
    ("pm_card_visa", "4242424242424242"),
    ("pm_card_visa_debit", "4000056655665556"),
    ("pm_card_mastercard", "5555555555554444"),
    ("pm_card_amex", "378282246310005"),
    ("pm_card_discover", "6011111111111117"),
    ("pm_card_chargeDeclined", "4000000000000002"),
    (
        "pm_card_chargeDeclinedInsufficientFunds",
        "4000000000009995",
    ),
    ("pm_card_chargeDeclinedFraudulent", "4100000000000019"),
    ("pm_card_chargeDeclinedExpiredCard", "4000000000000069"),
    ("pm_card_chargeDeclinedIncorrectCvc", "4000000000000127"),
    ("pm_card_chargeDeclinedProcessingError", "4000000000000119"),
    ("pm_card_chargeDeclinedLostCard", "4000000000009987"),
    ("pm_card_chargeDeclinedStolenCard", "4000000000009979"),
    // Saving succeeds; every charge declines (`lost_card`, `generic_decline`).
    ("pm_card_visa_chargeDeclinedLostCard", "4000000000004905"),
    ("pm_card_chargeCustomerFail", "4000000000000341"),
    ("pm_card_authenticationRequired", "4000002500003155"),
    ("pm_card_threeDSecure2Required", "4000002500003155"),
    ("tok_visa", "4242424242424242"),
    ("tok_visa_debit", "4000056655665556"),
    ("tok_mastercard", "5555555555554444"),
    ("tok_amex", "378282246310005"),
    ("tok_discover", "6011111111111117"),
    ("tok_chargeDeclined", "4000000000000002"),
    ("tok_chargeDeclinedInsufficientFunds", "4000000000009995"),
    ("tok_chargeDeclinedExpiredCard", "4000000000000069"),
    ("tok_chargeDeclinedIncorrectCvc", "4000000000000127"),
    ("tok_chargeCustomerFail", "4000000000000341"),
    ("tok_threeDSecure2Required", "4000002500003155"),
];

/// The test card `name` stands for, expiring in December five years from now.
pub fn card(name: &str) -> Option<CardInput> {
    let number = TOKENS.iter().find(|(n, _)| *n == name)?.1;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let year = 1970 + (now / 31_556_952) as i64;
    let cvc = if number.starts_with("37") {
        "1234"
    } else {
        "123"
    };
    Some(CardInput {
        number: Secret::new(number.to_string()),
        exp_month: 12,
        exp_year: year + 5,
        cvc: Secret::new(cvc.to_string()),
    })
}

/// Whether `name` is one of the test names.
pub fn is_token(name: &str) -> bool {
    TOKENS.iter().any(|(n, _)| *n == name)
}
