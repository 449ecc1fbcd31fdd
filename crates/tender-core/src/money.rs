//! Money: ISO 4217 currencies, validated amounts in minor units, and display formatting.
//!
//! A [`Currency`] is a cheap `Copy` handle to a row of a static table (code, exponent, minimum
//! chargeable amount). An [`Amount`] is an integer count of the currency's minor unit that has
//! been checked against CONTRACT §4.1 (`1…99,999,999` and not below the currency's minimum).
//! [`format_amount`] renders amounts for receipts and the dashboard (`1,234.56 EUR`).
//!
//! Depends on: `serde`, `thiserror`. Nothing else in the crate.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The largest amount accepted, in minor units (CONTRACT §4.1).
pub const MAX_AMOUNT: i64 = 99_999_999;

/// One row of the currency table.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct CurrencyInfo {
    /// ISO 4217 alphabetic code, lower case (`"usd"`).
    pub code: &'static str,
    /// Number of decimal digits of the minor unit (`2` for usd, `0` for jpy, `3` for kwd).
    pub exponent: u8,
    /// Smallest chargeable amount, in minor units.
    pub minimum: i64,
}

const fn c(code: &'static str, exponent: u8, minimum: i64) -> CurrencyInfo {
    CurrencyInfo {
        code,
        exponent,
        minimum,
    }
}

/// Every supported currency. Minimums follow CONTRACT §4.1: 50 for two-decimal currencies
/// (30 for gbp), 50 for zero-decimal ones, 500 for three-decimal ones.
static CURRENCIES: &[CurrencyInfo] = &[
    // Two-decimal currencies.
    c("usd", 2, 50),
    c("eur", 2, 50),
    c("gbp", 2, 30),
    c("chf", 2, 50),
    c("cad", 2, 50),
    c("aud", 2, 50),
    c("nzd", 2, 50),
    c("sek", 2, 50),
    c("nok", 2, 50),
    c("dkk", 2, 50),
    c("pln", 2, 50),
    c("czk", 2, 50),
    c("huf", 2, 50),
    c("ron", 2, 50),
    c("bgn", 2, 50),
    c("hkd", 2, 50),
    c("sgd", 2, 50),
    c("cny", 2, 50),
    c("inr", 2, 50),
    c("brl", 2, 50),
    c("mxn", 2, 50),
    c("zar", 2, 50),
    c("try", 2, 50),
    c("ils", 2, 50),
    c("aed", 2, 50),
    c("sar", 2, 50),
    c("qar", 2, 50),
    c("twd", 2, 50),
    c("thb", 2, 50),
    c("myr", 2, 50),
    c("idr", 2, 50),
    c("php", 2, 50),
    c("pkr", 2, 50),
    c("bdt", 2, 50),
    c("lkr", 2, 50),
    c("egp", 2, 50),
    c("mad", 2, 50),
    c("ngn", 2, 50),
    c("kes", 2, 50),
    c("ghs", 2, 50),
    c("ars", 2, 50),
    c("cop", 2, 50),
    c("pen", 2, 50),
    c("uyu", 2, 50),
    c("rsd", 2, 50),
    c("uah", 2, 50),
    c("gel", 2, 50),
    c("kzt", 2, 50),
    // Zero-decimal currencies.
    c("jpy", 0, 50),
    c("krw", 0, 50),
    c("vnd", 0, 50),
    c("clp", 0, 50),
    c("isk", 0, 50),
    c("ugx", 0, 50),
    c("xaf", 0, 50),
    c("xof", 0, 50),
    c("xpf", 0, 50),
    c("pyg", 0, 50),
    c("rwf", 0, 50),
    c("bif", 0, 50),
    c("djf", 0, 50),
    c("gnf", 0, 50),
    c("kmf", 0, 50),
    c("vuv", 0, 50),
    // Three-decimal currencies.
    c("kwd", 3, 500),
    c("bhd", 3, 500),
    c("jod", 3, 500),
    c("omr", 3, 500),
    c("tnd", 3, 500),
    c("iqd", 3, 500),
    c("lyd", 3, 500),
];

