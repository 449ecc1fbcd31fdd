//! `tender migrate-store`: a SQLite data directory moved whole into an empty PostgreSQL
//! database, and the server run on the copy — the same payments, refunds, customers and saved
//! cards (sealed under the same vault key), idempotency records that still replay, counters
//! that go on — and the two ways it refuses: while a server runs on the source, and into a
//! target that holds anything.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Output;

use serde_json::{json, Value};

mod support;
use support::{card_payment, pg_schema, secret_from, serve, tender};

fn migrate(dir: &Path, url: &str) -> Output {
    tender()
        .args(["migrate-store", "--to", url, "--data-dir"])
        .arg(dir)
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

async fn post(base: &str, key: &str, path: &str, body: Value, idem: Option<&str>) -> Value {
    let mut req = reqwest::Client::new()
        .post(format!("{base}/v2{path}"))
        .bearer_auth(key)
        .json(&body);
    if let Some(k) = idem {
        req = req.header("Idempotency-Key", k);
    }
    req.send().await.unwrap().json().await.unwrap()
}

async fn get(base: &str, key: &str, path: &str) -> Value {
    reqwest::Client::new()
        .get(format!("{base}/v2{path}"))
        .bearer_auth(key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

#[tokio::test]
async fn a_sqlite_data_directory_moves_to_postgresql_whole() {
    let Some((url, _schema)) = pg_schema().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let server = serve(dir.path(), &[], &[]);
    let key = secret_from(&server.lines).unwrap();
    let base = server.base.clone();
    let paid = post(
        &base,
        &key,
        "/payments",
        card_payment(2500),
        Some("pay-once"),
    )
    .await;
    let refund = post(
        &base,
        &key,
        "/refunds",
        json!({"payment": paid["id"], "amount": 700}),
        None,
    )
    .await;
    assert_eq!(refund["status"], "succeeded", "{refund}");
    let customer = post(
        &base,
        &key,
        "/customers",
        json!({"email": "moved@example.com"}),
        None,
    )
    .await;
    let card = post(
        &base,
        &key,
        "/payment_methods",
        json!({"type": "card", "card": {"number": "4242424242424242", "exp_month": 12, "exp_year": 2034, "cvc": "123"}}),
        None,
    )
    .await;
    post(
        &base,
        &key,
        &format!("/payment_methods/{}/attach", card["id"].as_str().unwrap()),
        json!({"customer": customer["id"]}),
        None,
    )
    .await;

    // While a server runs on it, the source is not copied.
    let busy = migrate(dir.path(), &url);
    assert!(!busy.status.success());
    assert!(
        text(&busy.stderr).contains("stop the server"),
        "{}",
        text(&busy.stderr)
    );
    drop(server);

    let moved = migrate(dir.path(), &url);
    assert!(
        moved.status.success(),
        "{}{}",
        text(&moved.stdout),
        text(&moved.stderr)
    );
    let out = text(&moved.stdout);
    assert!(out.contains("payments: 1 rows"), "{out}");
    assert!(out.contains("refunds: 1 rows"), "{out}");
    assert!(out.contains("the ledger holds"), "{out}");

    // Served from PostgreSQL with the data directory's vault key.
    let vault = dir.path().join("vault.key");
    let elsewhere = tempfile::tempdir().unwrap();
    let server = serve(
        elsewhere.path(),
        &[],
        &[
            ("TENDER_DATABASE_URL", url.as_str()),
            ("TENDER_VAULT_KEY_FILE", vault.to_str().unwrap()),
        ],
    );
    let base = server.base.clone();
    let id = paid["id"].as_str().unwrap();
    let there = get(&base, &key, &format!("/payments/{id}")).await;
    assert_eq!(there["amount_refunded"], 700, "{there}");
    // The idempotency record replays the first answer.
    let again = post(
        &base,
        &key,
        "/payments",
        card_payment(2500),
        Some("pay-once"),
    )
    .await;
    assert_eq!(again["id"], paid["id"]);
    // The saved card opens under the same key, and new objects follow the copied ones.
    let charged = post(
        &base,
        &key,
        "/payments",
        json!({"amount": 1200, "currency": "usd", "customer": customer["id"],
               "payment_method": card["id"]}),
        None,
    )
    .await;
    assert_eq!(charged["status"], "succeeded", "{charged}");
    let events = get(&base, &key, "/events?limit=1").await;
    assert_eq!(
        events["data"][0]["data"]["object"]["id"], charged["id"],
        "{events}"
    );
    drop(server);

    // A second copy into the target, now in use, is refused before anything is written.
    let twice = migrate(dir.path(), &url);
    assert!(!twice.status.success());
    assert!(
        text(&twice.stderr).contains("not empty"),
        "{}",
        text(&twice.stderr)
    );
}
