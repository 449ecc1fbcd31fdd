//! The ledger on SQLite: [`post`], which a batch calls for each posting inside its transaction,
//! and the reads of [`LedgerStore`].
//!
//! - A posting's row is inserted unless its cause is already posted in the scope; only then are
//!   its entries written and the balances moved (in the posting's shard), so a cause posts once.
//! - [`require_balance`] reads a balance inside the batch: the single writer makes the read and
//!   the commit one step, so two withdrawals can never both spend the same money.
//!
//! Depends on the parent module's connection helpers.

use async_trait::async_trait;
use rusqlite::{params, Connection, OptionalExtension};
use tender_core::auth::Scope;
use tender_core::balance::ledger::{Entry, LedgerAccount, LedgerBalance, Posting};
use tender_core::error::StoreError;
use tender_core::money::Currency;
use tender_core::store::{LedgerStore, StoreResult};

use super::{classify, SqliteStore};

/// Writes `posting` for `scope` inside a batch, once per cause.
pub(super) fn post(conn: &Connection, scope: &Scope, posting: &Posting) -> StoreResult<()> {
    let live = scope.livemode();
    let n = conn
        .prepare_cached(
            "INSERT INTO ledger_postings (account_id, livemode, cause, created) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (account_id, livemode, cause) DO NOTHING",
        )
        .and_then(|mut s| {
            s.execute(params![
                scope.account,
                live,
                posting.cause(),
                posting.created()
            ])
        })
        .map_err(|e| classify("post", e))?;
    if n == 0 {
        // Posted already: by a retry's first run, or an earlier delivery of the same webhook.
        return Ok(());
    }
    let seq = conn.last_insert_rowid();
    for e in posting.entries() {
        conn.prepare_cached(
            "INSERT INTO ledger_entries (posting_seq, ledger_account, currency, amount) VALUES (?1, ?2, ?3, ?4)",
        )
        .and_then(|mut s| s.execute(params![seq, e.account.as_str(), e.currency.code(), e.amount]))
        .map_err(|e| classify("post entry", e))?;
        conn.prepare_cached(
            "INSERT INTO ledger_balances (account_id, livemode, ledger_account, currency, shard, amount)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)
             ON CONFLICT (account_id, livemode, ledger_account, currency, shard)
             DO UPDATE SET amount = amount + excluded.amount",
        )
        .and_then(|mut s| {
            s.execute(params![
                scope.account,
                live,
                e.account.as_str(),
                e.currency.code(),
                posting.shard(),
                e.amount
            ])
        })
        .map_err(|e| classify("move balance", e))?;
    }
    Ok(())
}

/// Fails the batch unless `scope`'s balance of `account` in `currency` (with what the batch
/// posted so far) is at least `at_least`. The writer applies one batch at a time, so nothing
/// can change the balance between this read and the commit.
pub(super) fn require_balance(
    conn: &Connection,
    scope: &Scope,
    account: LedgerAccount,
    currency: Currency,
    at_least: i64,
) -> StoreResult<()> {
    let balance = saturating_sums(
        conn,
        "read balance",
        "SELECT ledger_account, currency, amount FROM ledger_balances
         WHERE account_id = ?1 AND livemode = ?2 AND ledger_account = ?3 AND currency = ?4",
        params![
            scope.account,
            scope.livemode(),
            account.as_str(),
            currency.code()
        ],
    )?
    .first()
    .map_or(0, |(_, _, sum)| *sum);
    if balance < at_least {
        return Err(StoreError::BalanceInsufficient(format!(
            "{} {}",
            account.as_str(),
            currency.code()
        )));
    }
    Ok(())
}

