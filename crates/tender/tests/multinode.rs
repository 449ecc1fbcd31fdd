//! Several `tender serve` processes on one PostgreSQL database behave as one service:
//! idempotency, refunds, webhook deliveries and background jobs are shared without double work,
//! and an object written through one node is read at once through the other.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

mod support;
use support::{card_payment, pg_schema, secret_from, serve, Server};

struct Cluster {
    nodes: Vec<Server>,
    key: String,
    client: reqwest::Client,
    _dirs: Vec<tempfile::TempDir>,
}

const VAULT_KEY: &str = "5f0e0ad6a4e3b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f708192a3b4c5d6e7f80";

/// Starts `n` nodes on a fresh schema (the first alone, so it bootstraps the account).
async fn cluster(n: usize, extra: &[&str]) -> Option<Cluster> {
    let (url, _schema) = pg_schema().await?;
    let env = [
        ("TENDER_DATABASE_URL", url.as_str()),
        ("TENDER_VAULT_KEY", VAULT_KEY),
    ];
    let mut dirs = Vec::new();
    let mut nodes = Vec::new();
    for _ in 0..n {
        let dir = tempfile::tempdir().unwrap();
        nodes.push(serve(dir.path(), extra, &env));
        dirs.push(dir);
    }
    let key = secret_from(&nodes[0].lines).expect("the first node bootstraps the account");
    assert!(
        secret_from(&nodes[1].lines).is_none(),
        "only one node creates the first account"
    );
    Some(Cluster {
        nodes,
        key,
        client: reqwest::Client::new(),
        _dirs: dirs,
    })
}

impl Cluster {
    async fn post(
        &self,
        node: usize,
        path: &str,
        body: Value,
        idem: Option<&str>,
    ) -> (u16, Value, bool) {
        let mut req = self
            .client
            .post(format!("{}/v2{path}", self.nodes[node].base))
            .bearer_auth(&self.key)
            .json(&body);
        if let Some(k) = idem {
            req = req.header("Idempotency-Key", k);
        }
        let resp = req.send().await.unwrap();
        let status = resp.status().as_u16();
        let replayed = resp.headers().contains_key("idempotent-replayed");
        (status, resp.json().await.unwrap(), replayed)
    }

    async fn get(&self, node: usize, path: &str) -> (u16, Value) {
        let resp = self
            .client
            .get(format!("{}/v2{path}", self.nodes[node].base))
            .bearer_auth(&self.key)
            .send()
            .await
            .unwrap();
        (resp.status().as_u16(), resp.json().await.unwrap())
    }
}

#[tokio::test]
async fn an_object_written_on_one_node_is_read_at_once_on_the_other() {
    let Some(c) = cluster(2, &[]).await else {
        return;
    };
    for i in 0..20 {
        let (status, customer, _) = c
            .post(i % 2, "/customers", json!({"name": format!("n{i}")}), None)
            .await;
        assert_eq!(status, 200);
        let (status, read) = c
            .get(
                (i + 1) % 2,
                &format!("/customers/{}", customer["id"].as_str().unwrap()),
            )
            .await;
        assert_eq!(status, 200);
        assert_eq!(read, customer);
    }
}

#[tokio::test]
async fn the_same_idempotency_key_on_both_nodes_at_once_creates_one_payment() {
    let Some(c) = cluster(2, &[]).await else {
        return;
    };
    for round in 0..5 {
        let key = format!("both-{round}");
        let calls = (0..20).map(|i| c.post(i % 2, "/payments", card_payment(1000), Some(&key)));
        let answers = futures::future::join_all(calls).await;
        let originals: Vec<_> = answers
            .iter()
            .filter(|(s, _, replayed)| *s == 200 && !replayed)
            .collect();
        assert_eq!(originals.len(), 1, "round {round}: exactly one request ran");
        for (status, body, _) in &answers {
            match status {
                200 => assert_eq!(body, &originals[0].1),
                409 => assert_eq!(body["error"]["type"], "idempotency_error"),
                other => panic!("unexpected {other}: {body}"),
            }
        }
    }
    let (_, list) = c.get(0, "/payments?limit=100").await;
    assert_eq!(list["data"].as_array().unwrap().len(), 5);
}

#[tokio::test]
async fn concurrent_refunds_through_both_nodes_never_exceed_the_captured_amount() {
    let Some(c) = cluster(2, &[]).await else {
        return;
    };
    let (_, payment, _) = c.post(0, "/payments", card_payment(1000), None).await;
    let id = payment["id"].as_str().unwrap();
    let calls = (0..30).map(|i| {
        c.post(
            i % 2,
            "/refunds",
            json!({"payment": id, "amount": 90}),
            None,
        )
    });
    let answers = futures::future::join_all(calls).await;
    let ok = answers.iter().filter(|(s, _, _)| *s == 200).count();
    assert_eq!(ok, 11, "1000 / 90 = 11 refunds fit");
    assert!(answers
        .iter()
        .all(|(s, b, _)| *s == 200 || b["error"]["code"] == "amount_too_large"));
    let (_, p) = c.get(1, &format!("/payments/{id}")).await;
    assert_eq!(p["amount_refunded"], 990);
}

