//! Card numbers: Luhn, brand detection by IIN range, input validation (CONTRACT §4.2) and
//! keyed fingerprints (CONTRACT §6).
//!
//! [`validate_card`] turns raw request input ([`CardInput`]) into a [`ValidatedCard`] or the
//! first [`CardValidationError`] found, in the contract's order: number, month, year, expiry,
//! CVC. The full number stays inside a [`Secret`] throughout; only `last4`, the brand and the
//! fingerprint are meant to leave this module in clear.
//!
//! Depends on: [`crate::secret`], `serde`, `thiserror`, `hmac`/`sha2` (fingerprints).

use std::fmt;

use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

use crate::secret::Secret;

/// A card network, as detected from the number's leading digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CardBrand {
    /// `visa` — numbers starting with 4.
    Visa,
    /// `mastercard` — 51–55 and 2221–2720.
    Mastercard,
    /// `amex` — 34 and 37.
    Amex,
    /// `discover` — 6011, 644–649 and 65.
    Discover,
    /// `diners` — 300–305, 36, 38 and 39.
    Diners,
    /// `jcb` — 3528–3589.
    Jcb,
    /// `unionpay` — 62.
    Unionpay,
    /// `unknown` — anything else.
    Unknown,
}

impl CardBrand {
    /// The wire name (`"visa"`, `"mastercard"`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            CardBrand::Visa => "visa",
            CardBrand::Mastercard => "mastercard",
            CardBrand::Amex => "amex",
            CardBrand::Discover => "discover",
            CardBrand::Diners => "diners",
            CardBrand::Jcb => "jcb",
            CardBrand::Unionpay => "unionpay",
            CardBrand::Unknown => "unknown",
        }
    }
}

impl CardBrand {
    /// The name a cardholder reads (`"Visa"`, `"American Express"`, …), for receipts and pages.
    pub fn display_name(self) -> &'static str {
        match self {
            CardBrand::Visa => "Visa",
            CardBrand::Mastercard => "Mastercard",
            CardBrand::Amex => "American Express",
            CardBrand::Discover => "Discover",
            CardBrand::Diners => "Diners Club",
            CardBrand::Jcb => "JCB",
            CardBrand::Unionpay => "UnionPay",
            CardBrand::Unknown => "Card",
        }
    }
}

impl fmt::Display for CardBrand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether `digits` passes the Luhn (mod 10) check. `false` for an empty string or any
/// character that is not an ASCII digit (spaces included).
pub fn luhn_valid(digits: &str) -> bool {
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    let remainder = luhn_sum(digits, false) % 10;
    remainder == 0
}

/// The Luhn check digit to append to `payload` (ASCII digits only, may be empty) so that the
/// result passes [`luhn_valid`]. `None` if `payload` contains a non-digit.
pub fn luhn_check_digit(payload: &str) -> Option<char> {
    if !payload.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let d = (10 - luhn_sum(payload, true) % 10) % 10;
    char::from_digit(d, 10)
}

/// Luhn sum of `digits` (assumed all ASCII digits). With `double_first`, the right-most digit
/// is doubled (as when a check digit is still to be appended).
fn luhn_sum(digits: &str, double_first: bool) -> u32 {
    digits
        .bytes()
        .rev()
        .enumerate()
        .map(|(i, b)| {
            let d = u32::from(b - b'0');
            if (i % 2 == 1) != double_first {
                let x = d * 2;
                if x > 9 {
                    x - 9
                } else {
                    x
                }
            } else {
                d
            }
        })
        .sum()
}

/// The number formed by the first `n` characters of `number`, if they are all digits.
fn prefix(number: &str, n: usize) -> Option<u32> {
    let p = number.get(..n)?;
    if p.bytes().all(|b| b.is_ascii_digit()) {
        p.parse().ok()
    } else {
        None
    }
}

/// The brand of a card number by its IIN range. Spaces are ignored; anything unrecognised is
/// [`CardBrand::Unknown`].
pub fn brand_of(number: &str) -> CardBrand {
    let digits: String = number.chars().filter(|c| *c != ' ').collect();
    let n = digits.as_str();
    let in_range =
        |len: usize, lo: u32, hi: u32| prefix(n, len).is_some_and(|p| p >= lo && p <= hi);

    if in_range(1, 4, 4) {
        CardBrand::Visa
    } else if in_range(2, 51, 55) || in_range(4, 2221, 2720) {
        CardBrand::Mastercard
    } else if in_range(2, 34, 34) || in_range(2, 37, 37) {
        CardBrand::Amex
    } else if in_range(4, 6011, 6011) || in_range(3, 644, 649) || in_range(2, 65, 65) {
        CardBrand::Discover
    } else if in_range(4, 3528, 3589) {
        CardBrand::Jcb
    } else if in_range(3, 300, 305) || in_range(2, 36, 36) || in_range(2, 38, 39) {
        CardBrand::Diners
    } else if in_range(2, 62, 62) {
        CardBrand::Unionpay
    } else {
        CardBrand::Unknown
    }
}

