//! Connectors (CONTRACT §8) against a real third-party implementation of Stripe's API:
//! localstripe 1.15.10, started per test on 127.0.0.1 (`scripts/localstripe-server.py`), with
//! a fault-injecting proxy in front of it where a test needs the processor to fail. Every test
//! checks both sides: Tender's objects and localstripe's own (the PaymentIntent, its refunds).
//!
//! Without Python's `localstripe` installed these tests print `skipped: …` and pass, unless
//! `TENDER_REQUIRE_LOCALSTRIPE=1` (CI sets it and installs it); see `tests/support/localstripe.rs`.

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{card, payment_body, spawn_app_with, Answer, Options, TestApp};
use crate::localstripe::{refused_base, stripe_fee, Fault, LocalStripe, Proxy, STRIPE_KEY};

pub(crate) async fn stripe_connector(
    app: &TestApp,
    api_base: &str,
    priority: i64,
    raw: bool,
) -> String {
    let created = app
        .post(
            "/v2/connectors",
            app.sk(),
            json!({"type": "stripe", "api_key": STRIPE_KEY, "api_base": api_base,
                   "priority": priority, "raw_card_data": raw, "name": "Stripe"}),
        )
        .await;
    assert_eq!(created.status, 200, "{}", created.body);
    created.id()
}

/// A card tokenised at the processor itself, as Stripe.js would: its `pm_…`.
pub(crate) async fn processor_token(stripe: &LocalStripe) -> String {
    let pm = stripe
        .post(
            "/v1/payment_methods",
            &[
                ("type", "card"),
                ("card[number]", "4242424242424242"),
                ("card[exp_month]", "12"),
                ("card[exp_year]", "2034"),
                ("card[cvc]", "123"),
            ],
        )
        .await;
    pm["id"].as_str().unwrap().to_string()
}

/// Runs the due background tasks after the first sync is due.
async fn sync_now(app: &TestApp) {
    app.clock
        .advance(tender_core::payments::upstream::FIRST_SYNC_SECS + 1);
    app.services.run_due_tasks(100).await.unwrap();
}

/// A server whose operator lets the API point connectors at a test processor and send it
/// card numbers (`--allow-connector-settings-via-api`): these tests set both through the API.
async fn spawn_app() -> Option<TestApp> {
    spawn_app_with(Options {
        connector_settings_via_api: true,
        ..Options::default()
    })
    .await
}

/// The balance transaction of payment `id`.
pub(crate) async fn booking_of(app: &TestApp, id: &str) -> Value {
    let p = app.get(&format!("/v2/payments/{id}"), app.sk()).await;
    let txn = p.body["balance_transaction"].as_str().expect("booked");
    app.get(&format!("/v2/balance_transactions/{txn}"), app.sk())
        .await
        .body
}

pub(crate) async fn setup() -> Option<(TestApp, LocalStripe)> {
    let stripe = LocalStripe::start().await?;
    let app = spawn_app().await?;
    Some((app, stripe))
}

#[tokio::test]
async fn a_stripe_connector_takes_the_payment_at_the_processor() {
    let Some((app, stripe)) = setup().await else {
        return;
    };
    let conn = stripe_connector(&app, &stripe.base, 0, true).await;
    let paid = app.pay(app.sk(), "4242424242424242", 2500).await;
    assert_eq!(paid.status, 200, "{}", paid.body);
    assert_eq!(paid.body["status"], "succeeded");
    assert_eq!(paid.body["amount_captured"], 2500);
    assert_eq!(paid.body["connector"], conn.as_str());
    let reference = paid.body["connector_reference"].as_str().unwrap();
    assert!(reference.starts_with("pi_"), "{reference}");
    // localstripe's own state: one PaymentIntent, succeeded, for this amount, naming us.
    let pi = stripe
        .get(&format!("/v1/payment_intents/{reference}"))
        .await;
    assert_eq!(pi["status"], "succeeded");
    assert_eq!(pi["amount"], 2500);
    assert_eq!(pi["currency"], "usd");
    assert_eq!(pi["metadata"]["tender_payment"], paid.id().as_str());
    assert_eq!(stripe.payment_intents().await.len(), 1);
    // The event says where it went too.
    let events = app.get("/v2/events?type=payment.succeeded", app.sk()).await;
    assert_eq!(
        events.body["data"][0]["data"]["object"]["connector_reference"],
        reference
    );
    // Booked as Stripe booked it: its fee, not Tender's pricing, and held by the processor.
    let txn = booking_of(&app, &paid.id()).await;
    assert_eq!(txn["amount"], 2500);
    assert_eq!(txn["fee"], stripe_fee(2500), "{txn}");
    assert_eq!(txn["net"], 2500 - stripe_fee(2500));
    assert_eq!(txn["fee_details"][0]["type"], "processor_fee");
    assert_eq!(
        txn["fee_details"][0]["description"],
        "Stripe processing fees"
    );
    assert_eq!(txn["connector"], conn.as_str());
    let balance = app.get("/v2/balance", app.sk()).await;
    assert_eq!(balance.body["pending"][0]["amount"], 0, "{}", balance.body);
    assert_eq!(
        balance.body["processors"]["pending"][0]["amount"],
        2500 - stripe_fee(2500)
    );
    assert!(app.ledger_problems().await.is_empty());
    // Every call named the API version the connector is written for.
    let versions = stripe.versions();
    assert!(versions.len() >= 3, "{versions:?}");
    assert!(
        versions
            .iter()
            .all(|v| v == tender_server::connectors::stripe::STRIPE_VERSION),
        "{versions:?}"
    );
}

#[tokio::test]
async fn a_processor_decline_is_a_402_with_the_mapped_codes_and_a_failed_payment() {
    let Some((app, stripe)) = setup().await else {
        return;
    };
    stripe_connector(&app, &stripe.base, 0, true).await;
    // localstripe declines 4000000000000341 at confirmation, without a decline_code.
    let declined = app.pay(app.sk(), "4000000000000341", 2500).await;
    assert_eq!(declined.status, 402, "{}", declined.body);
    assert_eq!(declined.error_type(), "card_error");
    assert_eq!(declined.error_code(), "card_declined");
    assert_eq!(declined.body["error"]["decline_code"], "generic_decline");
    let id = declined.body["error"]["payment"].as_str().unwrap();
    let payment = app.get(&format!("/v2/payments/{id}"), app.sk()).await;
    assert_eq!(payment.body["status"], "failed");
    assert_eq!(payment.body["failure_code"], "card_declined");
    let reference = payment.body["connector_reference"].as_str().unwrap();
    let pi = stripe
        .get(&format!("/v1/payment_intents/{reference}"))
        .await;
    assert_eq!(pi["status"], "requires_payment_method");
    assert_eq!(pi["last_payment_error"]["code"], "card_declined");
    let failed = app.get("/v2/events?type=payment.failed", app.sk()).await;
    assert_eq!(failed.body["data"][0]["data"]["object"]["id"], id);
}

