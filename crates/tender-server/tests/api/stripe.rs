//! `/v1`, the Stripe-compatible API (CONTRACT §13), spoken as Stripe's SDKs speak it:
//! form-encoded bodies with bracket notation, answers in Stripe's shapes (each checked against
//! Stripe's published shape, `stripe_shapes`), Stripe's errors; the same objects as `/v2`.
//! The official SDKs themselves run in `tests/stripe_sdks.rs`.

use reqwest::{Method, StatusCode};
use serde_json::Value;

use crate::helpers::{answer, spawn_app, Answer, TestApp};
use crate::stripe_shapes::assert_shape;

/// A `/v1` request: `params` form-encoded in the body of a `POST`, in the query otherwise.
pub(crate) async fn v1(
    app: &TestApp,
    method: Method,
    path: &str,
    key: &str,
    params: &[(&str, &str)],
    headers: &[(&str, &str)],
) -> Answer {
    let encoded = form_urlencoded::Serializer::new(String::new())
        .extend_pairs(params)
        .finish();
    let mut url = format!("{}/v1{path}", app.base);
    let mut req = if method == Method::POST {
        app.client
            .request(method, &url)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(encoded)
    } else {
        if !encoded.is_empty() {
            url = format!("{url}?{encoded}");
        }
        app.client.request(method, &url)
    };
    req = req.basic_auth(key, Some(""));
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    answer(req.send().await.expect("request")).await
}

pub(crate) async fn post(app: &TestApp, path: &str, params: &[(&str, &str)]) -> Answer {
    v1(app, Method::POST, path, app.sk(), params, &[]).await
}

pub(crate) async fn get(app: &TestApp, path: &str, params: &[(&str, &str)]) -> Answer {
    v1(app, Method::GET, path, app.sk(), params, &[]).await
}

pub(crate) fn ok(a: &Answer, interface: &str) -> Value {
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    assert_shape(interface, &a.body);
    a.body.clone()
}

#[tokio::test]
async fn a_card_payment_through_v1_is_stripe_shaped_and_the_same_payment_through_v2() {
    let Some(app) = spawn_app().await else { return };
    let customer = ok(
        &post(
            &app,
            "/customers",
            &[("email", "ada@example.com"), ("metadata[order]", "7")],
        )
        .await,
        "Customer",
    );
    let cus = customer["id"].as_str().unwrap();
    assert_eq!(customer["metadata"]["order"], "7");
    // A test token attached is a new saved card.
    let pm = ok(
        &post(
            &app,
            "/payment_methods/pm_card_visa/attach",
            &[("customer", cus)],
        )
        .await,
        "PaymentMethod",
    );
    assert!(pm["id"].as_str().unwrap().starts_with("pm_"));
    assert_ne!(pm["id"], "pm_card_visa");
    assert_eq!(pm["card"]["last4"], "4242");
    let pi = ok(
        &post(
            &app,
            "/payment_intents",
            &[
                ("amount", "2000"),
                ("currency", "usd"),
                ("customer", cus),
                ("payment_method", pm["id"].as_str().unwrap()),
                ("confirm", "true"),
                ("expand[]", "latest_charge"),
            ],
        )
        .await,
        "PaymentIntent",
    );
    let id = pi["id"].as_str().unwrap();
    assert!(id.starts_with("pi_"));
    assert_eq!(pi["status"], "succeeded");
    assert_eq!(pi["amount_received"], 2000);
    assert!(pi["client_secret"]
        .as_str()
        .unwrap()
        .starts_with(&format!("{id}_secret_")));
    let charge = &pi["latest_charge"];
    assert_shape("Charge", charge);
    let suffix = &id["pi_".len()..];
    assert_eq!(charge["id"], format!("ch_{suffix}"));
    assert_eq!(charge["paid"], true);
    assert_eq!(charge["captured"], true);
    assert_eq!(charge["payment_method_details"]["card"]["brand"], "visa");

    // The same payment through /v2, by the same suffix.
    let v2 = app
        .get(&format!("/v2/payments/pay_{suffix}"), app.sk())
        .await;
    assert_eq!(v2.status, StatusCode::OK);
    assert_eq!(v2.body["amount_captured"], 2000);
    assert_eq!(v2.body["customer"], cus);

    // A partial refund, seen on the charge.
    let refund = ok(
        &post(
            &app,
            "/refunds",
            &[("payment_intent", id), ("amount", "500")],
        )
        .await,
        "Refund",
    );
    assert_eq!(refund["charge"], format!("ch_{suffix}"));
    assert_eq!(refund["payment_intent"], id);
    let charge = ok(
        &get(&app, &format!("/charges/ch_{suffix}"), &[]).await,
        "Charge",
    );
    assert_eq!(charge["amount_refunded"], 500);
    assert_eq!(charge["refunded"], false);
    let refunds = get(&app, "/refunds", &[("charge", &format!("ch_{suffix}"))]).await;
    assert_eq!(refunds.body["data"].as_array().unwrap().len(), 1);
    assert_eq!(refunds.body["url"], "/v1/refunds");
    assert_shape("Refund", &refunds.body["data"][0]);
}

