//! The card-testing guard on the publishable-key routes and its settings (CONTRACT §14): a
//! browser confirming intents with declined cards is stopped at the account's limits, per
//! client address and per card, before any card reaches the bank; a shop's server (a secret
//! key) is not; each block is told once as `risk.blocked` (`radar.early_fraud_warning.created`
//! in `/v1`); a Checkout Session takes as many declines as the account says.

use reqwest::StatusCode;
use serde_json::Value;
use tender_core::accounts::checkout_settings::CheckoutSettings;

use crate::checkout::{browser_at, events_of, open, payment_session, submit, token_of};
use crate::helpers::*;
use crate::stripe::post;

async fn limits(app: &TestApp, settings: CheckoutSettings) {
    app.services
        .accounts()
        .set_checkout_settings(&app.account.account, settings)
        .await
        .unwrap();
}

/// A PaymentIntent the shop's server made: its id and client secret.
async fn intent(app: &TestApp) -> (String, String) {
    let pi = post(
        app,
        "/payment_intents",
        &[("amount", "1200"), ("currency", "usd")],
    )
    .await;
    assert_eq!(pi.status, StatusCode::OK, "{}", pi.body);
    (
        pi.id(),
        pi.body["client_secret"].as_str().unwrap().to_string(),
    )
}

/// A browser at `ip` confirming `path`'s intent with the publishable key, as tender.js does.
async fn confirm_from(
    app: &TestApp,
    ip: &str,
    path: &str,
    secret: &str,
    payment_method: &str,
) -> Answer {
    let resp = browser_at(ip)
        .post(format!("{}/v1{path}/confirm", app.base))
        .basic_auth(app.pk(), Some(""))
        .form(&[
            ("client_secret", secret),
            ("payment_method", payment_method),
        ])
        .send()
        .await
        .unwrap();
    answer(resp).await
}

#[tokio::test]
async fn a_browser_confirming_declined_cards_is_stopped_at_the_address_limit_and_a_server_is_not() {
    let Some(app) = spawn_app().await else { return };
    limits(
        &app,
        CheckoutSettings {
            declines_per_address: 3,
            declines_per_card: 1000,
            ..CheckoutSettings::default()
        },
    )
    .await;
    let mut last = String::new();
    for _ in 0..3 {
        let (id, secret) = intent(&app).await;
        let r = confirm_from(
            &app,
            "127.0.0.1",
            &format!("/payment_intents/{id}"),
            &secret,
            "pm_card_chargeDeclined",
        )
        .await;
        assert_eq!(r.status, StatusCode::PAYMENT_REQUIRED, "{}", r.body);
        last = id;
    }

    // The address is stopped, whatever the card: 429, and the card never reached the bank.
    let (id, secret) = intent(&app).await;
    let path = format!("/payment_intents/{id}");
    let blocked = confirm_from(&app, "127.0.0.1", &path, &secret, "pm_card_visa").await;
    assert_eq!(
        blocked.status,
        StatusCode::TOO_MANY_REQUESTS,
        "{}",
        blocked.body
    );
    // Stripe's 429 (stripe-python's RateLimitError), with the guard's own code.
    assert_eq!(blocked.error_type(), "invalid_request_error");
    assert_eq!(blocked.error_code(), "card_testing_blocked");
    let pi = crate::stripe::get(&app, &path, &[]).await;
    assert_eq!(pi.body["status"], "requires_payment_method");
    assert_eq!(pi.body["latest_charge"], Value::Null, "nothing was charged");

    // Another address may; so may the shop's own server from this one.
    let elsewhere = confirm_from(&app, "127.0.0.2", &path, &secret, "pm_card_visa").await;
    assert_eq!(elsewhere.body["status"], "succeeded", "{}", elsewhere.body);
    let (id, _) = intent(&app).await;
    let server = post(
        &app,
        &format!("/payment_intents/{id}/confirm"),
        &[("payment_method", "pm_card_visa")],
    )
    .await;
    assert_eq!(server.body["status"], "succeeded", "{}", server.body);

    // The block, told once, in both dialects.
    let events = events_of(&app, "risk.blocked").await;
    assert_eq!(events.len(), 1, "{events:?}");
    let block = &events[0]["data"]["object"];
    assert_eq!(block["object"], "risk_block");
    assert_eq!(block["reason"], "declines_per_address");
    assert_eq!(block["limit"], 3);
    assert_eq!(block["surface"], "api");
    assert_eq!(block["client_address"], "127.0.0.1");
    assert_eq!(block["reference"], last.replace("pi_", "pay_"));
    let v1 = crate::stripe::get(
        &app,
        "/events",
        &[("type", "radar.early_fraud_warning.created")],
    )
    .await;
    let warning = &v1.body["data"][0]["data"]["object"];
    assert_eq!(
        warning["object"], "radar.early_fraud_warning",
        "{}",
        v1.body
    );
    assert_eq!(warning["payment_intent"], last.as_str());
    assert_eq!(warning["actionable"], false);
}

