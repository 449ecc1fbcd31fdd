//! The double-entry ledger under the money a merchant is owed (CONTRACT §9): the accounts money
//! sits in, and [`Posting`]s that move it.
//!
//! - Ledger accounts are kept per (merchant account, mode, currency): money the merchant will
//!   have ([`LedgerAccount::Pending`]), has ([`LedgerAccount::Available`]), paid in fees, sent
//!   on its way to a bank, withheld by disputes, and the outside world it came from and goes to
//!   ([`LedgerAccount::External`]); money a connector's processor holds for the merchant has
//!   its own pending and available accounts ([`LedgerAccount::ProcessorPending`],
//!   [`LedgerAccount::ProcessorAvailable`]): Tender pays out only what Tender holds.
//! - A [`Posting`] is immutable and balanced: its entries sum to zero in each currency. The only
//!   way to build one is [`Posting::new`], which checks that, so a store never sees an
//!   unbalanced posting. Corrections are new postings, never edits.
//! - A posting names its **cause** (`capture:pay_…`, `refund:re_…`, …): the store writes one
//!   posting per cause and scope, so a retried request or a replayed webhook that carries the
//!   same cause cannot post twice. It is written in the same batch as the change that causes it
//!   ([`crate::store::WriteOp::Post`]).
//!
//! Pure; depends on [`crate::money`].

use crate::money::Currency;

/// Where money sits, from the merchant's point of view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LedgerAccount {
    /// Captured, not yet available (until `available_on`).
    Pending,
    /// The merchant's to pay out.
    Available,
    /// What the merchant paid Tender in fees.
    Fees,
    /// Paid out, on its way to the merchant's bank.
    PayoutsInTransit,
    /// Withheld by open or lost disputes.
    Disputes,
    /// The world outside: cardholders, banks. Money enters and leaves the ledger through it.
    External,
    /// Captured through a connector, held by its processor, not yet available there
    /// (CONTRACT §15): the processor pays it out, never Tender.
    ProcessorPending,
    /// Held by a connector's processor, available there.
    ProcessorAvailable,
}

impl LedgerAccount {
    pub const ALL: [LedgerAccount; 8] = [
        LedgerAccount::Pending,
        LedgerAccount::Available,
        LedgerAccount::Fees,
        LedgerAccount::PayoutsInTransit,
        LedgerAccount::Disputes,
        LedgerAccount::External,
        LedgerAccount::ProcessorPending,
        LedgerAccount::ProcessorAvailable,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            LedgerAccount::Pending => "pending",
            LedgerAccount::Available => "available",
            LedgerAccount::Fees => "fees",
            LedgerAccount::PayoutsInTransit => "payouts_in_transit",
            LedgerAccount::Disputes => "disputes",
            LedgerAccount::External => "external",
            LedgerAccount::ProcessorPending => "processor_pending",
            LedgerAccount::ProcessorAvailable => "processor_available",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|a| a.as_str() == s)
    }
}

/// One line of a posting: `amount` minor units into `account` (negative: out of it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    pub account: LedgerAccount,
    pub currency: Currency,
    pub amount: i64,
}

/// The largest amount one entry may move (10^15 minor units): far above any payment (at most
/// 99,999,999) or payout, and low enough that no sum of a ledger's entries can reach `i64`'s
/// bounds in practice. An outside party's number beyond it never becomes a posting.
pub const MAX_ENTRY: i64 = 1_000_000_000_000_000;

/// Why a posting could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PostingError {
    #[error("a posting needs at least two entries")]
    TooFewEntries,
    #[error("an entry of zero moves nothing")]
    ZeroEntry,
    #[error("the entries in {0} do not sum to zero")]
    Unbalanced(&'static str),
    #[error("the amounts overflow")]
    Overflow,
    #[error("a posting's cause is 1 to 255 characters")]
    BadCause,
}

/// A balanced, immutable movement of money, identified by its cause.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Posting {
    cause: String,
    created: i64,
    entries: Vec<Entry>,
}

impl Posting {
    /// A posting of `entries` for `cause` at `created` (Unix seconds), if they balance in every
    /// currency.
    pub fn new(
        cause: impl Into<String>,
        created: i64,
        entries: Vec<Entry>,
    ) -> Result<Self, PostingError> {
        let cause = cause.into();
        if cause.is_empty() || cause.len() > 255 {
            return Err(PostingError::BadCause);
        }
        if entries.len() < 2 {
            return Err(PostingError::TooFewEntries);
        }
        let mut sums: Vec<(Currency, i64)> = Vec::new();
        for e in &entries {
            if e.amount == 0 {
                return Err(PostingError::ZeroEntry);
            }
            if !(-MAX_ENTRY..=MAX_ENTRY).contains(&e.amount) {
                return Err(PostingError::Overflow);
            }
            match sums.iter_mut().find(|(c, _)| *c == e.currency) {
                Some((_, sum)) => {
                    *sum = sum.checked_add(e.amount).ok_or(PostingError::Overflow)?;
                }
                None => sums.push((e.currency, e.amount)),
            }
        }
        if let Some((currency, _)) = sums.iter().find(|(_, sum)| *sum != 0) {
            return Err(PostingError::Unbalanced(currency.code()));
        }
        Ok(Self {
            cause,
            created,
            entries,
        })
    }

    /// A transfer of `amount` from `from` to `to`.
    pub fn transfer(
        cause: impl Into<String>,
        created: i64,
        currency: Currency,
        amount: i64,
        from: LedgerAccount,
        to: LedgerAccount,
    ) -> Result<Self, PostingError> {
        let negated = amount.checked_neg().ok_or(PostingError::Overflow)?;
        Self::new(
            cause,
            created,
            vec![
                Entry {
                    account: from,
                    currency,
                    amount: negated,
                },
                Entry {
                    account: to,
                    currency,
                    amount,
                },
            ],
        )
    }

