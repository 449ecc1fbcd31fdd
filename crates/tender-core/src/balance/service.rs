//! The merchant's balance as use cases (CONTRACT §9): an account's prices, the writes that book
//! each movement of money in the batch of the change that causes it, the availability task, and
//! the reads (`GET /balance`, balance transactions).
//!
//! - Booking: [`BalanceBook::book_charge`] (a payment whose capture or settlement this batch
//!   records), [`BalanceBook::book_refund`] and [`BalanceBook::book_refund_failure`] return the
//!   writes of a [`crate::balance::transactions::Booking`]: the transaction document, the ledger
//!   posting, and for a charge the task that makes it available. Each sets the id of its
//!   transaction on the object that caused it, so a second booking of the same payment or refund
//!   books nothing, and the store posts each cause once whatever happens.
//! - Prices are read from the account and kept [`crate::balance::fees::PRICING_TTL_SECS`] per
//!   process (the services' clock), so a payment does not read the account row; this process's own
//!   changes clear it, and another process sees a change within the TTL. A booked transaction keeps
//!   the fee it had.
//! - `GET /balance` is read from the ledger's `pending` and `available` accounts, which equal the
//!   sum of `net` of the transactions of each status by construction; `tender ledger verify`
//!   checks that they do ([`BalanceBook::verify_ledger`]).
//!
//! Depends on the domain ([`crate::balance::transactions`], [`crate::balance::ledger`],
//! [`crate::balance::fees`]) and the storage port.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::auth::Scope;
use crate::balance::fees::Pricing;
use crate::balance::ledger::LedgerAccount;
use crate::balance::transactions::{self, At, BalanceTransaction, Fee, FeeType, TxnStatus};
use crate::balance::BalanceBook;
use crate::documents::batch::Batch;
use crate::documents::document::from_body;
use crate::error::{CoreError, CoreResult};
use crate::ids::{self, IdKind};
use crate::payments::payment::Payment;
use crate::refunds::refund::Refund;
use crate::services::RawPage;
use crate::store::AccountSetting;
use crate::store::{ClaimedTask, Collection, Field};

/// The availability delay by default: two days in live mode, a minute in test mode.
pub const LIVE_AVAILABLE_DELAY_SECS: i64 = 172_800;
pub const TEST_AVAILABLE_DELAY_SECS: i64 = 60;

/// One currency's figure of the balance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BalanceAmount {
    pub amount: i64,
    pub currency: crate::money::Currency,
}

/// `GET /balance`: what Tender holds for the merchant, and what connectors' processors hold.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Balance {
    pub object: &'static str,
    pub available: Vec<BalanceAmount>,
    pub pending: Vec<BalanceAmount>,
    /// Money captured through connectors and kept by their processors (CONTRACT §15): they pay
    /// it out, not Tender, so it is never in `available`.
    pub processors: HeldBalance,
    pub livemode: bool,
}

/// A holder's pending and available money per currency.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct HeldBalance {
    pub available: Vec<BalanceAmount>,
    pub pending: Vec<BalanceAmount>,
}

impl Balance {
    /// This balance after `net` of `currency` moved from pending to available, at Tender or
    /// (`at_processor`) at a processor.
    fn moved(&mut self, currency: crate::money::Currency, net: i64, at_processor: bool) {
        let (pending, available) = match at_processor {
            true => (&mut self.processors.pending, &mut self.processors.available),
            false => (&mut self.pending, &mut self.available),
        };
        for (list, sign) in [(pending, -1), (available, 1)] {
            match list.iter_mut().find(|b| b.currency == currency) {
                Some(b) => b.amount = b.amount.saturating_add(sign * net),
                None => list.push(BalanceAmount {
                    amount: sign * net,
                    currency,
                }),
            }
        }
    }
}

fn posting_failed(e: crate::balance::ledger::PostingError) -> CoreError {
    CoreError::internal("build a ledger posting", e)
}

