//! `tender ledger verify`: the scope's ledger recomputed from its postings and checked,
//! invariant by invariant, against what the API serves (CONTRACT §9 and §15). Reads only.
//!
//! Depends on the balance's types, payments, refunds and disputes.

use std::collections::{BTreeMap, HashMap};

use crate::auth::Scope;
use crate::balance::transactions::BalanceTransaction;
use crate::balance::BalanceBook;
use crate::documents::document::from_body;
use crate::error::CoreResult;
use crate::payments::payment::Payment;
use crate::refunds::refund::Refund;
use crate::store::Collection;

/// What `tender ledger verify` found for one scope.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LedgerReport {
    /// Ledger account balances (per currency), balance transactions and payments looked at.
    pub balances_checked: usize,
    pub transactions_checked: usize,
    pub payments_checked: usize,
    /// Every difference, one line each; empty when the ledger holds.
    pub differences: Vec<String>,
}

/// What the balance transactions add up to per source (a payment, a refund, a dispute).
#[derive(Default)]
struct Sourced {
    net: HashMap<String, i64>,
    fee: HashMap<String, i64>,
}

impl BalanceBook<'_> {
    /// Recomputes the scope's ledger from its postings and checks every invariant of CONTRACT
    /// §9 against what the API serves: each posting sums to zero per currency; each balance the
    /// store keeps equals the sum of its entries; `GET /balance` equals the sum of the
    /// transactions' `net` by status; each transaction's `net` is `amount − fee` and its fee
    /// the sum of its fee details; for each payment, captured − refunded − withheld by disputes
    /// − fees equals the `net` of the transactions it (its refunds, its disputes) sourced, and
    /// `0 ≤ refunded ≤ captured ≤ amount` (CONTRACT §15). Sums saturate instead of wrapping, so
    /// a ledger damaged past `i64` is reported, not a failure to read it.
    pub async fn verify_ledger(&self, scope: &Scope) -> CoreResult<LedgerReport> {
        let mut report = LedgerReport::default();
        self.check_ledger_balances(scope, &mut report).await?;
        let sourced = self.check_transactions(scope, &mut report).await?;
        self.check_payments(scope, &sourced, &mut report).await?;
        Ok(report)
    }

    /// Each posting sums to zero per currency; each balance the store keeps equals the sum of
    /// its entries.
    async fn check_ledger_balances(
        &self,
        scope: &Scope,
        report: &mut LedgerReport,
    ) -> CoreResult<()> {
        let diff = &mut report.differences;
        for cause in self.store.unbalanced_postings(scope).await? {
            diff.push(format!("posting {cause} does not sum to zero"));
        }
        let key =
            |b: &crate::balance::ledger::LedgerBalance| (b.account.as_str(), b.currency.code());
        let kept: BTreeMap<_, i64> = self
            .store
            .ledger_balances(scope)
            .await?
            .iter()
            .map(|b| (key(b), b.amount))
            .collect();
        let recomputed: BTreeMap<_, i64> = self
            .store
            .recompute_balances(scope)
            .await?
            .iter()
            .map(|b| (key(b), b.amount))
            .collect();
        for k in kept.keys().chain(recomputed.keys()) {
            let (a, b) = (
                kept.get(k).copied().unwrap_or(0),
                recomputed.get(k).copied().unwrap_or(0),
            );
            if a != b {
                diff.push(format!(
                    "ledger account {} {}: kept {a}, postings sum to {b}",
                    k.0, k.1
                ));
            }
        }
        report.balances_checked = recomputed.len();
        Ok(())
    }

    /// Each transaction's `net` is `amount − fee` and its fee the sum of its details; `GET
    /// /balance` equals the sum of the transactions' `net` by holder (Tender, or the
    /// processors) and status.
    async fn check_transactions(
        &self,
        scope: &Scope,
        report: &mut LedgerReport,
    ) -> CoreResult<Sourced> {
        let diff = &mut report.differences;
        let mut sourced = Sourced::default();
        let shown = self.retrieve_balance(scope).await?;
        let mut by_status: BTreeMap<(&'static str, &'static str), i64> = BTreeMap::new();
        for record in self
            .all_records(scope, Collection::BalanceTransactions)
            .await?
        {
            let t: BalanceTransaction = from_body(&record.id, &record.body)?;
            report.transactions_checked += 1;
            if Some(t.net) != t.amount.checked_sub(t.fee) {
                diff.push(format!("{}: net {} is not amount − fee", t.id, t.net));
            }
            let details = t
                .fee_details
                .iter()
                .try_fold(0i64, |sum, f| sum.checked_add(f.amount));
            if Some(t.fee) != details {
                diff.push(format!(
                    "{}: fee {} is not the sum of its details",
                    t.id, t.fee
                ));
            }
            let add = |slot: &mut i64, v: i64| *slot = slot.saturating_add(v);
            let status = match (t.connector.is_some(), t.status.as_str()) {
                (true, "available") => "processors available",
                (true, _) => "processors pending",
                (false, status) => status,
            };
            add(
                by_status.entry((status, t.currency.code())).or_insert(0),
                t.net,
            );
            add(sourced.net.entry(t.source.clone()).or_insert(0), t.net);
            add(sourced.fee.entry(t.source.clone()).or_insert(0), t.fee);
        }
        for (status, figures) in [
            ("available", &shown.available),
            ("pending", &shown.pending),
            ("processors available", &shown.processors.available),
            ("processors pending", &shown.processors.pending),
        ] {
            for f in figures {
                let sum = by_status.remove(&(status, f.currency.code())).unwrap_or(0);
                if sum != f.amount {
                    diff.push(format!(
                        "balance {status} {}: shows {}, transactions sum to {sum}",
                        f.currency.code(),
                        f.amount
                    ));
                }
            }
        }
        for ((status, currency), sum) in by_status {
            if sum != 0 {
                diff.push(format!(
                    "balance {status} {currency}: not shown, transactions sum to {sum}"
                ));
            }
        }

        Ok(sourced)
    }

    /// For each payment, captured − refunded − withheld by disputes − fees equals the `net` of
    /// the transactions it (its refunds, its disputes) sourced, and `0 ≤ refunded ≤ captured ≤
    /// amount`.
    async fn check_payments(
        &self,
        scope: &Scope,
        sourced: &Sourced,
        report: &mut LedgerReport,
    ) -> CoreResult<()> {
        let diff = &mut report.differences;
        let mut sources_of: HashMap<String, Vec<String>> = HashMap::new();
        for record in self.all_records(scope, Collection::Refunds).await? {
            let r: Refund = from_body(&record.id, &record.body)?;
            sources_of.entry(r.payment).or_default().push(r.id);
        }
        let mut withheld: HashMap<String, i64> = HashMap::new();
        for record in self.all_records(scope, Collection::Disputes).await? {
            let d: crate::balance::disputes::Dispute = from_body(&record.id, &record.body)?;
            if d.status != crate::balance::disputes::DisputeStatus::Won {
                let slot = withheld.entry(d.payment.clone()).or_insert(0);
                *slot = slot.saturating_add(d.amount);
            }
            sources_of.entry(d.payment).or_default().push(d.id);
        }
        for record in self.all_records(scope, Collection::Payments).await? {
            let p: Payment = from_body(&record.id, &record.body)?;
            report.payments_checked += 1;
            let mut sources = vec![p.id.clone()];
            sources.extend(sources_of.remove(&p.id).unwrap_or_default());
            let sum = |of: &HashMap<String, i64>| {
                sources
                    .iter()
                    .filter_map(|s| of.get(s))
                    .fold(0i64, |a, b| a.saturating_add(*b))
            };
            let (net, fees) = (sum(&sourced.net), sum(&sourced.fee));
            if !(0..=p.amount).contains(&p.amount_captured) {
                diff.push(format!(
                    "{}: captured {} is outside 0..={} (its amount)",
                    p.id, p.amount_captured, p.amount
                ));
            }
            if !(0..=p.amount_captured).contains(&p.amount_refunded) {
                diff.push(format!(
                    "{}: refunded {} is outside 0..={} (what was captured)",
                    p.id, p.amount_refunded, p.amount_captured
                ));
            }
            let expected = p
                .amount_captured
                .saturating_sub(p.amount_refunded)
                .saturating_sub(withheld.get(&p.id).copied().unwrap_or(0))
                .saturating_sub(fees);
            if net != expected {
                diff.push(format!(
                    "{}: captured {} − refunded {} − disputed {} − fees {fees} is {expected}, its transactions' net is {net}",
                    p.id,
                    p.amount_captured,
                    p.amount_refunded,
                    withheld.get(&p.id).copied().unwrap_or(0)
                ));
            }
            if p.amount_captured > 0 && p.balance_transaction.is_none() {
                diff.push(format!(
                    "{}: captured but has no balance transaction (written before the ledger existed? `tender ledger backfill` books it)",
                    p.id
                ));
            }
        }
        Ok(())
    }
}
