//! The ledger on PostgreSQL: [`post_statement`], the one statement a batch sends for each
//! posting inside its transaction, and the reads of [`LedgerStore`].
//!
//! - The posting's row is inserted unless its cause is already posted in the scope; its entries
//!   and the balance moves read the inserted row (data-modifying CTEs), so a cause posts once,
//!   and the statement fits the batch's single pipelined flight.
//! - Balances are kept in 16 shards (by the posting's cause, [`Posting::shard`]): two batches
//!   serialise on a balance row only when they hit the same shard, so one merchant's concurrent
//!   postings do not all queue on one row. Two batches posting one cause serialise on the unique
//!   index (the second then writes nothing). A posting moves its balance rows in one order
//!   (ledger account, then currency), so two batches on one shard wait for each other instead
//!   of deadlocking (each holding one row the other needs: PostgreSQL then aborts one after
//!   `deadlock_timeout`, a second each, which had brought 64 concurrent creates to 50 a second).
//! - [`require_balance_statements`]: a balance check inside a batch, serialised per balance by an
//!   advisory lock, so two racing withdrawals cannot both spend the same money.
//!
//! Depends on the parent module's connection helpers and [`super::pipeline`].

use async_trait::async_trait;
use tender_core::auth::Scope;
use tender_core::balance::ledger::{Entry, LedgerAccount, LedgerBalance, Posting};
use tender_core::error::StoreError;
use tender_core::money::Currency;
use tender_core::store::{LedgerStore, StoreResult};

use super::pipeline::{Stmt, Value};
use super::{classify, query, PgStore};

/// The statement that writes `posting` for `scope`, once per cause.
pub(super) fn post_statement(scope: &Scope, posting: &Posting) -> Stmt {
    let accounts: Vec<String> = posting
        .entries()
        .iter()
        .map(|e| e.account.as_str().to_string())
        .collect();
    let currencies: Vec<String> = posting
        .entries()
        .iter()
        .map(|e| e.currency.code().to_string())
        .collect();
    let amounts: Vec<i64> = posting.entries().iter().map(|e| e.amount).collect();
    let params: Vec<Value> = vec![
        Box::new(scope.account.clone()),
        Box::new(scope.livemode()),
        Box::new(posting.cause().to_string()),
        Box::new(posting.created()),
        Box::new(accounts),
        Box::new(currencies),
        Box::new(amounts),
        Box::new(posting.shard()),
    ];
    Stmt::new(
        "post",
        "WITH p AS (
             INSERT INTO ledger_postings (account_id, livemode, cause, created) VALUES ($1, $2, $3, $4)
             ON CONFLICT (account_id, livemode, cause) DO NOTHING RETURNING seq
         ), e AS (
             INSERT INTO ledger_entries (posting_seq, ledger_account, currency, amount)
             SELECT p.seq, x.a, x.c, x.m FROM p, unnest($5::text[], $6::text[], $7::bigint[]) AS x(a, c, m)
             RETURNING ledger_account, currency, amount
         )
         INSERT INTO ledger_balances (account_id, livemode, ledger_account, currency, shard, amount)
         SELECT $1, $2, ledger_account, currency, $8, sum(amount)::bigint FROM e GROUP BY ledger_account, currency
         ORDER BY ledger_account, currency
         ON CONFLICT (account_id, livemode, ledger_account, currency, shard)
         DO UPDATE SET amount = ledger_balances.amount + excluded.amount",
        params,
    )
}

/// The statements that fail the batch unless `scope`'s balance of `account` in `currency` (with
/// what the batch posted so far) is at least `at_least`: a transaction-scoped advisory lock on
/// (scope, account, currency), then the balance read in a statement of its own, whose snapshot
/// (READ COMMITTED) is taken once the lock is held. Every batch with such a check on that
/// balance takes the same lock, so the second of two racing withdrawals reads the balance the
/// first committed.
pub(super) fn require_balance_statements(
    scope: &Scope,
    account: LedgerAccount,
    currency: Currency,
    at_least: i64,
) -> [Stmt; 2] {
    let lock_name = format!(
        "tender-balance:{}:{}:{}:{}",
        scope.account,
        scope.livemode(),
        account.as_str(),
        currency.code()
    );
    [
        Stmt::new(
            "lock balance",
            "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
            vec![Box::new(lock_name)],
        )
        .returning_rows(),
        Stmt::new(
            "read balance",
            "SELECT 1 WHERE (SELECT COALESCE(SUM(amount), 0) FROM ledger_balances
             WHERE account_id = $1 AND livemode = $2 AND ledger_account = $3 AND currency = $4) >= $5::bigint",
            vec![
                Box::new(scope.account.clone()),
                Box::new(scope.livemode()),
                Box::new(account.as_str().to_string()),
                Box::new(currency.code().to_string()),
                Box::new(at_least),
            ],
        )
        .returning_rows()
        .exactly_one(StoreError::BalanceInsufficient(format!(
            "{} {}",
            account.as_str(),
            currency.code()
        ))),
    ]
}

