//! `tender-chaos`: proof that Tender loses nothing it acknowledged.
//!
//! Many concurrent clients create payments (some for manual capture), capture them and refund
//! them in parts, each request with its own idempotency key, while a receiver on 127.0.0.1
//! collects webhooks. The server is killed with SIGKILL at random moments, restarted on the
//! same data, and every request that was not answered is retried with its key until it is.
//! Then it checks and prints:
//!
//! - acknowledged writes lost (must be 0): every acknowledged payment, capture and refund is
//!   found in the state it was acknowledged in;
//! - objects duplicated per key (must be 0): each key's payment exists once;
//! - refunds exceeding captures (must be 0): per payment, refunds ≤ captured and the payment's
//!   `amount_refunded` equals the sum of its refunds;
//! - committed events never delivered (must be 0): every event is delivered at least once;
//! - SQLite `integrity_check` (must be ok);
//! - restart-to-first-success time (median, p99).
//!
//! `--scenario billing` ([`billing`]) kills it instead while a test clock advances a year of
//! subscriptions, and checks that no period was billed twice or skipped.
//!
//! `--scenario failover` ([`failover`]) kills PostgreSQL's primary instead, under Tender nodes
//! on a multi-host URL, promotes its synchronous standby, and checks that every node serves
//! again within 15 s and that nothing acknowledged was lost or done twice; with `--manager
//! pg-auto-failover` pg_auto_failover's monitor, not the harness, promotes ([`auto_failover`]).
//!
//! `cargo run --release -p tender-chaos -- --cycles 50` (see docs/reliability.md).

mod auto_failover;
mod billing;
mod checks;
mod cluster;
mod failover;
mod workload;

use checks::{integrity_check, ledger_verify, list_all, receiver, verify, wait_delivered, Report};
use workload::{body_for, next_op, record, retry_unanswered, Ledger};

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use clap::{Parser, ValueEnum};
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};

