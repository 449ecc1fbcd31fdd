//! Field validators for customer and bank-transfer input (CONTRACT §4.3, §4.5): e-mail
//! addresses, E.164-style phone numbers, ISO 3166-1 alpha-2 country codes and IBANs.
//!
//! Pure functions over strings; they answer yes/no (or a normalised value) and leave the
//! choice of API error code and `param` to the caller.
//!
//! Depends on: [`crate::secret`] (the normalised IBAN), `thiserror`.

/// Longest accepted e-mail address, in bytes.
pub const EMAIL_MAX_LEN: usize = 512;

/// Whether `s` is a plausible e-mail address: at most 512 bytes, no whitespace or control
/// characters, exactly one `@`, a non-empty local part, and a domain of at least two
/// non-empty dot-separated labels (so no leading, trailing or consecutive dots).
pub fn email_valid(s: &str) -> bool {
    if s.len() > EMAIL_MAX_LEN || s.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return false;
    }
    let Some((local, domain)) = s.split_once('@') else {
        return false;
    };
    if local.is_empty() || domain.contains('@') {
        return false;
    }
    let labels: Vec<&str> = domain.split('.').collect();
    labels.len() >= 2 && labels.iter().all(|l| !l.is_empty())
}

/// Whether `s` is `+` followed by 8 to 15 ASCII digits and nothing else.
pub fn phone_valid(s: &str) -> bool {
    match s.strip_prefix('+') {
        Some(digits) => {
            (8..=15).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_digit())
        }
        None => false,
    }
}

/// The 249 officially assigned ISO 3166-1 alpha-2 codes, sorted.
static COUNTRIES: [&str; 249] = [
    "AD", "AE", "AF", "AG", "AI", "AL", "AM", "AO", "AQ", "AR", "AS", "AT", "AU", "AW", "AX", "AZ",
    "BA", "BB", "BD", "BE", "BF", "BG", "BH", "BI", "BJ", "BL", "BM", "BN", "BO", "BQ", "BR", "BS",
    "BT", "BV", "BW", "BY", "BZ", "CA", "CC", "CD", "CF", "CG", "CH", "CI", "CK", "CL", "CM", "CN",
    "CO", "CR", "CU", "CV", "CW", "CX", "CY", "CZ", "DE", "DJ", "DK", "DM", "DO", "DZ", "EC", "EE",
    "EG", "EH", "ER", "ES", "ET", "FI", "FJ", "FK", "FM", "FO", "FR", "GA", "GB", "GD", "GE", "GF",
    "GG", "GH", "GI", "GL", "GM", "GN", "GP", "GQ", "GR", "GS", "GT", "GU", "GW", "GY", "HK", "HM",
    "HN", "HR", "HT", "HU", "ID", "IE", "IL", "IM", "IN", "IO", "IQ", "IR", "IS", "IT", "JE", "JM",
    "JO", "JP", "KE", "KG", "KH", "KI", "KM", "KN", "KP", "KR", "KW", "KY", "KZ", "LA", "LB", "LC",
    "LI", "LK", "LR", "LS", "LT", "LU", "LV", "LY", "MA", "MC", "MD", "ME", "MF", "MG", "MH", "MK",
    "ML", "MM", "MN", "MO", "MP", "MQ", "MR", "MS", "MT", "MU", "MV", "MW", "MX", "MY", "MZ", "NA",
    "NC", "NE", "NF", "NG", "NI", "NL", "NO", "NP", "NR", "NU", "NZ", "OM", "PA", "PE", "PF", "PG",
    "PH", "PK", "PL", "PM", "PN", "PR", "PS", "PT", "PW", "PY", "QA", "RE", "RO", "RS", "RU", "RW",
    "SA", "SB", "SC", "SD", "SE", "SG", "SH", "SI", "SJ", "SK", "SL", "SM", "SN", "SO", "SR", "SS",
    "ST", "SV", "SX", "SY", "SZ", "TC", "TD", "TF", "TG", "TH", "TJ", "TK", "TL", "TM", "TN", "TO",
    "TR", "TT", "TV", "TW", "TZ", "UA", "UG", "UM", "US", "UY", "UZ", "VA", "VC", "VE", "VG", "VI",
    "VN", "VU", "WF", "WS", "YE", "YT", "ZA", "ZM", "ZW",
];

