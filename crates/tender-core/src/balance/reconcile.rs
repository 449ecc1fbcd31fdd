//! Reconciliation with a processor (CONTRACT §15, `tender reports reconcile`): each of Tender's
//! balance transactions of the money a connector's processor holds, set beside the processor's
//! own balance transaction of the same movement, read back from it — a capture's by the id
//! Tender recorded when it booked it, a refund's through the processor's refund, a dispute's
//! by its place among the transactions of the processor's dispute, a payout's through the
//! processor's payout. A row agrees when amount, fee and net are equal to the cent; any other
//! row says why not. Reads only.
//!
//! Depends on the balance's transactions, payments, refunds and the connector port.

use crate::auth::Scope;
use crate::balance::disputes::Dispute;
use crate::balance::payouts::Payout;
use crate::balance::transactions::{BalanceTransaction, TxnType};
use crate::balance::BalanceBook;
use crate::connectors::connector::{bounded, Booked};
use crate::documents::document::from_body;
use crate::error::CoreResult;
use crate::payments::payment::Payment;
use crate::refunds::refund::Refund;
use crate::store::Collection;

/// One of Tender's transactions beside the processor's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reconciled {
    pub transaction: String,
    pub kind: TxnType,
    /// Tender's object that caused it (`pay_…`, `re_…`).
    pub source: String,
    /// Amount, fee and net as Tender booked them.
    pub tender: [i64; 3],
    /// The processor's transaction and its amount, fee and net, when it could be read.
    pub processor: Option<(String, [i64; 3])>,
    /// Why the two do not agree; `None` when they do.
    pub problem: Option<String>,
}

/// The header row of [`reconcile_csv`].
pub const RECONCILE_COLUMNS: [&str; 12] = [
    "transaction",
    "type",
    "source",
    "processor_transaction",
    "amount",
    "fee",
    "net",
    "processor_amount",
    "processor_fee",
    "processor_net",
    "agrees",
    "problem",
];

/// The rows as CSV, header first.
pub fn reconcile_csv(rows: &[Reconciled]) -> Vec<u8> {
    let mut w = csv::Writer::from_writer(Vec::new());
    // Writing to memory cannot fail; a row of strings always has the header's length.
    let _ = w.write_record(RECONCILE_COLUMNS);
    for r in rows {
        let theirs = r.processor.as_ref();
        let figure = |i: usize| theirs.map(|(_, f)| f[i].to_string()).unwrap_or_default();
        let _ = w.write_record([
            r.transaction.clone(),
            r.kind.as_str().to_string(),
            r.source.clone(),
            theirs.map(|(id, _)| id.clone()).unwrap_or_default(),
            r.tender[0].to_string(),
            r.tender[1].to_string(),
            r.tender[2].to_string(),
            figure(0),
            figure(1),
            figure(2),
            r.problem.is_none().to_string(),
            r.problem.clone().unwrap_or_default(),
        ]);
    }
    w.into_inner().unwrap_or_default()
}

impl BalanceBook<'_> {
    /// Tender's transactions held by `connector` created in [`from`, `to`), oldest first, each
    /// beside the processor's.
    pub async fn reconcile(
        &self,
        scope: &Scope,
        connector: &str,
        from: i64,
        to: i64,
    ) -> CoreResult<Vec<Reconciled>> {
        let processor = self.connectors().connector(scope, connector).await?;
        let range = crate::store::CreatedRange {
            gte: Some(from),
            lt: Some(to),
            ..Default::default()
        };
        let mut rows = Vec::new();
        for record in self
            .records_created(scope, Collection::BalanceTransactions, range)
            .await?
        {
            let t: BalanceTransaction = from_body(&record.id, &record.body)?;
            if t.connector.as_deref() != Some(connector) {
                continue;
            }
            let mut row = Reconciled {
                transaction: t.id.clone(),
                kind: t.kind,
                source: t.source.clone(),
                tender: [t.amount, t.fee, t.net],
                processor: None,
                problem: None,
            };
            row.problem = match self.processor_reference(scope, &t).await? {
                Err(why) => Some(why),
                Ok(lookup) => match processor.booking(lookup.booked()).await {
                    Err(why) => Some(format!(
                        "the processor's booking could not be read: {}",
                        bounded(&why)
                    )),
                    Ok(theirs) => {
                        let figures = [theirs.amount, theirs.fee, theirs.net];
                        row.processor = Some((theirs.reference, figures));
                        (figures != row.tender)
                            .then(|| "amount, fee or net differ from the processor's".to_string())
                    }
                },
            };
            rows.push(row);
        }
        Ok(rows)
    }

    /// How the processor names the movement of `t`, or why it cannot be looked up.
    async fn processor_reference(
        &self,
        scope: &Scope,
        t: &BalanceTransaction,
    ) -> CoreResult<Result<Lookup, String>> {
        Ok(match t.kind {
            TxnType::Charge => {
                let (payment, _): (Payment, i64) = self
                    .load(scope, Collection::Payments, "payment", &t.source)
                    .await?;
                payment
                    .processor_settlement
                    .map(|s| Lookup::Transaction(s.reference))
                    .ok_or_else(|| "Tender recorded no processor booking for it".to_string())
            }
            TxnType::Refund => {
                let (refund, _): (Refund, i64) = self
                    .load(scope, Collection::Refunds, "refund", &t.source)
                    .await?;
                refund
                    .connector_reference
                    .map(Lookup::Refund)
                    .ok_or_else(|| "the processor has not answered this refund yet".to_string())
            }
            TxnType::Adjustment => {
                let (dispute, _): (Dispute, i64) = self
                    .load(scope, Collection::Disputes, "dispute", &t.source)
                    .await?;
                let index = dispute
                    .balance_transactions
                    .iter()
                    .position(|b| b.id == t.id);
                match (dispute.connector_reference, index) {
                    (Some(reference), Some(index)) => Ok(Lookup::Dispute(reference, index)),
                    _ => Err("the processor has no dispute of this".to_string()),
                }
            }
            TxnType::Payout | TxnType::PayoutFailure => {
                let (payout, _): (Payout, i64) = self
                    .load(scope, Collection::Payouts, "payout", &t.source)
                    .await?;
                payout
                    .connector_reference
                    .map(|r| Lookup::Payout(r, t.kind == TxnType::PayoutFailure))
                    .ok_or_else(|| "the processor made no such payout".to_string())
            }
            other => Err(format!(
                "a {} is booked by the processor its own way: compare it by hand",
                other.as_str()
            )),
        })
    }
}

/// The processor's name for one of Tender's transactions (an owned [`Booked`]).
enum Lookup {
    Transaction(String),
    Refund(String),
    Dispute(String, usize),
    Payout(String, bool),
}

impl Lookup {
    fn booked(&self) -> Booked<'_> {
        match self {
            Lookup::Transaction(id) => Booked::Transaction(id),
            Lookup::Refund(id) => Booked::Refund(id),
            Lookup::Dispute(reference, index) => Booked::Dispute {
                reference,
                index: *index,
            },
            Lookup::Payout(reference, failure) => Booked::Payout {
                reference,
                failure: *failure,
            },
        }
    }
}