    pub fn cause(&self) -> &str {
        &self.cause
    }

    pub fn created(&self) -> i64 {
        self.created
    }

    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// Which of the [`BALANCE_SHARDS`] rows of each balance this posting moves: a stable hash
    /// of its cause, so concurrent postings of one merchant spread over the rows (a store may
    /// lock a balance row until its transaction ends) and a balance is the sum of its shards.
    pub fn shard(&self) -> i16 {
        // FNV-1a: stable across builds and platforms, unlike the standard library's hasher.
        let mut h: u32 = 0x811c_9dc5;
        for b in self.cause.bytes() {
            h ^= u32::from(b);
            h = h.wrapping_mul(0x0100_0193);
        }
        (h % BALANCE_SHARDS as u32) as i16
    }
}

/// How many rows each balance is kept in ([`Posting::shard`]).
pub const BALANCE_SHARDS: i16 = 16;

/// The balance of one ledger account of a scope in one currency, as a store keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LedgerBalance {
    pub account: LedgerAccount,
    pub currency: Currency,
    pub amount: i64,
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn usd() -> Currency {
        Currency::parse("usd").unwrap()
    }

    fn eur() -> Currency {
        Currency::parse("eur").unwrap()
    }

    fn e(account: LedgerAccount, currency: Currency, amount: i64) -> Entry {
        Entry {
            account,
            currency,
            amount,
        }
    }

    #[test]
    fn a_posting_balances_in_every_currency_or_is_not_built() {
        use LedgerAccount::*;
        let capture = Posting::new(
            "capture:pay_1",
            0,
            vec![
                e(External, usd(), -1000),
                e(Pending, usd(), 941),
                e(Fees, usd(), 59),
            ],
        )
        .unwrap();
        assert_eq!(capture.entries().len(), 3);
        assert_eq!(capture.cause(), "capture:pay_1");
        assert_eq!(
            Posting::new(
                "x",
                0,
                vec![e(External, usd(), -1000), e(Pending, usd(), 999)]
            ),
            Err(PostingError::Unbalanced("usd"))
        );
        // Each currency on its own: usd and eur that happen to net out are still unbalanced.
        assert_eq!(
            Posting::new(
                "x",
                0,
                vec![e(External, usd(), -1000), e(Pending, eur(), 1000)]
            ),
            Err(PostingError::Unbalanced("usd"))
        );
        assert_eq!(
            Posting::new("x", 0, vec![e(External, usd(), 0), e(Pending, usd(), 0)]),
            Err(PostingError::ZeroEntry)
        );
        assert_eq!(
            Posting::new("x", 0, vec![e(External, usd(), 5)]),
            Err(PostingError::TooFewEntries)
        );
        assert_eq!(
            Posting::new("", 0, vec![e(External, usd(), -1), e(Pending, usd(), 1)]),
            Err(PostingError::BadCause)
        );
        assert_eq!(
            Posting::new(
                "x",
                0,
                vec![
                    e(External, usd(), i64::MAX),
                    e(Pending, usd(), 1),
                    e(Fees, usd(), -1)
                ]
            ),
            Err(PostingError::Overflow)
        );
        // Beyond what one entry may move, balanced or not.
        assert_eq!(
            Posting::transfer("x", 0, usd(), MAX_ENTRY + 1, Pending, Available),
            Err(PostingError::Overflow)
        );
        assert!(Posting::transfer("x", 0, usd(), MAX_ENTRY, Pending, Available).is_ok());
        assert_eq!(
            Posting::transfer("x", 0, usd(), i64::MIN, Pending, Available),
            Err(PostingError::Overflow)
        );
    }

    #[test]
    fn postings_spread_over_the_shards_by_cause_and_stably() {
        let p = |cause: &str| {
            Posting::transfer(
                cause,
                0,
                usd(),
                1,
                LedgerAccount::External,
                LedgerAccount::Pending,
            )
            .unwrap()
        };
        assert_eq!(p("capture:pay_1").shard(), p("capture:pay_1").shard());
        let shards: std::collections::HashSet<i16> = (0..200)
            .map(|i| p(&format!("capture:pay_{i}")).shard())
            .collect();
        assert_eq!(shards.len(), BALANCE_SHARDS as usize);
        assert!(shards.iter().all(|s| (0..BALANCE_SHARDS).contains(s)));
    }

    #[test]
    fn account_names_round_trip() {
        for a in LedgerAccount::ALL {
            assert_eq!(LedgerAccount::parse(a.as_str()), Some(a));
        }
        assert_eq!(LedgerAccount::parse("cash"), None);
    }

    proptest! {
        /// Whatever transfers are built, every posting sums to zero per currency, so the sum of
        /// all balances of a currency stays zero.
        #[test]
        fn transfers_keep_every_currency_summing_to_zero(
            moves in proptest::collection::vec((0usize..6, 0usize..6, 1i64..1_000_000_000, any::<bool>()), 1..50)
        ) {
            let mut balances = std::collections::HashMap::new();
            for (i, (from, to, amount, in_eur)) in moves.into_iter().enumerate() {
                let currency = if in_eur { eur() } else { usd() };
                let p = Posting::transfer(
                    format!("move:{i}"), 0, currency, amount,
                    LedgerAccount::ALL[from], LedgerAccount::ALL[to],
                ).unwrap();
                for entry in p.entries() {
                    *balances.entry((entry.account, entry.currency.code())).or_insert(0i64) += entry.amount;
                }
            }
            for code in ["usd", "eur"] {
                let sum: i64 = balances.iter().filter(|((_, c), _)| *c == code).map(|(_, v)| v).sum();
                prop_assert_eq!(sum, 0);
            }
        }
    }
}