/// Sums the (ledger account, currency, amount) rows `sql` selects per account and currency, in
/// `i128`, saturating at `i64`'s bounds: a ledger damaged beyond them (before amounts were
/// bounded) still reads, and `tender ledger verify` reports it, where SQLite's `SUM` would fail
/// the read with "integer overflow". Amounts SQLite turned into reals on overflow count with
/// their sign.
fn saturating_sums(
    conn: &Connection,
    what: &str,
    sql: &str,
    params: impl rusqlite::Params,
) -> StoreResult<Vec<(String, String, i64)>> {
    let mut sums: Vec<(String, String, i128)> = Vec::new();
    let mut stmt = conn.prepare_cached(sql).map_err(|e| classify(what, e))?;
    let mut rows = stmt.query(params).map_err(|e| classify(what, e))?;
    while let Some(row) = rows.next().map_err(|e| classify(what, e))? {
        let (account, currency): (String, String) = (
            row.get(0).map_err(|e| classify(what, e))?,
            row.get(1).map_err(|e| classify(what, e))?,
        );
        let amount = match row.get_ref(2).map_err(|e| classify(what, e))? {
            rusqlite::types::ValueRef::Integer(i) => i128::from(i),
            rusqlite::types::ValueRef::Real(r) => r.clamp(i64::MIN as f64, i64::MAX as f64) as i128,
            _ => {
                return Err(StoreError::Corrupt(format!(
                    "{what}: an amount that is not a number"
                )))
            }
        };
        match sums
            .iter_mut()
            .find(|(a, c, _)| *a == account && *c == currency)
        {
            Some((_, _, sum)) => *sum = sum.saturating_add(amount),
            None => sums.push((account, currency, amount)),
        }
    }
    sums.sort_by(|x, y| (&x.1, &x.0).cmp(&(&y.1, &y.0)));
    Ok(sums
        .into_iter()
        .map(|(a, c, s)| (a, c, s.clamp(i64::MIN.into(), i64::MAX.into()) as i64))
        .collect())
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
impl LedgerStore for SqliteStore {
    async fn ledger_balances(&self, scope: &Scope) -> StoreResult<Vec<LedgerBalance>> {
        let rows = self.read_now(|conn| {
            saturating_sums(
                conn,
                "ledger balances",
                "SELECT ledger_account, currency, amount FROM ledger_balances
                 WHERE account_id = ?1 AND livemode = ?2",
                params![scope.account, scope.livemode()],
            )
        })?;
        rows.iter()
            .map(|(a, c, m)| {
                entry_from(a, c, *m).map(|e| LedgerBalance {
                    account: e.account,
                    currency: e.currency,
                    amount: e.amount,
                })
            })
            .collect()
    }

    async fn recompute_balances(&self, scope: &Scope) -> StoreResult<Vec<LedgerBalance>> {
        let rows = self.read_now(|conn| {
            saturating_sums(
                conn,
                "recompute balances",
                "SELECT e.ledger_account, e.currency, e.amount FROM ledger_entries e
                 JOIN ledger_postings p ON p.seq = e.posting_seq
                 WHERE p.account_id = ?1 AND p.livemode = ?2",
                params![scope.account, scope.livemode()],
            )
        })?;
        rows.iter()
            .map(|(a, c, m)| {
                entry_from(a, c, *m).map(|e| LedgerBalance {
                    account: e.account,
                    currency: e.currency,
                    amount: e.amount,
                })
            })
            .collect()
    }

    async fn unbalanced_postings(&self, scope: &Scope) -> StoreResult<Vec<String>> {
        self.read_now(|conn| {
            conn.prepare_cached(
                "SELECT DISTINCT p.cause FROM ledger_postings p JOIN ledger_entries e ON e.posting_seq = p.seq
                 WHERE p.account_id = ?1 AND p.livemode = ?2
                 GROUP BY p.seq, e.currency HAVING SUM(e.amount) <> 0 ORDER BY p.cause",
            )
            .and_then(|mut s| {
                s.query_map(params![scope.account, scope.livemode()], |r| r.get(0))?
                    .collect()
            })
            .map_err(|e| classify("unbalanced postings", e))
        })
    }

    async fn posting_entries(&self, scope: &Scope, cause: &str) -> StoreResult<Option<Vec<Entry>>> {
        let rows: Option<Vec<(String, String, i64)>> = self.read_now(|conn| {
            let seq: Option<i64> = conn
                .prepare_cached(
                    "SELECT seq FROM ledger_postings WHERE account_id = ?1 AND livemode = ?2 AND cause = ?3",
                )
                .and_then(|mut s| {
                    s.query_row(params![scope.account, scope.livemode(), cause], |r| r.get(0))
                        .optional()
                })
                .map_err(|e| classify("find posting", e))?;
            let Some(seq) = seq else {
                return Ok(None);
            };
            conn.prepare_cached(
                "SELECT ledger_account, currency, amount FROM ledger_entries WHERE posting_seq = ?1 ORDER BY rowid",
            )
            .and_then(|mut s| {
                s.query_map(params![seq], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
                    .collect()
            })
            .map(Some)
            .map_err(|e| classify("posting entries", e))
        })?;
        rows.map(|rows| rows.iter().map(|(a, c, m)| entry_from(a, c, *m)).collect())
            .transpose()
    }
}