impl BalanceBook<'_> {
    /// The account's prices (cached for [`crate::balance::fees::PRICING_TTL_SECS`]).
    pub async fn pricing(&self, account: &str) -> CoreResult<Pricing> {
        let now = self.now();
        if let Some(p) = self.pricing_cache.get(account, now) {
            return Ok(p);
        }
        let stored = self
            .store
            .find_account(account)
            .await?
            .and_then(|a| a.pricing);
        let pricing = match stored.as_deref() {
            None => Pricing::default(),
            Some(s) => Pricing::decode(s).ok_or_else(|| {
                crate::error::StoreError::Corrupt(format!("pricing of {account}"))
            })?,
        };
        self.pricing_cache.put(account, now, pricing);
        Ok(pricing)
    }

    /// Sets the account's prices (`tender accounts pricing`); transactions booked before keep
    /// their fees.
    pub async fn set_pricing(&self, account: &str, pricing: Pricing) -> CoreResult<()> {
        if self.store.find_account(account).await?.is_none() {
            return Err(CoreError::NotFound {
                kind: "account",
                id: account.to_string(),
            });
        }
        self.store
            .update_account_setting(account, AccountSetting::Pricing, Some(&pricing.encode()))
            .await?;
        self.pricing_cache.forget(account);
        Ok(())
    }

    /// Seconds between a charge and its money becoming available.
    pub fn available_delay(&self, livemode: bool) -> i64 {
        match (self.config.balance_available_delay, livemode) {
            (Some(d), _) => d,
            (None, true) => LIVE_AVAILABLE_DELAY_SECS,
            (None, false) => TEST_AVAILABLE_DELAY_SECS,
        }
    }

    /// Books what `payment` captured (or a bank transfer settled) in `batch`, the batch that
    /// records it; sets its `balance_transaction`. Nothing (`false`) when nothing was captured
    /// or it is booked already. A payment its processor booked (CONTRACT §15) is booked as the
    /// processor did (its fee, its net, held by it); every other one with Tender's pricing.
    pub(crate) async fn book_charge(
        &self,
        batch: &mut Batch,
        payment: &mut Payment,
    ) -> CoreResult<bool> {
        if payment.amount_captured <= 0 || payment.balance_transaction.is_some() {
            return Ok(false);
        }
        let scope = batch.scope().clone();
        let captured = payment.amount_captured;
        let pricing;
        let fee = match &payment.processor_settlement {
            Some(s) => Fee {
                amount: s.fee,
                kind: FeeType::ProcessorFee,
                description: &s.description,
            },
            None => {
                pricing = self.pricing(&scope.account).await?;
                match payment.payment_method.kind == "bank_transfer" {
                    true => Fee {
                        amount: pricing.bank_transfer_fee(captured),
                        kind: FeeType::TenderFee,
                        description: "Tender bank transfer fee",
                    },
                    false => Fee {
                        amount: pricing.card_fee(captured),
                        kind: FeeType::TenderFee,
                        description: "Tender card fee",
                    },
                }
            }
        };
        let txn_id = ids::generate(IdKind::BalanceTransaction);
        let now = self.now();
        let available_on = now + self.available_delay(scope.livemode());
        let booking = transactions::charge(
            At {
                txn_id: &txn_id,
                now,
                livemode: scope.livemode(),
                held_by: payment.held_by(),
            },
            &payment.id,
            payment.currency,
            captured,
            fee,
            available_on,
        )
        .map_err(posting_failed)?;
        payment.balance_transaction = Some(txn_id.clone());
        batch
            .book(booking)?
            .schedule(crate::task::TaskKind::MakeAvailable, &txn_id, available_on);
        if payment.held_by().is_some() {
            // Money a processor holds may be refunded there: it is watched (CONTRACT §15).
            batch.schedule(
                crate::task::TaskKind::WatchPayment,
                &payment.id,
                now + crate::refunds::processor::FIRST_WATCH_SECS,
            );
        }
        Ok(true)
    }

    /// Books `refund` leaving the balance (at its creation, pending or not) in `batch`; sets
    /// its `balance_transaction`. Nothing (`false`) when it is booked already.
    /// `held_by`: the connector whose processor holds the payment's money, if one does.
    pub(crate) fn book_refund(
        &self,
        batch: &mut Batch,
        refund: &mut Refund,
        held_by: Option<&str>,
    ) -> CoreResult<bool> {
        if refund.balance_transaction.is_some() {
            return Ok(false);
        }
        let txn_id = ids::generate(IdKind::BalanceTransaction);
        let booking = transactions::refund(
            At {
                txn_id: &txn_id,
                now: self.now(),
                livemode: batch.scope().livemode(),
                held_by,
            },
            &refund.id,
            &refund.payment,
            refund.currency,
            refund.amount,
        )
        .map_err(posting_failed)?;
        refund.balance_transaction = Some(txn_id);
        batch.book(booking)?;
        Ok(true)
    }

    /// Gives a failed refund's amount back, in `batch`; sets its
    /// `failure_balance_transaction`.
    pub(crate) fn book_refund_failure(
        &self,
        batch: &mut Batch,
        refund: &mut Refund,
        held_by: Option<&str>,
    ) -> CoreResult<bool> {
        if refund.balance_transaction.is_none() || refund.failure_balance_transaction.is_some() {
            return Ok(false);
        }
        let txn_id = ids::generate(IdKind::BalanceTransaction);
        let booking = transactions::refund_failure(
            At {
                txn_id: &txn_id,
                now: self.now(),
                livemode: batch.scope().livemode(),
                held_by,
            },
            &refund.id,
            refund.currency,
            refund.amount,
        )
        .map_err(posting_failed)?;
        refund.failure_balance_transaction = Some(txn_id);
        batch.book(booking)?;
        Ok(true)
    }

    /// The availability task: a pending charge's money becomes available.
    pub(crate) async fn make_available(&self, task: &ClaimedTask) -> CoreResult<()> {
        let Some((txn, version)) = self.load_due::<BalanceTransaction>(task).await? else {
            return Ok(());
        };
        if txn.status != TxnStatus::Pending {
            return self.drop_task(task, "already available").await;
        }
        let (after, posting) =
            transactions::make_available(&txn, self.now()).map_err(posting_failed)?;
        let mut batch = self.background(&task.scope);
        batch.update(&after, version)?.done(task);
        if let Some(posting) = posting {
            batch.post(posting);
            // `balance.available`: the balance as this move leaves it (read just before; a
            // move committed in between shows in the next event).
            let mut balance = self.retrieve_balance(&task.scope).await?;
            balance.moved(txn.currency, txn.net, txn.connector.is_some());
            batch.event("balance.available", &balance)?;
        }
        self.commit_background(batch).await
    }

    /// `GET /balance`: per currency that has transactions, what is pending and available, at
    /// Tender and at processors.
    pub async fn retrieve_balance(&self, scope: &Scope) -> CoreResult<Balance> {
        // Per currency: Tender's available, pending; the processors' available, pending.
        let mut by_currency: BTreeMap<&'static str, (crate::money::Currency, [i64; 4])> =
            BTreeMap::new();
        for b in self.store.ledger_balances(scope).await? {
            let slot = by_currency
                .entry(b.currency.code())
                .or_insert((b.currency, [0; 4]));
            let at = match b.account {
                LedgerAccount::Available => 0,
                LedgerAccount::Pending => 1,
                LedgerAccount::ProcessorAvailable => 2,
                LedgerAccount::ProcessorPending => 3,
                _ => continue,
            };
            // Saturating: an account damaged past i64 still answers (and fails its verify).
            slot.1[at] = slot.1[at].saturating_add(b.amount);
        }
        let mut lists: [Vec<BalanceAmount>; 4] = Default::default();
        let any_at_processor = by_currency.values().any(|(_, s)| s[2] != 0 || s[3] != 0);
        for (currency, sums) in by_currency.into_values() {
            for (at, list) in lists.iter_mut().enumerate() {
                // The processors' lists name only what they hold, if anything.
                if at < 2 || any_at_processor {
                    list.push(BalanceAmount {
                        amount: sums[at],
                        currency,
                    });
                }
            }
        }
        let [available, pending, processor_available, processor_pending] = lists;
        Ok(Balance {
            object: "balance",
            available,
            pending,
            processors: HeldBalance {
                available: processor_available,
                pending: processor_pending,
            },
            livemode: scope.livemode(),
        })
    }

    /// `GET /balance_transactions`, newest first, with its filters.
    pub async fn list_balance_transactions(
        &self,
        scope: &Scope,
        params: &crate::services::ListParams,
        filters: Vec<(Field, String)>,
    ) -> CoreResult<RawPage> {
        self.list_raw(scope, Collection::BalanceTransactions, params, filters)
            .await
    }
}

