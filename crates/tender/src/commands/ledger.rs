//! `tender ledger backfill|verify` and `tender reports balance|reconcile`: the money commands,
//! per account and mode, on the store directly.

use std::path::PathBuf;

use super::accounts::{mode, resolve_account};
use super::services;
use crate::{ModeArg, StoreArgs};
use anyhow::{bail, Context};
use clap::{Args, Subcommand};
use tender_core::auth::Mode;
use tender_core::auth::Scope;
use tender_core::services::Services;

#[derive(Subcommand)]
pub enum ReportsCommand {
    /// The balance transactions created in [--from, --to) as CSV, oldest first: the
    /// reconciliation file (amounts in minor units, times UTC).
    Balance {
        #[command(flatten)]
        period: Period,
    },
    /// The transactions of money a connector's processor holds, created in [--from, --to),
    /// each beside the processor's own balance transaction read back from it, as CSV; exits
    /// non-zero when any differs or cannot be read (CONTRACT §15).
    Reconcile {
        /// The connector (`conn_…`) whose processor is compared.
        #[arg(long)]
        connector: String,
        #[command(flatten)]
        period: Period,
    },
}

/// Which account, mode and days a report covers, and where it goes.
#[derive(Args)]
pub struct Period {
    /// The account's id (`acct_…`) or its login e-mail.
    #[arg(long)]
    account: String,
    /// First day included: YYYY-MM-DD (UTC) or Unix seconds.
    #[arg(long)]
    from: String,
    /// First day NOT included: YYYY-MM-DD (UTC) or Unix seconds (so --from 2026-11-01
    /// --to 2026-12-01 is November).
    #[arg(long)]
    to: String,
    /// Test or live: which mode's transactions (required, as for keys and connectors: a
    /// report of the wrong mode would be a quietly empty file).
    #[arg(long, value_enum)]
    mode: ModeArg,
    /// Write the file here instead of to standard output.
    #[arg(long)]
    output: Option<PathBuf>,
    #[command(flatten)]
    store: StoreArgs,
}

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
        ReportsCommand::Balance { period } => {
            let (services, scope, from, to) = open_period(&period).await?;
            let csv = services.balance().balance_report(&scope, from, to).await?;
            write_report(&period, &csv)
        }
        ReportsCommand::Reconcile { connector, period } => {
            let (services, scope, from, to) = open_period(&period).await?;
            let rows = services
                .balance()
                .reconcile(&scope, &connector, from, to)
                .await?;
            let csv = tender_core::balance::reconcile::reconcile_csv(&rows);
            write_report(&period, &csv)?;
            let differ = rows.iter().filter(|r| r.problem.is_some()).count();
            eprintln!(
                "{} transactions held by {connector}: {} agree with the processor, {differ} do not",
                rows.len(),
                rows.len() - differ
            );
            if differ > 0 {
                bail!(
                    "{differ} of {} transactions differ from the processor's",
                    rows.len()
                );
            }
            Ok(())
        }
    }
}

/// The store, the scope and the [from, to) of a report's flags.
async fn open_period(period: &Period) -> anyhow::Result<(Services, Scope, i64, i64)> {
    let day = |flag: &str, s: &str| {
        tender_core::balance::report::parse_day(s)
            .ok_or_else(|| anyhow::anyhow!("--{flag} {s:?}: expected YYYY-MM-DD or Unix seconds"))
    };
    let (from, to) = (day("from", &period.from)?, day("to", &period.to)?);
    if to <= from {
        bail!("--to must be after --from");
    }
    let services = services(&period.store).await?;
    let scope = Scope {
        account: resolve_account(&services, &period.account).await?,
        mode: mode(period.mode),
    };
    Ok((services, scope, from, to))
}

/// `csv` to `--output`, else to standard output.
fn write_report(period: &Period, csv: &[u8]) -> anyhow::Result<()> {
    match &period.output {
        Some(path) => {
            std::fs::write(path, csv).with_context(|| format!("writing {}", path.display()))?
        }
        None => {
            use std::io::Write;
            std::io::stdout().write_all(csv)?;
        }
    }
    Ok(())
}
