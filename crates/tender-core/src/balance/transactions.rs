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
//! | [`payout_failure`]     | `payout_failure` +amount, available  | payouts in transit → available           |
//! | [`dispute`]            | `adjustment` −amount, dispute fee    | available → disputes (amount) + fees     |
//! | [`dispute_won`]        | `adjustment` +amount, 0              | disputes → available                     |
//! | [`dispute_lost`]       | —                                    | disputes → external                      |
//!
//! So the ledger's `pending` and `available` accounts always equal the sum of `net` of the
//! transactions of that status (what `GET /balance` shows), and each cause posts once (the
//! store keeps one posting per cause).
//!
//! Money a connector's processor holds (CONTRACT §15: a payment the processor captured and
//! booked, with its own fee) moves through the processor's accounts instead of Tender's:
//! `processor_pending` and `processor_available` stand for `pending` and `available` in the
//! charge, availability, refund and refund-failure rows, and the transaction names the
//! connector (`connector`). Payouts and disputes move only what Tender holds.
//!
//! Pure; depends on [`crate::balance::ledger`], [`crate::money`], [`crate::metadata`].

use serde::{Deserialize, Serialize};

use crate::balance::ledger::{Entry, LedgerAccount, Posting, PostingError};
use crate::money::Currency;

/// What kind of movement a balance transaction is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TxnType {
    Charge,
    Refund,
    /// A refund the processor refused after it was booked: the amount comes back.
    RefundFailure,
    Adjustment,
    Payout,
    PayoutFailure,
}

impl TxnType {
    pub const ALL: [TxnType; 6] = [
        TxnType::Charge,
        TxnType::Refund,
        TxnType::RefundFailure,
        TxnType::Adjustment,
        TxnType::Payout,
        TxnType::PayoutFailure,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            TxnType::Charge => "charge",
            TxnType::Refund => "refund",
            TxnType::RefundFailure => "refund_failure",
            TxnType::Adjustment => "adjustment",
            TxnType::Payout => "payout",
            TxnType::PayoutFailure => "payout_failure",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.as_str() == s)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TxnStatus {
    Pending,
    Available,
}

impl TxnStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            TxnStatus::Pending => "pending",
            TxnStatus::Available => "available",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FeeType {
    TenderFee,
    DisputeFee,
    /// The processor's own fee for a connector's payment, as its balance transaction says.
    ProcessorFee,
}

/// One part of a transaction's fee.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FeeDetail {
    pub amount: i64,
    pub currency: Currency,
    #[serde(rename = "type")]
    pub kind: FeeType,
    pub description: String,
}

/// A balance transaction (`txn_…`): one movement of the merchant's balance. Stored as shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BalanceTransaction {
    pub id: String,
    pub object: String,
    /// Signed: money leaving the balance is negative.
    pub amount: i64,
    pub currency: Currency,
    pub fee: i64,
    pub fee_details: Vec<FeeDetail>,
    /// `amount − fee`.
    pub net: i64,
    #[serde(rename = "type")]
    pub kind: TxnType,
    pub status: TxnStatus,
    pub available_on: i64,
    /// The object that caused it (`pay_`, `re_`, `po_`, `dp_`).
    pub source: String,
    /// The connector (`conn_…`) whose processor holds the money it moves (CONTRACT §15);
    /// absent when Tender holds it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connector: Option<String>,
    pub reporting_category: String,
    pub description: Option<String>,
    pub created: i64,
    pub livemode: bool,
}

impl crate::documents::document::Document for BalanceTransaction {
    const COLLECTION: crate::store::Collection = crate::store::Collection::BalanceTransactions;

    fn id(&self) -> &str {
        &self.id
    }

    fn created(&self) -> i64 {
        self.created
    }

    fn index(&self) -> crate::store::IndexValues {
        use crate::store::IndexValues;
        IndexValues {
            event_type: Some(self.kind.as_str().to_string()),
            source: Some(self.source.clone()),
            payout: matches!(self.kind, TxnType::Payout | TxnType::PayoutFailure)
                .then(|| self.source.clone()),
            currency: Some(self.currency.code().to_string()),
            status: Some(self.status.as_str().to_string()),
            available_on: Some(self.available_on),
            ..IndexValues::default()
        }
    }
}

impl BalanceTransaction {
    /// The cause of the posting that makes this pending charge available.
    pub fn available_cause(&self) -> String {
        format!("available:{}", self.id)
    }
}

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
    let fee_details = if fee.amount == 0 {
        Vec::new()
    } else {
        vec![FeeDetail {
            amount: fee.amount,
            currency,
            kind: fee.kind,
            description: fee.description.into(),
        }]
    };
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
        LedgerAccount::Available,
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

/// A payout failed or was canceled: its amount comes back to the available balance.
pub fn payout_failure(
    at: At<'_>,
    payout: &str,
    currency: Currency,
    amount: i64,
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
        LedgerAccount::PayoutsInTransit,
        LedgerAccount::Available,
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
    let fee_details = if fee == 0 {
        Vec::new()
    } else {
        vec![FeeDetail {
            amount: fee,
            currency,
            kind: FeeType::DisputeFee,
            description: "Dispute fee".into(),
        }]
    };
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

// ---- Payouts ---------------------------------------------------------------------------------

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