/// Card details as received in a request (`payment_method[card]`). Nothing is checked yet.
#[derive(Debug, Clone)]
pub struct CardInput {
    /// The card number; may contain spaces.
    pub number: Secret,
    /// Expiry month as sent (checked to be 1–12).
    pub exp_month: i64,
    /// Expiry year as sent (checked to be four digits).
    pub exp_year: i64,
    /// The security code. Never stored in any form.
    pub cvc: Secret,
}

/// The first problem [`validate_card`] found. Each maps to a 402 `card_error`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
pub enum CardValidationError {
    /// Bad characters, wrong length or Luhn failure.
    #[error("Your card number is incorrect.")]
    IncorrectNumber,
    /// `exp_month` not in 1–12.
    #[error("Your card's expiration month is invalid.")]
    InvalidExpiryMonth,
    /// `exp_year` not four digits, or before the current year.
    #[error("Your card's expiration year is invalid: it needs four digits (2034) and may not be in the past.")]
    InvalidExpiryYear,
    /// The expiry month is before the current month.
    #[error("Your card has expired.")]
    ExpiredCard,
    /// CVC not all digits, or not 3 digits (4 for amex).
    #[error("Your card's security code is invalid.")]
    InvalidCvc,
}

impl CardValidationError {
    /// The API error code (`incorrect_number`, …).
    pub fn code(self) -> &'static str {
        match self {
            CardValidationError::IncorrectNumber => "incorrect_number",
            CardValidationError::InvalidExpiryMonth => "invalid_expiry_month",
            CardValidationError::InvalidExpiryYear => "invalid_expiry_year",
            CardValidationError::ExpiredCard => "expired_card",
            CardValidationError::InvalidCvc => "invalid_cvc",
        }
    }

    /// The offending parameter, in bracket form. An expired card names `exp_month`.
    pub fn param(self) -> &'static str {
        match self {
            CardValidationError::IncorrectNumber => "payment_method[card][number]",
            CardValidationError::InvalidExpiryMonth | CardValidationError::ExpiredCard => {
                "payment_method[card][exp_month]"
            }
            CardValidationError::InvalidExpiryYear => "payment_method[card][exp_year]",
            CardValidationError::InvalidCvc => "payment_method[card][cvc]",
        }
    }

    /// A human, Stripe-like message (also the `Display` text).
    pub fn message(self) -> &'static str {
        match self {
            CardValidationError::IncorrectNumber => "Your card number is incorrect.",
            CardValidationError::InvalidExpiryMonth => "Your card's expiration month is invalid.",
            CardValidationError::InvalidExpiryYear => "Your card's expiration year is invalid: it needs four digits (2034) and may not be in the past.",
            CardValidationError::ExpiredCard => "Your card has expired.",
            CardValidationError::InvalidCvc => "Your card's security code is invalid.",
        }
    }
}

/// A card that passed [`validate_card`]. The CVC is not kept. `Debug` never shows the PAN.
#[derive(Clone, PartialEq, Eq)]
pub struct ValidatedCard {
    /// The full number, digits only.
    pub pan: Secret,
    /// Brand from the IIN range.
    pub brand: CardBrand,
    /// Last four digits of the number.
    pub last4: String,
    /// Expiry month, 1–12.
    pub exp_month: u8,
    /// Expiry year, four digits.
    pub exp_year: u16,
    /// `"credit"`, `"debit"`, `"prepaid"` or `"unknown"`.
    pub funding: &'static str,
    /// The CVC as given, for the request that authorises the card (a processor with
    /// `raw_card_data` gets it); never stored, so `None` for a card out of the vault.
    pub cvc: Option<Secret>,
    /// Issuing country, ISO 3166-1 alpha-2 (`"US"` for every test card).
    pub country: &'static str,
}

impl ValidatedCard {
    /// Rebuilds a card validated earlier from what the vault keeps (number and expiry; the CVC
    /// is never kept). `None` if the stored number is not a card number.
    pub fn from_vault(pan: &str, exp_month: u8, exp_year: u16) -> Option<Self> {
        if pan.len() < 12 || !luhn_valid(pan) {
            return None;
        }
        let brand = brand_of(pan);
        Some(ValidatedCard {
            pan: Secret::new(pan.to_owned()),
            brand,
            last4: pan[pan.len() - 4..].to_owned(),
            exp_month,
            exp_year,
            funding: funding_of(pan, brand),
            country: "US",
            cvc: None,
        })
    }

