//! `tender-bench`: Tender's benchmark harness. One command starts the release `tender` binary on
//! a fresh SQLite data dir (and on a fresh PostgreSQL schema when the database is reachable),
//! drives the API for a fixed time at each concurrency, measures the same-stack ceilings (a JSON
//! echo server; a bare durable PostgreSQL insert) and optionally a peer (localstripe), and
//! prints one table with ratios and the issue's targets marked met or missed.
//!
//! # Layout
//! - [`load`]: the load generator (hyper client pool, N workers, latency percentiles).
//! - [`process`]: child servers (ready on `listening on`, peak RSS from /proc).
//! - [`servers`]: the echo and bare-insert servers (`tender-bench echo`, `tender-bench pg-insert`).
//! - [`tender`]: starting Tender and the five operations.
//! - [`scale`]: `--scale`, bulk loading and list/retrieve latency by table size.
//! - [`peer`]: `--peer localstripe`.
//! - [`storage`]: `--storage N`, bytes stored per payment, table by table.
//! - [`billing`]: `--billing N`, a test clock's one-year advance of `N` subscriptions.
//! - [`pg`]: PostgreSQL helpers.
//!
//! Not part of `cargo test`: run it with `cargo run --release -p tender-bench`.

mod baseline;
mod billing;
mod load;
mod peer;
mod pg;
mod process;
mod report;
mod scale;
mod servers;
mod storage;
mod tender;

use baseline::{bare_insert, Baseline, CREATE_ROWS};
use report::{cpu_model, print_report, Report};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context};
use clap::{Args, Parser, Subcommand, ValueEnum};
use rand::Rng;

use load::{drive_server, Call, MakeRequest, Stats, Target};
use process::Server;
use tender::{Backend, Tender, OPERATIONS};

#[derive(Parser)]
#[command(name = "tender-bench", about = "Benchmark harness for Tender")]
struct Cli {
    #[command(subcommand)]
    command: Option<Sub>,
    #[command(flatten)]
    run: RunArgs,
}

