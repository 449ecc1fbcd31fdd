//! Tests of [`super`] (`card.rs`), kept apart so the module reads as what it does.

use super::*;
use proptest::prelude::*;

fn input(number: &str, m: i64, y: i64, cvc: &str) -> CardInput {
    CardInput {
        number: Secret::from(number),
        exp_month: m,
        exp_year: y,
        cvc: Secret::from(cvc),
    }
}

fn ok(number: &str) -> ValidatedCard {
    let cvc = if brand_of(number) == CardBrand::Amex {
        "1234"
    } else {
        "123"
    };
    validate_card(&input(number, 12, 2034, cvc), 2025, 6).unwrap()
}

#[test]
fn luhn() {
    assert!(luhn_valid("4242424242424242"));
    assert!(luhn_valid("0"));
    assert!(luhn_valid("79927398713"));
    assert!(!luhn_valid("79927398710"));
    assert!(!luhn_valid(""));
    assert!(!luhn_valid("4242 4242 4242 4242"));
    assert!(!luhn_valid("424242424242424a"));
    assert_eq!(luhn_check_digit("7992739871"), Some('3'));
    assert_eq!(luhn_check_digit(""), Some('0'));
    assert_eq!(luhn_check_digit("12x"), None);
}

#[test]
fn contract_cards_have_stated_brands() {
    let cases = [
        ("4242424242424242", CardBrand::Visa),
        ("4000056655665556", CardBrand::Visa),
        ("5555555555554444", CardBrand::Mastercard),
        ("2223003122003222", CardBrand::Mastercard),
        ("5200828282828210", CardBrand::Mastercard),
        ("378282246310005", CardBrand::Amex),
        ("6011111111111117", CardBrand::Discover),
        ("3056930009020004", CardBrand::Diners),
        ("36227206271667", CardBrand::Diners),
        ("3566002020360505", CardBrand::Jcb),
        ("6200000000000005", CardBrand::Unionpay),
    ];
    for (n, b) in cases {
        assert_eq!(brand_of(n), b, "{n}");
        let v = ok(n);
        assert_eq!(v.brand, b);
        assert_eq!(v.last4, &n[n.len() - 4..]);
        assert_eq!(v.country, "US");
    }
}

#[test]
fn brand_ranges() {
    assert_eq!(brand_of("2221000000000009"), CardBrand::Mastercard);
    assert_eq!(brand_of("2720990000000000"), CardBrand::Mastercard);
    assert_eq!(brand_of("2721000000000000"), CardBrand::Unknown);
    assert_eq!(brand_of("2220990000000000"), CardBrand::Unknown);
    assert_eq!(brand_of("5100000000000000"), CardBrand::Mastercard);
    assert_eq!(brand_of("5600000000000000"), CardBrand::Unknown);
    assert_eq!(brand_of("3400000000000000"), CardBrand::Amex);
    assert_eq!(brand_of("6440000000000000"), CardBrand::Discover);
    assert_eq!(brand_of("6490000000000000"), CardBrand::Discover);
    assert_eq!(brand_of("6500000000000000"), CardBrand::Discover);
    assert_eq!(brand_of("6430000000000000"), CardBrand::Unknown);
    assert_eq!(brand_of("3000000000000000"), CardBrand::Diners);
    assert_eq!(brand_of("3050000000000000"), CardBrand::Diners);
    assert_eq!(brand_of("3060000000000000"), CardBrand::Unknown);
    assert_eq!(brand_of("3800000000000000"), CardBrand::Diners);
    assert_eq!(brand_of("3900000000000000"), CardBrand::Diners);
    assert_eq!(brand_of("3528000000000000"), CardBrand::Jcb);
    assert_eq!(brand_of("3589000000000000"), CardBrand::Jcb);
    assert_eq!(brand_of("3527000000000000"), CardBrand::Unknown);
    assert_eq!(brand_of("6200 0000 0000 0005"), CardBrand::Unionpay);
    assert_eq!(brand_of(""), CardBrand::Unknown);
    assert_eq!(brand_of("4"), CardBrand::Visa);
    assert_eq!(brand_of("x4"), CardBrand::Unknown);
    assert_eq!(brand_of("1234567890123452"), CardBrand::Unknown);
}

