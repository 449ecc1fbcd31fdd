//! `--scenario billing`: SIGKILL during a test clock's advance (and so during the renewals and
//! invoice payments it runs), restart, and check that a year of subscriptions was billed once
//! per period, every period.
//!
//! Subscriptions of every interval (weekly, monthly with quantities, monthly after a trial,
//! yearly) are made on one test clock, each customer with a card that pays. The clock is then
//! advanced a year in `--cycles` steps; after each advance is accepted the server is killed at a
//! random moment within `--max-uptime-ms`, restarted on the same data (with a short task lease,
//! so the dead process's claims lapse in seconds) and left to finish the advance. Then, per
//! subscription, it checks and prints:
//!
//! - periods billed twice (must be 0): two invoices for one period;
//! - periods skipped (must be 0): the invoices' periods follow each other from the start (or
//!   the trial's end) up to the clock's time, with none missing;
//! - invoices not paid (must be 0);
//! - invoices charged twice (must be 0): each invoice has exactly one succeeded payment, the
//!   one it names, and no succeeded payment names an invoice that is not its own;
//! - invoice numbers not gap-free (must be 0): the account's invoices carry one prefix and the
//!   numbers 1 to N, each once, however the kills fell;
//! - `tender ledger verify` and SQLite's `integrity_check`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use rand::Rng;
use serde_json::{json, Value};

use crate::{
    bootstrap_key, integrity_check, ledger_verify, list_all, percentile, start, Args, Backend,
    Client, Outcome,
};

/// 2027-01-31T10:00:00Z: a month end, so monthly periods clamp.
const START: i64 = 1_801_389_600;
const DAY: i64 = 86_400;
/// Seconds a restarted server waits before taking over the killed one's tasks.
const TASK_LEASE: &str = "5";

/// `(interval, quantity, trial days)` of subscription `i`.
fn plan(i: usize) -> (&'static str, i64, Option<i64>) {
    match i % 5 {
        0 => ("week", 1, None),
        1 => ("month", 1, None),
        2 => ("month", 3, None),
        3 => ("month", 1, Some(10)),
        _ => ("year", 1, None),
    }
}

#[derive(Default)]
struct Report {
    subscriptions: usize,
    invoices: usize,
    payments: usize,
    kills: usize,
    kills_mid_advance: usize,
    billed_twice: usize,
    skipped: usize,
    unpaid: usize,
    charged_twice: usize,
    /// Numbers missing from 1..=N, given twice, or malformed.
    numbering: usize,
}

pub async fn run(
    args: &Args,
    tender: &PathBuf,
    dir: &Path,
    env: &[(String, String)],
) -> anyhow::Result<()> {
    let serve_args = ["--task-lease-secs", TASK_LEASE];
    let started = Instant::now();
    let (mut server, lines) = start(tender, dir, env, &serve_args)?;
    let client = Client {
        http: reqwest::Client::new(),
        key: bootstrap_key(&lines)?,
    };
    let (clock, subscriptions) = subscribe_all(&client, &server.base, args.subscriptions).await?;

    // A year in `cycles` advances, each cut short by a kill.
    let mut report = Report {
        subscriptions: subscriptions.len(),
        ..Report::default()
    };
    let mut recoveries = Vec::new();
    let year_end = START + 365 * DAY;
    let steps = args.cycles.max(1);
    for step in 0..steps {
        let target = START + (year_end - START) * (step as i64 + 1) / steps as i64;
        advance(&client, &server.base, &clock, (step, target)).await?;
        let wait = rand::thread_rng().gen_range(0..=args.max_uptime_ms);
        tokio::time::sleep(Duration::from_millis(wait)).await;
        let (_, c) = client
            .get(&server.base, &format!("/test_helpers/test_clocks/{clock}"))
            .await?;
        if c["status"] == "advancing" {
            report.kills_mid_advance += 1;
        }
        server.child.kill()?; // SIGKILL
        server.child.wait()?;
        report.kills += 1;
        let t0 = Instant::now();
        server = start(tender, dir, env, &serve_args)?.0;
        wait_ready(&client, &server.base, &clock, target).await?;
        recoveries.push(t0.elapsed());
        eprintln!(
            "cycle {}/{steps}: clock at {target}, ready {:.1} s after the restart",
            step + 1,
            t0.elapsed().as_secs_f64()
        );
    }

    check_all(&client, &server.base, &subscriptions, &mut report).await?;
    server.child.kill()?;
    server.child.wait()?;
    let (ledger_ok, ledger_line) = ledger_verify(tender, dir, env)?;
    let integrity = integrity_check(args.backend, dir)?;

    println!(
        "tender-chaos billing: backend {}, {} kills ({} during an advance), {} subscriptions, {:.0} s",
        if args.backend == Backend::Sqlite {
            "sqlite"
        } else {
            "postgres"
        },
        report.kills,
        report.kills_mid_advance,
        report.subscriptions,
        started.elapsed().as_secs_f64()
    );
    let ok = print_report(
        &report,
        &mut recoveries,
        (ledger_ok, &ledger_line),
        (&integrity, args.backend),
    );
    if !ok {
        bail!("tender-chaos found problems");
    }
    println!("all checks passed");
    Ok(())
}

