//! A subscription whose first invoice the customer pays in the browser (Stripe's
//! `payment_behavior=default_incomplete`, the flow of Stripe's own subscription guide): no card
//! beforehand, the invoice's intent confirmed with its `confirmation_secret`, the card saved for
//! the renewals; a decline leaves it to try again; a voided invoice can no longer be paid.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::{spawn_stepped_app, TestApp};
use crate::stripe::{clock_ready, get, ok, post, v1};

/// A monthly price of 15.00 usd, and a customer (on `clock`) without a card.
pub(crate) async fn plan_and_customer(app: &TestApp, clock: Option<&str>) -> (String, String) {
    let price = ok(
        &post(
            app,
            "/prices",
            &[
                ("product_data[name]", "Pro"),
                ("currency", "usd"),
                ("unit_amount", "1500"),
                ("recurring[interval]", "month"),
            ],
        )
        .await,
        "Price",
    );
    let mut params = vec![("email", "browser@example.com")];
    if let Some(clock) = clock {
        params.push(("test_clock", clock));
    }
    let cus = ok(&post(app, "/customers", &params).await, "Customer");
    (
        price["id"].as_str().unwrap().to_string(),
        cus["id"].as_str().unwrap().to_string(),
    )
}

/// A test clock frozen at `start`: its id.
pub(crate) async fn test_clock(app: &TestApp, start: i64) -> String {
    let clock = ok(
        &post(
            app,
            "/test_helpers/test_clocks",
            &[("frozen_time", &start.to_string())],
        )
        .await,
        "TestHelpers.TestClock",
    );
    clock["id"].as_str().unwrap().to_string()
}

/// Advances `clock` to `to` and waits until it is ready.
pub(crate) async fn advance(app: &TestApp, clock: &str, to: i64) {
    post(
        app,
        &format!("/test_helpers/test_clocks/{clock}/advance"),
        &[("frozen_time", &to.to_string())],
    )
    .await;
    clock_ready(app, clock).await;
}

/// `POST /v1/subscriptions` with `default_incomplete`, its invoice's secret expanded.
async fn subscribe(app: &TestApp, customer: &str, price: &str) -> Value {
    ok(
        &post(
            app,
            "/subscriptions",
            &[
                ("customer", customer),
                ("items[0][price]", price),
                ("payment_behavior", "default_incomplete"),
                ("expand[]", "latest_invoice.confirmation_secret"),
                ("expand[]", "latest_invoice.payments"),
            ],
        )
        .await,
        "Subscription",
    )
}

/// What the browser does with the secret: confirm the intent with a card.
async fn confirm_in_browser(app: &TestApp, secret: &str, card: &str) -> crate::helpers::Answer {
    let intent = secret.split("_secret_").next().unwrap();
    v1(
        app,
        Method::POST,
        &format!("/payment_intents/{intent}/confirm"),
        app.pk(),
        &[("client_secret", secret), ("payment_method", card)],
        &[],
    )
    .await
}