/// The canonical (upper-case) ISO 3166-1 alpha-2 code for `s`, accepted in any case.
/// `None` unless `s` is exactly two ASCII letters forming an assigned code.
pub fn normalize_country(s: &str) -> Option<&'static str> {
    if s.len() != 2 || !s.bytes().all(|b| b.is_ascii_alphabetic()) {
        return None;
    }
    let upper = s.to_ascii_uppercase();
    COUNTRIES
        .binary_search(&upper.as_str())
        .ok()
        .map(|i| COUNTRIES[i])
}

/// Whether `s` (any case) is an assigned ISO 3166-1 alpha-2 code.
pub fn country_valid(s: &str) -> bool {
    normalize_country(s).is_some()
}

/// IBAN validation: country length table and the ISO 7064 mod-97 check.
pub mod iban {
    use crate::secret::Secret;

    /// IBAN lengths by country, from the SWIFT IBAN registry, sorted by country code.
    static LENGTHS: &[(&str, usize)] = &[
        ("AD", 24),
        ("AE", 23),
        ("AL", 28),
        ("AT", 20),
        ("AZ", 28),
        ("BA", 20),
        ("BE", 16),
        ("BG", 22),
        ("BH", 22),
        ("BI", 27),
        ("BR", 29),
        ("BY", 28),
        ("CH", 21),
        ("CR", 22),
        ("CY", 28),
        ("CZ", 24),
        ("DE", 22),
        ("DJ", 27),
        ("DK", 18),
        ("DO", 28),
        ("EE", 20),
        ("EG", 29),
        ("ES", 24),
        ("FI", 18),
        ("FK", 18),
        ("FO", 18),
        ("FR", 27),
        ("GB", 22),
        ("GE", 22),
        ("GI", 23),
        ("GL", 18),
        ("GR", 27),
        ("GT", 28),
        ("HN", 28),
        ("HR", 21),
        ("HU", 28),
        ("IE", 22),
        ("IL", 23),
        ("IQ", 23),
        ("IS", 26),
        ("IT", 27),
        ("JO", 30),
        ("KW", 30),
        ("KZ", 20),
        ("LB", 28),
        ("LC", 32),
        ("LI", 21),
        ("LT", 20),
        ("LU", 20),
        ("LV", 21),
        ("LY", 25),
        ("MC", 27),
        ("MD", 24),
        ("ME", 22),
        ("MK", 19),
        ("MN", 20),
        ("MR", 27),
        ("MT", 31),
        ("MU", 30),
        ("NI", 28),
        ("NL", 18),
        ("NO", 15),
        ("OM", 23),
        ("PK", 24),
        ("PL", 28),
        ("PS", 29),
        ("PT", 25),
        ("QA", 29),
        ("RO", 24),
        ("RS", 22),
        ("RU", 33),
        ("SA", 24),
        ("SC", 31),
        ("SD", 18),
        ("SE", 24),
        ("SI", 19),
        ("SK", 24),
        ("SM", 27),
        ("SO", 23),
        ("ST", 25),
        ("SV", 28),
        ("TL", 23),
        ("TN", 24),
        ("TR", 26),
        ("UA", 29),
        ("VA", 22),
        ("VG", 24),
        ("XK", 20),
        ("YE", 30),
    ];

    /// The registry entry (code as stored, length) for a two-letter upper-case country code.
    fn entry(country: &str) -> Option<(&'static str, usize)> {
        LENGTHS
            .binary_search_by(|(c, _)| (*c).cmp(country))
            .ok()
            .map(|i| LENGTHS[i])
    }

