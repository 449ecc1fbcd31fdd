//! `tender ledger backfill|verify` and `tender reports balance`: the money commands, per account
//! and mode, on the store directly.

use super::accounts::{mode, resolve_account};
use super::services;
use crate::{ReportsCommand, StoreArgs};
use anyhow::{bail, Context};
use tender_core::auth::Mode;
use tender_core::auth::Scope;
use tender_core::services::Services;

/// The accounts a ledger command covers: one, or all.
async fn accounts_to_check(
    services: &Services,
    account: Option<String>,
) -> anyhow::Result<Vec<String>> {
    Ok(match account {
        Some(a) => vec![resolve_account(services, &a).await?],
        None => services
            .store
            .list_accounts()
            .await?
            .into_iter()
            .map(|a| a.id)
            .collect(),
    })
}

/// `tender ledger backfill`.
pub async fn ledger_backfill(account: Option<String>, store: StoreArgs) -> anyhow::Result<()> {
    let services = services(&store).await?;
    for account in accounts_to_check(&services, account).await? {
        for m in [Mode::Test, Mode::Live] {
            let scope = Scope {
                account: account.clone(),
                mode: m,
            };
            let booked = services
                .balance()
                .backfill_ledger(&scope)
                .await
                .with_context(|| format!("booking the ledger of {account} ({})", m.as_str()))?;
            println!(
                "{account} {}: booked {booked} payments and refunds",
                m.as_str()
            );
        }
    }
    Ok(())
}

/// `tender ledger verify`: every account (or one) in both modes; an error (non-zero exit) when
/// anything differs.
pub async fn ledger_verify(account: Option<String>, store: StoreArgs) -> anyhow::Result<()> {
    let services = services(&store).await?;
    let accounts = accounts_to_check(&services, account).await?;
    let mut differences = 0;
    for account in &accounts {
        for m in [Mode::Test, Mode::Live] {
            let scope = Scope {
                account: account.clone(),
                mode: m,
            };
            // An account that cannot be read is reported like a difference, and the accounts
            // after it are still checked.
            let report = match services.balance().verify_ledger(&scope).await {
                Ok(report) => report,
                Err(e) => tender_core::balance::verify::LedgerReport {
                    differences: vec![format!(
                        "the ledger could not be read: {}",
                        tender_core::error::error_chain(&e)
                    )],
                    ..Default::default()
                },
            };
            println!(
                "{account} {}: {} balances, {} transactions, {} payments: {}",
                m.as_str(),
                report.balances_checked,
                report.transactions_checked,
                report.payments_checked,
                if report.differences.is_empty() {
                    "ok".to_string()
                } else {
                    format!("{} differences", report.differences.len())
                }
            );
            for d in &report.differences {
                println!("  {d}");
            }
            differences += report.differences.len();
        }
    }
    if differences > 0 {
        bail!("the ledger does not hold: {differences} differences (listed above)");
    }
    println!("the ledger holds: {} accounts, both modes", accounts.len());
    Ok(())
}

pub async fn reports(command: ReportsCommand) -> anyhow::Result<()> {
    match command {
        ReportsCommand::Balance {
            account,
            from,
            to,
            mode: m,
            output,
            store,
        } => {
            let day = |flag: &str, s: &str| {
                tender_core::balance::report::parse_day(s).ok_or_else(|| {
                    anyhow::anyhow!("--{flag} {s:?}: expected YYYY-MM-DD or Unix seconds")
                })
            };
            let (from, to) = (day("from", &from)?, day("to", &to)?);
            if to <= from {
                bail!("--to must be after --from");
            }
            let services = services(&store).await?;
            let scope = Scope {
                account: resolve_account(&services, &account).await?,
                mode: mode(m),
            };
            let csv = services.balance().balance_report(&scope, from, to).await?;
            match output {
                Some(path) => std::fs::write(&path, &csv)
                    .with_context(|| format!("writing {}", path.display()))?,
                None => {
                    use std::io::Write;
                    std::io::stdout().write_all(&csv)?;
                }
            }
        }
    }
    Ok(())
}