/// A supported ISO 4217 currency: a `Copy` handle to a row of the static table.
///
/// Serialises as its lower-case code; deserialises through [`Currency::parse`] (any case),
/// failing on unknown codes.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Currency(&'static CurrencyInfo);

impl Currency {
    /// Looks up a currency by its three-letter code, in any case. `None` if the input is not
    /// exactly three ASCII letters or the code is not in the table.
    pub fn parse(code: &str) -> Option<Currency> {
        if code.len() != 3 || !code.bytes().all(|b| b.is_ascii_alphabetic()) {
            return None;
        }
        let lower = code.to_ascii_lowercase();
        CURRENCIES
            .iter()
            .find(|info| info.code == lower)
            .map(Currency)
    }

    /// The lower-case ISO code (`"usd"`).
    pub fn code(self) -> &'static str {
        self.0.code
    }

    /// Decimal digits of the minor unit.
    pub fn exponent(self) -> u8 {
        self.0.exponent
    }

    /// Smallest chargeable amount, in minor units.
    pub fn minimum_amount(self) -> i64 {
        self.0.minimum
    }

    /// The full table row.
    pub fn info(self) -> &'static CurrencyInfo {
        self.0
    }

    /// Every supported currency, in table order.
    pub fn all() -> impl Iterator<Item = Currency> {
        CURRENCIES.iter().map(Currency)
    }
}

impl fmt::Debug for Currency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Currency({})", self.0.code)
    }
}

impl fmt::Display for Currency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.code)
    }
}

impl Serialize for Currency {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.0.code)
    }
}

impl<'de> Deserialize<'de> for Currency {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = String::deserialize(deserializer)?;
        Currency::parse(&s)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown currency `{s}`")))
    }
}

/// Why an amount was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum AmountError {
    /// Below 1 or below the currency's minimum.
    #[error("amount is below the minimum for this currency")]
    TooSmall,
    /// Above [`MAX_AMOUNT`].
    #[error("amount must be at most 99999999")]
    TooLarge,
}

impl AmountError {
    /// The API error code (`amount_too_small` / `amount_too_large`).
    pub fn code(self) -> &'static str {
        match self {
            AmountError::TooSmall => "amount_too_small",
            AmountError::TooLarge => "amount_too_large",
        }
    }
}

/// A positive amount in a currency's minor unit, validated by [`Amount::parse`].
///
/// Serialises (and deserialises, without re-validation) as a bare integer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Amount(i64);

impl Amount {
    /// Checks `value` against `1…MAX_AMOUNT` and the currency's minimum.
    pub fn parse(value: i64, currency: Currency) -> Result<Amount, AmountError> {
        if value > MAX_AMOUNT {
            Err(AmountError::TooLarge)
        } else if value < 1 || value < currency.minimum_amount() {
            Err(AmountError::TooSmall)
        } else {
            Ok(Amount(value))
        }
    }

    /// The amount in minor units.
    pub fn get(self) -> i64 {
        self.0
    }
}

/// Renders `minor` units of `currency` for humans: the major part with `,` thousands
/// separators, a `.` and exactly `exponent` fraction digits (none for zero-decimal
/// currencies), a space and the upper-case code. Negative amounts get a leading `-`.
///
/// A minor-unit amount in major units without grouping, for machines (CSV):
/// `format_major(123456, 2)` → `"1234.56"`, `format_major(-5, 2)` → `"-0.05"`.
pub fn format_major(minor: i64, exponent: u8) -> String {
    let divisor = 10u64.pow(u32::from(exponent));
    let abs = minor.unsigned_abs();
    let sign = if minor < 0 { "-" } else { "" };
    if exponent == 0 {
        return format!("{sign}{abs}");
    }
    format!(
        "{sign}{}.{:0width$}",
        abs / divisor,
        abs % divisor,
        width = usize::from(exponent)
    )
}

