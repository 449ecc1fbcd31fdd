//! IBAN validation on arbitrary text.
//!
//! Invariants: nothing panics; an accepted IBAN is upper-case alphanumeric without spaces, has
//! its country's registry length and two check digits that `check_digits` recomputes, keeps its
//! last four, and `Debug` does not show it; validation is idempotent on the normalised form.

#![no_main]

use libfuzzer_sys::fuzz_target;
use tender_core::validate::iban;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(v) = iban::validate(text) {
        let n = v.normalized.expose();
        assert!(n
            .bytes()
            .all(|b| b.is_ascii_digit() || b.is_ascii_uppercase()));
        assert_eq!(&n[..2], v.country);
        assert_eq!(iban::length_for(v.country), Some(n.len()));
        assert_eq!(
            iban::check_digits(v.country, &n[4..]).as_deref(),
            Some(&n[2..4])
        );
        assert_eq!(v.last4, &n[n.len() - 4..]);
        assert!(!format!("{v:?}").contains(n));
        let again = iban::validate(n).expect("the normalised form validates");
        assert_eq!(again, v);
    }
});
