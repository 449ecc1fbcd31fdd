//! `--scenario failover`: PostgreSQL's primary dies under load and its synchronous standby is
//! promoted; every Tender node must serve again within 15 s, without a restart, with nothing it
//! acknowledged lost or done twice (CONTRACT §12).
//!
//! The harness builds its own two-node cluster from the installed PostgreSQL binaries (run as
//! the `postgres` user when it runs as root), on free ports in a temporary directory: a primary
//! with `synchronous_standby_names = '*'` and a standby streaming from it. `--nodes` Tender
//! processes run against the multi-host URL (`postgres://…@127.0.0.1:P1,127.0.0.1:P2/postgres`)
//! while `--clients` clients per node create payments, each with its own idempotency key, and
//! retry every unanswered or 5xx request with that key until it is answered. Each cycle:
//!
//! 1. load for a random time up to `--max-uptime-ms`;
//! 2. stop the primary hard (`pg_ctl stop -m immediate`: its sessions die mid-transaction);
//! 3. promote the standby at once (what a failover manager does) and clear its
//!    `synchronous_standby_names` until it has a standby of its own;
//! 4. time, per Tender node, until a payment created after the stop is acknowledged;
//! 5. rebuild the lost node as the new primary's synchronous standby (`pg_basebackup`).
//!
//! With `--manager pg-auto-failover` the cluster is pg_auto_failover's instead
//! ([`crate::auto_failover`]): step 2 kills the primary's machine (keeper and server), and steps
//! 3 and 5 are the manager's own: its monitor detects the dead primary and promotes the
//! secondary; the lost node, started again, rejoins as secondary.
//!
//! Then it checks and prints:
//!
//! - requests that hung (must be 0): no answer within 20 s;
//! - keys never acknowledged (must be 0): still unanswered after a minute of retries;
//! - wrong answers (must be 0): anything but 200, a JSON 5xx `api_error` or a 409 retry;
//! - acknowledged payments lost (must be 0): every acknowledged id is listed;
//! - payments duplicated per key (must be 0);
//! - events lost or duplicated (must be 0): each payment has exactly one `payment.succeeded`;
//! - committed events never delivered (must be 0): webhook delivery resumed on the new primary;
//! - recovery time per node and failover (p50, p99, max; each must be ≤ 15 s);
//! - `tender ledger verify`.

use crate::auto_failover::AutoFailover;
use crate::cluster::{default_bin, Cluster};
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::bail;
use rand::Rng;
use serde_json::{json, Value};

use crate::{
    bootstrap_key, ledger_verify, list_all, percentile, start, Args, Client, Manager, Server,
};

/// A Tender node must serve again within this long after the primary stops (CONTRACT §12).
const RECOVERY_LIMIT: Duration = Duration::from_secs(15);
/// A request unanswered this long counts as a hang.
const HANG: Duration = Duration::from_secs(20);
/// A key still not acknowledged after this long of retries counts as stuck.
const STUCK: Duration = Duration::from_secs(60);

/// What the clients saw.
#[derive(Default)]
struct Seen {
    /// Payment id per idempotency key, once acknowledged.
    acked: HashMap<String, String>,
    /// 5xx answers (JSON `api_error`), retried.
    unavailable: usize,
    /// 409 answers (the key's first request still held by a node), retried.
    in_flight: usize,
    hangs: usize,
    /// Keys never acknowledged however long they were retried.
    stuck: usize,
    /// Connection failures to a Tender node (it must not die).
    refused: usize,
    wrong: usize,
    /// The current failover: when the primary's stop began and when it was down, and how long
    /// after the first each node succeeded with a new key first sent after the second.
    stopped_at: Option<(Instant, Instant)>,
    recovered: Vec<Option<Duration>>,
}

