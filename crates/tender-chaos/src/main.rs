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
//! again within 15 s and that nothing acknowledged was lost or done twice.
//!
//! `cargo run --release -p tender-chaos -- --cycles 50` (see docs/reliability.md).

mod billing;
mod failover;

use std::collections::{HashMap, HashSet};
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

/// What a client asked for, and what the server acknowledged.
#[derive(Clone, Debug)]
enum Op {
    Pay {
        key: String,
        amount: i64,
        capture: bool,
    },
    Capture {
        key: String,
        payment_key: String,
        amount: i64,
    },
    Refund {
        key: String,
        payment_key: String,
        amount: i64,
    },
}

impl Op {
    fn key(&self) -> &str {
        match self {
            Op::Pay { key, .. } | Op::Capture { key, .. } | Op::Refund { key, .. } => key,
        }
    }
}

#[derive(Default)]
struct Ledger {
    /// Payment id per payment key, once acknowledged.
    payments: HashMap<String, String>,
    /// Acknowledged response bodies per request key.
    acked: HashMap<String, Value>,
    /// Requests sent but not answered (the server died): retried after the restart.
    unanswered: Vec<Op>,
    /// Payments available for capture (manual, acknowledged, not captured yet).
    capturable: Vec<String>,
    /// Payments that can be refunded (captured) with what is left, as the client believes.
    refundable: Vec<(String, i64)>,
}

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

fn body_for(op: &Op, ledger: &Ledger) -> Option<(String, Value)> {
    match op {
        Op::Pay {
            key,
            amount,
            capture,
        } => Some((
            "/payments".into(),
            json!({"amount": amount, "currency": "usd", "capture": capture, "metadata": {"chaos_key": key},
                   "payment_method": {"type": "card", "card": {"number": "4242424242424242", "exp_month": 12, "exp_year": 2035, "cvc": "123"}}}),
        )),
        Op::Capture {
            payment_key,
            amount,
            ..
        } => {
            let id = ledger.payments.get(payment_key)?;
            Some((format!("/payments/{id}/capture"), json!({"amount": amount})))
        }
        Op::Refund {
            payment_key,
            amount,
            ..
        } => {
            let id = ledger.payments.get(payment_key)?;
            Some((
                "/refunds".into(),
                json!({"payment": id, "amount": amount, "metadata": {"chaos_key": op.key()}}),
            ))
        }
    }
}

/// Records an answer; returns false when the request must be retried (409 in flight, 5xx).
fn record(op: &Op, status: u16, body: Value, ledger: &mut Ledger) -> bool {
    if status == 409 || status >= 500 {
        return false;
    }
    match op {
        Op::Pay {
            key,
            capture,
            amount,
        } if status == 200 => {
            let id = body["id"].as_str().unwrap_or_default().to_string();
            ledger.payments.insert(key.clone(), id);
            if *capture {
                ledger.refundable.push((key.clone(), *amount));
            } else {
                ledger.capturable.push(key.clone());
            }
        }
        Op::Capture {
            payment_key,
            amount,
            ..
        } if status == 200 => ledger.refundable.push((payment_key.clone(), *amount)),
        _ => {}
    }
    ledger.acked.insert(
        op.key().to_string(),
        json!({"status": status, "body": body}),
    );
    true
}