    /// The IBAN length for `country` (upper case), if the country uses IBANs.
    pub fn length_for(country: &str) -> Option<usize> {
        entry(country).map(|(_, len)| len)
    }

    /// A validated IBAN. `Debug` shows the country and last four characters only.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct Iban {
        /// The upper-case country code (first two characters).
        pub country: &'static str,
        /// The last four characters.
        pub last4: String,
        /// The whole IBAN, upper case, without spaces.
        pub normalized: Secret,
    }

    /// The input is not a valid IBAN (bad characters, unknown country, wrong length or
    /// failed mod-97 check).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
    #[error("invalid IBAN")]
    pub struct InvalidIban;

    /// The remainder mod 97 of the IBAN's numeric form (first four characters moved to the
    /// end, letters as 10–35). `s` must be upper-case ASCII alphanumeric.
    fn mod97(s: &str) -> u32 {
        let (head, tail) = s.split_at(4.min(s.len()));
        tail.bytes().chain(head.bytes()).fold(0u32, |acc, b| {
            if b.is_ascii_digit() {
                (acc * 10 + u32::from(b - b'0')) % 97
            } else {
                (acc * 100 + u32::from(b - b'A') + 10) % 97
            }
        })
    }

    /// Validates an IBAN: spaces are removed and letters upper-cased; the rest must be ASCII
    /// letters and digits, start with a registry country code and two check digits, have
    /// that country's length, and leave remainder 1 under mod 97.
    pub fn validate(s: &str) -> Result<Iban, InvalidIban> {
        let normalized: String = s
            .chars()
            .filter(|c| *c != ' ')
            .map(|c| c.to_ascii_uppercase())
            .collect();
        if !normalized.bytes().all(|b| b.is_ascii_alphanumeric()) {
            return Err(InvalidIban);
        }
        let country_part = normalized.get(..2).ok_or(InvalidIban)?;
        let (country, len) = entry(country_part).ok_or(InvalidIban)?;
        // Check digits are 02–98 (ISO 13616): 00, 01 and 99 pass mod 97 like 97, 98 and 02
        // but no IBAN carries them (found by fuzzing).
        if normalized.len() != len
            || !normalized.as_bytes()[2..4].iter().all(u8::is_ascii_digit)
            || !("02"..="98").contains(&&normalized[2..4])
            || mod97(&normalized) != 1
        {
            return Err(InvalidIban);
        }
        let last4 = normalized[normalized.len() - 4..].to_owned();
        Ok(Iban {
            country,
            last4,
            normalized: Secret::new(normalized),
        })
    }

    /// The two check digits for an IBAN of `country` (upper case) with basic bank account
    /// number `bban` (upper-case alphanumeric). Useful for building test fixtures. `None` on
    /// bad input; the length is not checked.
    pub fn check_digits(country: &str, bban: &str) -> Option<String> {
        let ok = |s: &str, f: fn(&u8) -> bool| s.as_bytes().iter().all(f);
        if country.len() != 2
            || !ok(country, u8::is_ascii_uppercase)
            || !ok(bban, |b| b.is_ascii_digit() || b.is_ascii_uppercase())
        {
            return None;
        }
        let r = mod97(&format!("{country}00{bban}"));
        Some(format!("{:02}", 98 - r))
    }

    #[cfg(test)]
    #[allow(clippy::unwrap_used)]
    mod tests {
        use super::*;
        use proptest::prelude::*;

        #[test]
        fn known_valid() {
            for (s, country, last4) in [
                ("DE89370400440532013000", "DE", "3000"),
                ("GB82WEST12345698765432", "GB", "5432"),
                ("FR1420041010050500013M02606", "FR", "2606"),
                ("NL91ABNA0417164300", "NL", "4300"),
                ("BE68539007547034", "BE", "7034"),
                ("AT611904300234573201", "AT", "3201"),
                ("CH9300762011623852957", "CH", "2957"),
                ("ES9121000418450200051332", "ES", "1332"),
                ("IT60X0542811101000000123456", "IT", "3456"),
                ("NO9386011117947", "NO", "7947"),
                ("de89 3704 0044 0532 0130 00", "DE", "3000"),
            ] {
                let iban = validate(s).unwrap();
                assert_eq!(iban.country, country);
                assert_eq!(iban.last4, last4);
                assert!(!iban.normalized.expose().contains(' '));
                assert!(!format!("{iban:?}").contains("37040044"));
            }
        }

        #[test]
        fn invalid() {
            for s in [
                "",
                "D",
                "DE",
                "DE88370400440532013000",  // bad check digits
                "DE8937040044053201300",   // too short
                "DE893704004405320130000", // too long
                "XX89370400440532013000",  // unknown country
                "DE89-3704-0044-0532-0130-00",
                "NO0001065896180", // check digits 00 (≡ 97)
                "DE89370400440532013000\n",
                "DEAB370400440532013000",
                "GB82WEST1234569876543Ä",
            ] {
                assert_eq!(validate(s), Err(InvalidIban), "{s:?}");
            }
        }

        #[test]
        fn table_sorted_and_sane() {
            assert!(LENGTHS.windows(2).all(|w| w[0].0 < w[1].0));
            assert!(LENGTHS.iter().all(|(_, l)| (15..=34).contains(l)));
            assert_eq!(length_for("DE"), Some(22));
            assert_eq!(length_for("FR"), Some(27));
            assert_eq!(length_for("US"), None);
        }

        #[test]
        fn check_digits_match_known() {
            assert_eq!(
                check_digits("DE", "370400440532013000").as_deref(),
                Some("89")
            );
            assert_eq!(
                check_digits("GB", "WEST12345698765432").as_deref(),
                Some("82")
            );
            assert_eq!(check_digits("de", "1"), None);
        }

        fn country_and_bban() -> impl Strategy<Value = (String, String)> {
            (0..LENGTHS.len()).prop_flat_map(|i| {
                let (c, len) = LENGTHS[i];
                proptest::collection::vec(
                    prop_oneof![3 => proptest::char::range('0', '9'), 1 => proptest::char::range('A', 'Z')],
                    len - 4,
                )
                .prop_map(move |chars| (c.to_owned(), chars.into_iter().collect::<String>()))
            })
        }

        proptest! {
            #[test]
            fn generated_iban_validates((country, bban) in country_and_bban()) {
                let check = check_digits(&country, &bban).unwrap();
                let s = format!("{country}{check}{bban}");
                let iban = validate(&s).unwrap();
                prop_assert_eq!(iban.country, country.as_str());
                prop_assert_eq!(iban.normalized.expose(), s.as_str());
                prop_assert_eq!(iban.last4, &s[s.len() - 4..]);
            }

            #[test]
            fn flipping_a_digit_fails((country, bban) in country_and_bban(), pos in any::<prop::sample::Index>(), delta in 1u8..=9) {
                let check = check_digits(&country, &bban).unwrap();
                let mut bytes = format!("{country}{check}{bban}").into_bytes();
                let digit_positions: Vec<usize> = (2..bytes.len()).filter(|&i| bytes[i].is_ascii_digit()).collect();
                let i = digit_positions[pos.index(digit_positions.len())];
                bytes[i] = b'0' + (bytes[i] - b'0' + delta) % 10;
                let s = String::from_utf8(bytes).unwrap();
                prop_assert_eq!(validate(&s), Err(InvalidIban));
            }

            #[test]
            fn validate_never_panics(s in "\\PC{0,40}") {
                let _ = validate(&s);
            }
        }
    }
}

