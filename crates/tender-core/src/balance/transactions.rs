//! The merchant's balance as the API shows it (CONTRACT §9): balance transactions (`txn_`),
//! payouts (`po_`) and disputes (`dp_`), and every movement of money between them as the
//! [`Booking`] that records it — the transaction a merchant sees and the ledger posting under
//! it, built together so that they cannot disagree.
//!
//! The rules, one function each (table-tested below):
//!
//! | cause                  | transaction (amount, fee, status)    | posting                                  |
//! |------------------------|--------------------------------------|------------------------------------------|
//! | [`charge`]             | `charge` +captured, fee, pending     | external → pending (net) + fees (fee)    |
//! | [`make_available`]     | (the charge becomes `available`)     | pending → available (net)                |
//! | [`refund`]             | `refund` −amount, 0, available       | available → external                     |
//! | [`refund_failure`]     | `refund_failure` +amount, available  | external → available                     |
//! | [`payout`]             | `payout` −amount, available          | available → payouts in transit           |
//! | [`payout_paid`]        | —                                    | payouts in transit → external            |
//! | [`payout_failure`]     | `payout_failure` +amount, available  | payouts in transit (external if paid) → available |
//! | [`dispute`]            | `adjustment` −amount, dispute fee    | available → disputes (amount) + fees     |
//! | [`dispute_won`]        | `adjustment` +amount, 0              | disputes → available                     |
//! | [`dispute_lost`]       | —                                    | disputes → external                      |
//! | [`processor_dispute`]  | `adjustment` ±amount, its fee        | disputes ↔ processor available + fees    |
//!
//! So the ledger's `pending` and `available` accounts always equal the sum of `net` of the
//! transactions of that status (what `GET /balance` shows), and each cause posts once (the
//! store keeps one posting per cause).
//!
//! Money a connector's processor holds (CONTRACT §15: a payment the processor captured and
//! booked, with its own fee) moves through the processor's accounts instead of Tender's:
//! `processor_pending` and `processor_available` stand for `pending` and `available` in the
//! charge, availability, refund, refund-failure and payout rows, and the transaction names the
//! connector (`connector`). A dispute opened at the processor books each of the processor's own
//! transactions of it as it is ([`processor_dispute`]: the withdrawal with its fee, then any
//! reinstatement).
//!
//! The transaction object itself, and its types and statuses, are in [`object`].
//!
//! Pure; depends on [`crate::balance::ledger`], [`crate::money`], [`crate::metadata`].

use crate::balance::ledger::{Entry, LedgerAccount, Posting, PostingError};
use crate::money::Currency;

pub use object::{BalanceTransaction, FeeDetail, FeeType, TxnStatus, TxnType};

/// A booking: the transaction a merchant sees (if the movement shows on the balance) and the
/// posting under it (if anything moves: a zero-amount change posts nothing).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Booking {
    pub transaction: Option<BalanceTransaction>,
    pub posting: Option<Posting>,
}

/// Who a movement is for, and when.
#[derive(Debug, Clone, Copy)]
pub struct At<'a> {
    /// The new transaction's id (`txn_…`), when the movement shows on the balance.
    pub txn_id: &'a str,
    pub now: i64,
    pub livemode: bool,
    /// The connector whose processor holds the money moved; `None`: Tender holds it.
    pub held_by: Option<&'a str>,
}

/// Where money `held_by` a processor (or Tender, `None`) is pending.
fn pending_of(held_by: Option<&str>) -> LedgerAccount {
    match held_by {
        Some(_) => LedgerAccount::ProcessorPending,
        None => LedgerAccount::Pending,
    }
}

/// Where money `held_by` a processor (or Tender, `None`) is available.
fn available_of(held_by: Option<&str>) -> LedgerAccount {
    match held_by {
        Some(_) => LedgerAccount::ProcessorAvailable,
        None => LedgerAccount::Available,
    }
}

/// A fee as a charge books it.
#[derive(Debug, Clone, Copy)]
pub struct Fee<'a> {
    pub amount: i64,
    pub kind: FeeType,
    pub description: &'a str,
}

impl Fee<'_> {
    /// The transaction's fee details: this fee, or none when it is zero.
    fn details(&self, currency: Currency) -> Vec<FeeDetail> {
        if self.amount == 0 {
            return Vec::new();
        }
        vec![FeeDetail {
            amount: self.amount,
            currency,
            kind: self.kind,
            description: self.description.into(),
        }]
    }
}

/// A posting of the non-zero `entries` for `cause`; `None` when nothing moves.
fn posting(cause: String, now: i64, entries: Vec<Entry>) -> Result<Option<Posting>, PostingError> {
    let entries: Vec<Entry> = entries.into_iter().filter(|e| e.amount != 0).collect();
    if entries.is_empty() {
        return Ok(None);
    }
    Posting::new(cause, now, entries).map(Some)
}

