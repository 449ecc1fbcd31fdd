//! What a run prints: the table of every operation, backend and concurrency with its throughput,
//! latencies, errors and CPU, and the ratios against the echo ceiling and the bare insert.

use crate::baseline::{BARE_INSERT_OP, CREATE_ROWS};
use crate::load::Stats;
use crate::Table;
use std::collections::BTreeMap;

pub(crate) struct Report {
    pub(crate) seconds: u64,
    pub(crate) levels: Vec<usize>,
    pub(crate) echo: BTreeMap<usize, Stats>,
    pub(crate) rows: Vec<(String, String)>,
    pub(crate) table: Table,
    pub(crate) rss: Vec<(String, u64)>,
    pub(crate) notes: Vec<String>,
}

impl Report {
    pub(crate) fn put(&mut self, row: &str, op: &str, c: usize, s: Stats) {
        let key = (row.to_string(), op.to_string());
        if !self.rows.contains(&key) {
            self.rows.push(key);
        }
        if s.errors > 0 {
            self.notes.push(format!(
                "{row} {op} c{c}: {} errors, e.g. {}",
                s.errors,
                s.sample_error.clone().unwrap_or_default()
            ));
        }
        self.table.insert((row.into(), op.into(), c), s);
    }

    fn get(&self, row: &str, op: &str, c: usize) -> Option<&Stats> {
        self.table.get(&(row.to_string(), op.to_string(), c))
    }
}

pub(crate) fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into())
}
pub(crate) fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 {
        a / b
    } else {
        0.0
    }
}

/// `; vs the 9-row insert …`: the create against the bare insert of as many rows.
pub(crate) fn same_rows(r: &Report, base: &str, create: &Stats, c: usize) -> String {
    let row = format!("{base} ×{CREATE_ROWS}");
    match r.get(&row, BARE_INSERT_OP, c) {
        Some(b) => format!(
            "; vs the bare insert of {CREATE_ROWS} rows per request {:.0} req/s = {:.0}%",
            b.rps(),
            ratio(create.rps(), b.rps()) * 100.0
        ),
        None => String::new(),
    }
}

pub(crate) fn print_report(r: &Report) {
    println!();
    println!(
        "## Throughput and latency ({} s per cell; ×echo = req/s ÷ echo ceiling at the same concurrency)",
        r.seconds
    );
    println!();
    println!("| server | operation | conc | req/s | ×echo | p50 ms | p99 ms | p99.9 ms | errors | server CPU µs/req |");
    println!("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (row, op) in &r.rows {
        for &c in &r.levels {
            let Some(s) = r.get(row, op, c) else { continue };
            let echo = r.echo.get(&c).map_or(0.0, Stats::rps);
            println!(
                "| {row} | {op} | {c} | {:.0} | {:.2} | {:.2} | {:.2} | {:.2} | {} | {} |",
                s.rps(),
                ratio(s.rps(), echo),
                s.p50_ms,
                s.p99_ms,
                s.p999_ms,
                s.errors,
                s.server_cpu_us.map_or("-".into(), |c| format!("{c:.0}"))
            );
        }
    }
    println!();
    println!("Peak RSS (VmHWM over the whole run of each server):");
    for (name, bytes) in &r.rss {
        println!("- {name}: {:.1} MiB", *bytes as f64 / (1024.0 * 1024.0));
    }
    let total_errors: u64 = r.table.values().map(|s| s.errors).sum();
    println!();
    println!("Errors (non-2xx or transport) over every cell: {total_errors}");
    for n in &r.notes {
        println!("- {n}");
    }

    print_targets(r);
}

/// The targets the run can judge, each MET or MISSED.
fn print_targets(r: &Report) {
    println!();
    println!("## Targets");
    println!();
    let verdict = |ok: bool| if ok { "MET" } else { "MISSED" };
    let top = r.levels.iter().copied().max().unwrap_or(64);
    let echo_top = r.echo.get(&top).map_or(0.0, Stats::rps);
    for &c in &r.levels {
        if let (Some(s), Some(b)) = (
            r.get("sqlite", "create payment", c),
            r.get("sqlite bare insert", BARE_INSERT_OP, c),
        ) {
            let x = ratio(s.rps(), b.rps());
            println!(
                "- SQLite create payment at c{c}: {:.0} vs bare insert {:.0} req/s = {:.0}% (target ≥ 50%: {}), p99 {:.2} ms (target ≤ 10 ms: {}), {:.0} µs server CPU per create (target ≤ 50: {}){}",
                s.rps(), b.rps(), x * 100.0, verdict(x >= 0.5), s.p99_ms, verdict(s.p99_ms <= 10.0),
                s.server_cpu_us.unwrap_or(f64::NAN), verdict(s.server_cpu_us.is_some_and(|u| u <= 50.0)),
                same_rows(r, "sqlite bare insert", s, c)
            );
        }
    }
    for row in ["sqlite", "postgres"] {
        if let Some(s) = r.get(row, "retrieve payment", top) {
            let x = ratio(s.rps(), echo_top);
            println!(
                "- {row} retrieve at c{top}: {:.0}% of echo (target ≥ 70%: {})",
                x * 100.0,
                verdict(x >= 0.7)
            );
        }
    }
    for &c in &r.levels {
        if let (Some(p), Some(b)) = (
            r.get("postgres", "create payment", c),
            r.get("pg bare insert", BARE_INSERT_OP, c),
        ) {
            let x = ratio(p.rps(), b.rps());
            println!(
                "- PostgreSQL create payment at c{c}: {:.0} vs bare insert {:.0} req/s = {:.0}% (target ≥ 80%: {}){}",
                p.rps(), b.rps(), x * 100.0, verdict(x >= 0.8),
                same_rows(r, "pg bare insert", p, c)
            );
        }
    }
    // Issue 35: Stripe's /v1 costs at most 15% more server CPU than /v2 for the same payment.
    for row in ["sqlite", "postgres"] {
        for &c in &r.levels {
            if let (Some(v2), Some(v1)) = (
                r.get(row, "create payment", c)
                    .and_then(|s| s.server_cpu_us),
                r.get(row, crate::tender::V1_CREATE, c)
                    .and_then(|s| s.server_cpu_us),
            ) {
                let x = ratio(v1, v2);
                println!(
                    "- {row} /v1 create-and-confirm at c{c}: {v1:.0} vs /v2 create {v2:.0} µs server CPU = ×{x:.2} (target ≤ ×1.15: {})",
                    verdict(x <= 1.15)
                );
            }
        }
    }
    for &c in &r.levels {
        if let (Some(t), Some(l)) = (
            r.get("sqlite", "create payment", c),
            r.get("localstripe", "POST /v1/charges", c),
        ) {
            let x = ratio(t.rps(), l.rps());
            println!(
                "- vs localstripe at c{c}: Tender (SQLite) {:.0} vs {:.0} charges/s = ×{x:.0} (target ≥ ×100: {})",
                t.rps(), l.rps(), verdict(x >= 100.0)
            );
        }
    }
}