/// Checks an amount against the currency's bounds, naming `param`.
pub fn check_amount(
    param: &str,
    amount: i64,
    currency: crate::money::Currency,
) -> crate::error::CoreResult<crate::money::Amount> {
    crate::money::Amount::parse(amount, currency).map_err(|e| {
        let message = match e {
            crate::money::AmountError::TooSmall => format!(
                "Amount must be at least {} (amounts are in the currency's smallest unit: {} here).",
                crate::money::format_amount(currency.minimum_amount(), currency),
                currency.minimum_amount()
            ),
            crate::money::AmountError::TooLarge => {
                format!("Amount must be at most {}.", crate::money::MAX_AMOUNT)
            }
        };
        crate::error::CoreError::invalid(param, e.code(), message)
    })
}

/// `return_url` must be an absolute http(s) URL.
pub fn check_return_url(raw: &str) -> crate::error::CoreResult<()> {
    check_url("return_url", raw)
}

/// Refuses `param` unless it is an absolute http(s) URL of at most 2,048 bytes.
pub fn check_url(param: &str, raw: &str) -> crate::error::CoreResult<()> {
    match url::Url::parse(raw) {
        Ok(u) if matches!(u.scheme(), "http" | "https") && raw.len() <= 2048 => Ok(()),
        _ => Err(crate::error::CoreError::invalid(
            param,
            "url_invalid",
            format!("{param} must be an absolute http(s) URL."),
        )),
    }
}