impl BalanceBook<'_> {
    /// Every document of a collection in the scope, oldest first.
    pub(super) async fn all_records(
        &self,
        scope: &Scope,
        collection: Collection,
    ) -> CoreResult<Vec<crate::store::Record>> {
        self.records_created(scope, collection, Default::default())
            .await
    }

    /// The documents of a collection created in `created`, oldest first.
    pub(super) async fn records_created(
        &self,
        scope: &Scope,
        collection: Collection,
        created: crate::store::CreatedRange,
    ) -> CoreResult<Vec<crate::store::Record>> {
        let mut out = self
            .every_record(scope, collection, Vec::new(), created)
            .await?;
        out.reverse();
        Ok(out)
    }

    /// Books what was captured and refunded before the ledger existed (rows written by a
    /// version before migration 0005): `tender ledger backfill`. Each payment and refund is
    /// booked in its own batch, as at the time it happens now (a charge pending for the
    /// availability delay), and only if it is not booked yet, so a second run, or two nodes at
    /// once, book nothing twice. Returns how many objects it booked.
    pub async fn backfill_ledger(&self, scope: &Scope) -> CoreResult<usize> {
        let mut booked = 0;
        for record in self.all_records(scope, Collection::Payments).await? {
            let p: Payment = from_body(&record.id, &record.body)?;
            if p.amount_captured <= 0 || p.balance_transaction.is_some() {
                continue;
            }
            let done = self
                .retry_on_conflict(|| async {
                    let (mut p, version): (Payment, i64) = self
                        .load(scope, Collection::Payments, "payment", &record.id)
                        .await?;
                    let mut batch = self.background(scope);
                    if !self.book_charge(&mut batch, &mut p).await? {
                        return Ok(false);
                    }
                    batch.update(&p, version)?;
                    self.commit_background(batch).await?;
                    Ok(true)
                })
                .await?;
            booked += usize::from(done);
        }
        for record in self.all_records(scope, Collection::Refunds).await? {
            let r: Refund = from_body(&record.id, &record.body)?;
            if r.balance_transaction.is_some() {
                continue;
            }
            let done = self
                .retry_on_conflict(|| async {
                    let (mut r, version): (Refund, i64) = self
                        .load(scope, Collection::Refunds, "refund", &record.id)
                        .await?;
                    let mut batch = self.background(scope);
                    // Refunds from before the ledger: Tender held their payments' money.
                    if !self.book_refund(&mut batch, &mut r, None)? {
                        return Ok(false);
                    }
                    if r.status == crate::refunds::refund::RefundStatus::Failed {
                        self.book_refund_failure(&mut batch, &mut r, None)?;
                    }
                    batch.update(&r, version)?;
                    self.commit_background(batch).await?;
                    Ok(true)
                })
                .await?;
            booked += usize::from(done);
        }
        Ok(booked)
    }

    /// The CSV of the balance transactions created in `[from, to)` (Unix seconds), oldest
    /// first: `tender reports balance` and the dashboard's download ([`crate::balance::report`]).
    pub async fn balance_report(&self, scope: &Scope, from: i64, to: i64) -> CoreResult<Vec<u8>> {
        let range = crate::store::CreatedRange {
            gte: Some(from),
            lt: Some(to),
            ..Default::default()
        };
        let mut txns = Vec::new();
        for record in self
            .records_created(scope, Collection::BalanceTransactions, range)
            .await?
        {
            txns.push(from_body::<BalanceTransaction>(&record.id, &record.body)?);
        }
        Ok(crate::balance::report::balance_csv(&txns))
    }
}
