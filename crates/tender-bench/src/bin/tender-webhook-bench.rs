//! How fast the webhook worker delivers: events per second to a fast local receiver, and the
//! time from commit to delivery (median, p99).
//!
//! It starts the release `tender` on a fresh SQLite data dir, registers an endpoint on an
//! in-process receiver that answers 200 at once, then creates `--events` customers from
//! `--concurrency` clients (each commits one `customer.created` event and its outbox row).
//! The commit time of an event is when its `200` arrives (the answer is sent after the fsync);
//! the delivery time is when the receiver sees it. Both clocks are this process's.
//!
//! With `--slow-accounts N`, N other accounts first register 16 endpoints each (the most an
//! account may have) on a socket that accepts connections and never answers, and create events
//! for them, so every one of their attempts holds its slot for the 10 s timeout: the figures
//! then show what one tenant's black-holed endpoints cost another tenant's deliveries.
//!
//! `cargo build --release -p tender -p tender-bench && target/release/tender-webhook-bench`

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use clap::Parser;
use serde_json::{json, Value};

#[derive(Parser)]
struct Args {
    /// Events to create.
    #[arg(long, default_value_t = 5000)]
    events: usize,
    /// Concurrent API clients creating them.
    #[arg(long, default_value_t = 32)]
    concurrency: usize,
    /// The release `tender` binary (default: next to this one).
    #[arg(long)]
    tender: Option<PathBuf>,
    /// Other accounts with 16 black-holed endpoints each (and 8 events each) while measuring.
    #[arg(long, default_value_t = 0)]
    slow_accounts: usize,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let tender = match args.tender {
        Some(p) => p,
        None => std::env::current_exe()?.with_file_name("tender"),
    };
    let dir = tempfile::tempdir()?;
    let (mut child, base, key) = start_tender(&tender, dir.path())?;
    let (hook, arrived) = receiver().await?;

    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(args.concurrency)
        .build()?;
    let r = http
        .post(format!("{base}/v2/webhook_endpoints"))
        .bearer_auth(&key)
        .json(&json!({"url": hook, "enabled_events": ["customer.created"]}))
        .send()
        .await?;
    if r.status() != 200 {
        bail!("could not register the endpoint: {}", r.text().await?);
    }

    if args.slow_accounts > 0 {
        slow_tenants(&tender, dir.path(), &http, &base, args.slow_accounts).await?;
    }

    let started = Instant::now();
    let committed = create_events(&http, (&base, &key), args.concurrency, args.events).await?;
    let created_in = started.elapsed();
    let deadline = Instant::now() + Duration::from_secs(120);
    let total = committed.lock().map(|m| m.len()).unwrap_or(0);
    while arrived.lock().map(|m| m.len()).unwrap_or(0) < total && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let _ = child.kill();
    let committed = committed.lock().map(|m| m.clone()).unwrap_or_default();
    let arrived = arrived.lock().map(|m| m.clone()).unwrap_or_default();
    let mut latencies: Vec<f64> = committed
        .iter()
        .filter_map(|(id, c)| {
            arrived
                .get(id)
                .map(|a| a.saturating_duration_since(*c).as_secs_f64() * 1000.0)
        })
        .collect();
    latencies.sort_by(|a, b| a.total_cmp(b));
    let last = arrived.values().max().copied().unwrap_or(started);
    let span = last.saturating_duration_since(started).as_secs_f64();
    let pct = |p: f64| {
        latencies
            .get(((latencies.len() as f64 - 1.0) * p).round() as usize)
            .copied()
            .unwrap_or(f64::NAN)
    };
    println!(
        "events committed: {total} in {:.2} s ({:.0}/s through the API)",
        created_in.as_secs_f64(),
        total as f64 / created_in.as_secs_f64()
    );
    println!(
        "events delivered: {} (missing {})",
        latencies.len(),
        total - latencies.len()
    );
    println!(
        "delivery rate: {:.0} events/s (first commit to last delivery)",
        latencies.len() as f64 / span
    );
    println!(
        "commit → delivery: p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        pct(0.5),
        pct(0.99),
        pct(1.0)
    );
    if latencies.len() < total {
        bail!("some events were not delivered");
    }
    Ok(())
}