#[tokio::test]
async fn one_card_declined_from_several_addresses_is_stopped_for_all_of_them() {
    let Some(app) = spawn_app().await else { return };
    limits(
        &app,
        CheckoutSettings {
            declines_per_address: 1000,
            declines_per_card: 2,
            ..CheckoutSettings::default()
        },
    )
    .await;
    // A SetupIntent's confirmation verifies the card: a decline counts as a payment's does.
    let customer = post(&app, "/customers", &[]).await.id();
    let mut setups = Vec::new();
    for ip in ["127.0.0.1", "127.0.0.2", "127.0.0.3"] {
        let si = post(&app, "/setup_intents", &[("customer", customer.as_str())]).await;
        let (id, secret) = (
            si.id(),
            si.body["client_secret"].as_str().unwrap().to_string(),
        );
        setups.push((ip, id, secret));
    }
    for (ip, id, secret) in &setups[..2] {
        let r = confirm_from(
            &app,
            ip,
            &format!("/setup_intents/{id}"),
            secret,
            "pm_card_chargeDeclined",
        )
        .await;
        assert_eq!(r.status, StatusCode::PAYMENT_REQUIRED, "{}", r.body);
    }
    let (ip, id, secret) = &setups[2];
    let path = format!("/setup_intents/{id}");
    let r = confirm_from(&app, ip, &path, secret, "pm_card_chargeDeclined").await;
    assert_eq!(r.status, StatusCode::TOO_MANY_REQUESTS, "{}", r.body);
    let other_card = confirm_from(&app, ip, &path, secret, "pm_card_visa").await;
    assert_eq!(
        other_card.body["status"], "succeeded",
        "{}",
        other_card.body
    );
    let events = events_of(&app, "risk.blocked").await;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["data"]["object"]["reason"], "declines_per_card");
}

#[tokio::test]
async fn a_checkout_session_takes_as_many_declines_as_the_account_says() {
    let Some(app) = spawn_app().await else { return };
    limits(
        &app,
        CheckoutSettings {
            declines_per_session: 1,
            ..CheckoutSettings::default()
        },
    )
    .await;
    let session = payment_session(&app, serde_json::json!({})).await;
    let url = session["url"].as_str().unwrap().to_string();
    let http = browser_at("127.0.0.1");
    let (_, html) = open(&http, &url).await;
    let r = submit(
        &http,
        &url,
        &token_of(&html),
        "t@example.com",
        "4000000000000002",
    )
    .await;
    assert_eq!(r.status().as_u16(), 402);
    let page = r.text().await.unwrap();
    assert!(
        page.contains("Too many declined cards for this checkout"),
        "{page}"
    );
    assert!(
        !page.contains("name=\"token\""),
        "the page takes no more tries"
    );
    let events = events_of(&app, "risk.blocked").await;
    assert_eq!(events.len(), 1);
    let block = &events[0]["data"]["object"];
    assert_eq!(block["reason"], "declines_per_session");
    assert_eq!(block["reference"], session["id"]);
    assert_eq!(block["blocked_until"], Value::Null);

    // The limits are bounded: 0 is refused, naming the setting.
    let refused = app
        .services
        .accounts()
        .set_checkout_settings(
            &app.account.account,
            CheckoutSettings {
                declines_per_session: 0,
                ..CheckoutSettings::default()
            },
        )
        .await
        .unwrap_err();
    assert!(
        refused.to_string().contains("declines_per_session"),
        "{refused}"
    );
}