#[tokio::test]
async fn the_customer_pays_the_first_invoice_in_the_browser_and_the_renewals_charge_that_card() {
    let Some(app) = spawn_stepped_app().await else {
        return;
    };
    let start = 1_900_000_000_i64;
    let clock = &test_clock(&app, start).await;
    let (price, cus) = plan_and_customer(&app, Some(clock)).await;
    let sub = subscribe(&app, &cus, &price).await;
    assert_eq!(sub["status"], "incomplete");
    let invoice = &sub["latest_invoice"];
    assert_eq!(invoice["status"], "open");
    assert_eq!(invoice["amount_due"], 1500);
    let secret = invoice["confirmation_secret"]["client_secret"]
        .as_str()
        .unwrap();
    assert_eq!(invoice["confirmation_secret"]["type"], "payment_intent");
    let intent = secret.split("_secret_").next().unwrap();
    assert_eq!(
        invoice["payments"]["data"][0]["payment"]["payment_intent"],
        intent
    );
    // Nothing was charged: no card, and no automatic try.
    app.run_due_tasks().await;
    let pi = get(&app, &format!("/payment_intents/{intent}"), &[]).await;
    assert_eq!(pi.body["status"], "requires_payment_method");
    assert_eq!(pi.body["amount"], 1500);

    let paid = confirm_in_browser(&app, secret, "pm_card_visa").await;
    assert_eq!(paid.status, StatusCode::OK, "{}", paid.body);
    assert_eq!(paid.body["status"], "succeeded");
    app.run_due_tasks().await;
    let sub_id = sub["id"].as_str().unwrap();
    let now = get(
        &app,
        &format!("/subscriptions/{sub_id}"),
        &[("expand[]", "latest_invoice")],
    )
    .await;
    assert_eq!(now.body["status"], "active", "{}", now.body);
    assert_eq!(now.body["latest_invoice"]["status"], "paid");
    assert_eq!(now.body["latest_invoice"]["amount_paid"], 1500);
    let paid_events = get(&app, "/events", &[("type", "invoice.paid")]).await;
    assert_eq!(
        paid_events.body["data"][0]["data"]["object"]["id"],
        now.body["latest_invoice"]["id"]
    );
    // The card was saved to the customer; a month on, the renewal is charged on it.
    let cards = get(&app, &format!("/customers/{cus}/payment_methods"), &[]).await;
    assert_eq!(cards.body["data"][0]["card"]["last4"], "4242");
    advance(&app, clock, start + 32 * 86_400).await;
    let invoices = get(&app, "/invoices", &[("subscription", sub_id)]).await;
    let statuses: Vec<&str> = invoices.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["paid", "paid"], "{}", invoices.body);
}

#[tokio::test]
async fn a_declined_card_leaves_the_invoice_open_and_a_voided_invoice_cannot_be_paid() {
    let Some(app) = spawn_stepped_app().await else {
        return;
    };
    let (price, cus) = plan_and_customer(&app, None).await;
    let sub = subscribe(&app, &cus, &price).await;
    let secret = sub["latest_invoice"]["confirmation_secret"]["client_secret"]
        .as_str()
        .unwrap()
        .to_string();
    let declined = confirm_in_browser(&app, &secret, "pm_card_chargeDeclined").await;
    assert_eq!(declined.status, StatusCode::PAYMENT_REQUIRED);
    app.run_due_tasks().await;
    let sub_id = sub["id"].as_str().unwrap();
    let now = get(
        &app,
        &format!("/subscriptions/{sub_id}"),
        &[("expand[]", "latest_invoice.confirmation_secret")],
    )
    .await;
    assert_eq!(now.body["status"], "incomplete");
    let invoice = &now.body["latest_invoice"];
    assert_eq!(invoice["status"], "open");
    assert_eq!(invoice["attempt_count"], 1);
    assert_eq!(
        invoice["confirmation_secret"]["client_secret"],
        json!(secret)
    );
    let failed = get(&app, "/events", &[("type", "invoice.payment_failed")]).await;
    assert_eq!(
        failed.body["data"][0]["data"]["object"]["id"],
        invoice["id"]
    );
    // Another card on the same intent pays it.
    let paid = confirm_in_browser(&app, &secret, "pm_card_mastercard").await;
    assert_eq!(paid.body["status"], "succeeded", "{}", paid.body);
    app.run_due_tasks().await;
    let now = get(&app, &format!("/subscriptions/{sub_id}"), &[]).await;
    assert_eq!(now.body["status"], "active");

    // A second subscription's invoice, voided: its intent is canceled with it.
    let other = subscribe(&app, &cus, &price).await;
    let invoice = other["latest_invoice"]["id"].as_str().unwrap();
    let secret = other["latest_invoice"]["confirmation_secret"]["client_secret"]
        .as_str()
        .unwrap()
        .to_string();
    ok(
        &post(&app, &format!("/invoices/{invoice}/void"), &[]).await,
        "Invoice",
    );
    let late = confirm_in_browser(&app, &secret, "pm_card_visa").await;
    assert_eq!(late.status, StatusCode::BAD_REQUEST, "{}", late.body);
    assert_eq!(late.error_code(), "payment_intent_unexpected_state");
    let intent = secret.split("_secret_").next().unwrap();
    let pi = get(&app, &format!("/payment_intents/{intent}"), &[]).await;
    assert_eq!(pi.body["status"], "canceled");
    // Paid in the browser a moment before a void: the void is refused, the payment stands
    // and settles the invoice (the customer's money is never kept for a voided invoice).
    let third = subscribe(&app, &cus, &price).await;
    let invoice = third["latest_invoice"]["id"].as_str().unwrap();
    let secret = third["latest_invoice"]["confirmation_secret"]["client_secret"]
        .as_str()
        .unwrap()
        .to_string();
    let paid = confirm_in_browser(&app, &secret, "pm_card_visa").await;
    assert_eq!(paid.body["status"], "succeeded");
    let void = post(&app, &format!("/invoices/{invoice}/void"), &[]).await;
    assert_eq!(
        (void.status, void.error_code()),
        (StatusCode::BAD_REQUEST, "invoice_unexpected_state"),
        "{}",
        void.body
    );
    app.run_due_tasks().await;
    let after = get(&app, &format!("/invoices/{invoice}"), &[]).await;
    assert_eq!(after.body["status"], "paid");
    // The card saved by that payment pays a start that must not stay incomplete.
    let a = post(
        &app,
        "/subscriptions",
        &[
            ("customer", cus.as_str()),
            ("items[0][price]", price.as_str()),
            ("payment_behavior", "error_if_incomplete"),
        ],
    )
    .await;
    assert_eq!(ok(&a, "Subscription")["status"], "active");
}

