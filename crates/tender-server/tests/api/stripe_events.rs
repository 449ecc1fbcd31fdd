//! The events of §13's list that say what a single change did, as a shop listening through
//! `/v1` hears them: `payment_intent.created`, `charge.captured`, `charge.refunded`,
//! `balance.available`, `invoice.upcoming`; and the invoice preview (`create_preview`) the
//! upcoming event carries, and `finalize` on an invoice Tender already finalized.

use std::collections::BTreeMap;

use reqwest::StatusCode;
use serde_json::Value;

use crate::helpers::{spawn_stepped_app, TestApp};
use crate::receiver::Receiver;
use crate::stripe::{get, ok, post};
use crate::stripe_shapes::assert_shape;
use crate::stripe_subscriptions::{advance, test_clock};

/// A `/v1` endpoint listening to `events`, on a new receiver.
async fn listen(app: &TestApp, events: &[&str]) -> Receiver {
    let rx = Receiver::start().await;
    let mut params = vec![("url", rx.url.as_str())];
    params.extend(events.iter().map(|e| ("enabled_events[]", *e)));
    ok(
        &post(app, "/webhook_endpoints", &params).await,
        "WebhookEndpoint",
    );
    rx
}

/// What `rx` was sent, by Stripe event name (each in Stripe's event shape).
async fn heard(app: &TestApp, rx: &Receiver) -> BTreeMap<String, Vec<Value>> {
    app.deliver_pending().await;
    let mut by_type: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for d in rx.received() {
        let event = d.json();
        assert_shape("Event", &event);
        by_type
            .entry(event["type"].as_str().unwrap().to_string())
            .or_default()
            .push(event["data"]["object"].clone());
    }
    by_type
}

#[tokio::test]
async fn an_intent_made_captured_and_refunded_is_three_events_a_shop_can_listen_to() {
    let Some(app) = spawn_stepped_app().await else {
        return;
    };
    let rx = listen(
        &app,
        &[
            "payment_intent.created",
            "charge.captured",
            "charge.refunded",
        ],
    )
    .await;
    let pi = ok(
        &post(
            &app,
            "/payment_intents",
            &[
                ("amount", "5000"),
                ("currency", "eur"),
                ("payment_method", "pm_card_visa"),
                ("capture_method", "manual"),
                ("confirm", "true"),
            ],
        )
        .await,
        "PaymentIntent",
    );
    let id = pi["id"].as_str().unwrap();
    let got = heard(&app, &rx).await;
    assert_eq!(got.keys().collect::<Vec<_>>(), ["payment_intent.created"]);
    let created = &got["payment_intent.created"][0];
    assert_shape("PaymentIntent", created);
    assert_eq!(created["id"], id);

    // Captured for less than authorised, then partly refunded.
    ok(
        &post(
            &app,
            &format!("/payment_intents/{id}/capture"),
            &[("amount_to_capture", "4000")],
        )
        .await,
        "PaymentIntent",
    );
    ok(
        &post(
            &app,
            "/refunds",
            &[("payment_intent", id), ("amount", "1500")],
        )
        .await,
        "Refund",
    );
    let got = heard(&app, &rx).await;
    let captured = &got["charge.captured"];
    assert_eq!(captured.len(), 1, "captured once");
    assert_shape("Charge", &captured[0]);
    assert_eq!(captured[0]["payment_intent"], id);
    assert_eq!(
        (&captured[0]["captured"], &captured[0]["amount_captured"]),
        (&Value::Bool(true), &Value::from(4000))
    );
    let refunded = &got["charge.refunded"];
    assert_eq!(refunded.len(), 1);
    assert_shape("Charge", &refunded[0]);
    assert_eq!(
        (
            &refunded[0]["amount_refunded"],
            &refunded[0]["refunded"],
            &refunded[0]["payment_intent"]
        ),
        (&Value::from(1500), &Value::Bool(false), &Value::from(id))
    );

    // The rest refunded: the charge is refunded in full.
    ok(
        &post(&app, "/refunds", &[("payment_intent", id)]).await,
        "Refund",
    );
    let got = heard(&app, &rx).await;
    let last = got["charge.refunded"].last().unwrap();
    assert_eq!(
        (&last["amount_refunded"], &last["refunded"]),
        (&Value::from(4000), &Value::Bool(true))
    );
    // A payment whose capture was automatic is not "captured" (Stripe sends charge.captured
    // only for a capture asked for).
    ok(
        &post(
            &app,
            "/payment_intents",
            &[
                ("amount", "700"),
                ("currency", "eur"),
                ("payment_method", "pm_card_visa"),
                ("confirm", "true"),
            ],
        )
        .await,
        "PaymentIntent",
    );
    let got = heard(&app, &rx).await;
    assert_eq!(got["charge.captured"].len(), 1);
    assert_eq!(got["payment_intent.created"].len(), 2);
}