#[derive(Parser)]
#[command(
    about = "SIGKILL Tender at random moments under load and verify nothing acknowledged is lost"
)]
struct Args {
    /// Kill/restart cycles.
    #[arg(long, default_value_t = 50)]
    cycles: usize,
    /// Concurrent clients.
    #[arg(long, default_value_t = 16)]
    clients: usize,
    /// Longest time the server runs under load before a kill, in milliseconds.
    #[arg(long, default_value_t = 1500)]
    max_uptime_ms: u64,
    #[arg(long, value_enum, default_value_t = Backend::Sqlite)]
    backend: Backend,
    /// The tender binary (default: next to this one).
    #[arg(long)]
    tender: Option<PathBuf>,
    /// PostgreSQL server for `--backend postgres` (a fresh schema is created in it).
    #[arg(
        long,
        env = "TENDER_TEST_DATABASE_URL",
        default_value = "postgres://postgres@127.0.0.1:5432/test"
    )]
    postgres: String,
    /// What runs while the server is killed.
    #[arg(long, value_enum, default_value_t = Scenario::Payments)]
    scenario: Scenario,
    /// Subscriptions on the test clock (`--scenario billing`).
    #[arg(long, default_value_t = 24)]
    subscriptions: usize,
    /// Tender processes on the cluster (`--scenario failover`).
    #[arg(long, default_value_t = 2)]
    nodes: usize,
    /// PostgreSQL's programs (`--scenario failover`; default: the newest under
    /// /usr/lib/postgresql).
    #[arg(long)]
    pg_bin: Option<PathBuf>,
    /// Who promotes the standby (`--scenario failover`).
    #[arg(long, value_enum, default_value_t = Manager::Harness)]
    manager: Manager,
    /// pg_auto_failover's program (`--manager pg-auto-failover`).
    #[arg(long, default_value = "pg_autoctl")]
    pg_autoctl: PathBuf,
    /// Run pg_auto_failover with its own default timings, not the shorter ones of
    /// docs/operations.md (`--manager pg-auto-failover`).
    #[arg(long)]
    manager_defaults: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Manager {
    /// The harness promotes the standby the moment the primary is stopped.
    Harness,
    /// pg_auto_failover's monitor detects the dead primary and promotes ([`auto_failover`]).
    PgAutoFailover,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Scenario {
    /// Payments created, captured and refunded by concurrent clients.
    Payments,
    /// A test clock advancing a year of subscriptions ([`billing`]).
    Billing,
    /// PostgreSQL's primary stopped and its standby promoted under load ([`failover`]).
    Failover,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Backend {
    Sqlite,
    Postgres,
}

/// `tender serve` arguments of the payments scenario: webhooks retried at once.
const PAYMENT_ARGS: &[&str] = &["--webhook-retry-scale", "0.001"];

const VAULT_KEY: &str = "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0";

struct Server {
    child: Child,
    base: String,
}

fn start(
    tender: &PathBuf,
    data_dir: &std::path::Path,
    env: &[(String, String)],
    extra: &[&str],
) -> anyhow::Result<(Server, Vec<String>)> {
    use std::io::{BufRead, BufReader};
    let mut cmd = Command::new(tender);
    cmd.args([
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--receipt-listen",
        "127.0.0.1:0",
        "--rate-limit",
        "0",
    ])
    .args(extra)
    .arg("--data-dir")
    .arg(data_dir)
    .stdout(Stdio::piped())
    .stderr(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd
        .spawn()
        .with_context(|| format!("starting {}", tender.display()))?;
    let mut reader = BufReader::new(child.stdout.take().context("stdout")?);
    let mut lines = Vec::new();
    let mut base = String::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            bail!("tender exited during start: {lines:?}");
        }
        let line = line.trim_end().to_string();
        if let Some(a) = line.strip_prefix("listening on ") {
            base = a.to_string();
        }
        let done = line.starts_with("receipts on ");
        lines.push(line);
        if done {
            break;
        }
    }
    std::thread::spawn(move || for _ in reader.lines() {});
    Ok((Server { child, base }, lines))
}

struct Client {
    http: reqwest::Client,
    key: String,
}

enum Outcome {
    Answered(u16, Value),
    /// No answer: the connection failed (the server is gone).
    Lost,
}

impl Client {
    async fn post(&self, base: &str, path: &str, idem: &str, body: &Value) -> Outcome {
        let req = self
            .http
            .post(format!("{base}/v2{path}"))
            .bearer_auth(&self.key)
            .header("Idempotency-Key", idem)
            .json(body)
            .timeout(Duration::from_secs(15));
        match req.send().await {
            Ok(resp) => {
                let status = resp.status().as_u16();
                match resp.json::<Value>().await {
                    Ok(v) => Outcome::Answered(status, v),
                    Err(_) => Outcome::Lost,
                }
            }
            Err(_) => Outcome::Lost,
        }
    }

    async fn get(&self, base: &str, path: &str) -> anyhow::Result<(u16, Value)> {
        let resp = self
            .http
            .get(format!("{base}/v2{path}"))
            .bearer_auth(&self.key)
            .send()
            .await?;
        Ok((resp.status().as_u16(), resp.json().await?))
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let tender = match &args.tender {
        Some(p) => p.clone(),
        None => std::env::current_exe()?.with_file_name("tender"),
    };
    let dir = tempfile_dir()?;
    if args.scenario == Scenario::Failover {
        let result = failover::run(&args, &tender, &dir).await;
        let _ = std::fs::remove_dir_all(&dir);
        return result;
    }
    let env = postgres_env(&args).await?;
    if args.scenario == Scenario::Billing {
        let result = billing::run(&args, &tender, &dir, &env).await;
        let _ = std::fs::remove_dir_all(&dir);
        return result;
    }

    let ok = crash(&args, &tender, &dir, &env).await;
    let _ = std::fs::remove_dir_all(&dir);
    if !ok? {
        bail!("tender-chaos found problems");
    }
    println!("all checks passed");
    Ok(())
}

/// The crash scenario: `--clients` clients under load while the server is killed `--cycles`
/// times and restarted on the same store; then every check. Whether they all passed.
async fn crash(
    args: &Args,
    tender: &PathBuf,
    dir: &std::path::Path,
    env: &[(String, String)],
) -> anyhow::Result<bool> {
    // The webhook receiver outlives every server process.
    let (hook, delivered) = receiver().await?;

    let (mut server, lines) = start(tender, dir, env, PAYMENT_ARGS)?;
    let key = bootstrap_key(&lines)?;
    let client = Arc::new(Client {
        http: reqwest::Client::new(),
        key,
    });
    let (s, _) = client.get(&server.base, "/payments").await?;
    if s != 200 {
        bail!("the fresh server does not answer");
    }
    let ep = client
        .post(
            &server.base,
            "/webhook_endpoints",
            "chaos-endpoint",
            &json!({"url": hook, "enabled_events": ["*"]}),
        )
        .await;
    if !matches!(ep, Outcome::Answered(200, _)) {
        bail!("could not register the webhook endpoint");
    }

    let ledger = Arc::new(Mutex::new(Ledger::default()));
    let mut restart_times = Vec::new();
    let started = Instant::now();
    for cycle in 0..args.cycles {
        let base = server.base.clone();
        let uptime = Duration::from_millis(rand::thread_rng().gen_range(100..=args.max_uptime_ms));
        let stop_at = Instant::now() + uptime;
        let workers = spawn_workers(&client, &ledger, &base, (cycle, args.clients), stop_at);
        tokio::time::sleep(uptime).await;
        server.child.kill()?; // SIGKILL
        server.child.wait()?;
        for w in workers {
            let _ = w.await;
        }
        let t0 = Instant::now();
        server = restart(tender, dir, env, &client).await?;
        restart_times.push(t0.elapsed());
        retry_unanswered(&client, &server.base, &ledger).await?;
        eprintln!(
            "cycle {}/{}: {} requests acknowledged so far",
            cycle + 1,
            args.cycles,
            ledger.lock().map(|l| l.acked.len()).unwrap_or(0)
        );
    }

    let report = verify(&client, &server.base, &ledger, &delivered).await?;
    server.child.kill()?;
    server.child.wait()?;
    let (ledger_ok, ledger_line) = ledger_verify(tender, dir, env)?;
    let integrity = integrity_check(args.backend, dir)?;
    let ok = print_crash_report(
        args,
        started,
        &report,
        &mut restart_times,
        (ledger_ok, &ledger_line, &integrity),
    );
    Ok(ok)
}

/// The store's settings for `--backend`: none for SQLite (the data dir); for PostgreSQL a fresh
/// schema of `--postgres` and the vault key.
async fn postgres_env(args: &Args) -> anyhow::Result<Vec<(String, String)>> {
    let mut env: Vec<(String, String)> = Vec::new();
    if args.backend == Backend::Postgres {
        let (client, conn) = tokio_postgres::connect(&args.postgres, tokio_postgres::NoTls)
            .await
            .context("connecting to PostgreSQL")?;
        tokio::spawn(conn);
        let schema = format!("chaos_{}", rand::thread_rng().gen::<u32>());
        client
            .batch_execute(&format!("CREATE SCHEMA {schema}"))
            .await?;
        let sep = if args.postgres.contains('?') {
            '&'
        } else {
            '?'
        };
        env.push((
            "TENDER_DATABASE_URL".into(),
            format!("{}{sep}options=-c%20search_path%3D{schema}", args.postgres),
        ));
        env.push(("TENDER_VAULT_KEY".into(), VAULT_KEY.into()));
    }
    Ok(env)
}

/// `clients` clients sending the workload of `cycle` until `stop_at`; a request the server
/// never answered (it was killed) is kept for the retry.
fn spawn_workers(
    client: &Arc<Client>,
    ledger: &Arc<Mutex<Ledger>>,
    base: &str,
    (cycle, clients): (usize, usize),
    stop_at: Instant,
) -> Vec<tokio::task::JoinHandle<()>> {
    let mut workers = Vec::new();
    for c in 0..clients {
        let (client, ledger, base) = (client.clone(), ledger.clone(), base.to_string());
        workers.push(tokio::spawn(async move {
            let mut rng = rand::rngs::StdRng::from_entropy();
            let mut n = (cycle as u64) * 1_000_000;
            while Instant::now() < stop_at {
                let (op, req) = {
                    let mut l = ledger.lock().unwrap_or_else(|e| e.into_inner());
                    let op = next_op(&mut l, &mut rng, &mut n, c);
                    let req = body_for(&op, &l);
                    (op, req)
                };
                let Some((path, body)) = req else { continue };
                match client.post(&base, &path, op.key(), &body).await {
                    Outcome::Answered(status, v) => {
                        let mut l = ledger.lock().unwrap_or_else(|e| e.into_inner());
                        if !record(&op, status, v, &mut l) {
                            l.unanswered.push(op);
                        }
                    }
                    Outcome::Lost => {
                        ledger
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .unanswered
                            .push(op);
                        return;
                    }
                }
            }
        }));
    }
    workers
}

/// The server started again on the same store, once it answers.
async fn restart(
    tender: &PathBuf,
    dir: &std::path::Path,
    env: &[(String, String)],
    client: &Client,
) -> anyhow::Result<Server> {
    let (server, _) = start(tender, dir, env, PAYMENT_ARGS)?;
    loop {
        if let Ok((200, _)) = client.get(&server.base, "/payments?limit=1").await {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    Ok(server)
}

/// The crash scenario's table; whether every check passed.
fn print_crash_report(
    args: &Args,
    started: Instant,
    report: &Report,
    restart_times: &mut [Duration],
    (ledger_ok, ledger_line, integrity): (bool, &str, &str),
) -> bool {
    restart_times.sort();
    let pct = |p: f64| percentile(restart_times, p);
    println!(
        "tender-chaos: backend {}, {} cycles, {} clients, {:.0} s",
        if args.backend == Backend::Sqlite {
            "sqlite"
        } else {
            "postgres"
        },
        args.cycles,
        args.clients,
        started.elapsed().as_secs_f64()
    );
    println!("| check | result |");
    println!("|---|---|");
    println!("| requests acknowledged | {} |", report.acknowledged);
    println!("| requests retried after a kill | {} |", report.retried);
    println!("| acknowledged writes lost | {} |", report.lost);
    println!("| objects duplicated per key | {} |", report.duplicated);
    println!("| refunds exceeding captures | {} |", report.over_refunded);
    println!(
        "| committed events never delivered | {} (of {}) |",
        report.undelivered, report.events
    );
    println!("| SQLite integrity_check | {integrity} |");
    println!("| tender ledger verify | {ledger_line} |");
    println!(
        "| restart to first success, median | {:.0} ms |",
        pct(0.5).as_secs_f64() * 1000.0
    );
    println!(
        "| restart to first success, p99 | {:.0} ms |",
        pct(0.99).as_secs_f64() * 1000.0
    );
    report.lost == 0
        && report.duplicated == 0
        && report.over_refunded == 0
        && report.undelivered == 0
        && ledger_ok
        && (integrity == "ok" || args.backend == Backend::Postgres)
}

/// The `p` quantile of sorted durations.
fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted
        .get(((sorted.len() as f64 - 1.0) * p).round() as usize)
        .copied()
        .unwrap_or_default()
}

/// The bootstrap test secret key a fresh server printed.
fn bootstrap_key(lines: &[String]) -> anyhow::Result<String> {
    lines
        .iter()
        .find_map(|l| {
            l.trim()
                .strip_prefix("test secret key:")
                .map(|k| k.trim().to_string())
        })
        .context("no bootstrap key printed")
}

fn tempfile_dir() -> anyhow::Result<PathBuf> {
    let dir =
        std::env::temp_dir().join(format!("tender-chaos-{}", rand::thread_rng().gen::<u64>()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}
