//! A free trial without a card, as Stripe's "trials without payment method" guide builds it:
//! `trial_settings[end_behavior][missing_payment_method]` pauses (or cancels) the subscription
//! when the trial ends with no card; `resume` bills a new period from then.

use reqwest::StatusCode;
use serde_json::Value;

use crate::helpers::{spawn_stepped_app, TestApp};
use crate::receiver::Receiver;
use crate::stripe::{get, ok, post};
use crate::stripe_subscriptions::{advance, plan_and_customer, test_clock};

const START: i64 = 1_800_000_000; // 2027-01-15T08:00:00Z
const DAY: i64 = 86_400;

/// A 3-day trial of `price` for `customer`, ending as `behavior` says without a card.
async fn trial(app: &TestApp, customer: &str, price: &str, behavior: &str) -> Value {
    ok(
        &post(
            app,
            "/subscriptions",
            &[
                ("customer", customer),
                ("items[0][price]", price),
                ("trial_period_days", "3"),
                (
                    "trial_settings[end_behavior][missing_payment_method]",
                    behavior,
                ),
            ],
        )
        .await,
        "Subscription",
    )
}

async fn subscription(app: &TestApp, id: &str) -> Value {
    ok(
        &get(
            app,
            &format!("/subscriptions/{id}"),
            &[("expand[]", "latest_invoice")],
        )
        .await,
        "Subscription",
    )
}

async fn status(app: &TestApp, sub: &Value) -> Value {
    subscription(app, sub["id"].as_str().unwrap()).await["status"].clone()
}