#[tokio::test]
async fn money_becoming_available_is_balance_available_with_the_new_balance() {
    let Some(app) = spawn_stepped_app().await else {
        return;
    };
    let rx = listen(&app, &["balance.available"]).await;
    ok(
        &post(
            &app,
            "/payment_intents",
            &[
                ("amount", "10000"),
                ("currency", "usd"),
                ("payment_method", "pm_card_visa"),
                ("confirm", "true"),
            ],
        )
        .await,
        "PaymentIntent",
    );
    let before = ok(&get(&app, "/balance", &[]).await, "Balance");
    assert!(heard(&app, &rx).await.is_empty(), "pending, not available");
    // Test mode makes a charge available a minute on.
    app.clock.advance(61);
    crate::balance::settle_tasks(&app).await;
    let got = heard(&app, &rx).await;
    let events = &got["balance.available"];
    assert_eq!(events.len(), 1);
    assert_shape("Balance", &events[0]);
    let now = ok(&get(&app, "/balance", &[]).await, "Balance");
    assert_eq!(
        events[0]["available"], now["available"],
        "the balance it left"
    );
    assert_eq!(events[0]["pending"][0]["amount"], 0);
    assert_eq!(
        now["available"][0]["amount"], before["pending"][0]["amount"],
        "what was pending is available"
    );
}

const START: i64 = 1_800_000_000; // 2027-01-15T08:00:00Z

#[tokio::test]
async fn the_next_invoice_is_previewed_and_announced_three_days_before_the_renewal() {
    let Some(app) = spawn_stepped_app().await else {
        return;
    };
    let rx = listen(&app, &["invoice.upcoming"]).await;
    let clock = test_clock(&app, START).await;
    let clock = clock.as_str();
    let cus = ok(
        &post(&app, "/customers", &[("test_clock", clock)]).await,
        "Customer",
    );
    let cus = cus["id"].as_str().unwrap();
    ok(
        &post(
            &app,
            "/payment_methods/pm_card_visa/attach",
            &[("customer", cus)],
        )
        .await,
        "PaymentMethod",
    );
    let price = ok(
        &post(
            &app,
            "/prices",
            &[
                ("product_data[name]", "Team"),
                ("currency", "usd"),
                ("unit_amount", "1200"),
                ("recurring[interval]", "month"),
            ],
        )
        .await,
        "Price",
    );
    let price = price["id"].as_str().unwrap();
    let sub = ok(
        &post(
            &app,
            "/subscriptions",
            &[
                ("customer", cus),
                ("items[0][price]", price),
                ("items[0][quantity]", "3"),
                ("expand[]", "latest_invoice"),
            ],
        )
        .await,
        "Subscription",
    );
    let sub_id = sub["id"].as_str().unwrap();
    let first = &sub["latest_invoice"];
    assert_eq!(first["billing_reason"], "subscription_create");
    assert_eq!(first["status"], "paid");
    let renewal = sub["items"]["data"][0]["current_period_end"]
        .as_i64()
        .unwrap();

    // The preview: what the renewal will bill, not stored.
    let preview = ok(
        &post(
            &app,
            "/invoices/create_preview",
            &[("subscription", sub_id), ("customer", cus)],
        )
        .await,
        "Invoice",
    );
    assert!(preview["id"].as_str().unwrap().starts_with("upcoming_in_"));
    assert_eq!(
        (
            &preview["status"],
            &preview["billing_reason"],
            &preview["amount_due"],
            &preview["period_start"],
            &preview["hosted_invoice_url"],
            &preview["number"],
        ),
        (
            &Value::from("draft"),
            &Value::from("upcoming"),
            &Value::from(3600),
            &Value::from(renewal),
            &Value::Null,
            &Value::Null,
        )
    );
    assert_eq!(preview["lines"]["data"][0]["quantity"], 3);
    assert_eq!(preview["status_transitions"]["finalized_at"], Value::Null);
    let missing = get(
        &app,
        &format!("/invoices/{}", preview["id"].as_str().unwrap()),
        &[],
    )
    .await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);

    // Nothing is announced until three days before the renewal.
    advance(&app, clock, renewal - 3 * 86_400 - 60).await;
    assert!(heard(&app, &rx).await.is_empty());
    advance(&app, clock, renewal - 3 * 86_400).await;
    let got = heard(&app, &rx).await;
    let upcoming = &got["invoice.upcoming"];
    assert_eq!(upcoming.len(), 1);
    assert_shape("Invoice", &upcoming[0]);
    assert_eq!(
        upcoming[0]["parent"]["subscription_details"]["subscription"],
        sub_id
    );
    assert_eq!(
        (&upcoming[0]["amount_due"], &upcoming[0]["period_start"]),
        (&Value::from(3600), &Value::from(renewal))
    );

    // The renewal itself is a cycle's invoice; it is finalized already.
    advance(&app, clock, renewal + 60).await;
    let invoices = get(
        &app,
        "/invoices",
        &[("subscription", sub_id), ("limit", "1")],
    )
    .await;
    let cycle = &invoices.body["data"][0];
    assert_shape("Invoice", cycle);
    assert_eq!(cycle["billing_reason"], "subscription_cycle");
    let refused = post(
        &app,
        &format!("/invoices/{}/finalize", cycle["id"].as_str().unwrap()),
        &[],
    )
    .await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    assert_eq!(refused.error_code(), "invoice_unexpected_state");

    // A subscription ending at its period's end has no next invoice.
    ok(
        &post(
            &app,
            &format!("/subscriptions/{sub_id}"),
            &[("cancel_at_period_end", "true")],
        )
        .await,
        "Subscription",
    );
    let none = post(
        &app,
        "/invoices/create_preview",
        &[("subscription", sub_id)],
    )
    .await;
    assert_eq!(
        (none.status, none.error_code()),
        (StatusCode::BAD_REQUEST, "invoice_upcoming_none")
    );
    let other = post(
        &app,
        "/invoices/create_preview",
        &[("subscription", "sub_doesnotexist")],
    )
    .await;
    assert_eq!(
        (other.status, other.error_code(), other.error_param()),
        (StatusCode::BAD_REQUEST, "resource_missing", "subscription")
    );
}