#[test]
fn brand_serde_and_names() {
    for b in [
        CardBrand::Visa,
        CardBrand::Mastercard,
        CardBrand::Amex,
        CardBrand::Discover,
        CardBrand::Diners,
        CardBrand::Jcb,
        CardBrand::Unionpay,
        CardBrand::Unknown,
    ] {
        let json = serde_json::to_string(&b).unwrap();
        assert_eq!(json, format!("\"{}\"", b.as_str()));
        assert_eq!(serde_json::from_str::<CardBrand>(&json).unwrap(), b);
        assert_eq!(b.to_string(), b.as_str());
    }
}

#[test]
fn funding() {
    assert_eq!(ok("4000056655665556").funding, "debit");
    assert_eq!(ok("5200828282828210").funding, "debit");
    assert_eq!(ok("4242424242424242").funding, "credit");
    assert_eq!(ok("378282246310005").funding, "credit");
    assert_eq!(ok("1234567890123452").funding, "unknown");
}

#[test]
fn number_errors() {
    use CardValidationError::IncorrectNumber;
    let e = |n: &str| validate_card(&input(n, 12, 2034, "123"), 2025, 6);
    assert_eq!(e("4242424242424241"), Err(IncorrectNumber));
    assert_eq!(e("4242-4242-4242-4242"), Err(IncorrectNumber));
    assert_eq!(e("4242\t4242424242424242"), Err(IncorrectNumber));
    assert_eq!(e(""), Err(IncorrectNumber));
    assert_eq!(e("   "), Err(IncorrectNumber));
    // 11 digits, Luhn-valid.
    assert_eq!(e("79927398713"), Err(IncorrectNumber));
    // 20 digits, Luhn-valid.
    assert_eq!(e("00000000000000000000"), Err(IncorrectNumber));
    // 12 and 19 digits are accepted.
    assert!(e("000000000000").is_ok());
    assert!(e("0000000000000000000").is_ok());
    let v = e(" 4242 4242 4242 4242 ").unwrap();
    assert_eq!(v.pan.expose(), "4242424242424242");
    assert_eq!(v.exp_month, 12);
    assert_eq!(v.exp_year, 2034);
}

#[test]
fn expiry_errors() {
    use CardValidationError::*;
    let e = |m: i64, y: i64| validate_card(&input("4242424242424242", m, y, "123"), 2025, 6);
    assert_eq!(e(0, 2030), Err(InvalidExpiryMonth));
    assert_eq!(e(13, 2030), Err(InvalidExpiryMonth));
    assert_eq!(e(-1, 2030), Err(InvalidExpiryMonth));
    assert_eq!(e(256 + 1, 2030), Err(InvalidExpiryMonth));
    assert_eq!(e(1, 30), Err(InvalidExpiryYear));
    assert_eq!(e(1, 999), Err(InvalidExpiryYear));
    assert_eq!(e(1, 10000), Err(InvalidExpiryYear));
    assert_eq!(e(12, 2024), Err(InvalidExpiryYear));
    assert_eq!(e(5, 2025), Err(ExpiredCard));
    assert!(e(6, 2025).is_ok());
    assert!(e(1, 2026).is_ok());
    assert!(e(1, 9999).is_ok());
    // Order: month is checked before year.
    assert_eq!(e(13, 20), Err(InvalidExpiryMonth));
}

