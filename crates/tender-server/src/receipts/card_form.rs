//! The card fields of the receipt host's forms (the Checkout page, the hosted invoice page):
//! their markup, and what a posted form's fields make. Plain HTML inputs posted to Tender's own
//! origin; the number is never written back into a page.

use maud::{html, Markup};
use tender_core::card::CardInput;
use tender_core::secret::Secret;

/// The card fields of a posted form (each may be missing; the card's validation names what
/// is wrong). No `Debug`: the number is only ever held as a `Secret` once read.
#[derive(Default, serde::Deserialize)]
pub(super) struct CardFields {
    card_number: Option<String>,
    card_expiry: Option<String>,
    card_cvc: Option<String>,
}

impl CardFields {
    /// Whether a card was typed at all.
    pub(super) fn given(&self) -> bool {
        self.card_number
            .as_deref()
            .is_some_and(|n| !n.trim().is_empty())
    }

    pub(super) fn card(self) -> CardInput {
        let (exp_month, exp_year) = expiry(self.card_expiry.as_deref().unwrap_or_default());
        CardInput {
            number: Secret::new(self.card_number.unwrap_or_default()),
            exp_month,
            exp_year,
            cvc: Secret::new(self.card_cvc.unwrap_or_default()),
        }
    }
}

/// The three inputs, `required` when the form is only a card.
pub(super) fn fields(required: bool) -> Markup {
    html! {
        label for="card_number" { "Card number" }
        input #card_number name="card_number" inputmode="numeric" autocomplete="cc-number" placeholder="1234 1234 1234 1234" maxlength="23" required[required];
        div.row {
            div {
                label for="card_expiry" { "Expiry" }
                input #card_expiry name="card_expiry" inputmode="numeric" autocomplete="cc-exp" placeholder="MM / YY" maxlength="9" required[required];
            }
            div {
                label for="card_cvc" { "CVC" }
                input #card_cvc name="card_cvc" inputmode="numeric" autocomplete="cc-csc" placeholder="123" maxlength="4" required[required];
            }
        }
    }
}

/// The fields' style, for a page that shows them.
pub(super) const STYLE: &str = "label{display:block;font-size:.9rem;font-weight:600;margin:.9rem 0 .3rem}\
input{width:100%;box-sizing:border-box;font-size:1rem;padding:.65rem .75rem;border:1px solid #bbb;border-radius:8px;background:#fff}\
input:focus{outline:2px solid #3b5bdb;border-color:#3b5bdb}.row{display:grid;grid-template-columns:1fr 1fr;gap:.75rem}\
.notice{background:#fdecea;color:#8a1c1c;border-radius:8px;padding:.6rem .8rem;margin:.8rem 0 0}";

/// `MM / YY`, `MM/YYYY`, `MMYY` → `(month, four-digit year)`; `(0, 0)` when unreadable, which
/// the card's validation names.
fn expiry(raw: &str) -> (i64, i64) {
    let digits: Vec<&str> = raw
        .split(|c: char| !c.is_ascii_digit())
        .filter(|p| !p.is_empty())
        .collect();
    let (month, year) = match digits.as_slice() {
        [m, y] => (m.to_string(), y.to_string()),
        [all] if all.len() == 4 || all.len() == 6 => (all[..2].to_string(), all[2..].to_string()),
        _ => return (0, 0),
    };
    let (Ok(month), Ok(year)) = (month.parse::<i64>(), year.parse::<i64>()) else {
        return (0, 0);
    };
    let year = if (0..100).contains(&year) {
        2000 + year
    } else {
        year
    };
    (month, year)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_expiry_is_read_as_people_type_it() {
        assert_eq!(expiry("12 / 34"), (12, 2034));
        assert_eq!(expiry("07/2031"), (7, 2031));
        assert_eq!(expiry("0731"), (7, 2031));
        assert_eq!(expiry("072031"), (7, 2031));
        assert_eq!(expiry("soon"), (0, 0));
        assert_eq!(expiry(""), (0, 0));
    }
}