/// A stored (account, currency, amount) as the domain's values.
fn entry_from(account: &str, currency: &str, amount: i64) -> StoreResult<Entry> {
    Ok(Entry {
        account: LedgerAccount::parse(account)
            .ok_or_else(|| StoreError::Corrupt(format!("ledger account {account}")))?,
        currency: Currency::parse(currency)
            .ok_or_else(|| StoreError::Corrupt(format!("ledger currency {currency}")))?,
        amount,
    })
}

#[async_trait]
impl LedgerStore for PgStore {
    async fn ledger_balances(&self, scope: &Scope) -> StoreResult<Vec<LedgerBalance>> {
        let client = self.client().await?;
        let rows = query(
            &client,
            "SELECT ledger_account, currency, GREATEST(LEAST(SUM(amount), 9223372036854775807), -9223372036854775808)::bigint FROM ledger_balances
             WHERE account_id = $1 AND livemode = $2
             GROUP BY ledger_account, currency ORDER BY currency, ledger_account",
            &[&scope.account, &scope.livemode()],
        )
        .await
        .map_err(|e| classify("ledger balances", e))?;
        rows.iter()
            .map(|r| {
                entry_from(r.get(0), r.get(1), r.get(2)).map(|e| LedgerBalance {
                    account: e.account,
                    currency: e.currency,
                    amount: e.amount,
                })
            })
            .collect()
    }

    async fn recompute_balances(&self, scope: &Scope) -> StoreResult<Vec<LedgerBalance>> {
        let client = self.client().await?;
        let rows = query(
            &client,
            "SELECT e.ledger_account, e.currency, GREATEST(LEAST(SUM(e.amount), 9223372036854775807), -9223372036854775808)::bigint FROM ledger_entries e
             JOIN ledger_postings p ON p.seq = e.posting_seq
             WHERE p.account_id = $1 AND p.livemode = $2
             GROUP BY e.ledger_account, e.currency ORDER BY e.currency, e.ledger_account",
            &[&scope.account, &scope.livemode()],
        )
        .await
        .map_err(|e| classify("recompute balances", e))?;
        rows.iter()
            .map(|r| {
                entry_from(r.get(0), r.get(1), r.get(2)).map(|e| LedgerBalance {
                    account: e.account,
                    currency: e.currency,
                    amount: e.amount,
                })
            })
            .collect()
    }

    async fn unbalanced_postings(&self, scope: &Scope) -> StoreResult<Vec<String>> {
        let client = self.client().await?;
        let rows = query(
            &client,
            "SELECT DISTINCT cause FROM (
                 SELECT p.cause FROM ledger_postings p JOIN ledger_entries e ON e.posting_seq = p.seq
                 WHERE p.account_id = $1 AND p.livemode = $2
                 GROUP BY p.seq, p.cause, e.currency HAVING SUM(e.amount) <> 0
             ) u ORDER BY cause",
            &[&scope.account, &scope.livemode()],
        )
        .await
        .map_err(|e| classify("unbalanced postings", e))?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }

    async fn posting_entries(&self, scope: &Scope, cause: &str) -> StoreResult<Option<Vec<Entry>>> {
        let client = self.client().await?;
        let posted = query(
            &client,
            "SELECT seq FROM ledger_postings WHERE account_id = $1 AND livemode = $2 AND cause = $3",
            &[&scope.account, &scope.livemode(), &cause],
        )
        .await
        .map_err(|e| classify("find posting", e))?;
        let Some(seq) = posted.first().map(|r| r.get::<_, i64>(0)) else {
            return Ok(None);
        };
        let rows = query(
            &client,
            "SELECT ledger_account, currency, amount FROM ledger_entries WHERE posting_seq = $1 ORDER BY ctid",
            &[&seq],
        )
        .await
        .map_err(|e| classify("posting entries", e))?;
        rows.iter()
            .map(|r| entry_from(r.get(0), r.get(1), r.get(2)))
            .collect::<StoreResult<Vec<_>>>()
            .map(Some)
    }
}
