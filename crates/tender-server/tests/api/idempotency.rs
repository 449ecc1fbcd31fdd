//! Idempotency keys (CONTRACT §4.9): replay byte for byte, mismatch, in-flight, scoping.

use reqwest::Method;
use serde_json::json;

use crate::helpers::*;

async fn post_with_key(
    app: &TestApp,
    key: &str,
    path: &str,
    api_key: &str,
    body: serde_json::Value,
) -> Answer {
    app.request(
        Method::POST,
        path,
        Some(api_key),
        Some(body),
        &[("Idempotency-Key", key)],
    )
    .await
}

#[tokio::test]
async fn a_retry_replays_the_first_response_byte_for_byte_and_charges_once() {
    let Some(app) = spawn_app().await else { return };
    let body = payment_body("4242424242424242", 1000);
    let first = post_with_key(&app, "order-1", "/v2/payments", app.sk(), body.clone()).await;
    assert_eq!(first.status, 200);
    assert!(first.header("idempotent-replayed").is_none());
    let second = post_with_key(&app, "order-1", "/v2/payments", app.sk(), body).await;
    assert_eq!(second.status, 200);
    assert_eq!(second.raw, first.raw);
    assert_eq!(second.header("idempotent-replayed"), Some("true"));
    assert_ne!(
        second.header("request-id"),
        first.header("request-id"),
        "a replay has its own Request-Id"
    );
    let list = app.get("/v2/payments", app.sk()).await;
    assert_eq!(list.body["data"].as_array().unwrap().len(), 1);
    // The payment's two events (created, then succeeded), once.
    let events = app.get("/v2/events", app.sk()).await;
    let types: Vec<&str> = events.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(types, ["payment.succeeded", "payment.created"]);
}

#[tokio::test]
async fn replays_show_the_payment_as_it_was_answered_not_as_it_is_now() {
    let Some(app) = spawn_app().await else { return };
    let mut body = payment_body("4242424242424242", 1000);
    body["capture"] = json!(false);
    let created = post_with_key(&app, "auth-1", "/v2/payments", app.sk(), body.clone()).await;
    assert_eq!(created.status, 200);
    assert_eq!(created.body["status"], "requires_capture");
    let id = created.id();
    let capture_path = format!("/v2/payments/{id}/capture");
    let captured = post_with_key(&app, "capture-1", &capture_path, app.sk(), json!({})).await;
    assert_eq!(captured.body["status"], "succeeded");
    // The payment moves on: refunded in part.
    let refund = app
        .post(
            "/v2/refunds",
            app.sk(),
            json!({"payment": id, "amount": 300}),
        )
        .await;
    assert_eq!(refund.status, 200);
    // Each key still answers what it answered, byte for byte.
    let again = post_with_key(&app, "auth-1", "/v2/payments", app.sk(), body).await;
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
    assert_eq!(again.raw, created.raw);
    let again = post_with_key(&app, "capture-1", &capture_path, app.sk(), json!({})).await;
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
    assert_eq!(again.raw, captured.raw);
    assert_eq!(again.body["amount_refunded"], 0);
    let now = app.get(&format!("/v2/payments/{id}"), app.sk()).await;
    assert_eq!(now.body["amount_refunded"], 300);
}