/// Starts `tender serve` on a fresh data dir: the child, its API's base URL and the bootstrap
/// test secret key it prints.
fn start_tender(
    tender: &std::path::Path,
    dir: &std::path::Path,
) -> anyhow::Result<(std::process::Child, String, String)> {
    use std::io::{BufRead, BufReader};
    let mut child = Command::new(tender)
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--receipt-listen",
            "127.0.0.1:0",
            "--rate-limit",
            "0",
        ])
        .arg("--data-dir")
        .arg(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| format!("starting {}", tender.display()))?;
    let mut reader = BufReader::new(child.stdout.take().context("stdout")?);
    let (mut base, mut key) = (String::new(), String::new());
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            bail!("tender exited during start");
        }
        if let Some(k) = line.trim().strip_prefix("test secret key:") {
            key = k.trim().to_string();
        }
        if let Some(a) = line.trim().strip_prefix("listening on ") {
            base = a.to_string();
        }
        if line.starts_with("receipts on") {
            break;
        }
    }
    std::thread::spawn(move || for _ in reader.lines() {});
    Ok((child, base, key))
}

/// The receiver: records when each customer's event arrives. Its URL and the arrivals.
#[allow(clippy::type_complexity)]
async fn receiver() -> anyhow::Result<(String, Arc<Mutex<HashMap<String, Instant>>>)> {
    let arrived: Arc<Mutex<HashMap<String, Instant>>> = Arc::default();
    let a = arrived.clone();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |body: axum::body::Bytes| {
            let a = a.clone();
            async move {
                let now = Instant::now();
                if let Ok(v) = serde_json::from_slice::<Value>(&body) {
                    if let Some(id) = v["data"]["object"]["id"].as_str() {
                        if let Ok(mut m) = a.lock() {
                            m.entry(id.to_string()).or_insert(now);
                        }
                    }
                }
                "{\"received\":true}"
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let hook = format!("http://{}/hook", listener.local_addr()?);
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ok((hook, arrived))
}

/// `accounts` other accounts, each with 16 endpoints on a socket that accepts and never
/// answers (each attempt waits out the 10 s timeout) and 8 events pending for each.
async fn slow_tenants(
    tender: &std::path::Path,
    dir: &std::path::Path,
    http: &reqwest::Client,
    base: &str,
    accounts: usize,
) -> anyhow::Result<()> {
    // A socket that accepts and never answers: each attempt waits out the 10 s timeout.
    let hole = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let hole_addr = hole.local_addr()?;
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = hole.accept().await {
            held.push(socket);
        }
    });
    for i in 0..accounts {
        let out = Command::new(tender)
            .args([
                "accounts",
                "create",
                "--email",
                &format!("slow{i}@bench.example"),
            ])
            .arg("--data-dir")
            .arg(dir)
            .output()?;
        let created: Value = serde_json::from_slice(&out.stdout)
            .with_context(|| String::from_utf8_lossy(&out.stderr).into_owned())?;
        let slow_key = created["keys"]["test"]["secret"]
            .as_str()
            .context("a test key")?
            .to_string();
        for e in 0..16 {
            let r = http
                .post(format!("{base}/v2/webhook_endpoints"))
                .bearer_auth(&slow_key)
                .json(&json!({"url": format!("http://{hole_addr}/{e}"), "enabled_events": ["*"]}))
                .send()
                .await?;
            if r.status() != 200 {
                bail!("could not register a slow endpoint: {}", r.text().await?);
            }
        }
        for _ in 0..8 {
            http.post(format!("{base}/v2/customers"))
                .bearer_auth(&slow_key)
                .json(&json!({}))
                .send()
                .await?;
        }
    }
    println!(
        "slow tenants: {} accounts × 16 black-holed endpoints ({} endpoints, {} deliveries pending)",
        accounts,
        accounts * 16,
        accounts * 16 * 8
    );
    Ok(())
}

/// `events` customers created by `concurrency` clients as fast as the API takes them: when each
/// one's creation was answered, by id.
async fn create_events(
    http: &reqwest::Client,
    (base, key): (&str, &str),
    concurrency: usize,
    events: usize,
) -> anyhow::Result<Arc<Mutex<HashMap<String, Instant>>>> {
    let committed: Arc<Mutex<HashMap<String, Instant>>> = Arc::default();
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut workers = Vec::new();
    for _ in 0..concurrency {
        let (http, base, key, committed, next) = (
            http.clone(),
            base.to_string(),
            key.to_string(),
            committed.clone(),
            next.clone(),
        );
        let total = events;
        workers.push(tokio::spawn(async move {
            while next.fetch_add(1, std::sync::atomic::Ordering::SeqCst) < total {
                let resp = http
                    .post(format!("{base}/v2/customers"))
                    .bearer_auth(&key)
                    .json(&json!({}))
                    .send()
                    .await;
                let Ok(resp) = resp else { continue };
                let at = Instant::now();
                if let Ok(v) = resp.json::<Value>().await {
                    if let Some(id) = v["id"].as_str() {
                        if let Ok(mut m) = committed.lock() {
                            m.insert(id.to_string(), at);
                        }
                    }
                }
            }
        }));
    }
    for w in workers {
        w.await?;
    }
    Ok(committed)
}