/// The year's subscriptions on a new test clock, made before any kill (`count` of them, plans
/// varied by [`plan`]): the clock's id and each subscription as created.
async fn subscribe_all(
    client: &Client,
    base: &str,
    count: usize,
) -> anyhow::Result<(String, Vec<Value>)> {
    let post = |path: String, key: String, body: Value| created(client, base, path, key, body);

    // The year's subscriptions, made before any kill.
    let clock = post(
        "/test_helpers/test_clocks".into(),
        "clock".into(),
        json!({"frozen_time": START, "name": "chaos"}),
    )
    .await?;
    let clock = clock["id"].as_str().context("clock id")?.to_string();
    let product = post(
        "/products".into(),
        "product".into(),
        json!({"name": "Plan"}),
    )
    .await?;
    let mut prices = HashMap::new();
    for interval in ["week", "month", "year"] {
        let p = post(
            "/prices".into(),
            format!("price-{interval}"),
            json!({"product": product["id"], "currency": "usd", "unit_amount": 1000,
                   "recurring": {"interval": interval}}),
        )
        .await?;
        prices.insert(interval, p["id"].as_str().context("price id")?.to_string());
    }
    let mut subscriptions = Vec::new();
    for i in 0..count {
        let (interval, quantity, trial) = plan(i);
        let cus = post(
            "/customers".into(),
            format!("customer-{i}"),
            json!({"email": format!("sub{i}@example.com"), "test_clock": clock}),
        )
        .await?;
        let pm = post(
            "/payment_methods".into(),
            format!("card-{i}"),
            json!({"type": "card", "card": {"number": "4242424242424242", "exp_month": 12,
                   "exp_year": 2099, "cvc": "123"}}),
        )
        .await?;
        let pm = pm["id"].as_str().context("payment method id")?.to_string();
        post(
            format!("/payment_methods/{pm}/attach"),
            format!("attach-{i}"),
            json!({"customer": cus["id"]}),
        )
        .await?;
        let mut body = json!({"customer": cus["id"],
                              "items": [{"price": prices[interval], "quantity": quantity}]});
        if let Some(days) = trial {
            body["trial_period_days"] = json!(days);
        }
        let sub = post("/subscriptions".into(), format!("subscription-{i}"), body).await?;
        let status = sub["status"].as_str().unwrap_or_default();
        if status
            != if trial.is_some() {
                "trialing"
            } else {
                "active"
            }
        {
            bail!("subscription {i} started {status}: {sub}");
        }
        subscriptions.push(sub);
    }
    Ok((clock, subscriptions))
}

/// Asks test clock `clock` to advance to `target` (the `step`-th advance, under its own key):
/// it must answer that it is advancing.
async fn advance(
    client: &Client,
    base: &str,
    clock: &str,
    (step, target): (usize, i64),
) -> anyhow::Result<()> {
    match client
        .post(
            base,
            &format!("/test_helpers/test_clocks/{clock}/advance"),
            &format!("advance-{step}"),
            &json!({"frozen_time": target}),
        )
        .await
    {
        Outcome::Answered(200, v) if v["status"] == "advancing" => Ok(()),
        Outcome::Answered(s, v) => bail!("advance {step}: {s} {v}"),
        Outcome::Lost => bail!("advance {step}: no answer"),
    }
}

/// Waits (five minutes at most) until the clock, restarted mid-advance, is ready at `target`.
async fn wait_ready(client: &Client, base: &str, clock: &str, target: i64) -> anyhow::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        if let Ok((200, c)) = client
            .get(base, &format!("/test_helpers/test_clocks/{clock}"))
            .await
        {
            if c["status"] == "ready" {
                if c["frozen_time"] != target {
                    bail!(
                        "the clock is ready at {} instead of {target}",
                        c["frozen_time"]
                    );
                }
                break;
            }
        }
        if Instant::now() > deadline {
            bail!("the advance to {target} never finished after a restart");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Ok(())
}

/// The report's table; whether every check passed.
fn print_report(
    report: &Report,
    recoveries: &mut [Duration],
    (ledger_ok, ledger_line): (bool, &str),
    (integrity, backend): (&str, Backend),
) -> bool {
    recoveries.sort();
    println!("| check | result |");
    println!("|---|---|");
    println!("| invoices over the year | {} |", report.invoices);
    println!("| succeeded payments | {} |", report.payments);
    println!("| periods billed twice | {} |", report.billed_twice);
    println!("| periods skipped | {} |", report.skipped);
    println!("| invoices not paid | {} |", report.unpaid);
    println!("| invoices charged twice | {} |", report.charged_twice);
    println!(
        "| invoice numbers missing, given twice or malformed | {} |",
        report.numbering
    );
    println!("| SQLite integrity_check | {integrity} |");
    println!("| tender ledger verify | {ledger_line} |");
    println!(
        "| restart to advance finished, median / max | {:.1} s / {:.1} s |",
        percentile(recoveries, 0.5).as_secs_f64(),
        percentile(recoveries, 1.0).as_secs_f64()
    );
    report.billed_twice == 0
        && report.skipped == 0
        && report.unpaid == 0
        && report.charged_twice == 0
        && report.numbering == 0
        && report.payments == report.invoices
        && ledger_ok
        && (integrity == "ok" || backend == Backend::Postgres)
}