#[tokio::test]
async fn a_declined_payment_is_replayed_as_the_same_402() {
    let Some(app) = spawn_app().await else { return };
    let body = payment_body("4000000000000002", 1000);
    let first = post_with_key(&app, "decline-1", "/v2/payments", app.sk(), body.clone()).await;
    assert_eq!(first.status, 402);
    let second = post_with_key(&app, "decline-1", "/v2/payments", app.sk(), body).await;
    assert_eq!(second.status, 402);
    assert_eq!(
        second.raw, first.raw,
        "same payment id and same original request_id"
    );
    assert_eq!(second.header("idempotent-replayed"), Some("true"));
    assert_eq!(
        app.get("/v2/payments", app.sk()).await.body["data"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[tokio::test]
async fn validation_errors_are_kept_too() {
    let Some(app) = spawn_app().await else { return };
    let body = json!({"amount": 10, "currency": "usd", "payment_method": card("4242424242424242")});
    let first = post_with_key(&app, "small-1", "/v2/payments", app.sk(), body.clone()).await;
    assert_eq!(first.status, 400);
    let second = post_with_key(&app, "small-1", "/v2/payments", app.sk(), body).await;
    assert_eq!(second.raw, first.raw);
    assert_eq!(second.header("idempotent-replayed"), Some("true"));
}

#[tokio::test]
async fn key_order_does_not_matter_but_any_other_difference_is_refused() {
    let Some(app) = spawn_app().await else { return };
    let a = json!({"amount": 1000, "currency": "usd", "payment_method": card("4242424242424242")});
    let reordered =
        json!({"payment_method": card("4242424242424242"), "currency": "usd", "amount": 1000});
    let first = post_with_key(&app, "k", "/v2/payments", app.sk(), a).await;
    let same = post_with_key(&app, "k", "/v2/payments", app.sk(), reordered).await;
    assert_eq!(same.raw, first.raw);
    let different = post_with_key(
        &app,
        "k",
        "/v2/payments",
        app.sk(),
        payment_body("4242424242424242", 1001),
    )
    .await;
    assert_eq!(different.status, 400);
    assert_eq!(different.error_type(), "idempotency_error");
    let other_path = post_with_key(&app, "k", "/v2/customers", app.sk(), json!({})).await;
    assert_eq!(other_path.status, 400);
    assert_eq!(other_path.error_type(), "idempotency_error");
}

#[tokio::test]
async fn keys_are_scoped_to_account_and_mode() {
    let Some(app) = spawn_app().await else { return };
    let other = app.other_account().await;
    let body = payment_body("4242424242424242", 1000);
    let a = post_with_key(&app, "shared", "/v2/payments", app.sk(), body.clone()).await;
    let b = post_with_key(
        &app,
        "shared",
        "/v2/payments",
        &other.keys.test.secret,
        body.clone(),
    )
    .await;
    let live = post_with_key(
        &app,
        "shared",
        "/v2/payments",
        app.sk_live(),
        payment_body("4111111111111111", 1000),
    )
    .await;
    assert_eq!(a.status, 200);
    assert_eq!(b.status, 200);
    assert_eq!(live.status, 200);
    assert!(b.header("idempotent-replayed").is_none());
    assert!(live.header("idempotent-replayed").is_none());
    assert_ne!(a.id(), b.id());
    assert_ne!(a.id(), live.id());
}

#[tokio::test]
async fn keys_over_255_characters_are_refused() {
    let Some(app) = spawn_app().await else { return };
    let long = "k".repeat(256);
    let a = post_with_key(&app, &long, "/v2/customers", app.sk(), json!({})).await;
    assert_eq!(a.status, 400);
    let ok = post_with_key(&app, &"k".repeat(255), "/v2/customers", app.sk(), json!({})).await;
    assert_eq!(ok.status, 200);
}

#[tokio::test]
async fn fifty_concurrent_identical_requests_create_one_payment_and_one_event() {
    let Some(app) = spawn_app().await else { return };
    let body = payment_body("4242424242424242", 4200);
    let answers = futures::future::join_all(
        (0..50).map(|_| post_with_key(&app, "burst", "/v2/payments", app.sk(), body.clone())),
    )
    .await;
    let originals: Vec<_> = answers
        .iter()
        .filter(|a| a.status == 200 && a.header("idempotent-replayed").is_none())
        .collect();
    assert_eq!(originals.len(), 1, "exactly one request ran");
    let original = originals[0];
    for a in &answers {
        match a.status.as_u16() {
            200 => assert_eq!(a.raw, original.raw),
            409 => assert_eq!(a.error_type(), "idempotency_error"),
            other => panic!("unexpected status {other}: {}", a.body),
        }
    }
    assert_eq!(
        app.get("/v2/payments", app.sk()).await.body["data"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    // One payment's events: payment.created and payment.succeeded, once each.
    assert_eq!(
        app.get("/v2/events", app.sk()).await.body["data"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

#[tokio::test]
async fn keys_expire_after_24_hours() {
    let Some(app) = spawn_app().await else { return };
    let body = payment_body("4242424242424242", 1000);
    let first = post_with_key(&app, "daily", "/v2/payments", app.sk(), body.clone()).await;
    app.clock.advance(24 * 3600 + 1);
    let again = post_with_key(&app, "daily", "/v2/payments", app.sk(), body).await;
    assert_eq!(again.status, 200);
    assert!(again.header("idempotent-replayed").is_none());
    assert_ne!(again.id(), first.id());
}

#[tokio::test]
async fn the_rate_limit_refuses_past_the_burst_per_account_and_mode_with_retry_after() {
    let Some(app) = spawn_app_with(Options {
        rate_limit: 5,
        ..Options::default()
    })
    .await
    else {
        return;
    };
    // Burst of twice the rate, then 429.
    for i in 0..10 {
        assert_eq!(
            app.get("/v2/customers", app.sk()).await.status,
            200,
            "request {i}"
        );
    }
    let limited = app.get("/v2/customers", app.sk()).await;
    assert_eq!(limited.status, 429);
    assert_eq!(limited.error_type(), "rate_limit_error");
    assert_eq!(limited.error_code(), "rate_limit");
    let retry_after: u64 = limited.header("retry-after").unwrap().parse().unwrap();
    assert!((1..=2).contains(&retry_after));
    // The live mode and another account have their own buckets.
    assert_eq!(app.get("/v2/customers", app.sk_live()).await.status, 200);
    let other = app.other_account().await;
    assert_eq!(
        app.get("/v2/customers", &other.keys.test.secret)
            .await
            .status,
        200
    );
    // Tokens come back at the rate.
    tokio::time::sleep(std::time::Duration::from_millis(450)).await;
    assert_eq!(app.get("/v2/customers", app.sk()).await.status, 200);
}
