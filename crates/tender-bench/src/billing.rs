//! `--billing N`: how long test clocks take to advance a year of `N` subscriptions.
//!
//! A fresh Tender gets `N` customers, each with a saved card and a monthly subscription (made
//! through the API, 32 at a time), on test clocks of at most [`PER_CLOCK`] customers each (the
//! account's quota per clock). Each clock is then advanced one year in one `POST …/advance` (12
//! renewals per subscription: an invoice and a card payment each, with its ledger postings and
//! events), [`AT_ONCE`] clocks at a time (the account's quota of clocks advancing at once), and
//! the time until the last is `ready` again is printed with the invoices and payments they
//! made, per second. Server CPU is read from /proc.

use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use futures::StreamExt;
use serde_json::{json, Value};

use crate::load::{Call, Target};
use crate::process::cpu_seconds;
use crate::tender::Tender;

/// 2027-01-31T10:00:00Z.
const START: i64 = 1_801_389_600;
const YEAR: i64 = 365 * 86_400;
/// Customers per test clock: the account's quota.
const PER_CLOCK: usize = 100;
/// Clocks advancing at once: the account's quota.
const AT_ONCE: usize = 3;

async fn post(target: &Target, path: String, body: Value) -> anyhow::Result<Value> {
    target.json(Call::post_json(path, body.to_string())).await
}

async fn subscribe(target: Target, clock: String, price: String, i: usize) -> anyhow::Result<()> {
    let cus = post(
        &target,
        "/customers".into(),
        json!({"email": format!("b{i}@example.com"), "test_clock": clock}),
    )
    .await?;
    let pm = post(
        &target,
        "/payment_methods".into(),
        json!({"type": "card", "card": {"number": "4242424242424242", "exp_month": 12,
               "exp_year": 2099, "cvc": "123"}}),
    )
    .await?;
    let pm = pm["id"].as_str().context("payment method id")?;
    post(
        &target,
        format!("/payment_methods/{pm}/attach"),
        json!({"customer": cus["id"]}),
    )
    .await?;
    let sub = post(
        &target,
        "/subscriptions".into(),
        json!({"customer": cus["id"], "items": [{"price": price}]}),
    )
    .await?;
    if sub["status"] != "active" {
        bail!("subscription {i} started {}", sub["status"]);
    }
    Ok(())
}

/// How many objects `path` lists (paging through them).
async fn count(target: &Target, path: &str) -> anyhow::Result<usize> {
    let mut n = 0;
    let mut after = String::new();
    loop {
        let page = target
            .json(Call::get(format!("{path}&limit=100{after}")))
            .await?;
        let data = page["data"].as_array().context("a list")?;
        n += data.len();
        match data.last().and_then(|o| o["id"].as_str()) {
            Some(id) if page["has_more"] == true => after = format!("&starting_after={id}"),
            _ => return Ok(n),
        }
    }
}

/// Advances `clock` a year and waits until it is ready.
async fn advance_year(target: &Target, clock: &str) -> anyhow::Result<()> {
    let started = Instant::now();
    post(
        target,
        format!("/test_helpers/test_clocks/{clock}/advance"),
        json!({"frozen_time": START + YEAR - 1}),
    )
    .await?;
    loop {
        let c = target
            .json(Call::get(format!("/test_helpers/test_clocks/{clock}")))
            .await?;
        if c["status"] == "ready" {
            return Ok(());
        }
        if started.elapsed() > Duration::from_secs(3600) {
            bail!("the advance did not finish within an hour");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Makes `n` monthly subscriptions on test clocks, advances them a year, prints the time it
/// took.
pub async fn run(tender: &Tender, name: &str, n: usize) -> anyhow::Result<()> {
    let target = &tender.target;
    let mut clocks = Vec::new();
    for _ in 0..n.div_ceil(PER_CLOCK).max(1) {
        let clock = post(
            target,
            "/test_helpers/test_clocks".into(),
            json!({"frozen_time": START}),
        )
        .await?;
        clocks.push(clock["id"].as_str().context("clock id")?.to_string());
    }
    let product = post(target, "/products".into(), json!({"name": "Plan"})).await?;
    let price = post(
        target,
        "/prices".into(),
        json!({"product": product["id"], "currency": "usd", "unit_amount": 1500,
               "recurring": {"interval": "month"}}),
    )
    .await?;
    let price = price["id"].as_str().context("price id")?.to_string();

    let setup = Instant::now();
    let mut pending = futures::stream::iter((0..n).map(|i| {
        let clock = clocks[i % clocks.len()].clone();
        subscribe(target.clone(), clock, price.clone(), i)
    }))
    .buffer_unordered(32);
    while let Some(r) = pending.next().await {
        r?;
    }
    let setup = setup.elapsed();

    let cpu_before = cpu_seconds(tender.server.pid());
    let started = Instant::now();
    let mut advancing = futures::stream::iter(clocks.iter().map(|c| advance_year(target, c)))
        .buffer_unordered(AT_ONCE);
    while let Some(r) = advancing.next().await {
        r?;
    }
    let took = started.elapsed().as_secs_f64();
    let cpu = cpu_seconds(tender.server.pid())
        .zip(cpu_before)
        .map(|(a, b)| a - b);
    // What the year made: 11 renewals per subscription (the first period was paid at start),
    // every invoice paid.
    let paid = count(target, "/invoices?status=paid").await?;
    if paid != n * 12 {
        bail!("{paid} paid invoices after the year, expected {}", n * 12);
    }
    let renewals = n * 11;
    println!();
    println!(
        "## Billing: {name}, a year of {n} monthly subscriptions on {} test clocks ({AT_ONCE} advancing at once)",
        clocks.len()
    );
    println!();
    println!("| measure | value |");
    println!("|---|---:|");
    println!(
        "| setup: {n} customers, cards, subscriptions (first invoice paid) | {:.1} s |",
        setup.as_secs_f64()
    );
    println!("| one-year advances, to the last ready | **{took:.1} s** |");
    println!("| renewals in it (invoice + payment each) | {renewals} |");
    println!("| renewals per second | {:.0} |", renewals as f64 / took);
    if let Some(cpu) = cpu {
        println!(
            "| server CPU per renewal | {:.0} µs |",
            cpu * 1e6 / renewals as f64
        );
    }
    Ok(())
}
