//! What the November security review found (`docs/reliability.md`, "Security review"): each
//! test fails on the code the review tried and passes on the fix.

use reqwest::{Method, StatusCode};
use serde_json::json;
use tender_core::auth::{KeyKind, Mode};

use crate::helpers::*;

/// M1: a key that expired after a roll stays dead, and rolling a key already in its grace
/// period never moves its end later.
#[tokio::test]
async fn rolling_never_revives_an_expired_key_nor_extends_a_grace_period() {
    let Some(app) = spawn_app().await else { return };
    let account = &app.account.account;
    let (key, record) = app
        .services
        .create_api_key(account, Mode::Test, KeyKind::Secret)
        .await
        .unwrap();
    app.services
        .roll_api_key(account, &record.id, 100)
        .await
        .unwrap();
    let first_end = app.services.now() + 100;
    // A second roll asking for 7 days keeps the first end.
    app.services
        .roll_api_key(account, &record.id, 604_800)
        .await
        .unwrap();
    let stored = app
        .services
        .store
        .list_api_keys(account)
        .await
        .unwrap()
        .into_iter()
        .find(|k| k.id == record.id)
        .unwrap();
    assert!(
        stored.expires_at.unwrap() <= first_end,
        "grace extended to {:?}",
        stored.expires_at
    );
    assert_eq!(app.get("/v2/payments", &key).await.status, StatusCode::OK);

    app.clock.advance(101);
    assert_eq!(
        app.get("/v2/payments", &key).await.status,
        StatusCode::UNAUTHORIZED
    );
    let refused = app
        .services
        .roll_api_key(account, &record.id, 604_800)
        .await
        .unwrap_err();
    assert!(refused.to_string().contains("expired"), "{refused}");
    assert_eq!(
        app.get("/v2/payments", &key).await.status,
        StatusCode::UNAUTHORIZED
    );
}

/// M2: made-up HTTP methods, sent without a key, do not add series to `/metrics`.
#[tokio::test]
async fn made_up_methods_do_not_grow_metrics() {
    let Some(app) = spawn_app().await else { return };
    for i in 0..30 {
        let method = Method::from_bytes(format!("ZZMETHOD{i}").as_bytes()).unwrap();
        let resp = app
            .client
            .request(method, format!("{}/healthz", app.base))
            .send()
            .await
            .unwrap();
        assert!(resp.status().is_client_error());
    }
    let metrics = app
        .client
        .get(format!("{}/metrics", app.base))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(!metrics.contains("ZZMETHOD"), "a made-up method is a label");
    assert!(metrics.contains("method=\"other\""), "{metrics}");
}

/// H1: what an idempotency record keeps is a keyed digest that never covers the CVC: a replay
/// with another CVC answers exactly as a replay does (no oracle), and neither the card number
/// nor the CVC can be recomputed from the stored fingerprint without the vault key.
#[tokio::test]
async fn a_replay_with_another_cvc_is_a_replay_and_no_plain_digest_of_the_card_is_stored() {
    let Some(app) = spawn_app().await else { return };
    let body = |cvc: &str| {
        json!({"amount": 7331, "currency": "usd", "description": "order 5521",
               "payment_method": {"type": "card", "card": {"number": "4000056655665556",
               "exp_month": 11, "exp_year": 2032, "cvc": cvc}}})
    };
    let key = [("Idempotency-Key", "order-5521")];
    let first = app
        .request(
            Method::POST,
            "/v2/payments",
            Some(app.sk()),
            Some(body("719")),
            &key,
        )
        .await;
    assert_eq!(first.status, StatusCode::OK);
    let other_cvc = app
        .request(
            Method::POST,
            "/v2/payments",
            Some(app.sk()),
            Some(body("718")),
            &key,
        )
        .await;
    assert_eq!(other_cvc.status, StatusCode::OK);
    assert_eq!(other_cvc.header("idempotent-replayed"), Some("true"));
    assert_eq!(other_cvc.raw, first.raw);
    // Another card number is another request.
    let mut other_card = body("719");
    other_card["payment_method"]["card"]["number"] = json!("4242424242424242");
    let mismatch = app
        .request(
            Method::POST,
            "/v2/payments",
            Some(app.sk()),
            Some(other_card),
            &key,
        )
        .await;
    assert_eq!(mismatch.status, StatusCode::BAD_REQUEST);

    // The review's attack: SHA-256 of the method, path and canonical body, with the real card.
    let stored = app.stored_bytes().await;
    for canonical in [
        r#"POST /v2/payments
{"amount":7331,"currency":"usd","description":"order 5521","payment_method":{"card":{"cvc":"719","exp_month":11,"exp_year":2032,"number":"4000056655665556"},"type":"card"}}"#,
        r#"POST /payments
{"amount":7331,"currency":"usd","description":"order 5521","payment_method":{"card":{"cvc":"719","exp_month":11,"exp_year":2032,"number":"4000056655665556"},"type":"card"}}"#,
    ] {
        use sha2::Digest;
        let digest = hex::encode(sha2::Sha256::digest(canonical.as_bytes()));
        assert!(
            !contains(&stored, &digest),
            "a plain digest of the card is stored"
        );
    }
}

/// L2: a publishable key (public, in the merchant's pages) cannot claim the idempotency key
/// the merchant's server will use.
#[tokio::test]
async fn a_publishable_key_cannot_pre_claim_the_merchants_idempotency_keys() {
    let Some(app) = spawn_app().await else { return };
    let key = [("Idempotency-Key", "order-1001")];
    let tokenised = app
        .request(
            Method::POST,
            "/v2/payment_methods",
            Some(app.pk()),
            Some(card("4242424242424242")),
            &key,
        )
        .await;
    assert_eq!(tokenised.status, StatusCode::OK);
    let paid = app
        .request(
            Method::POST,
            "/v2/payments",
            Some(app.sk()),
            Some(payment_body("4242424242424242", 1000)),
            &key,
        )
        .await;
    assert_eq!(paid.status, StatusCode::OK, "{}", paid.body);
    assert_eq!(paid.body["object"], "payment");
}

/// L1: a webhook signing secret in a response kept for replays is sealed like other secrets;
/// the replay still shows it.
#[tokio::test]
async fn webhook_secrets_in_idempotent_responses_are_sealed_at_rest() {
    let Some(app) = spawn_app().await else { return };
    let key = [("Idempotency-Key", "we-create-1")];
    let body = json!({"url": "http://127.0.0.1:9/hook", "enabled_events": ["*"]});
    let created = app
        .request(
            Method::POST,
            "/v2/webhook_endpoints",
            Some(app.sk()),
            Some(body.clone()),
            &key,
        )
        .await;
    assert_eq!(created.status, StatusCode::OK);
    let secret = created.body["secret"].as_str().unwrap().to_string();
    assert!(secret.starts_with("whsec_"));
    assert!(
        !contains(&app.stored_bytes().await, &secret),
        "the signing secret is stored in clear"
    );
    let replay = app
        .request(
            Method::POST,
            "/v2/webhook_endpoints",
            Some(app.sk()),
            Some(body),
            &key,
        )
        .await;
    assert_eq!(replay.header("idempotent-replayed"), Some("true"));
    assert_eq!(replay.raw, created.raw);
}