#[test]
fn cvc_errors() {
    use CardValidationError::InvalidCvc;
    let e = |n: &str, c: &str| validate_card(&input(n, 12, 2034, c), 2025, 6);
    assert!(e("4242424242424242", "000").is_ok());
    assert_eq!(e("4242424242424242", "1234"), Err(InvalidCvc));
    assert_eq!(e("4242424242424242", "12"), Err(InvalidCvc));
    assert_eq!(e("4242424242424242", "12a"), Err(InvalidCvc));
    assert_eq!(e("4242424242424242", ""), Err(InvalidCvc));
    assert!(e("378282246310005", "1234").is_ok());
    assert_eq!(e("378282246310005", "123"), Err(InvalidCvc));
    // Order: number before everything.
    assert_eq!(
        validate_card(&input("1", 13, 1, "x"), 2025, 6),
        Err(CardValidationError::IncorrectNumber)
    );
}

#[test]
fn error_metadata() {
    use CardValidationError::*;
    assert_eq!(IncorrectNumber.code(), "incorrect_number");
    assert_eq!(IncorrectNumber.param(), "payment_method[card][number]");
    assert_eq!(InvalidExpiryMonth.code(), "invalid_expiry_month");
    assert_eq!(
        InvalidExpiryMonth.param(),
        "payment_method[card][exp_month]"
    );
    assert_eq!(InvalidExpiryYear.code(), "invalid_expiry_year");
    assert_eq!(InvalidExpiryYear.param(), "payment_method[card][exp_year]");
    assert_eq!(ExpiredCard.code(), "expired_card");
    assert_eq!(ExpiredCard.param(), "payment_method[card][exp_month]");
    assert_eq!(InvalidCvc.code(), "invalid_cvc");
    assert_eq!(InvalidCvc.param(), "payment_method[card][cvc]");
    for e in [
        IncorrectNumber,
        InvalidExpiryMonth,
        InvalidExpiryYear,
        ExpiredCard,
        InvalidCvc,
    ] {
        assert_eq!(e.to_string(), e.message());
    }
}

#[test]
fn debug_hides_pan_and_cvc() {
    let i = input("4242424242424242", 12, 2034, "987");
    let dbg = format!("{i:?}");
    assert!(!dbg.contains("4242") && !dbg.contains("987"));
    let v = validate_card(&i, 2025, 6).unwrap();
    let dbg = format!("{v:?}");
    assert!(!dbg.contains("424242"));
    assert!(dbg.contains("last4"));
}

#[test]
fn fingerprints() {
    let a = fingerprint("4242424242424242", b"key-a");
    assert_eq!(a.len(), FINGERPRINT_LEN);
    assert!(a.bytes().all(|b| b.is_ascii_alphanumeric()));
    assert_eq!(a, fingerprint("4242424242424242", b"key-a"));
    assert_ne!(a, fingerprint("4242424242424242", b"key-b"));
    assert_ne!(a, fingerprint("4000056655665556", b"key-a"));
    assert_eq!(fingerprint("x", b"").len(), FINGERPRINT_LEN);
}

proptest! {
    #[test]
    fn appended_check_digit_is_valid(payload in "[0-9]{0,25}") {
        let d = luhn_check_digit(&payload).unwrap();
        let full = format!("{payload}{d}");
        prop_assert!(luhn_valid(&full));
    }

    #[test]
    fn changing_one_digit_breaks_luhn(payload in "[0-9]{1,25}", pos in any::<prop::sample::Index>(), delta in 1u8..=9) {
        let d = luhn_check_digit(&payload).unwrap();
        let mut bytes = format!("{payload}{d}").into_bytes();
        let i = pos.index(bytes.len());
        bytes[i] = b'0' + (bytes[i] - b'0' + delta) % 10;
        let changed = String::from_utf8(bytes).unwrap();
        prop_assert!(!luhn_valid(&changed));
    }

    #[test]
    fn validate_never_panics(n in "[0-9 a-]{0,25}", m in any::<i64>(), y in any::<i64>(), c in "[0-9a]{0,5}") {
        let _ = validate_card(&input(&n, m, y, &c), 2025, 6);
    }
}