#[tokio::test]
async fn a_decline_is_a_402_card_error_carrying_the_intent_awaiting_a_new_method() {
    let Some(app) = spawn_app().await else { return };
    let a = post(
        &app,
        "/payment_intents",
        &[
            ("amount", "1500"),
            ("currency", "usd"),
            ("payment_method", "pm_card_chargeDeclinedInsufficientFunds"),
            ("confirm", "true"),
        ],
    )
    .await;
    assert_eq!(a.status, StatusCode::PAYMENT_REQUIRED, "{}", a.body);
    let e = &a.body["error"];
    assert_shape("StripeRawError", e);
    assert_eq!(e["type"], "card_error");
    assert_eq!(e["code"], "card_declined");
    assert_eq!(e["decline_code"], "insufficient_funds");
    let intent = &e["payment_intent"];
    assert_shape("PaymentIntent", intent);
    assert_eq!(intent["status"], "requires_payment_method");
    assert_eq!(
        intent["last_payment_error"]["decline_code"],
        "insufficient_funds"
    );
    assert_shape(
        "PaymentIntent.LastPaymentError",
        &intent["last_payment_error"],
    );
    let charge = ok(
        &get(
            &app,
            &format!("/charges/{}", e["charge"].as_str().unwrap()),
            &[],
        )
        .await,
        "Charge",
    );
    assert_eq!(charge["status"], "failed");
    assert_eq!(charge["outcome"]["type"], "issuer_declined");
}

#[tokio::test]
async fn manual_capture_three_d_secure_and_cancel_follow_stripes_states() {
    let Some(app) = spawn_app().await else { return };
    let held = ok(
        &post(
            &app,
            "/payment_intents",
            &[
                ("amount", "3000"),
                ("currency", "eur"),
                ("payment_method", "pm_card_visa"),
                ("capture_method", "manual"),
                ("confirm", "true"),
            ],
        )
        .await,
        "PaymentIntent",
    );
    assert_eq!(held["status"], "requires_capture");
    assert_eq!(held["amount_capturable"], 3000);
    let id = held["id"].as_str().unwrap();
    let captured = ok(
        &post(
            &app,
            &format!("/payment_intents/{id}/capture"),
            &[("amount_to_capture", "1000")],
        )
        .await,
        "PaymentIntent",
    );
    assert_eq!(captured["status"], "succeeded");
    assert_eq!(captured["amount_received"], 1000);

    let challenged = ok(
        &post(
            &app,
            "/payment_intents",
            &[
                ("amount", "3000"),
                ("currency", "usd"),
                ("payment_method", "pm_card_authenticationRequired"),
                ("return_url", "https://shop.example/back"),
                ("confirm", "true"),
            ],
        )
        .await,
        "PaymentIntent",
    );
    assert_eq!(challenged["status"], "requires_action");
    assert_eq!(challenged["next_action"]["type"], "redirect_to_url");
    assert!(challenged["next_action"]["redirect_to_url"]["url"]
        .as_str()
        .unwrap()
        .starts_with(&app.receipt_base));
    let id = challenged["id"].as_str().unwrap();
    let canceled = ok(
        &post(
            &app,
            &format!("/payment_intents/{id}/cancel"),
            &[("cancellation_reason", "abandoned")],
        )
        .await,
        "PaymentIntent",
    );
    assert_eq!(canceled["status"], "canceled");
    assert_eq!(canceled["cancellation_reason"], "abandoned");
}