#[tokio::test]
async fn partial_capture_cancel_and_partial_refunds_reach_the_processor_and_never_over_refund() {
    let Some((app, stripe)) = setup().await else {
        return;
    };
    stripe_connector(&app, &stripe.base, 0, true).await;
    let mut body = payment_body("4242424242424242", 1000);
    body["capture"] = json!(false);
    let held = app.post("/v2/payments", app.sk(), body.clone()).await;
    assert_eq!(held.body["status"], "requires_capture", "{}", held.body);
    let id = held.id();
    let reference = held.body["connector_reference"]
        .as_str()
        .unwrap()
        .to_string();
    let pi = stripe
        .get(&format!("/v1/payment_intents/{reference}"))
        .await;
    assert_eq!(pi["status"], "requires_capture");
    assert_eq!(pi["capture_method"], "manual");

    let captured = app
        .post(
            &format!("/v2/payments/{id}/capture"),
            app.sk(),
            json!({"amount": 600}),
        )
        .await;
    assert_eq!(captured.status, 200, "{}", captured.body);
    assert_eq!(captured.body["amount_captured"], 600);
    // Stripe books what was captured, not what was authorised.
    let txn = booking_of(&app, &id).await;
    assert_eq!(
        (txn["amount"].as_i64(), txn["fee"].as_i64()),
        (Some(600), Some(stripe_fee(600)))
    );
    let pi = stripe
        .get(&format!("/v1/payment_intents/{reference}"))
        .await;
    assert_eq!(pi["status"], "succeeded");
    // localstripe models the 400 left uncaptured as refunded from the charge.
    assert_eq!(pi["latest_charge"]["amount_refunded"], 400);

    let first = app
        .post(
            "/v2/refunds",
            app.sk(),
            json!({"payment": id, "amount": 200}),
        )
        .await;
    assert_eq!(first.status, 200, "{}", first.body);
    assert_eq!(first.body["status"], "succeeded");
    assert!(first.body["connector_reference"]
        .as_str()
        .unwrap()
        .starts_with("re_"));
    let second = app
        .post(
            "/v2/refunds",
            app.sk(),
            json!({"payment": id, "amount": 300}),
        )
        .await;
    assert_eq!(second.body["status"], "succeeded", "{}", second.body);
    // 100 left: more is refused here, before the processor (localstripe would not refuse it).
    let over = app
        .post(
            "/v2/refunds",
            app.sk(),
            json!({"payment": id, "amount": 200}),
        )
        .await;
    assert_eq!(over.status, 400);
    assert_eq!(over.error_code(), "amount_too_large");
    let payment = app.get(&format!("/v2/payments/{id}"), app.sk()).await;
    assert_eq!(payment.body["amount_refunded"], 500);
    // The refunds leave the processor's balance, not Tender's.
    let balance = app.get("/v2/balance", app.sk()).await;
    assert_eq!(
        balance.body["processors"]["pending"][0]["amount"]
            .as_i64()
            .unwrap()
            + balance.body["processors"]["available"][0]["amount"]
                .as_i64()
                .unwrap(),
        600 - stripe_fee(600) - 500,
        "{}",
        balance.body
    );
    assert_eq!(balance.body["available"][0]["amount"], 0);
    assert!(app.ledger_problems().await.is_empty());
    // localstripe holds exactly our two refunds (besides the uncaptured remainder).
    let refunds = stripe
        .get(&format!("/v1/refunds?payment_intent={reference}&limit=100"))
        .await;
    let mut ours: Vec<i64> = refunds["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["metadata"]["tender_refund"].is_string())
        .map(|r| r["amount"].as_i64().unwrap())
        .collect();
    // localstripe lists refunds made in the same second in either order.
    ours.sort();
    assert_eq!(ours, vec![200, 300]);

    // Cancel: released at the processor.
    let other = app.post("/v2/payments", app.sk(), body).await;
    let canceled = app
        .post(
            &format!("/v2/payments/{}/cancel", other.id()),
            app.sk(),
            json!({}),
        )
        .await;
    assert_eq!(canceled.status, 200, "{}", canceled.body);
    assert_eq!(canceled.body["status"], "canceled");
    let pi = stripe
        .get(&format!(
            "/v1/payment_intents/{}",
            other.body["connector_reference"].as_str().unwrap()
        ))
        .await;
    assert_eq!(pi["status"], "canceled");
}

#[tokio::test]
async fn three_d_secure_at_the_processor_completes_by_sync() {
    let Some((app, stripe)) = setup().await else {
        return;
    };
    stripe_connector(&app, &stripe.base, 0, true).await;
    let pending = app.pay(app.sk(), "4000002500003155", 2000).await;
    assert_eq!(pending.status, 200, "{}", pending.body);
    assert_eq!(pending.body["status"], "requires_action");
    // localstripe gives no authentication URL: the client authenticates with Stripe's SDK.
    assert_eq!(pending.body["next_action"]["type"], "use_processor_sdk");
    let reference = pending.body["connector_reference"].as_str().unwrap();
    assert_eq!(
        pending.body["next_action"]["use_processor_sdk"]["reference"],
        reference
    );
    // Not yet authenticated: a sync leaves it waiting.
    sync_now(&app).await;
    let still = app
        .get(&format!("/v2/payments/{}", pending.id()), app.sk())
        .await;
    assert_eq!(still.body["status"], "requires_action");
    // The cardholder authenticates at the processor.
    let pi = stripe
        .get(&format!("/v1/payment_intents/{reference}"))
        .await;
    let secret = pi["client_secret"].as_str().unwrap();
    let done = stripe
        .post(
            &format!("/v1/payment_intents/{reference}/_authenticate"),
            &[("client_secret", secret), ("success", "true")],
        )
        .await;
    assert_eq!(done["status"], "succeeded");
    // The next sync sees it.
    app.clock.advance(3600);
    app.services.run_due_tasks(100).await.unwrap();
    let paid = app
        .get(&format!("/v2/payments/{}", pending.id()), app.sk())
        .await;
    assert_eq!(paid.body["status"], "succeeded");
    assert_eq!(paid.body["amount_captured"], 2000);
    let events = app.get("/v2/events?type=payment.succeeded", app.sk()).await;
    assert_eq!(
        events.body["data"][0]["data"]["object"]["id"],
        pending.id().as_str()
    );
}

#[tokio::test]
async fn payments_fail_over_when_a_connector_is_down_never_after_a_decline_and_a_card_never_after_it_was_sent(
) {
    let Some((app, first)) = setup().await else {
        return;
    };
    let Some(second) = LocalStripe::start().await else {
        return;
    };
    // The first choice refuses connections (nothing was sent): the payment goes to the second.
    let down = stripe_connector(&app, &refused_base().await, 0, true).await;
    let up = stripe_connector(&app, &second.base, 1, true).await;
    let paid = app.pay(app.sk(), "4242424242424242", 1500).await;
    assert_eq!(paid.status, 200, "{}", paid.body);
    assert_eq!(paid.body["connector"], up.as_str());
    assert_eq!(second.payment_intents().await.len(), 1);

    // The first choice answers 503 to everything: it got the card (T3-H2's skimmer answers
    // so), so the payment ends there, failed, and the card goes to no one else.
    let proxy = Proxy::start(&first.base).await;
    proxy.set(Fault::ServerError);
    let flaky = app
        .post(
            &format!("/v2/connectors/{down}"),
            app.sk(),
            json!({"api_base": proxy.base}),
        )
        .await;
    assert_eq!(flaky.status, 200, "{}", flaky.body);
    let stopped = app.pay(app.sk(), "4242424242424242", 1600).await;
    assert_eq!(stopped.status, 402, "{}", stopped.body);
    assert_eq!(
        stopped.body["error"]["decline_code"],
        "processor_unavailable"
    );
    let payment = stopped.body["error"]["payment"].as_str().unwrap();
    let failed = app.get(&format!("/v2/payments/{payment}"), app.sk()).await;
    assert_eq!(failed.body["status"], "failed");
    assert_eq!(failed.body["connector"], down.as_str());
    assert_eq!(first.payment_intents().await.len(), 0);
    assert_eq!(second.payment_intents().await.len(), 1);
    // A processor's own token carries no card: it may still fail over.
    let token = processor_token(&second).await;
    let by_token = app
        .post(
            "/v2/payments",
            app.sk(),
            json!({"amount": 1600, "currency": "usd",
                   "payment_method": {"type": "connector_token", "connector_token": token}}),
        )
        .await;
    assert_eq!(by_token.status, 200, "{}", by_token.body);
    assert_eq!(by_token.body["connector"], up.as_str());

    // A decline at the first choice is the answer: nothing is tried at the second.
    proxy.set(Fault::Pass);
    let declined = app.pay(app.sk(), "4000000000000341", 1700).await;
    assert_eq!(declined.status, 402, "{}", declined.body);
    assert_eq!(first.payment_intents().await.len(), 1);
    assert_eq!(second.payment_intents().await.len(), 2);

    // Every connector down: failed, processing_error / processor_unavailable, 402.
    proxy.set(Fault::ServerError);
    app.post(
        &format!("/v2/connectors/{up}"),
        app.sk(),
        json!({"disabled": true}),
    )
    .await;
    let nowhere = app.pay(app.sk(), "4242424242424242", 1800).await;
    assert_eq!(nowhere.status, 402, "{}", nowhere.body);
    assert_eq!(nowhere.error_code(), "processing_error");
    assert_eq!(
        nowhere.body["error"]["decline_code"],
        "processor_unavailable"
    );
}

#[tokio::test]
async fn a_lost_confirmation_answer_is_processing_then_settled_by_sync_never_twice() {
    let Some((app, stripe)) = setup().await else {
        return;
    };
    let proxy = Proxy::start(&stripe.base).await;
    stripe_connector(&app, &proxy.base, 0, true).await;
    proxy.set(Fault::LoseConfirmAnswers);
    let unknown = app
        .request(
            Method::POST,
            "/v2/payments",
            Some(app.sk()),
            Some(payment_body("4242424242424242", 3000)),
            &[("Idempotency-Key", "order-77")],
        )
        .await;
    assert_eq!(unknown.status, 200, "{}", unknown.body);
    assert_eq!(unknown.body["status"], "processing");
    let reference = unknown.body["connector_reference"].as_str().unwrap();
    // The processor did take it.
    assert_eq!(
        stripe
            .get(&format!("/v1/payment_intents/{reference}"))
            .await["status"],
        "succeeded"
    );
    // A retry is the first answer; nothing is sent again.
    proxy.set(Fault::Pass);
    let retried = app
        .request(
            Method::POST,
            "/v2/payments",
            Some(app.sk()),
            Some(payment_body("4242424242424242", 3000)),
            &[("Idempotency-Key", "order-77")],
        )
        .await;
    assert_eq!(retried.raw, unknown.raw);
    sync_now(&app).await;
    let settled = app
        .get(&format!("/v2/payments/{}", unknown.id()), app.sk())
        .await;
    assert_eq!(settled.body["status"], "succeeded");
    assert_eq!(settled.body["amount_captured"], 3000);
    assert_eq!(stripe.payment_intents().await.len(), 1);
}

#[tokio::test]
async fn a_request_abandoned_mid_confirmation_is_settled_by_sync_and_a_retry_never_charges_again() {
    let Some((app, stripe)) = setup().await else {
        return;
    };
    let proxy = Proxy::start(&stripe.base).await;
    stripe_connector(&app, &proxy.base, 0, true).await;
    // The processor takes the confirmation and its answer never comes; the client hangs up,
    // and its request is dropped while waiting, as a crash would leave it: the payment is
    // recorded with its reference, the confirmation was carried out, nothing was finished.
    proxy.set(Fault::HoldConfirmAnswers);
    let impatient = reqwest::Client::builder()
        .timeout(std::time::Duration::from_millis(1500))
        .build()
        .unwrap();
    let gave_up = impatient
        .post(format!("{}/v2/payments", app.base))
        .bearer_auth(app.sk())
        .header("Idempotency-Key", "order-88")
        .json(&payment_body("4242424242424242", 4000))
        .send()
        .await;
    assert!(gave_up.is_err(), "the answer was held");
    proxy.set(Fault::Pass);
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    // A retry with the key is shown the recorded payment; it never makes a second one.
    let retry = || async {
        app.request(
            Method::POST,
            "/v2/payments",
            Some(app.sk()),
            Some(payment_body("4242424242424242", 4000)),
            &[("Idempotency-Key", "order-88")],
        )
        .await
    };
    let first = retry().await;
    assert_eq!(first.status, 200, "{}", first.body);
    assert_eq!(first.header("Idempotent-Replayed"), Some("true"));
    assert_eq!(first.body["status"], "processing");
    assert!(first.body["connector_reference"].is_string());
    sync_now(&app).await;
    let again = retry().await;
    let payment = app
        .get(&format!("/v2/payments/{}", again.id()), app.sk())
        .await;
    assert_eq!(payment.body["status"], "succeeded", "{}", payment.body);
    let list = app.get("/v2/payments", app.sk()).await;
    assert_eq!(list.body["data"].as_array().unwrap().len(), 1);
    let intents = stripe.payment_intents().await;
    let confirmed: Vec<&Value> = intents
        .iter()
        .filter(|pi| pi["status"] == "succeeded")
        .collect();
    assert_eq!(confirmed.len(), 1, "{intents:?}");
}

#[tokio::test]
async fn a_replayed_payment_makes_one_payment_intent() {
    let Some((app, stripe)) = setup().await else {
        return;
    };
    stripe_connector(&app, &stripe.base, 0, true).await;
    let send = || async {
        app.request(
            Method::POST,
            "/v2/payments",
            Some(app.sk()),
            Some(payment_body("4242424242424242", 1200)),
            &[("Idempotency-Key", "order-99")],
        )
        .await
    };
    let first = send().await;
    let second = send().await;
    assert_eq!(first.status, 200);
    assert_eq!(second.raw, first.raw);
    assert_eq!(second.header("Idempotent-Replayed"), Some("true"));
    assert_eq!(stripe.payment_intents().await.len(), 1);
}

#[tokio::test]
async fn connector_tokens_pass_through_and_raw_cards_need_the_operators_consent() {
    let Some((app, stripe)) = setup().await else {
        return;
    };
    let conn = stripe_connector(&app, &stripe.base, 0, false).await;
    let refused = app.pay(app.sk(), "4242424242424242", 1000).await;
    assert_eq!(refused.status, 400, "{}", refused.body);
    assert_eq!(refused.error_code(), "connector_requires_token");
    assert_eq!(refused.error_param(), "payment_method");
    assert_eq!(stripe.payment_intents().await.len(), 0);
    // The client tokenised the card with the processor itself.
    let token = processor_token(&stripe).await;
    let token = token.as_str();
    let paid = app
        .post(
            "/v2/payments",
            app.sk(),
            json!({"amount": 1000, "currency": "eur",
                   "payment_method": {"type": "connector_token", "connector_token": token}}),
        )
        .await;
    assert_eq!(paid.status, 200, "{}", paid.body);
    assert_eq!(paid.body["status"], "succeeded");
    assert_eq!(paid.body["payment_method"]["type"], "connector_token");
    assert_eq!(paid.body["payment_method"]["connector_token"], token);
    let pi = stripe
        .get(&format!(
            "/v1/payment_intents/{}",
            paid.body["connector_reference"].as_str().unwrap()
        ))
        .await;
    assert_eq!(pi["payment_method"], token);
    assert_eq!(pi["currency"], "eur");
    // A deleted connector is no longer routed to, but its payments still refund through it.
    let deleted = app
        .delete(&format!("/v2/connectors/{conn}"), app.sk())
        .await;
    assert_eq!(
        deleted.body,
        json!({"id": conn, "object": "connector", "deleted": true})
    );
    assert_eq!(
        app.get(&format!("/v2/connectors/{conn}"), app.sk())
            .await
            .status,
        404
    );
    let refund = app
        .post("/v2/refunds", app.sk(), json!({"payment": paid.id()}))
        .await;
    assert_eq!(refund.body["status"], "succeeded", "{}", refund.body);
    assert_eq!(refund.body["connector"], conn.as_str());
    // Without connectors, a connector_token has nowhere to go.
    let nowhere = app
        .post(
            "/v2/payments",
            app.sk(),
            json!({"amount": 1000, "currency": "eur",
                   "payment_method": {"type": "connector_token", "connector_token": token}}),
        )
        .await;
    assert_eq!(nowhere.status, 400);
    assert_eq!(nowhere.error_param(), "payment_method[connector_token]");
}

#[tokio::test]
async fn connectors_keep_their_secrets_and_refuse_bad_input() {
    let Some(app) = spawn_app().await else {
        return;
    };
    let created = app
        .post(
            "/v2/connectors",
            app.sk(),
            json!({"type": "stripe", "api_key": "sk_test_abcdef1234", "webhook_secret": "whsec_shhh_kept_out_of_sight",
                   "metadata": {"team": "payments"}}),
        )
        .await;
    assert_eq!(created.status, 200, "{}", created.body);
    let id = created.id();
    assert!(id.starts_with("conn_"));
    for shown in [
        created.body.clone(),
        app.get(&format!("/v2/connectors/{id}"), app.sk())
            .await
            .body,
        app.get("/v2/connectors", app.sk()).await.body["data"][0].clone(),
    ] {
        assert_eq!(shown["object"], "connector");
        assert_eq!(shown["type"], "stripe");
        assert_eq!(shown["api_key_last4"], "1234");
        assert_eq!(shown["api_base"], "https://api.stripe.com");
        assert_eq!(shown["status"], "enabled");
        assert_eq!(shown["raw_card_data"], false);
        assert_eq!(shown["livemode"], false);
        let text = shown.to_string();
        assert!(
            !text.contains("sk_test_abcdef1234") && !text.contains("whsec_shhh_kept_out_of_sight"),
            "{text}"
        );
    }
    assert!(!crate::helpers::contains(
        &app.stored_bytes().await,
        "sk_test_abcdef1234"
    ));
    assert!(!crate::helpers::contains(
        &app.stored_bytes().await,
        "whsec_shhh_kept_out_of_sight"
    ));
    // Keys are rotated without being shown.
    let rotated = app
        .post(
            &format!("/v2/connectors/{id}"),
            app.sk(),
            json!({"api_key": "sk_test_zzzz9876", "priority": 5}),
        )
        .await;
    assert_eq!(rotated.body["api_key_last4"], "9876");
    assert_eq!(rotated.body["priority"], 5);

    let bad = |body: Value, param: &'static str, code: &'static str| {
        let app = &app;
        async move {
            let a: Answer = app.post("/v2/connectors", app.sk(), body.clone()).await;
            assert_eq!(a.status, 400, "{body}: {}", a.body);
            assert_eq!(a.error_param(), param, "{body}: {}", a.body);
            assert_eq!(a.error_code(), code, "{body}: {}", a.body);
        }
    };
    bad(json!({"type": "adyen"}), "type", "parameter_invalid").await;
    bad(json!({}), "type", "parameter_missing").await;
    bad(json!({"type": "stripe"}), "api_key", "parameter_missing").await;
    bad(
        json!({"type": "stripe", "api_key": "sk_live_abc"}),
        "api_key",
        "parameter_invalid",
    )
    .await;
    bad(
        json!({"type": "stripe", "api_key": "sk_test_abc", "api_base": "https://api.stripe.com/v1"}),
        "api_base",
        "url_invalid",
    )
    .await;
    bad(
        json!({"type": "stripe", "api_key": "sk_test_abc", "api_base": "not a url"}),
        "api_base",
        "url_invalid",
    )
    .await;
    bad(
        json!({"type": "stripe", "api_key": "sk_test_abc", "webhook_secret": "secret"}),
        "webhook_secret",
        "parameter_invalid",
    )
    .await;
    bad(
        json!({"type": "stripe", "api_key": "sk_test_abc", "priority": -1}),
        "priority",
        "parameter_invalid",
    )
    .await;
    bad(
        json!({"type": "simulator", "api_key": "sk_test_abc"}),
        "api_key",
        "parameter_unknown",
    )
    .await;
    bad(
        json!({"type": "stripe", "api_key": "sk_test_abc", "status": "enabled"}),
        "status",
        "parameter_unknown",
    )
    .await;
    // A connector cannot be pointed at the inside of the network (the webhooks' address rules).
    bad(
        json!({"type": "stripe", "api_key": "sk_test_abc", "api_base": "http://169.254.169.254"}),
        "api_base",
        "url_invalid",
    )
    .await;
    bad(
        json!({"type": "stripe", "api_key": "sk_test_abc", "api_base": "http://10.0.0.8:8080"}),
        "api_base",
        "url_invalid",
    )
    .await;
    // Live mode needs https.
    let live = app
        .post(
            "/v2/connectors",
            app.sk_live(),
            json!({"type": "stripe", "api_key": "sk_live_abc", "api_base": "http://127.0.0.1:1"}),
        )
        .await;
    assert_eq!(live.error_code(), "url_invalid");
    // Modes and accounts are separate worlds.
    assert_eq!(
        app.get(&format!("/v2/connectors/{id}"), app.sk_live())
            .await
            .status,
        404
    );
    let missing = app.get("/v2/connectors/conn_nope", app.sk()).await;
    assert_eq!(missing.status, 404);
}

#[tokio::test]
async fn a_simulator_connector_keeps_the_test_card_table() {
    let Some(app) = spawn_app().await else {
        return;
    };
    let created = app
        .post("/v2/connectors", app.sk(), json!({"type": "simulator"}))
        .await;
    assert_eq!(created.status, 200, "{}", created.body);
    let paid = app.pay(app.sk(), "4242424242424242", 1000).await;
    assert_eq!(paid.body["status"], "succeeded", "{}", paid.body);
    assert_eq!(paid.body["connector"], created.id().as_str());
    let declined = app.pay(app.sk(), "4000000000009995", 1000).await;
    assert_eq!(declined.status, 402);
    assert_eq!(declined.body["error"]["decline_code"], "insufficient_funds");
    // A processor's token has nowhere to go with only the simulator.
    let token = app
        .post(
            "/v2/payments",
            app.sk(),
            json!({"amount": 1000, "currency": "usd",
                   "payment_method": {"type": "connector_token", "connector_token": "pm_card_visa"}}),
        )
        .await;
    assert_eq!(token.status, 400, "{}", token.body);
    assert_eq!(token.error_param(), "payment_method[connector_token]");
    // 3-D Secure on Tender's own page, as without connectors.
    let action = app.pay(app.sk(), "4000002500003155", 1000).await;
    assert_eq!(action.body["status"], "requires_action");
    let url = action.body["next_action"]["redirect_to_url"]["url"]
        .as_str()
        .unwrap();
    assert!(url.starts_with(&app.receipt_base), "{url}");
    let _ = card("4242424242424242");
}

/// `Stripe-Signature` for `body` at `t` under `secret`, as Stripe (and localstripe) sign.
pub(crate) fn stripe_signature(secret: &str, t: i64, body: &[u8]) -> String {
    use hmac::Mac;
    let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(format!("{t}.").as_bytes());
    mac.update(body);
    format!("t={t},v1={}", hex::encode(mac.finalize().into_bytes()))
}

pub(crate) async fn post_webhook(
    app: &TestApp,
    conn: &str,
    body: &[u8],
    signature: Option<&str>,
) -> Answer {
    let mut req = app
        .client
        .post(format!("{}/connector_webhooks/{conn}", app.base))
        .header("Content-Type", "application/json")
        .body(body.to_vec());
    if let Some(s) = signature {
        req = req.header("Stripe-Signature", s);
    }
    crate::helpers::answer(req.send().await.unwrap()).await
}

#[tokio::test]
async fn the_processors_webhooks_settle_payments_once_and_unverified_ones_change_nothing() {
    let Some((app, stripe)) = setup().await else {
        return;
    };
    const SECRET: &str = "whsec_localstripe_connector_test";
    let created = app
        .post(
            "/v2/connectors",
            app.sk(),
            json!({"type": "stripe", "api_key": STRIPE_KEY, "api_base": stripe.base,
                   "raw_card_data": true, "webhook_secret": SECRET}),
        )
        .await;
    let conn = created.id();
    // localstripe sends its events to Tender's inbound endpoint, signed with the secret.
    let registered = stripe
        .http
        .post(format!("{}/_config/webhooks/tender", stripe.base))
        .form(&[
            ("url", format!("{}/connector_webhooks/{conn}", app.base)),
            ("secret", SECRET.to_string()),
        ])
        .send()
        .await
        .unwrap();
    assert!(registered.status().is_success());
    let pending = app.pay(app.sk(), "4000002500003155", 2200).await;
    assert_eq!(
        pending.body["status"], "requires_action",
        "{}",
        pending.body
    );
    let id = pending.id();
    let reference = pending.body["connector_reference"]
        .as_str()
        .unwrap()
        .to_string();

    // Forged or unsigned webhooks are refused and change nothing.
    let forged = serde_json::to_vec(&json!({"id": "evt_forged", "object": "event",
        "type": "payment_intent.succeeded",
        "data": {"object": {"id": reference, "object": "payment_intent", "status": "succeeded",
                            "amount": 2200, "metadata": {"tender_payment": id}}}}))
    .unwrap();
    let now = app.services.now();
    for signature in [
        None,
        Some(stripe_signature("whsec_not_the_secret", now, &forged)),
        Some(stripe_signature(SECRET, now - 3600, &forged)),
        Some("t=1,v1=zz".to_string()),
    ] {
        let refused = post_webhook(&app, &conn, &forged, signature.as_deref()).await;
        assert_eq!(refused.status, 400, "{signature:?}: {}", refused.body);
        assert_eq!(refused.error_code(), "webhook_signature_invalid");
    }
    let unknown = post_webhook(
        &app,
        "conn_0000000000000000000000000",
        &forged,
        Some(&stripe_signature(SECRET, now, &forged)),
    )
    .await;
    assert_eq!(unknown.status, 400);
    let still = app.get(&format!("/v2/payments/{id}"), app.sk()).await;
    assert_eq!(still.body["status"], "requires_action");

    // The cardholder authenticates at the processor; its webhook (about a second later)
    // settles the payment without any sync.
    let pi = stripe
        .get(&format!("/v1/payment_intents/{reference}"))
        .await;
    stripe
        .post(
            &format!("/v1/payment_intents/{reference}/_authenticate"),
            &[
                ("client_secret", pi["client_secret"].as_str().unwrap()),
                ("success", "true"),
            ],
        )
        .await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    loop {
        let p = app.get(&format!("/v2/payments/{id}"), app.sk()).await;
        if p.body["status"] == "succeeded" {
            assert_eq!(p.body["amount_captured"], 2200);
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no webhook: {}",
            p.body
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    // The same event again (a duplicate delivery) changes nothing.
    let events = stripe.get("/v1/events?type=payment_intent.succeeded").await;
    let event = serde_json::to_vec(&events["data"][0]).unwrap();
    for _ in 0..2 {
        let again = post_webhook(
            &app,
            &conn,
            &event,
            Some(&stripe_signature(SECRET, app.services.now(), &event)),
        )
        .await;
        assert_eq!(again.status, 200, "{}", again.body);
        assert_eq!(again.body, json!({"received": true}));
    }
    let succeeded = app.get("/v2/events?type=payment.succeeded", app.sk()).await;
    assert_eq!(succeeded.body["data"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn a_sync_that_settles_a_payment_while_its_request_still_waits_is_the_requests_answer() {
    let Some((app, stripe)) = setup().await else {
        return;
    };
    let proxy = Proxy::start(&stripe.base).await;
    stripe_connector(&app, &proxy.base, 0, true).await;
    proxy.set(Fault::HoldConfirmAnswers);
    let waiting = tokio::spawn({
        let (client, base, key) = (app.client.clone(), app.base.clone(), app.sk().to_string());
        async move {
            client
                .post(format!("{base}/v2/payments"))
                .bearer_auth(key)
                .header("Idempotency-Key", "slow-processor")
                .json(&payment_body("4242424242424242", 5100))
                .send()
                .await
                .unwrap()
        }
    });
    // The processor has confirmed it; its answer is held. A sync settles the payment first.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !stripe
        .payment_intents()
        .await
        .iter()
        .any(|pi| pi["status"] == "succeeded")
    {
        assert!(std::time::Instant::now() < deadline);
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    sync_now(&app).await;
    let list = app.get("/v2/payments", app.sk()).await;
    assert_eq!(list.body["data"][0]["status"], "succeeded", "{}", list.body);
    // Then the answer comes: the request answers what was recorded, once.
    proxy.release();
    let answer = crate::helpers::answer(waiting.await.unwrap()).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(answer.body["status"], "succeeded");
    assert_eq!(answer.body["amount_captured"], 5100);
    let events = app.get("/v2/events?type=payment.succeeded", app.sk()).await;
    assert_eq!(events.body["data"].as_array().unwrap().len(), 1);
    assert_eq!(stripe.payment_intents().await.len(), 1);
    // Its replay is that answer.
    let replay = app
        .request(
            Method::POST,
            "/v2/payments",
            Some(app.sk()),
            Some(payment_body("4242424242424242", 5100)),
            &[("Idempotency-Key", "slow-processor")],
        )
        .await;
    assert_eq!(replay.raw, answer.raw);
}

#[tokio::test]
async fn a_sync_that_finds_the_payment_unconfirmed_but_cannot_cancel_it_never_fails_it() {
    let Some((app, stripe)) = setup().await else {
        return;
    };
    let proxy = Proxy::start(&stripe.base).await;
    stripe_connector(&app, &proxy.base, 0, true).await;
    proxy.set(Fault::LoseConfirmAnswers);
    let unknown = app.pay(app.sk(), "4242424242424242", 2600).await;
    assert_eq!(unknown.body["status"], "processing", "{}", unknown.body);
    // The sync reads the PaymentIntent as unconfirmed (its confirmation raced the read) and
    // tries to cancel it; the processor refuses, since it was confirmed: the payment must not
    // be called failed.
    proxy.set(Fault::StaleReads);
    sync_now(&app).await;
    let payment = app
        .get(&format!("/v2/payments/{}", unknown.id()), app.sk())
        .await;
    assert_eq!(payment.body["status"], "processing", "{}", payment.body);
    assert!(app
        .get("/v2/events?type=payment.failed", app.sk())
        .await
        .body["data"]
        .as_array()
        .unwrap()
        .is_empty());
    // Read as it is, the next sync settles it as the processor says.
    proxy.set(Fault::Pass);
    app.clock.advance(3600);
    app.services.run_due_tasks(100).await.unwrap();
    let payment = app
        .get(&format!("/v2/payments/{}", unknown.id()), app.sk())
        .await;
    assert_eq!(payment.body["status"], "succeeded", "{}", payment.body);
    assert_eq!(stripe.payment_intents().await[0]["status"], "succeeded");
}

/// The events of `kind` about payment `id`.
pub(crate) async fn events_about(app: &TestApp, kind: &str, id: &str) -> usize {
    let events = app
        .get(&format!("/v2/events?type={kind}&limit=100"), app.sk())
        .await;
    events.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["data"]["object"]["id"] == id)
        .count()
}

#[tokio::test]
async fn a_held_payment_captured_or_released_at_the_processor_moves_here_once() {
    let Some((app, stripe)) = setup().await else {
        return;
    };
    stripe_connector(&app, &stripe.base, 0, true).await;
    let mut body = payment_body("4242424242424242", 1800);
    body["capture"] = json!(false);
    let captured_there = app.post("/v2/payments", app.sk(), body.clone()).await;
    let released_there = app.post("/v2/payments", app.sk(), body).await;
    for held in [&captured_there, &released_there] {
        assert_eq!(held.body["status"], "requires_capture", "{}", held.body);
    }
    let reference = |p: &Answer| p.body["connector_reference"].as_str().unwrap().to_string();
    // The merchant captures one and cancels the other in the processor's own dashboard.
    let pi = stripe
        .post(
            &format!("/v1/payment_intents/{}/capture", reference(&captured_there)),
            &[],
        )
        .await;
    assert_eq!(pi["status"], "succeeded");
    let pi = stripe
        .post(
            &format!("/v1/payment_intents/{}/cancel", reference(&released_there)),
            &[],
        )
        .await;
    assert_eq!(pi["status"], "canceled");
    // Tender's sync of held payments finds both.
    app.clock.advance(3600);
    app.services.run_due_tasks(100).await.unwrap();
    let captured = app
        .get(&format!("/v2/payments/{}", captured_there.id()), app.sk())
        .await;
    assert_eq!(captured.body["status"], "succeeded", "{}", captured.body);
    assert_eq!(captured.body["amount_captured"], 1800);
    let txn = booking_of(&app, &captured_there.id()).await;
    assert_eq!(txn["fee"], stripe_fee(1800), "{txn}");
    let released = app
        .get(&format!("/v2/payments/{}", released_there.id()), app.sk())
        .await;
    assert_eq!(released.body["status"], "canceled", "{}", released.body);
    assert!(released.body["canceled_at"].is_i64());
    // Once each, however long Tender keeps going (its own expiry of the hold included).
    app.clock.advance(8 * 86_400);
    app.services.run_due_tasks(100).await.unwrap();
    app.clock.advance(3600);
    app.services.run_due_tasks(100).await.unwrap();
    assert_eq!(
        events_about(&app, "payment.captured", &captured_there.id()).await,
        1
    );
    assert_eq!(
        events_about(&app, "payment.succeeded", &captured_there.id()).await,
        1
    );
    assert_eq!(
        events_about(&app, "payment.canceled", &released_there.id()).await,
        1
    );
    let again = app
        .get(&format!("/v2/payments/{}", released_there.id()), app.sk())
        .await;
    assert_eq!(again.body["status"], "canceled");
    assert!(app.ledger_problems().await.is_empty());
}

/// A payment of `amount` held, then `captured` of it captured (the processor releases the rest).
pub(crate) async fn captured_in_part(app: &TestApp, amount: i64, captured: i64) -> Answer {
    let mut body = payment_body("4242424242424242", amount);
    body["capture"] = json!(false);
    let held = app.post("/v2/payments", app.sk(), body).await;
    let done = app
        .post(
            &format!("/v2/payments/{}/capture", held.id()),
            app.sk(),
            json!({"amount": captured}),
        )
        .await;
    assert_eq!(done.body["amount_captured"], captured, "{}", done.body);
    held
}

/// A refund of `amount` of `paid` made in the processor's own API (as in its dashboard): the
/// processor's refund.
pub(crate) async fn refund_at_processor(stripe: &LocalStripe, paid: &Answer, amount: i64) -> Value {
    let reference = paid.body["connector_reference"].as_str().unwrap();
    let amount = amount.to_string();
    let refund = stripe
        .post(
            "/v1/refunds",
            &[("payment_intent", reference), ("amount", amount.as_str())],
        )
        .await;
    assert_eq!(refund["status"], "succeeded", "{refund}");
    refund
}

/// The refunds of payment `id`, as Tender lists them.
pub(crate) async fn refunds_of(app: &TestApp, id: &str) -> Vec<Value> {
    app.get(&format!("/v2/refunds?payment={id}&limit=100"), app.sk())
        .await
        .body["data"]
        .as_array()
        .unwrap()
        .clone()
}

#[tokio::test]
async fn a_refund_made_at_the_processor_reaches_tender_once_and_leaves_the_processors_balance() {
    let Some((app, stripe)) = setup().await else {
        return;
    };
    stripe_connector(&app, &stripe.base, 0, true).await;
    let paid = app.pay(app.sk(), "4242424242424242", 3000).await;
    let id = paid.id();
    // One refund through Tender, one in the processor's dashboard.
    let ours = app
        .post(
            "/v2/refunds",
            app.sk(),
            json!({"payment": id, "amount": 500}),
        )
        .await;
    assert_eq!(ours.body["status"], "succeeded", "{}", ours.body);
    let theirs = refund_at_processor(&stripe, &paid, 700).await;
    // A held payment captured in part: the rest is released, not a refund to record.
    let held = captured_in_part(&app, 1000, 600).await;
    // The watch, an hour after the capture, and again later.
    for _ in 0..3 {
        app.clock.advance(2 * 3600);
        app.services.run_due_tasks(100).await.unwrap();
    }
    let refunds = refunds_of(&app, &id).await;
    assert_eq!(refunds.len(), 2, "{refunds:?}");
    let found = refunds
        .iter()
        .find(|r| r["connector_reference"] == theirs["id"])
        .expect("the processor's refund, recorded");
    assert_eq!(found["amount"], 700);
    assert_eq!(found["status"], "succeeded");
    let payment = app.get(&format!("/v2/payments/{id}"), app.sk()).await;
    assert_eq!(payment.body["amount_refunded"], 1200);
    assert_eq!(
        events_about(&app, "refund.created", found["id"].as_str().unwrap()).await,
        1
    );
    assert!(
        refunds_of(&app, &held.id()).await.is_empty(),
        "the released rest is no refund"
    );
    // Both leave the processor's balance; Tender's stays untouched.
    let balance = app.get("/v2/balance", app.sk()).await;
    let at_processor = |k: &str| balance.body["processors"][k][0]["amount"].as_i64().unwrap();
    assert_eq!(
        at_processor("available") + at_processor("pending"),
        3000 - stripe_fee(3000) - 1200 + 600 - stripe_fee(600),
        "{}",
        balance.body
    );
    assert_eq!(balance.body["available"][0]["amount"], 0);
    assert!(app.ledger_problems().await.is_empty());
}

#[tokio::test]
async fn a_token_only_connector_refuses_cards_saved_for_later_at_once_with_the_reason() {
    let Some((app, stripe)) = setup().await else {
        return;
    };
    let customer = app
        .post(
            "/v2/customers",
            app.sk(),
            json!({"email": "saas@example.com"}),
        )
        .await
        .id();
    let product = app
        .post("/v2/products", app.sk(), json!({"name": "Pro plan"}))
        .await
        .id();
    let price = app
        .post(
            "/v2/prices",
            app.sk(),
            json!({"product": product, "currency": "usd", "unit_amount": 1500,
                   "recurring": {"interval": "month"}}),
        )
        .await
        .id();
    // Before any connector, the card is saved and the subscription starts.
    let saved = app
        .post("/v2/payment_methods", app.sk(), card("4242424242424242"))
        .await
        .id();
    let attached = app
        .post(
            &format!("/v2/payment_methods/{saved}/attach"),
            app.sk(),
            json!({"customer": customer}),
        )
        .await;
    assert_eq!(attached.status, 200, "{}", attached.body);
    // Then the payments go to Stripe through a connector that takes tokens only.
    let conn = stripe_connector(&app, &stripe.base, 0, false).await;
    let subscribe = app
        .post(
            "/v2/subscriptions",
            app.sk(),
            json!({"customer": customer, "items": [{"price": price}], "default_payment_method": saved}),
        )
        .await;
    assert_eq!(subscribe.status, 400, "{}", subscribe.body);
    assert_eq!(subscribe.error_code(), "connector_requires_token");
    let message = subscribe.body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(&conn) && message.contains("raw_card_data"),
        "{message}"
    );
    let subs = app
        .get(&format!("/v2/subscriptions?customer={customer}"), app.sk())
        .await;
    assert_eq!(
        subs.body["data"],
        json!([]),
        "no incomplete subscription is left behind"
    );
    // Saving another card for later is refused the same way, before anything is stored.
    let other = app
        .post("/v2/payment_methods", app.sk(), card("5555555555554444"))
        .await
        .id();
    let refused = app
        .post(
            &format!("/v2/payment_methods/{other}/attach"),
            app.sk(),
            json!({"customer": customer}),
        )
        .await;
    assert_eq!(
        refused.error_code(),
        "connector_requires_token",
        "{}",
        refused.body
    );
    let setup = app
        .post(
            "/v2/setup_intents",
            app.sk(),
            json!({"customer": customer, "payment_method": other, "confirm": true}),
        )
        .await;
    assert_eq!(
        setup.error_code(),
        "connector_requires_token",
        "{}",
        setup.body
    );
}

/// Every transaction the connector `conn` holds, beside the processor's.
pub(crate) async fn reconcile_all(
    app: &TestApp,
    conn: &str,
) -> Vec<tender_core::balance::reconcile::Reconciled> {
    let scope = tender_core::auth::Scope {
        account: app.account.account.clone(),
        mode: tender_core::auth::Mode::Test,
    };
    app.services
        .balance()
        .reconcile(&scope, conn, 0, i64::MAX / 2)
        .await
        .unwrap()
}

#[tokio::test]
async fn the_reconciliation_report_agrees_with_the_processors_books_to_the_cent() {
    let Some((app, stripe)) = setup().await else {
        return;
    };
    let conn = stripe_connector(&app, &stripe.base, 0, true).await;
    // A capture, a partial capture, a refund through Tender and one at the processor.
    let paid = app.pay(app.sk(), "4242424242424242", 3000).await;
    captured_in_part(&app, 1000, 600).await;
    app.post(
        "/v2/refunds",
        app.sk(),
        json!({"payment": paid.id(), "amount": 500}),
    )
    .await;
    refund_at_processor(&stripe, &paid, 700).await;
    app.clock.advance(2 * 3600);
    app.services.run_due_tasks(100).await.unwrap();
    let rows = reconcile_all(&app, &conn).await;
    let kinds: Vec<&str> = rows.iter().map(|r| r.kind.as_str()).collect();
    assert_eq!(kinds, ["charge", "charge", "refund", "refund"], "{rows:?}");
    for r in &rows {
        assert_eq!(r.problem, None, "{r:?}");
        assert_eq!(
            r.processor.as_ref().map(|(_, f)| *f),
            Some(r.tender),
            "{r:?}"
        );
    }
    assert!(app.ledger_problems().await.is_empty());
    // Were the processor's books to change, the report says where.
    stripe.bump_fees(1);
    let rows = reconcile_all(&app, &conn).await;
    let differ: Vec<&str> = rows
        .iter()
        .filter(|r| r.problem.is_some())
        .map(|r| r.kind.as_str())
        .collect();
    assert_eq!(differ, ["charge", "charge"]);
    let csv = String::from_utf8(tender_core::balance::reconcile::reconcile_csv(&rows)).unwrap();
    assert!(csv.starts_with("transaction,type,source,processor_transaction,amount,fee,net,"));
    assert_eq!(
        csv.lines().filter(|l| l.contains(",false,")).count(),
        2,
        "{csv}"
    );
}