/// Creates one payment with `key` on `base`, retrying until it is answered.
async fn create(
    http: &reqwest::Client,
    sk: &str,
    base: &str,
    key: &str,
    node: usize,
    seen: &Mutex<Seen>,
) {
    let body = json!({"amount": 1500, "currency": "usd", "metadata": {"chaos_key": key},
        "payment_method": {"type": "card", "card": {"number": "4242424242424242",
        "exp_month": 12, "exp_year": 2035, "cvc": "123"}}});
    let first = Instant::now();
    loop {
        if first.elapsed() > STUCK {
            eprintln!("never answered: {key}");
            seen.lock().unwrap_or_else(|e| e.into_inner()).stuck += 1;
            return;
        }
        let answer = http
            .post(format!("{base}/v2/payments"))
            .bearer_auth(sk)
            .header("Idempotency-Key", key)
            .json(&body)
            .timeout(HANG)
            .send()
            .await;
        let answer = match answer {
            Err(e) if e.is_timeout() => None,
            Err(_) => Some((0, Value::Null)),
            Ok(resp) => {
                let status = resp.status().as_u16();
                Some((status, resp.json().await.unwrap_or(Value::Null)))
            }
        };
        {
            let mut s = seen.lock().unwrap_or_else(|e| e.into_inner());
            match answer {
                None => s.hangs += 1,
                Some((0, _)) => s.refused += 1,
                Some((200, v)) => {
                    let id = v["id"].as_str().unwrap_or_default().to_string();
                    s.acked.insert(key.to_string(), id);
                    if let Some((stopped, down)) = s.stopped_at {
                        // A key first sent once the primary was down: a retry of an older key
                        // may be answered from the node's cache of finished requests.
                        if first >= down && s.recovered[node].is_none() {
                            s.recovered[node] = Some(stopped.elapsed());
                        }
                    }
                    return;
                }
                Some((500 | 503, v)) if v["error"]["type"] == "api_error" => s.unavailable += 1,
                Some((409, v)) if v["error"]["type"] == "idempotency_error" => s.in_flight += 1,
                Some((status, v)) => {
                    eprintln!("wrong answer to {key}: {status} {v}");
                    s.wrong += 1;
                    return;
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

pub async fn run(args: &Args, tender: &Path, dir: &Path) -> anyhow::Result<()> {
    let started = Instant::now();
    let bin = match &args.pg_bin {
        Some(b) => b.clone(),
        None => default_bin()?,
    };
    let mut cluster = match args.manager {
        Manager::Harness => Managed::Harness(Cluster::build(bin, dir).await?),
        Manager::PgAutoFailover => Managed::Auto(
            AutoFailover::build(bin, args.pg_autoctl.clone(), dir, args.manager_defaults).await?,
        ),
    };
    let env = vec![
        ("TENDER_DATABASE_URL".to_string(), cluster.url()),
        ("TENDER_VAULT_KEY".to_string(), crate::VAULT_KEY.to_string()),
    ];
    let (receiver, delivered) = crate::receiver().await?;
    let mut nodes: Vec<Server> = Vec::new();
    let mut sk = String::new();
    for n in 0..args.nodes {
        let node_dir = dir.join(format!("tender{n}"));
        std::fs::create_dir_all(&node_dir)?;
        let (server, lines) = start(&tender.to_path_buf(), &node_dir, &env, crate::PAYMENT_ARGS)?;
        if n == 0 {
            sk = bootstrap_key(&lines)?;
        }
        nodes.push(server);
    }
    let api = Client {
        http: reqwest::Client::new(),
        key: sk.clone(),
    };
    let endpoint = api
        .post(
            &nodes[0].base,
            "/webhook_endpoints",
            "failover-endpoint",
            &json!({"url": receiver, "enabled_events": ["payment.succeeded"]}),
        )
        .await;
    if !matches!(endpoint, crate::Outcome::Answered(200, _)) {
        bail!("could not register the webhook endpoint");
    }

    let seen = Arc::new(Mutex::new(Seen {
        recovered: vec![None; args.nodes],
        ..Seen::default()
    }));
    let stop = Arc::new(AtomicBool::new(false));
    let clients = spawn_clients(&nodes, args.clients, &sk, &seen, &stop);
    let mut failovers = fail_over(args, &mut cluster, &seen).await?;
    stop.store(true, Ordering::SeqCst);
    for c in clients {
        let _ = c.await;
    }

    // Everything acknowledged is there once, with its one event, delivered.
    let s = std::mem::take(&mut *seen.lock().unwrap_or_else(|e| e.into_inner()));
    let tally = tally(&api, &nodes[0].base, &s, &delivered).await?;
    for mut node in nodes {
        let _ = node.child.kill();
        let _ = node.child.wait();
    }
    let ledger = ledger_verify(&tender.to_path_buf(), &dir.join("tender0"), &env)?;
    drop(cluster);
    println!(
        "tender-chaos: failover ({}), {} failovers, {} Tender nodes × {} clients, {:.0} s",
        cluster_name(args.manager),
        args.cycles,
        args.nodes,
        args.clients,
        started.elapsed().as_secs_f64()
    );
    if !print_report(&s, &tally, &mut failovers, ledger) {
        bail!("tender-chaos found problems");
    }
    println!("all checks passed");
    Ok(())
}

/// `clients` clients per node creating payments, each with its own key, until `stop`.
fn spawn_clients(
    nodes: &[Server],
    clients: usize,
    sk: &str,
    seen: &Arc<Mutex<Seen>>,
    stop: &Arc<AtomicBool>,
) -> Vec<tokio::task::JoinHandle<()>> {
    let mut out = Vec::new();
    for (n, node) in nodes.iter().enumerate() {
        for c in 0..clients {
            let (seen, stop, base, sk) = (
                seen.clone(),
                stop.clone(),
                node.base.clone(),
                sk.to_string(),
            );
            out.push(tokio::spawn(async move {
                let http = reqwest::Client::new();
                let mut i = 0u64;
                while !stop.load(Ordering::SeqCst) {
                    i += 1;
                    let key = format!("n{n}-c{c}-{i}-{}", rand::thread_rng().gen::<u32>());
                    create(&http, &sk, &base, &key, n, &seen).await;
                }
            }));
        }
    }
    out
}

/// How the failovers went: each node's recovery times, each promotion's, and how many
/// recoveries took longer than [`RECOVERY_LIMIT`] (or never came).
#[derive(Default)]
struct Failovers {
    recoveries: Vec<Duration>,
    promotions: Vec<Duration>,
    too_slow: usize,
}

/// `--cycles` failovers under load: the primary stopped hard after a random uptime, the
/// standby promoted, each node timed until it serves again, the lost node rebuilt as standby.
async fn fail_over(
    args: &Args,
    cluster: &mut Managed,
    seen: &Arc<Mutex<Seen>>,
) -> anyhow::Result<Failovers> {
    let mut f = Failovers::default();
    for cycle in 0..args.cycles {
        let uptime = rand::thread_rng().gen_range(100..=args.max_uptime_ms.max(100));
        tokio::time::sleep(Duration::from_millis(uptime)).await;
        let stopped = Instant::now();
        let lost = cluster.kill_primary().await?;
        {
            // Timed from the stop's start; only requests sent once it is down count.
            let mut s = seen.lock().unwrap_or_else(|e| e.into_inner());
            s.stopped_at = Some((stopped, Instant::now()));
            s.recovered.iter_mut().for_each(|r| *r = None);
        }
        cluster.promote(lost).await?;
        f.promotions.push(stopped.elapsed());
        // Each node gets its time after a slow promotion too (a manager's defaults).
        let deadline = (stopped + RECOVERY_LIMIT * 2).max(Instant::now() + RECOVERY_LIMIT);
        let times = loop {
            let times = seen
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .recovered
                .clone();
            if times.iter().all(Option::is_some) || Instant::now() > deadline {
                break times;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        for (n, t) in times.iter().enumerate() {
            match t {
                Some(t) => {
                    if *t > RECOVERY_LIMIT {
                        f.too_slow += 1;
                    }
                    f.recoveries.push(*t);
                }
                None => {
                    eprintln!("node {n} did not serve again");
                    f.too_slow += 1;
                }
            }
        }
        cluster.restore(lost).await?;
        eprintln!(
            "failover {}/{}: primary now :{}, recovery {:?}, {} payments acknowledged so far",
            cycle + 1,
            args.cycles,
            cluster.primary_port(lost),
            times
                .iter()
                .flatten()
                .map(|t| format!("{:.2}s", t.as_secs_f64()))
                .collect::<Vec<_>>(),
            seen.lock().map(|s| s.acked.len()).unwrap_or(0)
        );
    }
    Ok(f)
}

/// The cluster and who fails it over.
enum Managed {
    /// The harness promotes and rebuilds ([`Cluster`]).
    Harness(Cluster),
    /// pg_auto_failover's monitor promotes; the lost node rejoins by itself ([`AutoFailover`]).
    Auto(AutoFailover),
}

fn cluster_name(manager: Manager) -> &'static str {
    match manager {
        Manager::Harness => "the harness promotes",
        Manager::PgAutoFailover => "pg_auto_failover promotes",
    }
}

impl Managed {
    fn url(&self) -> String {
        match self {
            Self::Harness(c) => c.url(),
            Self::Auto(c) => c.url(),
        }
    }

    /// Stops the primary hard; returns which node it was.
    async fn kill_primary(&mut self) -> anyhow::Result<usize> {
        match self {
            Self::Harness(c) => c.kill_primary().map(|()| c.primary),
            Self::Auto(c) => c.kill_primary().await,
        }
    }

    /// Returns once the node that was not `lost` is the primary: promoted by the harness, or
    /// waited for while the manager promotes it.
    async fn promote(&mut self, lost: usize) -> anyhow::Result<()> {
        match self {
            Self::Harness(c) => c.promote().await,
            Self::Auto(c) => c.promoted(1 - lost).await,
        }
    }

    /// Brings the `lost` node back as the new primary's synchronous standby.
    async fn restore(&mut self, lost: usize) -> anyhow::Result<()> {
        match self {
            Self::Harness(c) => c.rebuild_standby().await,
            Self::Auto(c) => c.rejoin(lost).await,
        }
    }

    fn primary_port(&self, lost: usize) -> u16 {
        match self {
            Self::Harness(c) => c.ports[c.primary],
            Self::Auto(c) => c.ports[1 - lost],
        }
    }
}

/// What the store holds after the run against what the clients were told.
struct Tally {
    lost: usize,
    duplicated: usize,
    events: usize,
    events_lost: usize,
    events_duplicated: usize,
    undelivered: usize,
}

/// Every acknowledged payment there once, each with its one event, delivered.
async fn tally(
    api: &Client,
    base: &str,
    s: &Seen,
    delivered: &Mutex<HashSet<String>>,
) -> anyhow::Result<Tally> {
    let payments = list_all(api, base, "/payments").await?;
    let events = list_all(api, base, "/events?type=payment.succeeded").await?;
    let mut per_key: HashMap<&str, Vec<&str>> = HashMap::new();
    for p in &payments {
        if let (Some(k), Some(id)) = (p["metadata"]["chaos_key"].as_str(), p["id"].as_str()) {
            per_key.entry(k).or_default().push(id);
        }
    }
    let lost = s
        .acked
        .iter()
        .filter(|(k, id)| {
            !per_key
                .get(k.as_str())
                .is_some_and(|ids| ids.contains(&id.as_str()))
        })
        .inspect(|(k, id)| eprintln!("lost: {k} → {id}"))
        .count();
    let duplicated = per_key.values().filter(|ids| ids.len() > 1).count();
    let mut events_per_payment: HashMap<&str, usize> = HashMap::new();
    for e in &events {
        if let Some(id) = e["data"]["object"]["id"].as_str() {
            *events_per_payment.entry(id).or_default() += 1;
        }
    }
    let payment_ids: HashSet<&str> = payments.iter().filter_map(|p| p["id"].as_str()).collect();
    let events_lost = payment_ids
        .iter()
        .filter(|id| !events_per_payment.contains_key(*id))
        .count();
    let events_duplicated = events_per_payment.values().filter(|n| **n > 1).count();
    let undelivered = crate::wait_delivered(&events, delivered).await;
    Ok(Tally {
        lost,
        duplicated,
        events: events.len(),
        events_lost,
        events_duplicated,
        undelivered,
    })
}

/// The report's table; whether every check passed.
fn print_report(
    s: &Seen,
    t: &Tally,
    f: &mut Failovers,
    (ledger_ok, ledger_line): (bool, String),
) -> bool {
    let (acked, unavailable, in_flight, hangs, stuck, refused, wrong) = (
        s.acked.len(),
        s.unavailable,
        s.in_flight,
        s.hangs,
        s.stuck,
        s.refused,
        s.wrong,
    );
    let Tally {
        lost,
        duplicated,
        events_lost,
        events_duplicated,
        undelivered,
        ..
    } = *t;
    let too_slow = f.too_slow;
    f.recoveries.sort();
    f.promotions.sort();
    let (recoveries, promotions) = (&f.recoveries, &f.promotions);
    let secs = |d: Duration| format!("{:.2} s", d.as_secs_f64());
    println!("| check | result |");
    println!("|---|---|");
    println!("| payments acknowledged | {acked} |");
    println!("| 5xx answers (JSON `api_error`, retried) | {unavailable} |");
    println!("| 409 answers (retried) | {in_flight} |");
    println!("| requests that hung (> {} s) | {hangs} |", HANG.as_secs());
    println!(
        "| keys never acknowledged (retried for {} s) | {stuck} |",
        STUCK.as_secs()
    );
    println!("| connections refused by a Tender node | {refused} |");
    println!("| wrong answers | {wrong} |");
    println!("| acknowledged payments lost | {lost} |");
    println!("| payments duplicated per key | {duplicated} |");
    println!(
        "| `payment.succeeded` events lost / duplicated | {events_lost} / {events_duplicated} |"
    );
    println!(
        "| committed events never delivered | {undelivered} (of {}) |",
        t.events
    );
    println!("| tender ledger verify | {ledger_line} |");
    println!(
        "| primary stopped → standby promoted, median / max | {} / {} |",
        secs(percentile(promotions, 0.5)),
        secs(percentile(promotions, 1.0))
    );
    println!(
        "| primary stopped → node serves again, p50 / p99 / max | {} / {} / {} |",
        secs(percentile(recoveries, 0.5)),
        secs(percentile(recoveries, 0.99)),
        secs(percentile(recoveries, 1.0))
    );
    println!(
        "| node recoveries over {} s | {too_slow} |",
        RECOVERY_LIMIT.as_secs()
    );
    hangs == 0
        && stuck == 0
        && refused == 0
        && wrong == 0
        && lost == 0
        && duplicated == 0
        && events_lost == 0
        && events_duplicated == 0
        && undelivered == 0
        && too_slow == 0
        && ledger_ok
}