#[derive(Subcommand)]
enum Sub {
    /// The echo ceiling server (started by the harness itself).
    Echo {
        #[arg(long, default_value = "127.0.0.1:0")]
        listen: SocketAddr,
    },
    /// The bare durable PostgreSQL insert server (started by the harness itself).
    PgInsert {
        #[arg(long, default_value = "127.0.0.1:0")]
        listen: SocketAddr,
        #[arg(long)]
        database_url: String,
        /// Rows each request stores, in one statement.
        #[arg(long, default_value_t = 1)]
        rows: usize,
    },
    /// The bare durable SQLite insert server (started by the harness itself).
    SqliteInsert {
        #[arg(long, default_value = "127.0.0.1:0")]
        listen: SocketAddr,
        /// The SQLite file (created if missing).
        #[arg(long)]
        path: PathBuf,
        /// Rows each request stores, in one transaction.
        #[arg(long, default_value_t = 1)]
        rows: usize,
    },
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Peer {
    Localstripe,
}

#[derive(Args)]
struct RunArgs {
    /// The release `tender` binary (default: `release/tender` in this binary's target dir,
    /// built first with `cargo build --release -p tender` when run through cargo).
    #[arg(long)]
    tender: Option<PathBuf>,
    /// Seconds each (operation, concurrency) cell runs.
    #[arg(long, default_value_t = 5)]
    seconds: u64,
    /// Concurrency levels.
    #[arg(long, value_delimiter = ',', default_value = "1,8,64")]
    concurrency: Vec<usize>,
    /// PostgreSQL database for the PostgreSQL runs (a fresh schema is made and dropped).
    #[arg(long, default_value = pg::DEFAULT_URL)]
    database_url: String,
    /// Skip PostgreSQL even when it is reachable.
    #[arg(long)]
    no_postgres: bool,
    /// Skip SQLite (and the echo ceiling): PostgreSQL rows only.
    #[arg(long)]
    no_sqlite: bool,
    /// Also drive a peer and print Tender's create rate as a multiple of it.
    #[arg(long)]
    peer: Option<Peer>,
    /// Also bulk-load payments and compare list/retrieve latency at 10k and at --scale-rows.
    #[arg(long)]
    scale: bool,
    /// Only the scale measurement (implies --scale).
    #[arg(long)]
    scale_only: bool,
    /// Rows of the large scale point.
    #[arg(long, default_value_t = 1_000_000)]
    scale_rows: u64,
    /// Concurrency of the scale measurements.
    #[arg(long, default_value_t = 8)]
    scale_concurrency: usize,
    /// Only these operations (comma-separated names as printed, e.g. `create payment`).
    #[arg(long, value_delimiter = ',')]
    operations: Vec<String>,
    /// Also create this many payments through the API on a fresh store and print the bytes
    /// stored per payment, table by table (payment, event, idempotency record, indexes).
    #[arg(long)]
    storage: Option<u64>,
    /// Only the storage measurement (with --storage).
    #[arg(long)]
    storage_only: bool,
    /// Also time a test clock's one-year advance of this many monthly subscriptions.
    #[arg(long)]
    billing: Option<usize>,
    /// Only the billing measurement (with --billing).
    #[arg(long)]
    billing_only: bool,
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    match cli.command {
        Some(Sub::Echo { listen }) => rt.block_on(servers::run_echo(listen)),
        Some(Sub::PgInsert {
            listen,
            database_url,
            rows,
        }) => rt.block_on(servers::run_pg_insert(listen, &database_url, rows)),
        Some(Sub::SqliteInsert { listen, path, rows }) => {
            rt.block_on(servers::run_sqlite_insert(listen, &path, rows))
        }
        None => rt.block_on(run(cli.run)),
    }
}

/// The release `tender` beside this binary's target dir, built first when run through cargo.
fn tender_binary(args: &RunArgs) -> anyhow::Result<PathBuf> {
    if let Some(p) = &args.tender {
        if !p.exists() {
            bail!("--tender {}: no such file", p.display());
        }
        return Ok(p.clone());
    }
    let exe = std::env::current_exe()?;
    let target_dir = exe
        .parent()
        .and_then(Path::parent)
        .context("cannot locate the target dir")?;
    let bin = target_dir.join("release").join("tender");
    if let Ok(cargo) = std::env::var("CARGO") {
        eprintln!("building the release tender binary (cargo build --release -p tender)…");
        let status = Command::new(cargo)
            .args(["build", "--release", "-p", "tender"])
            .env("CARGO_TARGET_DIR", target_dir)
            .status()?;
        if !status.success() {
            bail!("cargo build --release -p tender failed");
        }
    }
    if !bin.exists() {
        bail!(
            "{} not found: run `cargo build --release -p tender` first or pass --tender PATH",
            bin.display()
        );
    }
    Ok(bin)
}

/// A 309-byte JSON body for the echo ceiling (the size of the issue's reference figure).
fn echo_body() -> String {
    let mut body = String::from(
        r#"{"amount":2000,"currency":"usd","description":"Benchmark order","payment_method":{"type":"card","card":{"number":"4242424242424242","exp_month":12,"exp_year":2034,"cvc":"123"}},"metadata":{"order_id":"6735","note":""#,
    );
    while body.len() < 309 - 3 {
        body.push('x');
    }
    body.push_str(r#""}}"#);
    body
}

/// Results keyed by (row label, operation, concurrency).
type Table = BTreeMap<(String, String, usize), Stats>;

async fn run(args: RunArgs) -> anyhow::Result<()> {
    let bin = tender_binary(&args)?;
    let exe = std::env::current_exe()?;
    let client = load::client();
    let run_id = format!("{:08x}", rand::thread_rng().gen::<u32>());
    let logs = tempfile::Builder::new()
        .prefix("tender-bench-logs-")
        .tempdir()?;
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!(
        "# tender-bench: {cores} cores ({}), load generator on the same machine; {} s per cell",
        cpu_model(),
        args.seconds
    );

    let pg_ok = postgres_reachable(&args).await;

    let mut report = Report {
        seconds: args.seconds,
        levels: args.concurrency.clone(),
        echo: BTreeMap::new(),
        rows: Vec::new(),
        table: BTreeMap::new(),
        rss: Vec::new(),
        notes: Vec::new(),
    };

    if !args.scale_only && !args.storage_only && !args.billing_only {
        echo_ceiling(&exe, &client, &args, logs.path(), &mut report).await?;
        for (name, backend) in backends(&args, pg_ok) {
            let base = match backend {
                Backend::Sqlite => Baseline::Sqlite,
                Backend::Postgres { .. } => Baseline::Postgres,
            };
            for rows in [1, CREATE_ROWS] {
                bare_insert(&exe, &client, &args, &logs, &mut report, base, rows).await?;
            }
            bench_tender(&bin, &backend, name, &client, &args, &run_id, &mut report).await?;
        }
        if args.peer == Some(Peer::Localstripe) {
            connector_peer(&bin, &client, &args, (&run_id, logs.path()), &mut report).await?;
        }
        print_report(&report);
    }

    if let Some(n) = args.billing {
        for (name, backend) in backends(&args, pg_ok) {
            let t = Tender::start(&bin, &backend, client.clone()).await?;
            let result = billing::run(&t, name, n).await;
            t.cleanup().await;
            result?;
        }
    }

    if let Some(n) = args.storage {
        let backends = backends(&args, pg_ok);
        for (name, backend) in backends {
            let t = Tender::start(&bin, &backend, client.clone()).await?;
            let result = storage::run(&t, &backend, name, n).await;
            t.cleanup().await;
            result?;
        }
    }

    if args.scale || args.scale_only {
        scale_report(&bin, &client, &args, pg_ok).await?;
    }
    Ok(())
}

/// Whether PostgreSQL takes part: not with `--no-postgres`, else when it answers (its
/// durability settings printed).
async fn postgres_reachable(args: &RunArgs) -> bool {
    if args.no_postgres {
        false
    } else {
        match pg::durability_settings(&args.database_url).await {
            Ok(s) => {
                println!("# PostgreSQL {} reachable: {s}", args.database_url);
                true
            }
            Err(e) => {
                println!("# PostgreSQL not reachable ({e:#}): PostgreSQL rows skipped");
                false
            }
        }
    }
}

/// The ceiling: the same stack answering a parsed-and-echoed JSON body, at each concurrency.
async fn echo_ceiling(
    exe: &Path,
    client: &load::HttpClient,
    args: &RunArgs,
    logs: &Path,
    report: &mut Report,
) -> anyhow::Result<()> {
    let duration = Duration::from_secs(args.seconds);
    // The ceiling: the same stack answering a parsed-and-echoed JSON body.
    let mut cmd = Command::new(exe);
    cmd.args(["echo", "--listen", "127.0.0.1:0"]);
    let echo = Server::start(cmd, &logs.join("echo.log"), Duration::from_secs(10))?;
    let target = Target::new(client.clone(), &echo.base, None)?;
    let body = echo_body();
    for &c in &args.concurrency {
        let b = body.clone();
        let make: MakeRequest = Arc::new(move |_, _| Call::post_json("/echo", b.clone()));
        let s = drive_server(&target, Some(echo.pid()), c, duration, make).await;
        eprintln!("echo c{c}: {:.0} req/s", s.rps());
        report.echo.insert(c, s.clone());
        report.put("echo ceiling", "POST 309-byte JSON", c, s);
    }
    report
        .rss
        .push(("echo".into(), echo.peak_rss().unwrap_or(0)));
    echo.stop();
    Ok(())
}

/// `--peer localstripe`: localstripe's own charge rate, then what a connector adds (Tender on
/// SQLite sending each payment to a fresh localstripe through a stripe connector).
async fn connector_peer(
    bin: &Path,
    client: &load::HttpClient,
    args: &RunArgs,
    (run_id, logs): (&str, &Path),
    report: &mut Report,
) -> anyhow::Result<()> {
    let duration = Duration::from_secs(args.seconds);
    let ls = peer::LocalStripe::start(client.clone(), logs).await?;
    for &c in &args.concurrency {
        let make = ls.create_charge(run_id, c);
        let s = drive_server(&ls.target, Some(ls.server.pid()), c, duration, make).await;
        eprintln!("localstripe c{c}: {:.0} req/s", s.rps());
        report.put("localstripe", "POST /v1/charges", c, s);
    }
    report
        .rss
        .push(("localstripe".into(), ls.server.peak_rss().unwrap_or(0)));
    ls.server.stop();
    // What a connector adds: Tender (SQLite) sending each payment to a fresh localstripe
    // through a stripe connector (PaymentMethod, PaymentIntent, confirm: three calls).
    let ls = peer::LocalStripe::start(client.clone(), logs).await?;
    let t = Tender::start(bin, &Backend::Sqlite, client.clone()).await?;
    let connected = async {
        t.target
            .json(load::Call::post_json(
                "/connectors",
                format!(
                    r#"{{"type":"stripe","api_key":"sk_test_bench","api_base":"{}","raw_card_data":true}}"#,
                    ls.server.base
                ),
            ))
            .await?;
        for &c in &args.concurrency {
            let make = tender::operation(
                "create payment",
                &format!("{run_id}-connector"),
                c,
                &Arc::new(Vec::new()),
                &Arc::new(Vec::new()),
            );
            let s = drive_server(&t.target, Some(t.server.pid()), c, duration, make).await;
            eprintln!(
                "sqlite + stripe connector create payment c{c}: {:.0} req/s p50 {:.2} ms errors {}",
                s.rps(),
                s.p50_ms,
                s.errors
            );
            report.put("sqlite + stripe connector", "create payment", c, s);
        }
        anyhow::Ok(())
    }
    .await;
    t.cleanup().await;
    ls.server.stop();
    connected?;
    Ok(())
}

/// `--scale`: list and retrieve latency at 10k payments and at `--scale-rows`, per backend.
async fn scale_report(
    bin: &Path,
    client: &load::HttpClient,
    args: &RunArgs,
    pg_ok: bool,
) -> anyhow::Result<()> {
    let duration = Duration::from_secs(args.seconds);
    let backends = backends(args, pg_ok);
    let sizes = [10_000, args.scale_rows];
    println!();
    println!(
        "## Scale: list (limit 10) and retrieve at c{}, {} s each",
        args.scale_concurrency, args.seconds
    );
    println!();
    println!("| backend | payments | op | req/s | p50 ms | p99 ms | errors | server CPU µs/req | bytes/payment | load s |");
    println!("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|");
    for (name, backend) in backends {
        let t = Tender::start(bin, &backend, client.clone()).await?;
        let points = scale::run(&t, &sizes, args.scale_concurrency, duration).await;
        t.cleanup().await;
        let points = points?;
        for p in &points {
            for (op, s) in [("retrieve", &p.retrieve), ("list", &p.list)] {
                println!(
                    "| {name} | {} | {op} | {:.0} | {:.2} | {:.2} | {} | {} | {:.0} | {:.1} |",
                    p.rows,
                    s.rps(),
                    s.p50_ms,
                    s.p99_ms,
                    s.errors,
                    s.server_cpu_us.map_or("-".into(), |c| format!("{c:.0}")),
                    p.bytes_per_payment,
                    p.load_seconds
                );
            }
        }
        if let [small, large] = &points[..] {
            for (op, a, b) in [
                ("retrieve", &small.retrieve, &large.retrieve),
                ("list", &small.list, &large.list),
            ] {
                let r50 = b.p50_ms / a.p50_ms;
                let r99 = b.p99_ms / a.p99_ms;
                let met = r50 <= 1.2 && r99 <= 1.2;
                println!(
                    "- {name} {op}: p50 {:.2} → {:.2} ms (×{r50:.2}), p99 {:.2} → {:.2} ms (×{r99:.2}) at {}→{} rows: target ≤ ×1.20 {}",
                    a.p50_ms, b.p50_ms, a.p99_ms, b.p99_ms, small.rows, large.rows,
                    if met { "MET" } else { "MISSED" }
                );
            }
        }
    }
    Ok(())
}

/// The stores a run measures: SQLite unless `--no-sqlite`, PostgreSQL when reachable.
fn backends(args: &RunArgs, pg_ok: bool) -> Vec<(&'static str, Backend)> {
    let mut out = Vec::new();
    if !args.no_sqlite {
        out.push(("sqlite", Backend::Sqlite));
    }
    if pg_ok {
        out.push((
            "postgres",
            Backend::Postgres {
                admin_url: args.database_url.clone(),
            },
        ));
    }
    out
}

/// Starts Tender on `backend`, prepares data, and drives every operation at every level.
async fn bench_tender(
    bin: &Path,
    backend: &Backend,
    name: &str,
    client: &load::HttpClient,
    args: &RunArgs,
    run_id: &str,
    report: &mut Report,
) -> anyhow::Result<()> {
    let duration = Duration::from_secs(args.seconds);
    let t = Tender::start(bin, backend, client.clone()).await?;
    let result = async {
        let retrieve_ids = Arc::new(tender::create_payments(&t.target, 200, false).await?);
        let max_c = args.concurrency.iter().copied().max().unwrap_or(1);
        let refund_ids = Arc::new(tender::create_payments(&t.target, max_c, true).await?);
        for op in OPERATIONS {
            if !args.operations.is_empty() && !args.operations.iter().any(|o| o == op) {
                continue;
            }
            for &c in &args.concurrency {
                let make = tender::operation(op, run_id, c, &retrieve_ids, &refund_ids);
                let target = if op == tender::V1_CREATE {
                    &t.v1
                } else {
                    &t.target
                };
                let s = drive_server(target, Some(t.server.pid()), c, duration, make).await;
                eprintln!(
                    "{name} {op} c{c}: {:.0} req/s p99 {:.2} ms errors {}",
                    s.rps(),
                    s.p99_ms,
                    s.errors
                );
                report.put(name, op, c, s);
            }
        }
        anyhow::Ok(())
    }
    .await;
    report
        .rss
        .push((format!("tender ({name})"), t.server.peak_rss().unwrap_or(0)));
    t.cleanup().await;
    result
}