#[tokio::test]
async fn a_trial_started_without_a_card_collects_one_with_its_pending_setup_intent() {
    let Some(app) = spawn_stepped_app().await else {
        return;
    };
    let start = 1_900_000_000_i64;
    let clock = &test_clock(&app, start).await;
    let (price, cus) = plan_and_customer(&app, Some(clock)).await;
    let sub = ok(
        &post(
            &app,
            "/subscriptions",
            &[
                ("customer", cus.as_str()),
                ("items[0][price]", price.as_str()),
                ("trial_period_days", "7"),
                ("payment_behavior", "default_incomplete"),
                ("expand[]", "pending_setup_intent"),
            ],
        )
        .await,
        "Subscription",
    );
    assert_eq!(sub["status"], "trialing");
    let seti = &sub["pending_setup_intent"];
    crate::stripe_shapes::assert_shape("SetupIntent", seti);
    assert_eq!(
        (&seti["status"], &seti["customer"], &seti["usage"]),
        (
            &json!("requires_payment_method"),
            &json!(cus),
            &json!("off_session")
        )
    );
    // The browser confirms it with the card; the trial's end is charged on it.
    let done = v1(
        &app,
        Method::POST,
        &format!("/setup_intents/{}/confirm", seti["id"].as_str().unwrap()),
        app.pk(),
        &[
            ("client_secret", seti["client_secret"].as_str().unwrap()),
            ("payment_method", "pm_card_visa"),
        ],
        &[],
    )
    .await;
    assert_eq!(done.body["status"], "succeeded", "{}", done.body);
    advance(&app, clock, start + 8 * 86_400).await;
    let now = get(
        &app,
        &format!("/subscriptions/{}", sub["id"].as_str().unwrap()),
        &[("expand[]", "latest_invoice")],
    )
    .await;
    assert_eq!(now.body["status"], "active", "{}", now.body);
    assert_eq!(now.body["latest_invoice"]["status"], "paid");
    assert_eq!(now.body["latest_invoice"]["amount_paid"], 1500);
}