fn entry(account: LedgerAccount, currency: Currency, amount: i64) -> Entry {
    Entry {
        account,
        currency,
        amount,
    }
}

#[allow(clippy::too_many_arguments)]
fn transaction(
    at: At<'_>,
    kind: TxnType,
    amount: i64,
    currency: Currency,
    fee_details: Vec<FeeDetail>,
    status: TxnStatus,
    available_on: i64,
    source: &str,
    reporting_category: &str,
    description: Option<String>,
) -> BalanceTransaction {
    let fee: i64 = fee_details.iter().map(|f| f.amount).sum();
    BalanceTransaction {
        id: at.txn_id.to_string(),
        object: "balance_transaction".into(),
        amount,
        currency,
        fee,
        fee_details,
        net: amount - fee,
        kind,
        status,
        available_on,
        source: source.to_string(),
        connector: at.held_by.map(str::to_string),
        reporting_category: reporting_category.into(),
        description,
        created: at.now,
        livemode: at.livemode,
    }
}

/// A captured payment (`payment`), or a settled bank transfer: `captured` in, less `fee`,
/// pending until `available_on`.
pub fn charge(
    at: At<'_>,
    payment: &str,
    currency: Currency,
    captured: i64,
    fee: Fee<'_>,
    available_on: i64,
) -> Result<Booking, PostingError> {
    let fee_details = fee.details(currency);
    let fee = fee.amount;
    let txn = transaction(
        at,
        TxnType::Charge,
        captured,
        currency,
        fee_details,
        TxnStatus::Pending,
        available_on,
        payment,
        "charge",
        Some(format!("Payment {payment}")),
    );
    let posting = posting(
        format!("charge:{payment}"),
        at.now,
        vec![
            entry(LedgerAccount::External, currency, -captured),
            entry(pending_of(at.held_by), currency, txn.net),
            entry(LedgerAccount::Fees, currency, fee),
        ],
    )?;
    Ok(Booking {
        transaction: Some(txn),
        posting,
    })
}

/// A pending charge's money becomes available: the transaction as it is now, and the posting.
pub fn make_available(
    txn: &BalanceTransaction,
    now: i64,
) -> Result<(BalanceTransaction, Option<Posting>), PostingError> {
    let mut after = txn.clone();
    after.status = TxnStatus::Available;
    let posting = posting(
        txn.available_cause(),
        now,
        vec![
            entry(pending_of(txn.connector.as_deref()), txn.currency, -txn.net),
            entry(
                available_of(txn.connector.as_deref()),
                txn.currency,
                txn.net,
            ),
        ],
    )?;
    Ok((after, posting))
}

/// Money leaving the available balance for the outside world at once (a refund, a payout) or
/// coming back to it: one transaction and a transfer between `from` and `to`.
#[allow(clippy::too_many_arguments)]
fn transfer(
    at: At<'_>,
    cause: &str,
    kind: TxnType,
    signed_amount: i64,
    currency: Currency,
    source: &str,
    category: &str,
    description: Option<String>,
    from: LedgerAccount,
    to: LedgerAccount,
) -> Result<Booking, PostingError> {
    let moved = signed_amount.abs();
    let txn = transaction(
        at,
        kind,
        signed_amount,
        currency,
        Vec::new(),
        TxnStatus::Available,
        at.now,
        source,
        category,
        description,
    );
    let posting = posting(
        format!("{cause}:{source}"),
        at.now,
        vec![entry(from, currency, -moved), entry(to, currency, moved)],
    )?;
    Ok(Booking {
        transaction: Some(txn),
        posting,
    })
}

/// A refund (`refund`) of `amount`: out of the available balance at once.
pub fn refund(
    at: At<'_>,
    refund: &str,
    payment: &str,
    currency: Currency,
    amount: i64,
) -> Result<Booking, PostingError> {
    transfer(
        at,
        "refund",
        TxnType::Refund,
        -amount,
        currency,
        refund,
        "refund",
        Some(format!("Refund of payment {payment}")),
        available_of(at.held_by),
        LedgerAccount::External,
    )
}

/// A booked refund the processor refused: the amount comes back.
pub fn refund_failure(
    at: At<'_>,
    refund: &str,
    currency: Currency,
    amount: i64,
) -> Result<Booking, PostingError> {
    transfer(
        at,
        "refund_failure",
        TxnType::RefundFailure,
        amount,
        currency,
        refund,
        "refund_failure",
        Some(format!("Refund {refund} failed")),
        LedgerAccount::External,
        available_of(at.held_by),
    )
}

/// A payout (`payout`) of `amount` leaves the available balance at once.
pub fn payout(
    at: At<'_>,
    payout: &str,
    currency: Currency,
    amount: i64,
) -> Result<Booking, PostingError> {
    transfer(
        at,
        "payout",
        TxnType::Payout,
        -amount,
        currency,
        payout,
        "payout",
        Some(format!("Payout {payout}")),
        available_of(at.held_by),
        LedgerAccount::PayoutsInTransit,
    )
}