/// Every subscription's periods and payments, and the account's invoice numbers, into `report`.
async fn check_all(
    client: &Client,
    base: &str,
    subscriptions: &[Value],
    report: &mut Report,
) -> anyhow::Result<()> {
    let now = START + 365 * DAY;
    for sub in subscriptions {
        check_subscription(client, base, sub, now, report).await?;
    }
    report.numbering = check_numbers(&list_all(client, base, "/invoices").await?);
    Ok(())
}

/// How far the invoices' numbers are from one prefix and 1..=N each once: numbers missing,
/// given twice or malformed.
fn check_numbers(invoices: &[Value]) -> usize {
    let mut prefixes = std::collections::HashSet::new();
    let mut seen: HashMap<u64, usize> = HashMap::new();
    let mut malformed = 0;
    for inv in invoices {
        match inv["number"].as_str().and_then(|n| n.rsplit_once('-')) {
            Some((prefix, n)) if n.len() >= 4 && n.parse::<u64>().is_ok() => {
                prefixes.insert(prefix.to_string());
                *seen.entry(n.parse().unwrap_or_default()).or_default() += 1;
            }
            _ => {
                eprintln!("invoice without a well-formed number: {inv}");
                malformed += 1;
            }
        }
    }
    let total = invoices.len() as u64;
    let missing = (1..=total).filter(|n| !seen.contains_key(n)).count();
    let twice: usize = seen.values().map(|c| c - 1).sum();
    if missing + twice > 0 || prefixes.len() > 1 {
        eprintln!("invoice numbers: {missing} missing, {twice} twice, prefixes {prefixes:?}");
    }
    missing + twice + malformed + prefixes.len().saturating_sub(1)
}

/// POSTs `body` to `path` under idempotency key `key`: the object made, or why not.
async fn created(
    client: &Client,
    base: &str,
    path: String,
    key: String,
    body: Value,
) -> anyhow::Result<Value> {
    match client.post(base, &path, &key, &body).await {
        Outcome::Answered(200, v) => Ok(v),
        Outcome::Answered(s, v) => bail!("POST {path}: {s} {v}"),
        Outcome::Lost => bail!("POST {path}: no answer"),
    }
}

/// Adds what subscription `sub` shows after the year to `r`.
async fn check_subscription(
    client: &Client,
    base: &str,
    sub: &Value,
    now: i64,
    r: &mut Report,
) -> anyhow::Result<()> {
    let id = sub["id"].as_str().unwrap_or_default();
    let customer = sub["customer"].as_str().unwrap_or_default();
    let mut invoices = list_all(client, base, &format!("/invoices?subscription={id}")).await?;
    invoices.sort_by_key(|i| i["period_start"].as_i64());
    r.invoices += invoices.len();
    // From the start, or the trial's end when there was one.
    let mut expect = sub["trial_end"]
        .as_i64()
        .or(sub["start_date"].as_i64())
        .or(sub["created"].as_i64())
        .context("subscription start")?;
    for inv in &invoices {
        let start = inv["period_start"].as_i64().unwrap_or_default();
        if start < expect {
            eprintln!("{id}: period starting {start} billed twice");
            r.billed_twice += 1;
            continue;
        }
        if start > expect {
            eprintln!("{id}: periods from {expect} to {start} skipped");
            r.skipped += 1;
        }
        expect = inv["period_end"].as_i64().unwrap_or_default();
        if inv["status"] != "paid" || inv["amount_paid"] != inv["amount_due"] {
            eprintln!("{id}: invoice not paid: {inv}");
            r.unpaid += 1;
        }
    }
    if expect <= now {
        eprintln!("{id}: billed up to {expect} while the clock is at {now}");
        r.skipped += 1;
    }
    // One succeeded payment per invoice: the one the invoice names.
    let payments = list_all(client, base, &format!("/payments?customer={customer}")).await?;
    let mut per_invoice: HashMap<&str, Vec<&str>> = HashMap::new();
    for p in payments.iter().filter(|p| p["status"] == "succeeded") {
        r.payments += 1;
        per_invoice
            .entry(p["invoice"].as_str().unwrap_or("none"))
            .or_default()
            .push(p["id"].as_str().unwrap_or_default());
    }
    for inv in &invoices {
        let inv_id = inv["id"].as_str().unwrap_or_default();
        let paid_by = per_invoice.remove(inv_id).unwrap_or_default();
        if paid_by.len() != 1 || inv["payment"].as_str() != paid_by.first().copied() {
            eprintln!("{id}: invoice {inv_id} paid by {paid_by:?}: {inv}");
            r.charged_twice += 1;
        }
    }
    for (inv, paid) in per_invoice {
        eprintln!("{id}: payments {paid:?} name invoice {inv}, not one of this subscription's");
        r.charged_twice += 1;
    }
    Ok(())
}
