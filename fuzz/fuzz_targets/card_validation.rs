//! Card validation (`validate_card`, `luhn_valid`, `luhn_check_digit`, `brand_of`) on arbitrary
//! input: the number is the input text (lossy UTF-8) after a 4-byte header giving the expiry
//! month, year offset and CVC length.
//!
//! Invariants: nothing panics; a validated card is 12–19 digits, passes Luhn, keeps its last
//! four, has the brand `brand_of` gives and a CVC of the brand's length; the Luhn check digit
//! always completes a payload; `Debug` never shows the number.

#![no_main]

use libfuzzer_sys::fuzz_target;
use tender_core::card::{
    brand_of, luhn_check_digit, luhn_valid, validate_card, CardBrand, CardInput,
};
use tender_core::secret::Secret;

fuzz_target!(|data: &[u8]| {
    if data.len() < 4 {
        return;
    }
    let (head, rest) = data.split_at(4);
    let number = String::from_utf8_lossy(rest).into_owned();
    let exp_month = i64::from(head[0] as i8);
    let exp_year = 2000 + i64::from(head[1] as i8) * 40;
    let cvc: String = "0123456789"
        .chars()
        .cycle()
        .take(usize::from(head[2] % 6))
        .collect();
    let cvc = if head[3] & 1 == 1 {
        format!("{cvc}x")
    } else {
        cvc
    };

    let luhn = luhn_valid(&number);
    let _ = brand_of(&number);
    if let Some(d) = luhn_check_digit(&number) {
        assert!(luhn_valid(&format!("{number}{d}")));
    }

    let input = CardInput {
        number: Secret::new(number.clone()),
        exp_month,
        exp_year,
        cvc: Secret::new(cvc.clone()),
    };
    if let Ok(card) = validate_card(&input, 2026, 11) {
        let pan = card.pan.expose();
        assert!((12..=19).contains(&pan.len()));
        assert!(pan.bytes().all(|b| b.is_ascii_digit()));
        assert!(luhn_valid(pan));
        assert_eq!(pan, number.replace(' ', ""));
        assert!(luhn || number.contains(' '));
        assert_eq!(card.last4, &pan[pan.len() - 4..]);
        assert_eq!(card.brand, brand_of(pan));
        assert_eq!(cvc.len(), if card.brand == CardBrand::Amex { 4 } else { 3 });
        assert!((1..=12).contains(&card.exp_month));
        assert!((card.exp_year, card.exp_month) >= (2026, 11));
        assert!(!format!("{card:?}").contains(pan));
    }
});