/// A payout reached the bank: the money leaves the ledger (no transaction: the balance moved
/// when it was created).
pub fn payout_paid(
    now: i64,
    payout: &str,
    currency: Currency,
    amount: i64,
) -> Result<Option<Posting>, PostingError> {
    posting(
        format!("payout_paid:{payout}"),
        now,
        vec![
            entry(LedgerAccount::PayoutsInTransit, currency, -amount),
            entry(LedgerAccount::External, currency, amount),
        ],
    )
}

/// A payout failed or was canceled: its amount comes back to the available balance (from the
/// bank, `after_paid`, when a processor's payout fails after it was paid).
pub fn payout_failure(
    at: At<'_>,
    payout: &str,
    currency: Currency,
    amount: i64,
    after_paid: bool,
) -> Result<Booking, PostingError> {
    transfer(
        at,
        "payout_failure",
        TxnType::PayoutFailure,
        amount,
        currency,
        payout,
        "payout_reversal",
        Some(format!("Payout {payout} returned")),
        if after_paid {
            LedgerAccount::External
        } else {
            LedgerAccount::PayoutsInTransit
        },
        available_of(at.held_by),
    )
}

/// A dispute (`dispute`) of `amount` withholds it, and its `fee` is charged, at once.
pub fn dispute(
    at: At<'_>,
    dispute: &str,
    payment: &str,
    currency: Currency,
    amount: i64,
    fee: i64,
) -> Result<Booking, PostingError> {
    let fee_details = Fee {
        amount: fee,
        kind: FeeType::DisputeFee,
        description: "Dispute fee",
    }
    .details(currency);
    let txn = transaction(
        at,
        TxnType::Adjustment,
        -amount,
        currency,
        fee_details,
        TxnStatus::Available,
        at.now,
        dispute,
        "dispute",
        Some(format!("Chargeback withdrawal for {payment}")),
    );
    let posting = posting(
        format!("dispute:{dispute}"),
        at.now,
        vec![
            entry(LedgerAccount::Available, currency, txn.net),
            entry(LedgerAccount::Disputes, currency, amount),
            entry(LedgerAccount::Fees, currency, fee),
        ],
    )?;
    Ok(Booking {
        transaction: Some(txn),
        posting,
    })
}

/// A won dispute gives the withheld amount back (the fee is kept).
pub fn dispute_won(
    at: At<'_>,
    dispute: &str,
    payment: &str,
    currency: Currency,
    amount: i64,
) -> Result<Booking, PostingError> {
    transfer(
        at,
        "dispute_won",
        TxnType::Adjustment,
        amount,
        currency,
        dispute,
        "dispute_reversal",
        Some(format!("Chargeback reversal for {payment}")),
        LedgerAccount::Disputes,
        LedgerAccount::Available,
    )
}

/// A lost dispute: the withheld amount goes to the cardholder (no transaction: the balance
/// moved when the dispute opened).
pub fn dispute_lost(
    now: i64,
    dispute: &str,
    currency: Currency,
    amount: i64,
) -> Result<Option<Posting>, PostingError> {
    posting(
        format!("dispute_lost:{dispute}"),
        now,
        vec![
            entry(LedgerAccount::Disputes, currency, -amount),
            entry(LedgerAccount::External, currency, amount),
        ],
    )
}

/// The processor's transaction number `index` of a dispute it opened (`dispute`), booked as
/// the processor booked it: `amount` (negative when withdrawn, positive when reinstated) and
/// its `fee` (the processor's dispute fee; negative when it gives it back), between the
/// processor's available balance and the disputes account.
pub fn processor_dispute(
    at: At<'_>,
    dispute: &str,
    index: usize,
    currency: Currency,
    fee: Fee<'_>,
    amount: i64,
) -> Result<Booking, PostingError> {
    let fee_details = fee.details(currency);
    let fee = fee.amount;
    let (category, description) = if amount < 0 {
        ("dispute", format!("Chargeback withdrawal for {dispute}"))
    } else {
        (
            "dispute_reversal",
            format!("Chargeback reversal for {dispute}"),
        )
    };
    let txn = transaction(
        at,
        TxnType::Adjustment,
        amount,
        currency,
        fee_details,
        TxnStatus::Available,
        at.now,
        dispute,
        category,
        Some(description),
    );
    let posting = posting(
        format!("processor_dispute:{dispute}:{index}"),
        at.now,
        vec![
            entry(available_of(at.held_by), currency, txn.net),
            entry(LedgerAccount::Disputes, currency, -amount),
            entry(LedgerAccount::Fees, currency, fee),
        ],
    )?;
    Ok(Booking {
        transaction: Some(txn),
        posting,
    })
}

mod object;

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