type Seen = Arc<Mutex<HashMap<String, usize>>>;

/// A receiver counting deliveries per event id; the first `slow` requests hang for `delay`.
async fn receiver(slow: usize, delay: Duration) -> (String, Seen) {
    let seen: Seen = Arc::default();
    let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let s = seen.clone();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |headers: axum::http::HeaderMap| {
            let s = s.clone();
            let calls = calls.clone();
            async move {
                let n = calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                if n < slow {
                    tokio::time::sleep(delay).await;
                }
                let id = headers["webhook-id"].to_str().unwrap().to_string();
                *s.lock().unwrap().entry(id).or_default() += 1;
                "ok"
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, seen)
}

#[tokio::test]
async fn each_webhook_is_delivered_by_one_node_only() {
    let Some(c) = cluster(2, &[]).await else {
        return;
    };
    let (url, seen) = receiver(0, Duration::ZERO).await;
    c.post(
        0,
        "/webhook_endpoints",
        json!({"url": url, "enabled_events": ["customer.created"]}),
        None,
    )
    .await;
    let calls = (0..60).map(|i| c.post(i % 2, "/customers", json!({}), None));
    futures::future::join_all(calls).await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while seen.lock().unwrap().len() < 60 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 60, "every event was delivered");
    let doubles: Vec<_> = seen.iter().filter(|(_, n)| **n > 1).collect();
    assert!(doubles.is_empty(), "delivered more than once: {doubles:?}");
}

#[tokio::test]
async fn a_killed_node_s_deliveries_are_taken_over_by_another() {
    let Some((url, _schema)) = pg_schema().await else {
        return;
    };
    let env = [
        ("TENDER_DATABASE_URL", url.as_str()),
        ("TENDER_VAULT_KEY", VAULT_KEY),
    ];
    let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut a = serve(dir_a.path(), &[], &env);
    let key = secret_from(&a.lines).unwrap();
    let client = reqwest::Client::new();
    // Node A alone claims the deliveries, and the receiver keeps them hanging.
    let (hook, seen) = receiver(10, Duration::from_secs(5)).await;
    let post = |base: String, path: &'static str, body: Value| {
        let (client, key) = (client.clone(), key.clone());
        async move {
            client
                .post(format!("{base}/v2{path}"))
                .bearer_auth(key)
                .json(&body)
                .send()
                .await
                .unwrap()
        }
    };
    post(
        a.base.clone(),
        "/webhook_endpoints",
        json!({"url": hook, "enabled_events": ["customer.created"]}),
    )
    .await;
    let mut events = Vec::new();
    for _ in 0..10 {
        post(a.base.clone(), "/customers", json!({})).await;
    }
    let list: Value = client
        .get(format!("{}/v2/events?limit=10", a.base))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    for e in list["data"].as_array().unwrap() {
        events.push(e["id"].as_str().unwrap().to_string());
    }
    tokio::time::sleep(Duration::from_millis(700)).await;
    a.kill(); // mid-delivery: its leases stay behind in the database
    let b = serve(dir_b.path(), &[], &env);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(45);
    for event in &events {
        loop {
            let d: Value = client
                .get(format!("{}/v2/events/{event}/deliveries", b.base))
                .bearer_auth(&key)
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            if d["data"][0]["status"] == "succeeded" {
                break;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "{event} was not taken over: {d}"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        assert!(seen.lock().unwrap().contains_key(event));
    }
}

#[tokio::test]
async fn background_settlement_runs_once_across_nodes() {
    let Some(c) = cluster(3, &["--bank-settlement-delay", "1"]).await else {
        return;
    };
    let bank = json!({"amount": 5000, "currency": "eur", "payment_method": {"type": "bank_transfer", "bank_transfer": {"iban": "DE89370400440532013000", "account_holder_name": "A"}}});
    let mut ids = Vec::new();
    for i in 0..30 {
        let (status, p, _) = c.post(i % 3, "/payments", bank.clone(), None).await;
        assert_eq!(status, 200, "{p}");
        ids.push(p["id"].as_str().unwrap().to_string());
    }
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let (_, list) = c.get(0, "/payments?status=processing&limit=100").await;
        if list["data"].as_array().unwrap().is_empty() {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "settlement did not finish"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (_, events) = c.get(1, "/events?type=payment.succeeded&limit=100").await;
    let mut per_payment: HashMap<String, usize> = HashMap::new();
    for e in events["data"].as_array().unwrap() {
        *per_payment
            .entry(e["data"]["object"]["id"].as_str().unwrap().to_string())
            .or_default() += 1;
    }
    for id in &ids {
        assert_eq!(
            per_payment.get(id),
            Some(&1),
            "{id} settled {:?} times",
            per_payment.get(id)
        );
    }
}