#[tokio::test]
async fn errors_are_stripes_shapes_and_statuses() {
    let Some(app) = spawn_app().await else { return };
    // A parameter Stripe has and Tender does not take: named.
    let a = post(
        &app,
        "/customers",
        &[("email", "a@b.co"), ("preferred_locales[0]", "fr")],
    )
    .await;
    assert_eq!(a.status, StatusCode::BAD_REQUEST);
    assert_eq!(a.body["error"]["type"], "invalid_request_error");
    assert_eq!(a.body["error"]["code"], "parameter_unknown");
    assert_eq!(a.body["error"]["param"], "preferred_locales");
    assert_shape("StripeRawError", &a.body["error"]);
    // Missing, malformed.
    let a = post(
        &app,
        "/payment_intents",
        &[("currency", "usd"), ("confirm", "true")],
    )
    .await;
    assert_eq!(
        (a.status, a.error_code(), a.error_param()),
        (StatusCode::BAD_REQUEST, "parameter_missing", "amount")
    );
    let a = post(
        &app,
        "/payment_intents",
        &[("amount", "12.5"), ("currency", "usd")],
    )
    .await;
    assert_eq!(
        (a.error_code(), a.error_param()),
        ("parameter_invalid_integer", "amount")
    );
    // An object that does not exist: 404 in Stripe's words, in Stripe's ids.
    let a = get(&app, "/payment_intents/pi_000000000000000000000000", &[]).await;
    assert_eq!(a.status, StatusCode::NOT_FOUND);
    assert_eq!(a.error_code(), "resource_missing");
    assert!(
        a.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("pi_000000000000000000000000"),
        "{}",
        a.body
    );
    // An operation Tender does not have: Stripe's 404, never a wrong answer.
    let a = post(&app, "/coupons", &[("percent_off", "10")]).await;
    assert_eq!(a.status, StatusCode::NOT_FOUND);
    assert!(a.body["error"]["message"]
        .as_str()
        .unwrap()
        .starts_with("Unrecognized request URL (POST: /v1/coupons)"));
    // No key, a bad key, a publishable key where Stripe wants a secret one: 401.
    let a = v1(&app, Method::GET, "/customers", "sk_test_nope", &[], &[]).await;
    assert_eq!(a.status, StatusCode::UNAUTHORIZED);
    let resp = app
        .client
        .get(format!("{}/v1/customers", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::UNAUTHORIZED);
    let a = v1(&app, Method::GET, "/customers", app.pk(), &[], &[]).await;
    assert_eq!(a.status, StatusCode::UNAUTHORIZED);
    assert_eq!(a.error_type(), "invalid_request_error");
    // JSON is /v2's wire, not /v1's.
    let resp = app
        .client
        .post(format!("{}/v1/customers", app.base))
        .basic_auth(app.sk(), Some(""))
        .json(&serde_json::json!({"email": "a@b.co"}))
        .send()
        .await
        .unwrap();
    let a = answer(resp).await;
    assert_eq!(a.status, StatusCode::BAD_REQUEST);
    assert!(a.body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("form-encoded"));
    // An expansion Tender cannot make, before anything runs.
    let a = post(
        &app,
        "/customers",
        &[("email", "x@y.co"), ("expand[]", "default_source")],
    )
    .await;
    assert_eq!(
        (a.status, a.error_param()),
        (StatusCode::BAD_REQUEST, "expand[0]")
    );
    let list = get(&app, "/customers", &[("email", "x@y.co")]).await;
    assert_eq!(
        list.body["data"].as_array().unwrap().len(),
        0,
        "the refused create made nothing"
    );
}

#[tokio::test]
async fn a_publishable_key_tokenises_a_card_and_nothing_else() {
    let Some(app) = spawn_app().await else { return };
    let a = v1(
        &app,
        Method::POST,
        "/payment_methods",
        app.pk(),
        &[
            ("type", "card"),
            ("card[number]", "4242424242424242"),
            ("card[exp_month]", "12"),
            ("card[exp_year]", "2034"),
            ("card[cvc]", "123"),
        ],
        &[],
    )
    .await;
    let pm = ok(&a, "PaymentMethod");
    assert_eq!(pm["card"]["last4"], "4242");
    assert!(!crate::helpers::contains(&a.raw, "4242424242424242"));
    let a = v1(
        &app,
        Method::GET,
        &format!("/payment_methods/{}", pm["id"].as_str().unwrap()),
        app.pk(),
        &[],
        &[],
    )
    .await;
    assert_eq!(a.status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn an_idempotency_key_replays_the_same_bytes_and_refuses_other_parameters() {
    let Some(app) = spawn_app().await else { return };
    let params = [
        ("amount", "1200"),
        ("currency", "usd"),
        ("payment_method", "pm_card_visa"),
        ("confirm", "true"),
    ];
    let key = [("Idempotency-Key", "order-1")];
    let first = v1(
        &app,
        Method::POST,
        "/payment_intents",
        app.sk(),
        &params,
        &key,
    )
    .await;
    let again = v1(
        &app,
        Method::POST,
        "/payment_intents",
        app.sk(),
        &params,
        &key,
    )
    .await;
    assert_eq!(first.status, StatusCode::OK);
    assert_eq!(first.raw, again.raw);
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
    let list = get(&app, "/payment_intents", &[]).await;
    assert_eq!(
        list.body["data"].as_array().unwrap().len(),
        1,
        "one payment"
    );
    let other = v1(
        &app,
        Method::POST,
        "/payment_intents",
        app.sk(),
        &[
            ("amount", "1300"),
            ("currency", "usd"),
            ("payment_method", "pm_card_visa"),
            ("confirm", "true"),
        ],
        &key,
    )
    .await;
    assert_eq!(other.status, StatusCode::BAD_REQUEST);
    assert_eq!(other.error_type(), "idempotency_error");
}

#[tokio::test]
async fn metadata_in_brackets_merges_and_an_empty_value_removes_a_key() {
    let Some(app) = spawn_app().await else { return };
    let c = ok(
        &post(
            &app,
            "/customers",
            &[("metadata[a]", "1"), ("metadata[b]", "2")],
        )
        .await,
        "Customer",
    );
    let path = format!("/customers/{}", c["id"].as_str().unwrap());
    let c = ok(
        &post(
            &app,
            &path,
            &[("metadata[a]", ""), ("metadata[c]", "3"), ("name", "Ada")],
        )
        .await,
        "Customer",
    );
    assert_eq!(c["metadata"], serde_json::json!({"b": "2", "c": "3"}));
    assert_eq!(c["name"], "Ada");
    let gone = v1(&app, Method::DELETE, &path, app.sk(), &[], &[]).await;
    assert_eq!(
        gone.body,
        serde_json::json!({"id": c["id"], "object": "customer", "deleted": true})
    );
    assert_shape("DeletedCustomer", &gone.body);
}

#[tokio::test]
async fn lists_page_with_stripes_cursors_and_answer_with_the_version_asked() {
    let Some(app) = spawn_app().await else { return };
    for amount in ["1000", "1100", "1200"] {
        post(
            &app,
            "/payment_intents",
            &[
                ("amount", amount),
                ("currency", "usd"),
                ("payment_method", "pm_card_visa"),
                ("confirm", "true"),
            ],
        )
        .await;
    }
    let first = get(&app, "/payment_intents", &[("limit", "2")]).await;
    assert_eq!(first.body["has_more"], true);
    assert_eq!(first.body["url"], "/v1/payment_intents");
    let data = first.body["data"].as_array().unwrap();
    assert_eq!(data.len(), 2);
    assert_eq!(data[0]["amount"], 1200, "newest first");
    let last = data[1]["id"].as_str().unwrap();
    let rest = get(
        &app,
        "/payment_intents",
        &[("limit", "2"), ("starting_after", last)],
    )
    .await;
    assert_eq!(rest.body["has_more"], false);
    assert_eq!(rest.body["data"][0]["amount"], 1000);
    let charges = get(
        &app,
        "/charges",
        &[("limit", "3"), ("expand[]", "data.payment_intent")],
    )
    .await;
    assert_shape("PaymentIntent", &charges.body["data"][0]["payment_intent"]);
    let a = v1(
        &app,
        Method::GET,
        "/payment_intents",
        app.sk(),
        &[("limit", "1")],
        &[("Stripe-Version", "2024-06-20")],
    )
    .await;
    assert_eq!(a.header("stripe-version"), Some("2024-06-20"));
    assert!(a.header("request-id").unwrap().starts_with("req_"));
    let a = get(&app, "/payment_intents", &[("limit", "1")]).await;
    assert_eq!(
        a.header("stripe-version"),
        Some(tender_core::stripe::API_VERSION)
    );
}

#[tokio::test]
async fn an_intent_created_first_is_confirmed_later_and_a_declined_one_can_be_tried_again() {
    let Some(app) = spawn_app().await else { return };
    let cus = ok(
        &post(&app, "/customers", &[("email", "later@example.com")]).await,
        "Customer",
    );
    let cus = cus["id"].as_str().unwrap();
    let pi = ok(
        &post(
            &app,
            "/payment_intents",
            &[
                ("amount", "2500"),
                ("currency", "usd"),
                ("customer", cus),
                ("setup_future_usage", "off_session"),
            ],
        )
        .await,
        "PaymentIntent",
    );
    assert_eq!(pi["status"], "requires_payment_method");
    assert_eq!(pi["latest_charge"], Value::Null);
    assert_eq!(pi["payment_method"], Value::Null);
    let id = pi["id"].as_str().unwrap();
    let suffix = &id["pi_".len()..];
    // Not tried: no charge, and /v2 shows it waiting with no payment method.
    let a = get(&app, &format!("/charges/ch_{suffix}"), &[]).await;
    assert_eq!(a.status, StatusCode::NOT_FOUND);
    let v2 = app
        .get(&format!("/v2/payments/pay_{suffix}"), app.sk())
        .await;
    assert_eq!(v2.body["status"], "requires_payment_method");
    assert_eq!(v2.body["payment_method"], Value::Null);

    // Declined: 402, and the same intent waits for another method.
    let a = post(
        &app,
        &format!("/payment_intents/{id}/confirm"),
        &[("payment_method", "pm_card_chargeDeclined")],
    )
    .await;
    assert_eq!(a.status, StatusCode::PAYMENT_REQUIRED, "{}", a.body);
    assert_eq!(
        a.body["error"]["payment_intent"]["status"],
        "requires_payment_method"
    );
    assert_eq!(a.body["error"]["payment_intent"]["id"], id);
    let pi = ok(
        &post(
            &app,
            &format!("/payment_intents/{id}/confirm"),
            &[("payment_method", "pm_card_visa")],
        )
        .await,
        "PaymentIntent",
    );
    assert_eq!(pi["id"], id);
    assert_eq!(pi["status"], "succeeded");
    assert_eq!(pi["latest_charge"], format!("ch_{suffix}"));
    assert_eq!(pi["last_payment_error"], Value::Null);
    // setup_future_usage saved the card it was paid with to the customer.
    let saved = get(&app, &format!("/customers/{cus}/payment_methods"), &[]).await;
    assert_eq!(
        saved.body["data"].as_array().unwrap().len(),
        1,
        "{}",
        saved.body
    );
    // Confirmed once: never again.
    let a = post(
        &app,
        &format!("/payment_intents/{id}/confirm"),
        &[("payment_method", "pm_card_visa")],
    )
    .await;
    assert_eq!(
        (a.status, a.error_code()),
        (StatusCode::BAD_REQUEST, "payment_intent_unexpected_state")
    );
    let list = get(&app, "/payment_intents", &[]).await;
    assert_eq!(
        list.body["data"].as_array().unwrap().len(),
        1,
        "one payment for all three tries"
    );
}

#[tokio::test]
async fn an_intent_with_its_method_waits_for_confirmation_or_is_canceled() {
    let Some(app) = spawn_app().await else { return };
    let pi = ok(
        &post(
            &app,
            "/payment_intents",
            &[
                ("amount", "900"),
                ("currency", "gbp"),
                ("payment_method_data[type]", "card"),
                ("payment_method_data[card][number]", "4242424242424242"),
                ("payment_method_data[card][exp_month]", "12"),
                ("payment_method_data[card][exp_year]", "2034"),
                ("payment_method_data[card][cvc]", "123"),
                ("capture_method", "manual"),
            ],
        )
        .await,
        "PaymentIntent",
    );
    assert_eq!(pi["status"], "requires_confirmation");
    assert!(pi["payment_method"].as_str().unwrap().starts_with("pm_"));
    let id = pi["id"].as_str().unwrap();
    let pi = ok(
        &post(&app, &format!("/payment_intents/{id}/confirm"), &[]).await,
        "PaymentIntent",
    );
    assert_eq!(pi["status"], "requires_capture");
    assert_eq!(pi["amount_capturable"], 900);

    let waiting = ok(
        &post(
            &app,
            "/payment_intents",
            &[("amount", "900"), ("currency", "gbp")],
        )
        .await,
        "PaymentIntent",
    );
    let id = waiting["id"].as_str().unwrap();
    let a = post(&app, &format!("/payment_intents/{id}/confirm"), &[]).await;
    assert_eq!(
        (a.status, a.error_code(), a.error_param()),
        (
            StatusCode::BAD_REQUEST,
            "parameter_missing",
            "payment_method"
        )
    );
    let canceled = ok(
        &post(&app, &format!("/payment_intents/{id}/cancel"), &[]).await,
        "PaymentIntent",
    );
    assert_eq!(canceled["status"], "canceled");
}

/// Runs due tasks until the clock `id` is `ready` again (a stepped app runs none itself).
pub(crate) async fn clock_ready(app: &TestApp, id: &str) -> Value {
    for _ in 0..500 {
        app.run_due_tasks().await;
        let c = get(app, &format!("/test_helpers/test_clocks/{id}"), &[]).await;
        if c.body["status"] == "ready" {
            return c.body;
        }
    }
    panic!("the clock never finished advancing");
}

#[tokio::test]
async fn a_subscription_on_a_test_clock_bills_each_period_in_stripes_shapes() {
    let Some(app) = crate::helpers::spawn_stepped_app().await else {
        return;
    };
    let start = 1_900_000_000_i64;
    let clock = ok(
        &post(
            &app,
            "/test_helpers/test_clocks",
            &[("frozen_time", &start.to_string()), ("name", "a year")],
        )
        .await,
        "TestHelpers.TestClock",
    );
    let clock_id = clock["id"].as_str().unwrap();
    let cus = ok(
        &post(
            &app,
            "/customers",
            &[("email", "sub@example.com"), ("test_clock", clock_id)],
        )
        .await,
        "Customer",
    );
    assert_eq!(cus["test_clock"], clock_id);
    let cus = cus["id"].as_str().unwrap();
    let pm = ok(
        &post(
            &app,
            "/payment_methods/pm_card_visa/attach",
            &[("customer", cus)],
        )
        .await,
        "PaymentMethod",
    );
    let product = ok(
        &post(
            &app,
            "/products",
            &[("name", "Pro"), ("metadata[tier]", "2")],
        )
        .await,
        "Product",
    );
    let price = ok(
        &post(
            &app,
            "/prices",
            &[
                ("product", product["id"].as_str().unwrap()),
                ("currency", "usd"),
                ("unit_amount", "1500"),
                ("recurring[interval]", "month"),
            ],
        )
        .await,
        "Price",
    );
    assert_shape("Price.Recurring", &price["recurring"]);
    let prices = get(
        &app,
        "/prices",
        &[
            ("product", product["id"].as_str().unwrap()),
            ("expand[]", "data.product"),
        ],
    )
    .await;
    assert_eq!(prices.body["data"][0]["product"]["name"], "Pro");
    let sub = ok(
        &post(
            &app,
            "/subscriptions",
            &[
                ("customer", cus),
                ("items[0][price]", price["id"].as_str().unwrap()),
                ("items[0][quantity]", "2"),
                ("default_payment_method", pm["id"].as_str().unwrap()),
                ("expand[]", "latest_invoice"),
            ],
        )
        .await,
        "Subscription",
    );
    assert_eq!(sub["status"], "active");
    let item = &sub["items"]["data"][0];
    assert_shape("SubscriptionItem", item);
    assert_eq!(item["quantity"], 2);
    assert_eq!(item["current_period_start"], start);
    let invoice = &sub["latest_invoice"];
    assert_shape("Invoice", invoice);
    assert_eq!(
        (invoice["status"].as_str(), invoice["amount_paid"].as_i64()),
        (Some("paid"), Some(3000))
    );
    assert_eq!(
        invoice["parent"]["subscription_details"]["subscription"],
        sub["id"]
    );

    // Forty days on: a second period billed, exactly once.
    let to = (start + 40 * 86_400).to_string();
    let advancing = post(
        &app,
        &format!("/test_helpers/test_clocks/{clock_id}/advance"),
        &[("frozen_time", &to)],
    )
    .await;
    assert_eq!(advancing.body["status"], "advancing", "{}", advancing.body);
    let ready = clock_ready(&app, clock_id).await;
    assert_shape("TestHelpers.TestClock", &ready);
    let invoices = get(&app, "/invoices", &[("customer", cus)]).await;
    let data = invoices.body["data"].as_array().unwrap();
    assert_eq!(data.len(), 2, "{}", invoices.body);
    for inv in data {
        assert_shape("Invoice", inv);
        assert_eq!(inv["status"], "paid");
        assert_eq!(inv["amount_paid"], 3000);
    }
    let canceled = ok(
        &v1(
            &app,
            Method::DELETE,
            &format!("/subscriptions/{}", sub["id"].as_str().unwrap()),
            app.sk(),
            &[],
            &[],
        )
        .await,
        "Subscription",
    );
    assert_eq!(canceled["status"], "canceled");
    let gone = v1(
        &app,
        Method::DELETE,
        &format!("/test_helpers/test_clocks/{clock_id}"),
        app.sk(),
        &[],
        &[],
    )
    .await;
    assert_shape("TestHelpers.DeletedTestClock", &gone.body);
}

#[tokio::test]
async fn the_balance_its_transactions_and_a_dispute_read_as_stripes() {
    let Some(app) = crate::helpers::spawn_stepped_app().await else {
        return;
    };
    let pi = ok(
        &post(
            &app,
            "/payment_intents",
            &[
                ("amount", "10000"),
                ("currency", "usd"),
                ("payment_method", "pm_card_visa"),
                ("confirm", "true"),
                ("expand[]", "latest_charge.balance_transaction"),
            ],
        )
        .await,
        "PaymentIntent",
    );
    // Two steps deep: the charge, and the transaction it booked.
    assert_shape("Charge", &pi["latest_charge"]);
    let booked = &pi["latest_charge"]["balance_transaction"];
    assert_shape("BalanceTransaction", booked);
    assert_eq!(booked["amount"], 10000);
    let charge = pi["latest_charge"]["id"].as_str().unwrap();
    let balance = ok(&get(&app, "/balance", &[]).await, "Balance");
    assert_eq!(balance["pending"][0]["currency"], "usd");
    let txns = get(
        &app,
        "/balance_transactions",
        &[("expand[]", "data.source")],
    )
    .await;
    let txn = &txns.body["data"][0];
    assert_shape("BalanceTransaction", txn);
    assert_eq!(txn["type"], "charge");
    assert_eq!(txn["source"]["id"], charge);
    assert_eq!(
        txn["amount"].as_i64().unwrap() - txn["fee"].as_i64().unwrap(),
        txn["net"].as_i64().unwrap()
    );
    let by_source = get(&app, "/balance_transactions", &[("source", charge)]).await;
    assert_eq!(by_source.body["data"].as_array().unwrap().len(), 1);

    // The disputed test card: its bank disputes the payment a moment later.
    let card = [
        ("amount", "4000"),
        ("currency", "usd"),
        ("payment_method_data[type]", "card"),
        ("payment_method_data[card][number]", "4000000000000259"),
        ("payment_method_data[card][exp_month]", "12"),
        ("payment_method_data[card][exp_year]", "2034"),
        ("payment_method_data[card][cvc]", "123"),
        ("confirm", "true"),
    ];
    let disputed = ok(
        &post(&app, "/payment_intents", &card).await,
        "PaymentIntent",
    );
    let mut dispute = Value::Null;
    for _ in 0..200 {
        app.clock.advance(3);
        app.run_due_tasks().await;
        let list = get(
            &app,
            "/disputes",
            &[("payment_intent", disputed["id"].as_str().unwrap())],
        )
        .await;
        if let Some(d) = list.body["data"].as_array().unwrap().first() {
            dispute = d.clone();
            break;
        }
    }
    assert_shape("Dispute", &dispute);
    assert_eq!(dispute["charge"], disputed["latest_charge"]);
    assert_eq!(dispute["status"], "needs_response");
    let id = dispute["id"].as_str().unwrap();
    let updated = ok(
        &post(
            &app,
            &format!("/disputes/{id}"),
            &[
                ("evidence[customer_name]", "Ada"),
                ("evidence[uncategorized_text]", "Delivered"),
            ],
        )
        .await,
        "Dispute",
    );
    assert_eq!(updated["evidence"]["customer_name"], "Ada");
    assert_eq!(updated["evidence_details"]["has_evidence"], true);
}

#[tokio::test]
async fn a_v1_endpoint_gets_stripes_events_signed_as_stripe_and_a_v2_one_tenders() {
    use crate::receiver::{verify_tender_signature, Receiver};
    let Some(app) = crate::helpers::spawn_stepped_app().await else {
        return;
    };
    let stripe_rx = Receiver::start().await;
    let tender_rx = Receiver::start().await;
    let ep = ok(
        &post(
            &app,
            "/webhook_endpoints",
            &[
                ("url", &stripe_rx.url),
                ("enabled_events[]", "charge.succeeded"),
                ("enabled_events[]", "customer.created"),
            ],
        )
        .await,
        "WebhookEndpoint",
    );
    let secret = ep["secret"].as_str().unwrap().to_string();
    assert_eq!(
        ep["enabled_events"],
        serde_json::json!(["charge.succeeded", "customer.created"])
    );
    let a = post(
        &app,
        "/webhook_endpoints",
        &[
            ("url", &stripe_rx.url),
            ("enabled_events[]", "payment.succeeded"),
        ],
    )
    .await;
    assert_eq!(
        (a.status, a.error_param()),
        (StatusCode::BAD_REQUEST, "enabled_events"),
        "Tender's names are not Stripe's"
    );
    app.post(
        "/v2/webhook_endpoints",
        app.sk(),
        serde_json::json!({"url": tender_rx.url, "enabled_events": ["*"]}),
    )
    .await;

    let pi = ok(
        &post(
            &app,
            "/payment_intents",
            &[
                ("amount", "2000"),
                ("currency", "usd"),
                ("payment_method", "pm_card_visa"),
                ("confirm", "true"),
            ],
        )
        .await,
        "PaymentIntent",
    );
    app.deliver_pending().await;
    let got = stripe_rx.received();
    assert_eq!(got.len(), 1, "one change, one delivery");
    let event = got[0].json();
    assert_shape("Event", &event);
    assert_eq!(
        event["type"], "charge.succeeded",
        "under the name the endpoint listens to"
    );
    assert_shape("Charge", &event["data"]["object"]);
    assert_eq!(event["data"]["object"]["payment_intent"], pi["id"]);
    assert_eq!(event["api_version"], tender_core::stripe::API_VERSION);
    let signature = got[0].header("stripe-signature");
    assert!(
        verify_tender_signature(signature, &got[0].body, &secret),
        "{signature}"
    );
    assert_eq!(got[0].header("tender-signature"), "");
    // The /v2 endpoint hears every change: the payment made, then succeeded.
    let tender = tender_rx.received();
    let mut types: Vec<String> = tender
        .iter()
        .map(|d| d.json()["type"].to_string())
        .collect();
    types.sort();
    assert_eq!(types, ["\"payment.created\"", "\"payment.succeeded\""]);
    let succeeded = tender
        .iter()
        .find(|d| d.json()["type"] == "payment.succeeded")
        .unwrap();
    // The same event, under its second Stripe name: its id with `_1`.
    assert_eq!(
        format!("{}_1", succeeded.json()["id"].as_str().unwrap()),
        event["id"].as_str().unwrap()
    );

    // /v1/events: each under its first Stripe name, or the one asked for.
    let list = get(&app, "/events", &[("limit", "1")]).await;
    assert_eq!(list.body["data"][0]["type"], "payment_intent.succeeded");
    assert_shape("Event", &list.body["data"][0]);
    let charges = get(&app, "/events", &[("type", "charge.succeeded")]).await;
    assert_eq!(charges.body["data"][0]["type"], "charge.succeeded");
    assert_eq!(charges.body["data"][0]["id"], event["id"]);
    let one = get(
        &app,
        &format!("/events/{}", event["id"].as_str().unwrap()),
        &[],
    )
    .await;
    assert_eq!(
        (
            &one.body["type"],
            &one.body["data"]["object"]["payment_intent"]
        ),
        (&serde_json::json!("charge.succeeded"), &pi["id"])
    );
    let gone = v1(
        &app,
        Method::DELETE,
        &format!("/webhook_endpoints/{}", ep["id"].as_str().unwrap()),
        app.sk(),
        &[],
        &[],
    )
    .await;
    assert_shape("DeletedWebhookEndpoint", &gone.body);
}

#[tokio::test]
async fn a_customers_default_card_pays_the_invoices_of_a_subscription_that_names_none() {
    let Some(app) = spawn_app().await else { return };
    let cus = ok(
        &post(&app, "/customers", &[("email", "default@example.com")]).await,
        "Customer",
    );
    let cus = cus["id"].as_str().unwrap();
    let first = ok(
        &post(
            &app,
            "/payment_methods/pm_card_visa/attach",
            &[("customer", cus)],
        )
        .await,
        "PaymentMethod",
    );
    // Saved last: without a default, invoices would go to this one.
    ok(
        &post(
            &app,
            "/payment_methods/pm_card_chargeCustomerFail/attach",
            &[("customer", cus)],
        )
        .await,
        "PaymentMethod",
    );
    let other = ok(&post(&app, "/customers", &[]).await, "Customer");
    let stranger = ok(
        &post(
            &app,
            "/payment_methods/pm_card_visa/attach",
            &[("customer", other["id"].as_str().unwrap())],
        )
        .await,
        "PaymentMethod",
    );
    let a = post(
        &app,
        &format!("/customers/{cus}"),
        &[(
            "invoice_settings[default_payment_method]",
            stranger["id"].as_str().unwrap(),
        )],
    )
    .await;
    assert_eq!(
        (a.status, a.error_code(), a.error_param()),
        (
            StatusCode::BAD_REQUEST,
            "payment_method_unexpected_state",
            "invoice_settings[default_payment_method]"
        )
    );
    let updated = ok(
        &post(
            &app,
            &format!("/customers/{cus}"),
            &[(
                "invoice_settings[default_payment_method]",
                first["id"].as_str().unwrap(),
            )],
        )
        .await,
        "Customer",
    );
    assert_eq!(
        updated["invoice_settings"]["default_payment_method"],
        first["id"]
    );
    let product = ok(
        &post(&app, "/products", &[("name", "Plan")]).await,
        "Product",
    );
    let price = ok(
        &post(
            &app,
            "/prices",
            &[
                ("product", product["id"].as_str().unwrap()),
                ("currency", "usd"),
                ("unit_amount", "700"),
                ("recurring[interval]", "month"),
            ],
        )
        .await,
        "Price",
    );
    let sub = ok(
        &post(
            &app,
            "/subscriptions",
            &[
                ("customer", cus),
                ("items[0][price]", price["id"].as_str().unwrap()),
                ("expand[]", "latest_invoice"),
            ],
        )
        .await,
        "Subscription",
    );
    assert_eq!(
        sub["status"], "active",
        "paid with the default card, not the failing one saved last: {}",
        sub
    );
    assert_eq!(sub["latest_invoice"]["status"], "paid");
    let v2 = app.get(&format!("/v2/customers/{cus}"), app.sk()).await;
    assert_eq!(
        v2.body["invoice_settings"]["default_payment_method"],
        first["id"]
    );
}

#[tokio::test]
async fn a_browser_with_the_client_secret_reads_and_confirms_its_intent_and_nothing_more() {
    let Some(app) = spawn_app().await else { return };
    let cus = ok(
        &post(&app, "/customers", &[("email", "browser@example.com")]).await,
        "Customer",
    );
    let pi = ok(
        &post(
            &app,
            "/payment_intents",
            &[
                ("amount", "1800"),
                ("currency", "usd"),
                ("customer", cus["id"].as_str().unwrap()),
                ("metadata[order]", "9"),
            ],
        )
        .await,
        "PaymentIntent",
    );
    let id = pi["id"].as_str().unwrap();
    let secret = pi["client_secret"].as_str().unwrap();
    let path = format!("/payment_intents/{id}");
    let pk = app.pk();
    // Without the secret, or with another intent's, a publishable key learns nothing.
    let a = v1(&app, Method::GET, &path, pk, &[], &[]).await;
    assert_eq!(
        (a.status, a.error_param()),
        (StatusCode::BAD_REQUEST, "client_secret")
    );
    let other = ok(
        &post(
            &app,
            "/payment_intents",
            &[("amount", "500"), ("currency", "usd")],
        )
        .await,
        "PaymentIntent",
    );
    let a = v1(
        &app,
        Method::GET,
        &path,
        pk,
        &[("client_secret", other["client_secret"].as_str().unwrap())],
        &[],
    )
    .await;
    assert_eq!(a.status, StatusCode::NOT_FOUND);
    let a = v1(&app, Method::GET, "/payment_intents", pk, &[], &[]).await;
    assert_eq!(a.status, StatusCode::UNAUTHORIZED);
    // With it: the part a browser may see, then the confirmation.
    let seen = v1(
        &app,
        Method::GET,
        &path,
        pk,
        &[("client_secret", secret)],
        &[],
    )
    .await;
    assert_eq!(seen.status, StatusCode::OK, "{}", seen.body);
    assert_eq!(seen.body["status"], "requires_payment_method");
    assert!(
        seen.body.get("customer").is_none() && seen.body.get("metadata").is_none(),
        "{}",
        seen.body
    );
    let done = v1(
        &app,
        Method::POST,
        &format!("{path}/confirm"),
        pk,
        &[
            ("client_secret", secret),
            ("payment_method", "pm_card_visa"),
        ],
        &[],
    )
    .await;
    assert_eq!(done.status, StatusCode::OK, "{}", done.body);
    assert_eq!(done.body["status"], "succeeded");
    assert!(done.body.get("customer").is_none());
    // The secret key sees all of it, the customer included.
    let full = ok(&get(&app, &path, &[]).await, "PaymentIntent");
    assert_eq!(full["customer"], cus["id"]);
    assert_eq!(full["metadata"]["order"], "9");
}

#[tokio::test]
async fn a_price_may_bring_its_product_and_payment_behavior_is_what_tender_does_or_refused() {
    let Some(app) = spawn_app().await else { return };
    let price = ok(
        &post(
            &app,
            "/prices",
            &[
                ("product_data[name]", "Seat"),
                ("currency", "eur"),
                ("unit_amount", "1200"),
                ("recurring[interval]", "year"),
                ("expand[]", "product"),
            ],
        )
        .await,
        "Price",
    );
    assert_eq!(price["product"]["name"], "Seat");
    assert_shape("Product", &price["product"]);
    let a = post(
        &app,
        "/prices",
        &[
            ("product", price["product"]["id"].as_str().unwrap()),
            ("product_data[name]", "x"),
            ("currency", "eur"),
            ("unit_amount", "1"),
        ],
    )
    .await;
    assert_eq!(
        (a.status, a.error_param()),
        (StatusCode::BAD_REQUEST, "product_data")
    );
    let cus = ok(&post(&app, "/customers", &[]).await, "Customer");
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
    let price = price["id"].as_str().unwrap();
    // error_if_incomplete: a declined first invoice fails the request with the decline and
    // leaves no subscription to bill (it ends at once, its invoice void).
    let declining = ok(&post(&app, "/customers", &[]).await, "Customer");
    let declining = declining["id"].as_str().unwrap();
    ok(
        &post(
            &app,
            "/payment_methods/pm_card_chargeCustomerFail/attach",
            &[("customer", declining)],
        )
        .await,
        "PaymentMethod",
    );
    let failed = post(
        &app,
        "/subscriptions",
        &[
            ("customer", declining),
            ("items[0][price]", price),
            ("payment_behavior", "error_if_incomplete"),
        ],
    )
    .await;
    assert_eq!(
        (failed.status, failed.error_type()),
        (StatusCode::PAYMENT_REQUIRED, "card_error")
    );
    let ended = get(
        &app,
        "/subscriptions",
        &[("customer", declining), ("status", "all")],
    )
    .await;
    let ended = &ended.body["data"];
    assert_eq!(ended.as_array().unwrap().len(), 1, "{ended}");
    assert_eq!(ended[0]["status"], "incomplete_expired");
    let invoice = get(
        &app,
        &format!("/invoices/{}", ended[0]["latest_invoice"].as_str().unwrap()),
        &[],
    )
    .await;
    assert_eq!(invoice.body["status"], "void");
    let paid = ok(
        &post(
            &app,
            "/subscriptions",
            &[
                ("customer", cus),
                ("items[0][price]", price),
                ("payment_behavior", "error_if_incomplete"),
            ],
        )
        .await,
        "Subscription",
    );
    assert_eq!(paid["status"], "active");
    let sub = ok(
        &post(
            &app,
            "/subscriptions",
            &[
                ("customer", cus),
                ("items[0][price]", price),
                ("payment_behavior", "allow_incomplete"),
            ],
        )
        .await,
        "Subscription",
    );
    assert_eq!(sub["status"], "active");
}

#[tokio::test]
async fn the_rate_limit_is_stripes_429_with_retry_after() {
    let Some(app) = crate::helpers::spawn_app_with(crate::helpers::Options {
        rate_limit: 2,
        ..Default::default()
    })
    .await
    else {
        return;
    };
    let mut limited = None;
    for _ in 0..20 {
        let a = get(&app, "/customers", &[]).await;
        if a.status == StatusCode::TOO_MANY_REQUESTS {
            limited = Some(a);
            break;
        }
    }
    let a = limited.expect("the limit is reached");
    assert_eq!(
        (a.error_type(), a.error_code()),
        ("invalid_request_error", "rate_limit")
    );
    assert_shape("StripeRawError", &a.body["error"]);
    assert!(
        a.header("retry-after")
            .is_some_and(|s| s.parse::<u64>().is_ok()),
        "{:?}",
        a.headers
    );
}