/// Refuses a free-text field over `max` characters.
pub fn check_text(param: &str, value: Option<&str>, max: usize) -> crate::error::CoreResult<()> {
    match value {
        Some(v) if v.chars().count() > max => Err(crate::error::CoreError::invalid(
            param,
            "parameter_invalid",
            format!("{param} can be at most {max} characters."),
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn emails() {
        for ok in [
            "a@b.co",
            "jenny.rosen@example.com",
            "first+tag@sub.example.co.uk",
            "UPPER@EXAMPLE.COM",
        ] {
            assert!(email_valid(ok), "{ok}");
        }
        for bad in [
            "",
            "plain",
            "@example.com",
            "a@",
            "a@localhost",
            "a@b@c.com",
            "a b@c.com",
            "a@c .com",
            "a@c..com",
            "a@.c.com",
            "a@c.com.",
            "a@c.com\n",
            "a\t@c.com",
        ] {
            assert!(!email_valid(bad), "{bad:?}");
        }
        let long_ok = format!("{}@example.com", "a".repeat(EMAIL_MAX_LEN - 12));
        assert_eq!(long_ok.len(), EMAIL_MAX_LEN);
        assert!(email_valid(&long_ok));
        let too_long = format!("a{long_ok}");
        assert!(!email_valid(&too_long));
    }

    #[test]
    fn phones() {
        assert!(phone_valid("+14155552671"));
        assert!(phone_valid("+12345678"));
        assert!(phone_valid("+123456789012345"));
        for bad in [
            "",
            "+",
            "14155552671",
            "+1234567",
            "+1234567890123456",
            "+1 415 555 2671",
            "+1-415-555-2671",
            "++14155552671",
            "+1415555267a",
            "+١٢٣٤٥٦٧٨٩",
        ] {
            assert!(!phone_valid(bad), "{bad:?}");
        }
    }

    #[test]
    fn countries() {
        assert_eq!(COUNTRIES.len(), 249);
        assert!(COUNTRIES.windows(2).all(|w| w[0] < w[1]));
        assert!(COUNTRIES
            .iter()
            .all(|c| c.len() == 2 && c.bytes().all(|b| b.is_ascii_uppercase())));
        assert!(country_valid("US"));
        assert!(country_valid("de"));
        assert!(country_valid("Gb"));
        assert_eq!(normalize_country("fr"), Some("FR"));
        assert_eq!(normalize_country("ZW"), Some("ZW"));
        assert_eq!(normalize_country("AD"), Some("AD"));
        for bad in ["", "U", "USA", "UK", "XX", "EU", "1A", " US", "ÜS"] {
            assert!(!country_valid(bad), "{bad:?}");
        }
    }
}
