//! What is checked once the servers are gone: every acknowledged write is there once (none lost,
//! none twice, no refund past its payment), every event's webhook delivered, the ledger's
//! invariants (`tender ledger verify`) and the database's own integrity check.

use crate::{Backend, Client, Ledger};
use anyhow::{bail, Context};
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// `tender ledger verify` on the data the killed servers left: the ledger's invariants
/// (CONTRACT §9) recomputed from the postings. Whether they hold, and the test mode's line.
pub(crate) fn ledger_verify(
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
pub(crate) fn integrity_check(backend: Backend, dir: &std::path::Path) -> anyhow::Result<String> {
    Ok(if backend == Backend::Sqlite {
        let conn = rusqlite::Connection::open(dir.join("tender.sqlite3"))?;
        conn.query_row("PRAGMA integrity_check", [], |r| r.get::<_, String>(0))?
    } else {
        "n/a (PostgreSQL)".to_string()
    })
}

/// A webhook receiver on 127.0.0.1 that outlives every server process: its URL, and the
/// `webhook-id`s it got.
pub(crate) async fn receiver() -> anyhow::Result<(String, Arc<Mutex<HashSet<String>>>)> {
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
pub(crate) async fn wait_delivered(events: &[Value], delivered: &Mutex<HashSet<String>>) -> usize {
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
pub(crate) struct Report {
    pub(crate) acknowledged: usize,
    pub(crate) retried: usize,
    pub(crate) lost: usize,
    pub(crate) duplicated: usize,
    pub(crate) over_refunded: usize,
    pub(crate) events: usize,
    pub(crate) undelivered: usize,
}

pub(crate) async fn list_all(
    client: &Client,
    base: &str,
    path: &str,
) -> anyhow::Result<Vec<Value>> {
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

/// Payments whose refunds exceed what was captured, or whose `amount_refunded` disagrees with
/// the sum of their refunds.
fn over_refunded(payments: &[Value], refunds: &[Value]) -> usize {
    let mut n = 0;
    let mut refunded: HashMap<&str, i64> = HashMap::new();
    for x in refunds {
        *refunded
            .entry(x["payment"].as_str().unwrap_or_default())
            .or_default() += x["amount"].as_i64().unwrap_or(0);
    }
    for p in payments {
        let id = p["id"].as_str().unwrap_or_default();
        let sum = refunded.get(id).copied().unwrap_or(0);
        if sum > p["amount_captured"].as_i64().unwrap_or(0)
            || sum != p["amount_refunded"].as_i64().unwrap_or(-1)
        {
            eprintln!(
                "over-refunded or inconsistent: {id} refunds {sum}, payment {}",
                p
            );
            n += 1;
        }
    }
    n
}

pub(crate) async fn verify(
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
    r.over_refunded = over_refunded(&payments, &refunds);
    // Every committed event is delivered at least once (give the worker time to catch up).
    let events = list_all(client, base, "/events").await?;
    r.events = events.len();
    r.undelivered = wait_delivered(&events, delivered).await;
    Ok(r)
}