/// `format_amount(123456, eur)` → `"1,234.56 EUR"`; `format_amount(5000, jpy)` → `"5,000 JPY"`;
/// `format_amount(1234, kwd)` → `"1.234 KWD"`.
pub fn format_amount(minor: i64, currency: Currency) -> String {
    let exp = u32::from(currency.exponent());
    let abs = minor.unsigned_abs();
    let divisor = 10u64.pow(exp);
    let major = abs / divisor;
    let frac = abs % divisor;

    let digits = major.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 + 8);
    if minor < 0 {
        out.push('-');
    }
    // `digits` is never empty; the first group holds 1–3 digits, every later group 3.
    let head = match digits.len() % 3 {
        0 => 3.min(digits.len()),
        n => n,
    };
    out.push_str(&digits[..head]);
    let mut rest = &digits[head..];
    while rest.len() >= 3 {
        out.push(',');
        out.push_str(&rest[..3]);
        rest = &rest[3..];
    }
    if exp > 0 {
        out.push('.');
        out.push_str(&format!("{frac:0width$}", width = exp as usize));
    }
    out.push(' ');
    out.push_str(&currency.code().to_ascii_uppercase());
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {

    #[test]
    fn format_major_is_plain_major_units() {
        assert_eq!(format_major(123456, 2), "1234.56");
        assert_eq!(format_major(-5, 2), "-0.05");
        assert_eq!(format_major(5000, 0), "5000");
        assert_eq!(format_major(1234, 3), "1.234");
    }

    use super::*;
    use proptest::prelude::*;

    fn cur(code: &str) -> Currency {
        Currency::parse(code).unwrap()
    }

    #[test]
    fn table_is_sane() {
        let mut codes: Vec<_> = Currency::all().map(|c| c.code()).collect();
        assert!(codes.len() >= 40);
        for c in Currency::all() {
            assert_eq!(c.code().len(), 3);
            assert_eq!(c.code(), c.code().to_ascii_lowercase());
            assert!(c.exponent() <= 3);
            assert!(c.minimum_amount() >= 1);
        }
        codes.sort_unstable();
        let n = codes.len();
        codes.dedup();
        assert_eq!(codes.len(), n, "duplicate currency code");
    }

    #[test]
    fn parse_is_case_insensitive_and_strict() {
        assert_eq!(cur("USD").code(), "usd");
        assert_eq!(cur("uSd"), cur("usd"));
        assert!(Currency::parse("usdd").is_none());
        assert!(Currency::parse("us").is_none());
        assert!(Currency::parse("").is_none());
        assert!(Currency::parse("xxx").is_none());
        assert!(Currency::parse("us1").is_none());
        assert!(Currency::parse(" usd").is_none());
    }

    #[test]
    fn exponents_and_minimums() {
        assert_eq!(cur("usd").exponent(), 2);
        assert_eq!(cur("jpy").exponent(), 0);
        assert_eq!(cur("krw").exponent(), 0);
        assert_eq!(cur("kwd").exponent(), 3);
        assert_eq!(cur("usd").minimum_amount(), 50);
        assert_eq!(cur("eur").minimum_amount(), 50);
        assert_eq!(cur("gbp").minimum_amount(), 30);
        assert_eq!(cur("jpy").minimum_amount(), 50);
        assert_eq!(cur("bhd").minimum_amount(), 500);
    }

    #[test]
    fn serde_roundtrip() {
        assert_eq!(serde_json::to_string(&cur("EUR")).unwrap(), "\"eur\"");
        let c: Currency = serde_json::from_str("\"GBP\"").unwrap();
        assert_eq!(c.code(), "gbp");
        assert!(serde_json::from_str::<Currency>("\"zzz\"").is_err());
        assert!(serde_json::from_str::<Currency>("5").is_err());
        let a = Amount::parse(1234, cur("usd")).unwrap();
        assert_eq!(serde_json::to_string(&a).unwrap(), "1234");
        assert_eq!(serde_json::from_str::<Amount>("1234").unwrap(), a);
    }

    #[test]
    fn amount_bounds() {
        let usd = cur("usd");
        assert_eq!(Amount::parse(0, usd), Err(AmountError::TooSmall));
        assert_eq!(Amount::parse(-5, usd), Err(AmountError::TooSmall));
        assert_eq!(Amount::parse(49, usd), Err(AmountError::TooSmall));
        assert_eq!(Amount::parse(50, usd).map(Amount::get), Ok(50));
        assert_eq!(
            Amount::parse(MAX_AMOUNT, usd).map(Amount::get),
            Ok(MAX_AMOUNT)
        );
        assert_eq!(
            Amount::parse(MAX_AMOUNT + 1, usd),
            Err(AmountError::TooLarge)
        );
        assert_eq!(Amount::parse(i64::MAX, usd), Err(AmountError::TooLarge));
        assert_eq!(Amount::parse(30, cur("gbp")).map(Amount::get), Ok(30));
        assert_eq!(Amount::parse(29, cur("gbp")), Err(AmountError::TooSmall));
        assert_eq!(AmountError::TooSmall.code(), "amount_too_small");
        assert_eq!(AmountError::TooLarge.code(), "amount_too_large");
    }

    #[test]
    fn formatting() {
        assert_eq!(format_amount(1234, cur("usd")), "12.34 USD");
        assert_eq!(format_amount(5, cur("usd")), "0.05 USD");
        assert_eq!(format_amount(0, cur("usd")), "0.00 USD");
        assert_eq!(format_amount(123456, cur("eur")), "1,234.56 EUR");
        assert_eq!(format_amount(99_999_999, cur("eur")), "999,999.99 EUR");
        assert_eq!(format_amount(500, cur("jpy")), "500 JPY");
        assert_eq!(format_amount(5000, cur("jpy")), "5,000 JPY");
        assert_eq!(format_amount(1234, cur("kwd")), "1.234 KWD");
        assert_eq!(format_amount(7, cur("kwd")), "0.007 KWD");
        assert_eq!(format_amount(-123456, cur("eur")), "-1,234.56 EUR");
        assert_eq!(format_amount(-5, cur("usd")), "-0.05 USD");
        assert_eq!(
            format_amount(i64::MIN, cur("jpy")),
            "-9,223,372,036,854,775,808 JPY"
        );
    }

    fn any_currency() -> impl Strategy<Value = Currency> {
        (0..CURRENCIES.len()).prop_map(|i| Currency(&CURRENCIES[i]))
    }

    proptest! {
        #[test]
        fn format_then_read_digits_back(minor in -10_000_000_000i64..10_000_000_000, c in any_currency()) {
            let s = format_amount(minor, c);
            let (number, code) = s.split_once(' ').unwrap();
            prop_assert_eq!(code, c.code().to_ascii_uppercase());
            let digits: String = number.chars().filter(|ch| ch.is_ascii_digit()).collect();
            let mut back: i64 = digits.parse().unwrap();
            if number.starts_with('-') {
                back = -back;
            }
            prop_assert_eq!(back, minor);
            let frac_len = number.split_once('.').map_or(0, |(_, f)| f.len());
            prop_assert_eq!(frac_len, usize::from(c.exponent()));
        }

        #[test]
        fn parse_accepts_every_valid_value(c in any_currency(), offset in 0i64..=MAX_AMOUNT) {
            let min = c.minimum_amount();
            let v = min + offset % (MAX_AMOUNT - min + 1);
            prop_assert_eq!(Amount::parse(v, c).map(Amount::get), Ok(v));
        }

        #[test]
        fn parse_rejects_out_of_range(c in any_currency(), v in any::<i64>()) {
            let r = Amount::parse(v, c);
            if v > MAX_AMOUNT {
                prop_assert_eq!(r, Err(AmountError::TooLarge));
            } else if v < c.minimum_amount() {
                prop_assert_eq!(r, Err(AmountError::TooSmall));
            } else {
                prop_assert!(r.is_ok());
            }
        }
    }
}