/// The Stripe event names `rx` received, in order.
async fn heard(app: &TestApp, rx: &Receiver) -> Vec<String> {
    app.deliver_pending().await;
    rx.received()
        .iter()
        .map(|d| d.json()["type"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn a_trial_ending_without_a_card_pauses_and_resuming_bills_from_then() {
    let Some(app) = spawn_stepped_app().await else {
        return;
    };
    let rx = Receiver::start().await;
    ok(
        &post(
            &app,
            "/webhook_endpoints",
            &[
                ("url", &rx.url),
                ("enabled_events[]", "customer.subscription.paused"),
                ("enabled_events[]", "customer.subscription.resumed"),
            ],
        )
        .await,
        "WebhookEndpoint",
    );
    let clock = test_clock(&app, START).await;
    let (price, cus) = plan_and_customer(&app, Some(&clock)).await;
    let sub = trial(&app, &cus, &price, "pause").await;
    let id = sub["id"].as_str().unwrap();
    assert_eq!(sub["status"], "trialing");
    assert_eq!(
        sub["trial_settings"]["end_behavior"]["missing_payment_method"],
        "pause"
    );

    // The trial ends with no card: paused, nothing invoiced.
    advance(&app, &clock, START + 4 * DAY).await;
    let paused = subscription(&app, id).await;
    assert_eq!(paused["status"], "paused");
    assert_eq!(paused["latest_invoice"], Value::Null);
    let invoices = get(&app, "/invoices", &[("subscription", id)]).await;
    assert_eq!(invoices.body["data"], serde_json::json!([]));
    assert_eq!(heard(&app, &rx).await, ["customer.subscription.paused"]);
    // Nothing renews while paused, and nothing is upcoming.
    advance(&app, &clock, START + 40 * DAY).await;
    assert_eq!(subscription(&app, id).await["status"], "paused");
    let none = post(&app, "/invoices/create_preview", &[("subscription", id)]).await;
    assert_eq!(none.error_code(), "invoice_upcoming_none");

    // Resumed still without a card: its invoice is tried once and declined; still paused.
    let at = START + 40 * DAY;
    let tried = ok(
        &post(&app, &format!("/subscriptions/{id}/resume"), &[]).await,
        "Subscription",
    );
    assert_eq!(tried["status"], "paused");
    let invoice = tried["latest_invoice"].as_str().unwrap().to_string();
    let open = ok(
        &get(&app, &format!("/invoices/{invoice}"), &[]).await,
        "Invoice",
    );
    assert_eq!(
        (
            &open["status"],
            &open["attempt_count"],
            &open["period_start"]
        ),
        (&Value::from("open"), &Value::from(1), &Value::from(at))
    );
    let again = post(&app, &format!("/subscriptions/{id}/resume"), &[]).await;
    assert_eq!(
        (again.status, again.error_code()),
        (StatusCode::BAD_REQUEST, "subscription_unexpected_state")
    );

    // A card saved and the invoice paid: active, billed from the resume on.
    let pm = ok(
        &post(
            &app,
            "/payment_methods/pm_card_visa/attach",
            &[("customer", &cus)],
        )
        .await,
        "PaymentMethod",
    );
    ok(
        &post(
            &app,
            &format!("/invoices/{invoice}/pay"),
            &[("payment_method", pm["id"].as_str().unwrap())],
        )
        .await,
        "Invoice",
    );
    let active = subscription(&app, id).await;
    assert_eq!(active["status"], "active");
    assert_eq!(active["billing_cycle_anchor"], at);
    assert_eq!(active["items"]["data"][0]["current_period_start"], at);
    assert_eq!(
        heard(&app, &rx).await,
        [
            "customer.subscription.paused",
            "customer.subscription.resumed"
        ]
    );
    // And it renews a month on from the resume.
    let renewal = active["items"]["data"][0]["current_period_end"]
        .as_i64()
        .unwrap();
    advance(&app, &clock, renewal + 60).await;
    let invoices = get(&app, "/invoices", &[("subscription", id)]).await;
    let statuses: Vec<&Value> = invoices.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| &i["status"])
        .collect();
    assert_eq!(statuses, ["paid", "paid"]);
    let resume_active = post(&app, &format!("/subscriptions/{id}/resume"), &[]).await;
    assert_eq!(resume_active.error_code(), "subscription_unexpected_state");
}

#[tokio::test]
async fn resumed_with_a_card_it_is_active_at_once_and_an_unpaid_resumption_lapses() {
    let Some(app) = spawn_stepped_app().await else {
        return;
    };
    let clock = test_clock(&app, START).await;
    let (price, cus) = plan_and_customer(&app, Some(&clock)).await;
    let first = trial(&app, &cus, &price, "pause").await;
    let second = trial(&app, &cus, &price, "pause").await;
    let cancels = trial(&app, &cus, &price, "cancel").await;
    let invoices = trial(&app, &cus, &price, "create_invoice").await;
    advance(&app, &clock, START + 4 * DAY).await;
    assert_eq!(status(&app, &first).await, "paused");
    assert_eq!(status(&app, &cancels).await, "canceled");
    assert_eq!(
        status(&app, &invoices).await,
        "past_due",
        "the default opens the invoice all the same"
    );

    // The second is resumed with no card and left unpaid: when its new period ends, the
    // invoice is voided and it stays paused.
    let second_id = second["id"].as_str().unwrap();
    let tried = ok(
        &post(&app, &format!("/subscriptions/{second_id}/resume"), &[]).await,
        "Subscription",
    );
    let lapsed_invoice = tried["latest_invoice"].as_str().unwrap().to_string();

    // A card saved: the first resumes and is paid at once.
    ok(
        &post(
            &app,
            "/payment_methods/pm_card_visa/attach",
            &[("customer", &cus)],
        )
        .await,
        "PaymentMethod",
    );
    let id = first["id"].as_str().unwrap();
    let resumed = ok(
        &post(
            &app,
            &format!("/subscriptions/{id}/resume"),
            &[
                ("billing_cycle_anchor", "now"),
                ("proration_behavior", "none"),
            ],
        )
        .await,
        "Subscription",
    );
    assert_eq!(resumed["status"], "active");
    let unchanged = post(
        &app,
        &format!("/subscriptions/{id}/resume"),
        &[("billing_cycle_anchor", "unchanged")],
    )
    .await;
    assert_eq!(
        (unchanged.status, unchanged.error_param()),
        (StatusCode::BAD_REQUEST, "billing_cycle_anchor")
    );

    advance(&app, &clock, START + 40 * DAY).await;
    let voided = ok(
        &get(&app, &format!("/invoices/{lapsed_invoice}"), &[]).await,
        "Invoice",
    );
    assert_eq!(voided["status"], "void");
    assert_eq!(subscription(&app, second_id).await["status"], "paused");
    // It may be resumed again.
    let again = ok(
        &post(&app, &format!("/subscriptions/{second_id}/resume"), &[]).await,
        "Subscription",
    );
    assert_eq!(again["status"], "active", "the card saved since pays it");
}
