//! The balance transaction (`txn_`) as the API shows it, and the words it is made of: its
//! type, its status, its fee's parts. The rules that make one are in [`super`].
//!
//! Pure; depends on [`crate::money`].

use serde::{Deserialize, Serialize};

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
