//! What Tender charges a merchant (CONTRACT §9): an account's [`Pricing`] and the fee of a
//! captured card payment, a settled bank transfer and a dispute. Fees are computed once, when
//! the money moves, and kept with that movement: a later change of pricing changes no existing
//! transaction.
//!
//! Percentages are kept in basis points (2.9% = 290), and a percentage fee is rounded half up to
//! the currency's minor unit. Pure.

use std::fmt;

/// An account's prices. Stored on the account as JSON ([`Pricing::encode`]); a field missing
/// from what is stored takes its default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Pricing {
    /// Cards: this share of the captured amount (basis points)…
    pub card_bps: i64,
    /// …plus this, in minor units.
    pub card_fixed: i64,
    /// Bank transfers: this share of the amount (basis points)…
    pub bank_transfer_bps: i64,
    /// …at most this, in minor units.
    pub bank_transfer_cap: i64,
    /// A dispute, in minor units.
    pub dispute: i64,
}

impl Default for Pricing {
    /// CONTRACT §9: cards 2.9% + 30, bank transfers 0.8% capped at 500, disputes 1,500.
    fn default() -> Self {
        Self {
            card_bps: 290,
            card_fixed: 30,
            bank_transfer_bps: 80,
            bank_transfer_cap: 500,
            dispute: 1500,
        }
    }
}

/// `bps` of `amount`, rounded half up. Computed in `i128` and saturated: whatever amount
/// reaches it, it never wraps (release builds would wrap an `i64` silently).
fn share(amount: i64, bps: i64) -> i64 {
    let exact = (i128::from(amount) * i128::from(bps) + 5_000).div_euclid(10_000);
    exact.clamp(i64::MIN.into(), i64::MAX.into()) as i64
}

impl Pricing {
    /// The form kept on the account.
    pub fn encode(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Reads what [`Pricing::encode`] wrote; `None` when it cannot be read.
    pub fn decode(stored: &str) -> Option<Self> {
        serde_json::from_str(stored).ok()
    }

    /// What `tender accounts pricing` prints: `card 2.9%+30, bank transfer 0.8%/500, dispute 1500`.
    pub fn describe(&self) -> String {
        let pct = |bps: i64| {
            let (whole, frac) = (bps / 100, bps % 100);
            match frac {
                0 => format!("{whole}%"),
                f if f % 10 == 0 => format!("{whole}.{}%", f / 10),
                f => format!("{whole}.{f:02}%"),
            }
        };
        format!(
            "card {}+{}, bank transfer {}/{}, dispute {}",
            pct(self.card_bps),
            self.card_fixed,
            pct(self.bank_transfer_bps),
            self.bank_transfer_cap,
            self.dispute
        )
    }

    /// Reads the dispute fee as `tender accounts pricing --dispute` takes it: `1500`.
    pub fn parse_dispute(s: &str) -> Result<i64, PricingError> {
        parse_minor(s)
    }

    /// The fee of a card payment that captured `amount`.
    pub fn card_fee(&self, amount: i64) -> i64 {
        share(amount, self.card_bps).saturating_add(self.card_fixed)
    }

    /// The fee of a bank transfer of `amount`.
    pub fn bank_transfer_fee(&self, amount: i64) -> i64 {
        share(amount, self.bank_transfer_bps).min(self.bank_transfer_cap)
    }

    /// Reads the card price as `tender accounts pricing --card` takes it: `2.9%+30`.
    pub fn parse_card(s: &str) -> Result<(i64, i64), PricingError> {
        let (pct, fixed) = s
            .split_once('+')
            .ok_or(PricingError("expected PERCENT%+FIXED, e.g. 2.9%+30"))?;
        Ok((parse_bps(pct)?, parse_minor(fixed)?))
    }

    /// Reads the bank transfer price: `0.8%/500` (a percentage capped at an amount).
    pub fn parse_bank_transfer(s: &str) -> Result<(i64, i64), PricingError> {
        let (pct, cap) = s
            .split_once('/')
            .ok_or(PricingError("expected PERCENT%/CAP, e.g. 0.8%/500"))?;
        Ok((parse_bps(pct)?, parse_minor(cap)?))
    }
}

/// A price that could not be read, and what was expected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PricingError(pub &'static str);

impl fmt::Display for PricingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl std::error::Error for PricingError {}

/// `2.9%` → 290 basis points: at most two decimals, 0% to 100%.
fn parse_bps(s: &str) -> Result<i64, PricingError> {
    const WHAT: PricingError =
        PricingError("a percentage such as 2.9% (two decimals at most, 0% to 100%)");
    let digits = s.trim().strip_suffix('%').ok_or(WHAT)?;
    let (whole, frac) = digits.split_once('.').unwrap_or((digits, ""));
    if whole.is_empty()
        || whole.len() > 3
        || frac.len() > 2
        || !whole
            .bytes()
            .chain(frac.bytes())
            .all(|b| b.is_ascii_digit())
    {
        return Err(WHAT);
    }
    let whole: i64 = whole.parse().map_err(|_| WHAT)?;
    let frac: i64 = format!("{frac:0<2}").parse().map_err(|_| WHAT)?;
    let bps = whole * 100 + frac;
    if bps > 10_000 {
        return Err(WHAT);
    }
    Ok(bps)
}

/// A whole number of minor units, 0 to 99,999,999.
fn parse_minor(s: &str) -> Result<i64, PricingError> {
    const WHAT: PricingError = PricingError("a whole number of minor units, 0 to 99999999");
    let s = s.trim();
    if s.is_empty() || s.len() > 8 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(WHAT);
    }
    s.parse().map_err(|_| WHAT)
}