    /// Whether the card has expired by (`year`, `month`).
    pub fn expired_at(&self, year: i32, month: u32) -> bool {
        (self.exp_year as i32, self.exp_month as u32) < (year, month)
    }
}

impl fmt::Debug for ValidatedCard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ValidatedCard")
            .field("brand", &self.brand)
            .field("last4", &self.last4)
            .field("exp_month", &self.exp_month)
            .field("exp_year", &self.exp_year)
            .field("funding", &self.funding)
            .field("country", &self.country)
            .finish_non_exhaustive()
    }
}

/// Test cards whose funding is debit (CONTRACT §4.2 list, Stripe's well-known values).
const DEBIT_TEST_CARDS: &[&str] = &["4000056655665556", "5200828282828210"];

/// Funding type of a card: the debit test cards are `debit`, other recognised brands
/// `credit`, unrecognised numbers `unknown`.
fn funding_of(pan: &str, brand: CardBrand) -> &'static str {
    if DEBIT_TEST_CARDS.contains(&pan) {
        "debit"
    } else if brand == CardBrand::Unknown {
        "unknown"
    } else {
        "credit"
    }
}

/// Checks card input per CONTRACT §4.2, in order: number (spaces stripped, only digits,
/// 12–19 long, Luhn), `exp_month` (1–12), `exp_year` (1000–9999, not before `today_year`),
/// expiry (year/month not before today), CVC (all digits; 4 long for amex, else 3).
pub fn validate_card(
    input: &CardInput,
    today_year: i32,
    today_month: u32,
) -> Result<ValidatedCard, CardValidationError> {
    let raw = input.number.expose();
    if !raw.chars().all(|c| c == ' ' || c.is_ascii_digit()) {
        return Err(CardValidationError::IncorrectNumber);
    }
    let pan: String = raw.chars().filter(|c| *c != ' ').collect();
    if !(12..=19).contains(&pan.len()) || !luhn_valid(&pan) {
        return Err(CardValidationError::IncorrectNumber);
    }

    let exp_month = u8::try_from(input.exp_month)
        .ok()
        .filter(|m| (1..=12).contains(m))
        .ok_or(CardValidationError::InvalidExpiryMonth)?;

    let exp_year = u16::try_from(input.exp_year)
        .ok()
        .filter(|y| (1000..=9999).contains(y) && i64::from(*y) >= i64::from(today_year))
        .ok_or(CardValidationError::InvalidExpiryYear)?;

    if (i64::from(exp_year), i64::from(exp_month)) < (i64::from(today_year), i64::from(today_month))
    {
        return Err(CardValidationError::ExpiredCard);
    }

    let brand = brand_of(&pan);
    let cvc = input.cvc.expose();
    let cvc_len = if brand == CardBrand::Amex { 4 } else { 3 };
    if cvc.len() != cvc_len || !cvc.bytes().all(|b| b.is_ascii_digit()) {
        return Err(CardValidationError::InvalidCvc);
    }

    let last4 = pan[pan.len() - 4..].to_owned();
    let funding = funding_of(&pan, brand);
    Ok(ValidatedCard {
        pan: Secret::new(pan),
        brand,
        last4,
        exp_month,
        exp_year,
        funding,
        country: "US",
        cvc: Some(input.cvc.clone()),
    })
}

const BASE62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// Length of a [`fingerprint`].
pub const FINGERPRINT_LEN: usize = 16;

/// A keyed fingerprint of a card number: HMAC-SHA256(`key`, `pan`), its first 16 bytes read
/// as a big-endian integer, reduced mod 62^16 and written as exactly 16 base62 characters
/// (`[0-9A-Za-z]`, about 95 bits). Equal for the same PAN and key; the key is per account so
/// fingerprints do not correlate across accounts. Pass the digits-only PAN.
pub fn fingerprint(pan: &str, key: &[u8]) -> String {
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(key) else {
        unreachable!("HMAC accepts keys of any length")
    };
    mac.update(pan.as_bytes());
    let tag = mac.finalize().into_bytes();
    let mut first = [0u8; 16];
    first.copy_from_slice(&tag[..16]);
    let mut n = u128::from_be_bytes(first);
    let mut out = [0u8; FINGERPRINT_LEN];
    for slot in out.iter_mut().rev() {
        *slot = BASE62[(n % 62) as usize];
        n /= 62;
    }
    out.iter().map(|b| char::from(*b)).collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