/// The next operation a client does, chosen at random from what the ledger allows.
fn next_op(ledger: &mut Ledger, rng: &mut impl Rng, n: &mut u64, client: usize) -> Op {
    *n += 1;
    let key = format!("c{client}-{n}-{}", rng.gen::<u32>());
    let roll = rng.gen_range(0..10);
    if roll < 2 {
        if let Some(pk) = (!ledger.capturable.is_empty()).then(|| {
            ledger
                .capturable
                .swap_remove(rng.gen_range(0..ledger.capturable.len()))
        }) {
            return Op::Capture {
                key,
                payment_key: pk,
                amount: rng.gen_range(500..=1000),
            };
        }
    }
    if roll < 5 && !ledger.refundable.is_empty() {
        let i = rng.gen_range(0..ledger.refundable.len());
        let (pk, left) = ledger.refundable[i].clone();
        // Sometimes ask for more than is left: the server must refuse, never over-refund.
        let amount = rng.gen_range(1..=(left / 2).max(1) + 50);
        if amount >= left {
            ledger.refundable.swap_remove(i);
        } else {
            ledger.refundable[i].1 = left - amount;
        }
        return Op::Refund {
            key,
            payment_key: pk,
            amount,
        };
    }
    Op::Pay {
        key,
        amount: rng.gen_range(1000..5000),
        capture: rng.gen_bool(0.7),
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
    if args.scenario == Scenario::Billing {
        let result = billing::run(&args, &tender, &dir, &env).await;
        let _ = std::fs::remove_dir_all(&dir);
        return result;
    }

    // The webhook receiver outlives every server process.
    let (hook, delivered) = receiver().await?;

    let (mut server, lines) = start(&tender, &dir, &env, PAYMENT_ARGS)?;
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
        let mut workers = Vec::new();
        for c in 0..args.clients {
            let (client, ledger, base) = (client.clone(), ledger.clone(), base.clone());
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
        tokio::time::sleep(uptime).await;
        server.child.kill()?; // SIGKILL
        server.child.wait()?;
        for w in workers {
            let _ = w.await;
        }
        let t0 = Instant::now();
        let (s, _) = start(&tender, &dir, &env, PAYMENT_ARGS)?;
        server = s;
        loop {
            if let Ok((200, _)) = client.get(&server.base, "/payments?limit=1").await {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
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
    let (ledger_ok, ledger_line) = ledger_verify(&tender, &dir, &env)?;
    let integrity = integrity_check(args.backend, &dir)?;
    restart_times.sort();
    let pct = |p: f64| percentile(&restart_times, p);
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
    let ok = report.lost == 0
        && report.duplicated == 0
        && report.over_refunded == 0
        && report.undelivered == 0
        && ledger_ok
        && (integrity == "ok" || args.backend == Backend::Postgres);
    let _ = std::fs::remove_dir_all(&dir);
    if !ok {
        bail!("tender-chaos found problems");
    }
    println!("all checks passed");
    Ok(())
}

/// `tender ledger verify` on the data the killed servers left: the ledger's invariants
/// (CONTRACT §9) recomputed from the postings. Whether they hold, and the test mode's line.
fn ledger_verify(
    tender: &PathBuf,
    dir: &std::path::Path,
    env: &[(String, String)],
) -> anyhow::Result<(bool, String)> {
    let mut check = Command::new(tender);
    check.args(["ledger", "verify"]).arg("--data-dir").arg(dir);
    for (k, v) in env {
        check.env(k, v);
    }
    let out = check.output().context("running tender ledger verify")?;
    let report = String::from_utf8_lossy(&out.stdout).into_owned();
    let line = report
        .lines()
        .find(|l| l.contains(" test: "))
        .map(|l| l.split_once(' ').map_or(l, |(_, rest)| rest).to_string())
        .unwrap_or_else(|| "no report".into());
    if !out.status.success() {
        eprintln!("{report}");
    }
    Ok((out.status.success(), line))
}

/// SQLite's `integrity_check` of the data file ("ok" when sound).
fn integrity_check(backend: Backend, dir: &std::path::Path) -> anyhow::Result<String> {
    Ok(if backend == Backend::Sqlite {
        let conn = rusqlite::Connection::open(dir.join("tender.sqlite3"))?;
        conn.query_row("PRAGMA integrity_check", [], |r| r.get::<_, String>(0))?
    } else {
        "n/a (PostgreSQL)".to_string()
    })
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

/// Retries every unanswered request with its key until the server answers it. A 409 means
/// the killed process's claim on the key is still held; it is retried until the claim expires.
async fn retry_unanswered(
    client: &Client,
    base: &str,
    ledger: &Mutex<Ledger>,
) -> anyhow::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(180);
    loop {
        let pending: Vec<Op> =
            std::mem::take(&mut ledger.lock().unwrap_or_else(|e| e.into_inner()).unanswered);
        if pending.is_empty() {
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!("{} requests never got an answer", pending.len());
        }
        let mut again = Vec::new();
        for op in pending {
            let req = body_for(&op, &ledger.lock().unwrap_or_else(|e| e.into_inner()));
            let Some((path, body)) = req else {
                again.push(op);
                continue;
            };
            match client.post(base, &path, op.key(), &body).await {
                Outcome::Answered(status, v) => {
                    let mut l = ledger.lock().unwrap_or_else(|e| e.into_inner());
                    l.acked
                        .entry(format!("retried:{}", op.key()))
                        .or_insert(json!(null));
                    if !record(&op, status, v, &mut l) {
                        again.push(op);
                    }
                }
                Outcome::Lost => again.push(op),
            }
        }
        if !again.is_empty() {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        ledger
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .unanswered
            .extend(again);
    }
}

/// A webhook receiver on 127.0.0.1 that outlives every server process: its URL, and the
/// `webhook-id`s it got.
async fn receiver() -> anyhow::Result<(String, Arc<Mutex<HashSet<String>>>)> {
    let delivered: Arc<Mutex<HashSet<String>>> = Arc::default();
    let d = delivered.clone();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |headers: axum::http::HeaderMap| {
            let d = d.clone();
            async move {
                if let Some(id) = headers.get("webhook-id").and_then(|v| v.to_str().ok()) {
                    d.lock().map(|mut s| s.insert(id.to_string())).ok();
                }
                "ok"
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let hook = format!("http://{}/hook", listener.local_addr()?);
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ok((hook, delivered))
}

/// How many of `events` the receiver has still not got once delivery stops making progress
/// (nothing new for 30 s; a backlog behind the per-endpoint cap of 8 in flight drains slowly
/// but steadily).
async fn wait_delivered(events: &[Value], delivered: &Mutex<HashSet<String>>) -> usize {
    let mut last = usize::MAX;
    let mut progress_at = Instant::now();
    loop {
        let missing = {
            let seen = delivered.lock().unwrap_or_else(|e| e.into_inner());
            events
                .iter()
                .filter(|e| !seen.contains(e["id"].as_str().unwrap_or_default()))
                .count()
        };
        if missing < last {
            last = missing;
            progress_at = Instant::now();
        }
        if missing == 0 || progress_at.elapsed() > Duration::from_secs(30) {
            return missing;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[derive(Default)]
struct Report {
    acknowledged: usize,
    retried: usize,
    lost: usize,
    duplicated: usize,
    over_refunded: usize,
    events: usize,
    undelivered: usize,
}

async fn list_all(client: &Client, base: &str, path: &str) -> anyhow::Result<Vec<Value>> {
    let mut out = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let sep = if path.contains('?') { '&' } else { '?' };
        let url = match &after {
            Some(a) => format!("{path}{sep}limit=100&starting_after={a}"),
            None => format!("{path}{sep}limit=100"),
        };
        let (status, page) = client.get(base, &url).await?;
        if status != 200 {
            bail!("listing {path} failed: {page}");
        }
        let data = page["data"].as_array().cloned().unwrap_or_default();
        after = data
            .last()
            .and_then(|o| o["id"].as_str())
            .map(str::to_string);
        out.extend(data);
        if page["has_more"] != true {
            return Ok(out);
        }
    }
}

async fn verify(
    client: &Client,
    base: &str,
    ledger: &Mutex<Ledger>,
    delivered: &Mutex<HashSet<String>>,
) -> anyhow::Result<Report> {
    let (acked, payments_by_key) = {
        let l = ledger.lock().unwrap_or_else(|e| e.into_inner());
        (l.acked.clone(), l.payments.clone())
    };
    let mut r = Report {
        acknowledged: acked.keys().filter(|k| !k.starts_with("retried:")).count(),
        retried: acked.keys().filter(|k| k.starts_with("retried:")).count(),
        ..Report::default()
    };
    let payments = list_all(client, base, "/payments").await?;
    let refunds = list_all(client, base, "/refunds").await?;
    let by_id: HashMap<&str, &Value> = payments
        .iter()
        .filter_map(|p| Some((p["id"].as_str()?, p)))
        .collect();
    let refund_ids: HashSet<&str> = refunds.iter().filter_map(|x| x["id"].as_str()).collect();

    // Every acknowledged write is there, in (at least) the state it was acknowledged in.
    for (key, answer) in acked.iter().filter(|(k, _)| !k.starts_with("retried:")) {
        if answer["status"] != 200 {
            continue;
        }
        let body = &answer["body"];
        let ok = match body["object"].as_str() {
            Some("payment") => by_id
                .get(body["id"].as_str().unwrap_or_default())
                .is_some_and(|p| {
                    // A capture acknowledged as succeeded must not be back in requires_capture.
                    body["status"] != "succeeded" || p["status"] == "succeeded"
                }),
            Some("refund") => refund_ids.contains(body["id"].as_str().unwrap_or_default()),
            _ => true,
        };
        if !ok {
            eprintln!("lost: {key} → {body}");
            r.lost += 1;
        }
    }
    // One payment per key.
    let mut per_key: HashMap<&str, usize> = HashMap::new();
    for p in &payments {
        if let Some(k) = p["metadata"]["chaos_key"].as_str() {
            *per_key.entry(k).or_default() += 1;
        }
    }
    r.duplicated = per_key.values().filter(|n| **n > 1).count();
    // And every acknowledged payment key has its payment.
    r.lost += payments_by_key
        .keys()
        .filter(|k| !per_key.contains_key(k.as_str()))
        .count();
    // Refunds never exceed what was captured, and the payment's total agrees.
    let mut refunded: HashMap<&str, i64> = HashMap::new();
    for x in &refunds {
        *refunded
            .entry(x["payment"].as_str().unwrap_or_default())
            .or_default() += x["amount"].as_i64().unwrap_or(0);
    }
    for p in &payments {
        let id = p["id"].as_str().unwrap_or_default();
        let sum = refunded.get(id).copied().unwrap_or(0);
        if sum > p["amount_captured"].as_i64().unwrap_or(0)
            || sum != p["amount_refunded"].as_i64().unwrap_or(-1)
        {
            eprintln!(
                "over-refunded or inconsistent: {id} refunds {sum}, payment {}",
                p
            );
            r.over_refunded += 1;
        }
    }
    // Every committed event is delivered at least once (give the worker time to catch up).
    let events = list_all(client, base, "/events").await?;
    r.events = events.len();
    r.undelivered = wait_delivered(&events, delivered).await;
    Ok(r)
}