/// How long a process trusts the prices it read.
pub const PRICING_TTL_SECS: i64 = 5;

/// Prices read recently, by account.
#[derive(Default)]
pub struct PricingCache {
    entries: std::sync::Mutex<std::collections::HashMap<String, (i64, Pricing)>>,
}

impl PricingCache {
    pub(crate) fn get(&self, account: &str, now: i64) -> Option<Pricing> {
        let entries = self.entries.lock().ok()?;
        let (at, pricing) = entries.get(account)?;
        (now - at < PRICING_TTL_SECS).then_some(*pricing)
    }

    pub(crate) fn put(&self, account: &str, now: i64, pricing: Pricing) {
        if let Ok(mut entries) = self.entries.lock() {
            if entries.len() >= 10_000 {
                entries.clear();
            }
            entries.insert(account.to_string(), (now, pricing));
        }
    }

    pub(crate) fn forget(&self, account: &str) {
        if let Ok(mut entries) = self.entries.lock() {
            entries.remove(account);
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn fees_never_wrap_whatever_amount_reaches_them() {
        let p = Pricing::default();
        // i64::MAX × 290 wrapped to a fee of 30 before (T3-H1): now it is exact.
        assert_eq!(p.card_fee(i64::MAX), 267_477_789_068_788_498 + 30);
        assert!(p.card_fee(i64::MIN) < 0);
        let greedy = Pricing {
            card_bps: 20_000,
            card_fixed: i64::MAX,
            ..p
        };
        assert_eq!(greedy.card_fee(i64::MAX), i64::MAX);
        assert_eq!(p.bank_transfer_fee(i64::MAX), p.bank_transfer_cap);
    }

    #[test]
    fn default_fees_round_half_up() {
        let p = Pricing::default();
        // (amount, card fee, bank transfer fee)
        for (amount, card, bank) in [
            (1000, 59, 8),            // 29 + 30; 8
            (2000, 88, 16),           // 58 + 30
            (50, 31, 0),              // 1.45 → 1, + 30; 0.4 → 0
            (1017, 59, 8),            // 29.493 → 29; 8.136 → 8
            (1724, 80, 14),           // 49.996 → 50; 13.792 → 14
            (250, 37, 2),             // 7.25 → 7; 2.0
            (1_000_000, 29_030, 500), // the bank cap
            (99_999_999, 2_900_030, 500),
        ] {
            assert_eq!(p.card_fee(amount), card, "card {amount}");
            assert_eq!(p.bank_transfer_fee(amount), bank, "bank {amount}");
        }
        // Exactly half rounds up: 50% of 3 is 1.5 → 2, of 1 is 0.5 → 1.
        let half = Pricing {
            card_bps: 5_000,
            card_fixed: 0,
            ..Pricing::default()
        };
        assert_eq!(half.card_fee(3), 2);
        assert_eq!(half.card_fee(1), 1);
        assert_eq!(Pricing::default().dispute, 1500);
    }

    #[test]
    fn prices_are_kept_and_described() {
        let p = Pricing {
            card_bps: 125,
            card_fixed: 0,
            bank_transfer_bps: 80,
            bank_transfer_cap: 500,
            dispute: 2000,
        };
        assert_eq!(Pricing::decode(&p.encode()), Some(p));
        assert_eq!(Pricing::decode("{}"), Some(Pricing::default()));
        assert_eq!(Pricing::decode("not json"), None);
        assert_eq!(
            Pricing::default().describe(),
            "card 2.9%+30, bank transfer 0.8%/500, dispute 1500"
        );
        assert_eq!(
            p.describe(),
            "card 1.25%+0, bank transfer 0.8%/500, dispute 2000"
        );
    }

    #[test]
    fn prices_are_read_as_the_cli_takes_them() {
        assert_eq!(Pricing::parse_card("2.9%+30"), Ok((290, 30)));
        assert_eq!(Pricing::parse_card("1.25%+0"), Ok((125, 0)));
        assert_eq!(Pricing::parse_card("3%+25"), Ok((300, 25)));
        assert_eq!(Pricing::parse_bank_transfer("0.8%/500"), Ok((80, 500)));
        for bad in [
            "2.9+30",
            "2.9%",
            "2.999%+30",
            "-1%+30",
            "101%+0",
            "2.9%+-3",
            "%+30",
            "2.9%+1e3",
        ] {
            assert!(Pricing::parse_card(bad).is_err(), "{bad}");
        }
        for bad in ["0.8%", "0.8%/x", "0.8/500"] {
            assert!(Pricing::parse_bank_transfer(bad).is_err(), "{bad}");
        }
    }
}