#[tokio::test]
async fn an_endpoint_listening_to_every_name_hears_each_as_an_event_of_its_own() {
    let Some(app) = spawn_stepped_app().await else {
        return;
    };
    let all = listen(&app, &["*"]).await;
    let both = listen(&app, &["charge.succeeded", "payment_intent.succeeded"]).await;
    let pi = ok(
        &post(
            &app,
            "/payment_intents",
            &[
                ("amount", "1200"),
                ("currency", "usd"),
                ("payment_method", "pm_card_visa"),
                ("confirm", "true"),
            ],
        )
        .await,
        "PaymentIntent",
    );
    app.deliver_pending().await;
    for rx in [&all, &both] {
        let got: Vec<Value> = rx.received().iter().map(|d| d.json()).collect();
        let named = |name: &str| {
            got.iter()
                .find(|e| e["type"] == name)
                .unwrap_or_else(|| panic!("no {name} in {got:?}"))
                .clone()
        };
        let intent = named("payment_intent.succeeded");
        let charge = named("charge.succeeded");
        assert_shape("PaymentIntent", &intent["data"]["object"]);
        assert_shape("Charge", &charge["data"]["object"]);
        assert_eq!(charge["data"]["object"]["payment_intent"], pi["id"]);
        // Two events, as from Stripe: a shop that skips ids it handled handles both.
        assert_ne!(intent["id"], charge["id"]);
        let again = get(
            &app,
            &format!("/events/{}", charge["id"].as_str().unwrap()),
            &[],
        )
        .await;
        assert_eq!(again.body, charge);
    }
    let types: std::collections::BTreeSet<String> = all
        .received()
        .iter()
        .map(|d| d.json()["type"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        types.into_iter().collect::<Vec<_>>(),
        [
            "charge.succeeded",
            "payment_intent.created",
            "payment_intent.succeeded"
        ]
    );
    // A list by the second name pages with those ids.
    for _ in 0..2 {
        ok(
            &post(
                &app,
                "/payment_intents",
                &[
                    ("amount", "500"),
                    ("currency", "usd"),
                    ("payment_method", "pm_card_visa"),
                    ("confirm", "true"),
                ],
            )
            .await,
            "PaymentIntent",
        );
    }
    let first = get(
        &app,
        "/events",
        &[("type", "charge.succeeded"), ("limit", "2")],
    )
    .await;
    assert_eq!(first.body["has_more"], true);
    let last = first.body["data"][1]["id"].as_str().unwrap().to_string();
    assert!(last.ends_with("_1"), "{last}");
    let rest = get(
        &app,
        "/events",
        &[
            ("type", "charge.succeeded"),
            ("limit", "2"),
            ("starting_after", &last),
        ],
    )
    .await;
    let rest = rest.body["data"].as_array().unwrap();
    assert_eq!(rest.len(), 1);
    assert_eq!(rest[0]["data"]["object"]["payment_intent"], pi["id"]);
}
