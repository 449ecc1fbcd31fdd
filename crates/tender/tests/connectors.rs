//! The binary killed in the middle of a payment at a real processor (localstripe), restarted:
//! the payment is settled by a sync, a retry of the request never charges again.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use serde_json::{json, Value};

mod support;
use support::serve;

#[path = "../../tender-server/tests/support/localstripe.rs"]
mod localstripe;
use localstripe::{Fault, LocalStripe, Proxy, STRIPE_KEY};

fn payment() -> Value {
    json!({"amount": 4200, "currency": "usd", "payment_method": {"type": "card", "card": {
        "number": "4242424242424242", "exp_month": 12, "exp_year": 2034, "cvc": "123"}}})
}

async fn pay(
    client: &reqwest::Client,
    base: &str,
    key: &str,
) -> reqwest::Result<reqwest::Response> {
    client
        .post(format!("{base}/v2/payments"))
        .bearer_auth(key)
        .header("Idempotency-Key", "killed-mid-payment")
        .json(&payment())
        .send()
        .await
}

/// Polls `check` every 100 ms for up to 20 s (the server's own task runner is what is waited
/// for; it runs in another process, so there is no clock to advance).
async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + Duration::from_secs(20);
    while !check().await {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn a_tender_killed_while_the_processor_confirms_settles_the_payment_by_sync_after_restart_and_never_charges_twice(
) {
    let Some(stripe) = LocalStripe::start().await else {
        return;
    };
    let proxy = Proxy::start(&stripe.base).await;
    let dir = tempfile::tempdir().unwrap();
    // Syncs start one second after a payment is recorded (60 by default).
    // The test points the connector at its proxy through the API: the operator allowed it.
    let flags = [
        "--connector-sync-delay",
        "1",
        "--allow-connector-settings-via-api",
    ];
    let mut server = serve(dir.path(), &flags, &[]);
    let key = support::secret_from(&server.lines).unwrap();
    let client = reqwest::Client::new();
    let created = client
        .post(format!("{}/v2/connectors", server.base))
        .bearer_auth(&key)
        .json(&json!({"type": "stripe", "api_key": STRIPE_KEY, "api_base": proxy.base, "raw_card_data": true}))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 200);
    let conn = created.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let account = server
        .lines
        .iter()
        .find_map(|l| l.strip_prefix("created account "))
        .and_then(|rest| rest.split_whitespace().next())
        .expect("bootstrap prints the account")
        .to_string();

    // The processor confirms the payment; its answer never comes back, and Tender is killed.
    proxy.set(Fault::HoldConfirmAnswers);
    let in_flight = tokio::spawn({
        let (client, base, key) = (client.clone(), server.base.clone(), key.clone());
        async move { pay(&client, &base, &key).await }
    });
    eventually("the processor to take the confirmation", || async {
        stripe
            .payment_intents()
            .await
            .iter()
            .any(|pi| pi["status"] == "succeeded")
    })
    .await;
    server.kill();
    assert!(
        in_flight.await.unwrap().is_err(),
        "the client got no answer"
    );
    proxy.set(Fault::Pass);

    // Restarted on the same data: the retry is shown the recorded payment, never run again.
    let server = serve(dir.path(), &flags, &[]);
    let retried = pay(&client, &server.base, &key).await.unwrap();
    assert_eq!(retried.status(), 200);
    assert_eq!(
        retried.headers().get("Idempotent-Replayed").unwrap(),
        "true"
    );
    let retried: Value = retried.json().await.unwrap();
    let id = retried["id"].as_str().unwrap().to_string();
    let reference = retried["connector_reference"].as_str().unwrap().to_string();
    assert!(
        matches!(retried["status"].as_str(), Some("processing" | "succeeded")),
        "{retried}"
    );
    // The sync asks the processor and settles it.
    eventually("the sync to settle the payment", || async {
        let p: Value = client
            .get(format!("{}/v2/payments/{id}", server.base))
            .bearer_auth(&key)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        p["status"] == "succeeded" && p["amount_captured"] == 4200
    })
    .await;
    // One payment here, one PaymentIntent there, one payment.succeeded event.
    let payments: Value = client
        .get(format!("{}/v2/payments", server.base))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(payments["data"].as_array().unwrap().len(), 1);
    let intents = stripe.payment_intents().await;
    assert_eq!(intents.len(), 1, "{intents:?}");
    assert_eq!(intents[0]["id"], reference.as_str());
    let events: Value = client
        .get(format!("{}/v2/events?type=payment.succeeded", server.base))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(events["data"].as_array().unwrap().len(), 1);
    // Another retry now shows the payment settled; still nothing sent again.
    let again: Value = pay(&client, &server.base, &key)
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(again["id"], id.as_str());
    assert_eq!(stripe.payment_intents().await.len(), 1);

    // The bookkeeper's check: Tender's books of that money against the processor's, to the
    // cent (`tender reports reconcile`, on the store the server runs on).
    let mut reconcile = support::tender();
    reconcile
        .args([
            "reports",
            "reconcile",
            "--account",
            &account,
            "--mode",
            "test",
        ])
        .args([
            "--connector",
            &conn,
            "--from",
            "2000-01-01",
            "--to",
            "2100-01-01",
        ])
        .arg("--data-dir")
        .arg(dir.path());
    // Awaited, not blocked on: the processor's proxy answers from this test's runtime.
    let out = tokio::process::Command::from(reconcile)
        .output()
        .await
        .unwrap();
    let (csv, said) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{said}\n{csv}");
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(rows.len(), 2, "{csv}");
    assert!(
        rows[1].contains(",charge,") && rows[1].contains(",true,"),
        "{csv}"
    );
    assert!(
        said.contains("1 transactions held by") && said.contains("1 agree"),
        "{said}"
    );
    drop(server);
}
