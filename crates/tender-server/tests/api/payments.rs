//! Payments: every card of the simulated acquirer, validation, update, capture and cancel.

use serde_json::json;

use crate::helpers::*;

const SUCCESS_CARDS: &[(&str, &str)] = &[
    ("4242424242424242", "visa"),
    ("4000056655665556", "visa"),
    ("5555555555554444", "mastercard"),
    ("2223003122003222", "mastercard"),
    ("5200828282828210", "mastercard"),
    ("378282246310005", "amex"),
    ("6011111111111117", "discover"),
    ("3056930009020004", "diners"),
    ("36227206271667", "diners"),
    ("3566002020360505", "jcb"),
    ("6200000000000005", "unionpay"),
];

const DECLINE_CARDS: &[(&str, &str, &str)] = &[
    ("4000000000000002", "card_declined", "generic_decline"),
    ("4000000000009995", "card_declined", "insufficient_funds"),
    ("4000000000009987", "card_declined", "lost_card"),
    ("4000000000009979", "card_declined", "stolen_card"),
    ("4100000000000019", "card_declined", "fraudulent"),
    ("4000000000000069", "expired_card", "expired_card"),
    ("4000000000000127", "incorrect_cvc", "incorrect_cvc"),
    ("4000000000000119", "processing_error", "processing_error"),
    ("4000000000000341", "card_declined", "generic_decline"),
];

#[tokio::test]
async fn every_success_card_succeeds_with_its_brand_and_last4() {
    let Some(app) = spawn_app().await else { return };
    for (number, brand) in SUCCESS_CARDS {
        let a = app.pay(app.sk(), number, 1234).await;
        assert_eq!(a.status, 200, "{number}: {}", a.body);
        let p = &a.body;
        assert_eq!(p["object"], "payment");
        assert_eq!(p["status"], "succeeded");
        assert_eq!(p["amount"], 1234);
        assert_eq!(p["amount_captured"], 1234);
        assert_eq!(p["currency"], "usd");
        assert_eq!(p["livemode"], false);
        assert_eq!(p["payment_method"]["type"], "card");
        assert_eq!(p["payment_method"]["card"]["brand"], *brand, "{number}");
        assert_eq!(
            p["payment_method"]["card"]["last4"],
            &number[number.len() - 4..]
        );
        assert!(p["payment_method"]["id"]
            .as_str()
            .unwrap()
            .starts_with("pm_"));
        let id = p["id"].as_str().unwrap();
        assert!(id.starts_with("pay_") && id.len() == 28, "{id}");
        assert_eq!(p["receipt_url"], format!("{}/{}", app.receipt_base, id));
        assert!(
            !a.raw.windows(number.len()).any(|w| w == number.as_bytes()),
            "PAN in response"
        );
    }
}

#[tokio::test]
async fn every_decline_card_creates_a_failed_payment_and_answers_402() {
    let Some(app) = spawn_app().await else { return };
    for (number, code, decline) in DECLINE_CARDS {
        let a = app.pay(app.sk(), number, 2000).await;
        assert_eq!(a.status, 402, "{number}: {}", a.body);
        assert_eq!(a.error_type(), "card_error");
        assert_eq!(a.error_code(), *code, "{number}");
        assert_eq!(a.body["error"]["decline_code"], *decline, "{number}");
        assert!(!a.body["error"]["message"].as_str().unwrap().is_empty());
        let id = a.body["error"]["payment"]
            .as_str()
            .expect("error.payment")
            .to_string();
        let p = app.get(&format!("/v2/payments/{id}"), app.sk()).await;
        assert_eq!(p.status, 200);
        assert_eq!(p.body["status"], "failed");
        assert_eq!(p.body["failure_code"], *code);
        assert_eq!(p.body["decline_code"], *decline);
        assert_eq!(p.body["failure_message"], a.body["error"]["message"]);
        assert_eq!(p.body["amount_captured"], 0);
        let events = app
            .get("/v2/events?type=payment.failed&limit=1", app.sk())
            .await;
        assert_eq!(events.body["data"][0]["data"]["object"]["id"], id.as_str());
    }
}

#[tokio::test]
async fn test_mode_declines_unknown_real_cards_and_live_mode_declines_test_cards() {
    let Some(app) = spawn_app().await else { return };
    // A Luhn-valid number that is not on the test card list.
    let a = app.pay(app.sk(), "4111111111111111", 1000).await;
    assert_eq!(a.status, 402);
    assert_eq!(a.error_code(), "card_declined");
    assert_eq!(a.body["error"]["decline_code"], "test_mode_live_card");

    let a = app.pay(app.sk_live(), "4242424242424242", 1000).await;
    assert_eq!(a.status, 402);
    assert_eq!(a.body["error"]["decline_code"], "live_mode_test_card");
    let p = app
        .get(
            &format!(
                "/v2/payments/{}",
                a.body["error"]["payment"].as_str().unwrap()
            ),
            app.sk_live(),
        )
        .await;
    assert_eq!(p.body["livemode"], true);
    assert_eq!(p.body["status"], "failed");

    let a = app.pay(app.sk_live(), "4111111111111111", 1000).await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(a.body["livemode"], true);
}

#[tokio::test]
async fn card_validation_failures_answer_402_and_create_nothing() {
    let Some(app) = spawn_app().await else { return };
    let cases = [
        (
            json!({"number": "4242424242424241", "exp_month": 12, "exp_year": 2034, "cvc": "123"}),
            "incorrect_number",
            "payment_method[card][number]",
        ),
        (
            json!({"number": "4242", "exp_month": 12, "exp_year": 2034, "cvc": "123"}),
            "incorrect_number",
            "payment_method[card][number]",
        ),
        (
            json!({"number": "4242424242424242", "exp_month": 13, "exp_year": 2034, "cvc": "123"}),
            "invalid_expiry_month",
            "payment_method[card][exp_month]",
        ),
        (
            json!({"number": "4242424242424242", "exp_month": 0, "exp_year": 2034, "cvc": "123"}),
            "invalid_expiry_month",
            "payment_method[card][exp_month]",
        ),
        (
            json!({"number": "4242424242424242", "exp_month": 12, "exp_year": 34, "cvc": "123"}),
            "invalid_expiry_year",
            "payment_method[card][exp_year]",
        ),
        (
            json!({"number": "4242424242424242", "exp_month": 12, "exp_year": 2001, "cvc": "123"}),
            "invalid_expiry_year",
            "payment_method[card][exp_year]",
        ),
        (
            json!({"number": "4242424242424242", "exp_month": 12, "exp_year": 2034, "cvc": "12"}),
            "invalid_cvc",
            "payment_method[card][cvc]",
        ),
        (
            json!({"number": "378282246310005", "exp_month": 12, "exp_year": 2034, "cvc": "123"}),
            "invalid_cvc",
            "payment_method[card][cvc]",
        ),
    ];
    for (card, code, param) in cases {
        let body = json!({"amount": 1000, "currency": "usd", "payment_method": {"type": "card", "card": card}});
        let a = app.post("/v2/payments", app.sk(), body).await;
        assert_eq!(a.status, 402, "{card}: {}", a.body);
        assert_eq!(a.error_type(), "card_error");
        assert_eq!(a.error_code(), code, "{card}");
        assert_eq!(a.error_param(), param, "{card}");
        assert!(a.body["error"].get("payment").is_none());
    }
    // A card that expired last month (relative to the server clock).
    let (year, month) =
        tender_core::clock::year_month(tender_core::clock::Clock::now(app.clock.as_ref()));
    let (y, m) = if month == 1 {
        (year - 1, 12)
    } else {
        (year, month - 1)
    };
    let body = json!({"amount": 1000, "currency": "usd", "payment_method": {"type": "card", "card": {"number": "4242424242424242", "exp_month": m, "exp_year": y, "cvc": "123"}}});
    let a = app.post("/v2/payments", app.sk(), body).await;
    assert_eq!(a.error_code(), "expired_card");

    let list = app.get("/v2/payments", app.sk()).await;
    assert_eq!(
        list.body["data"].as_array().unwrap().len(),
        0,
        "validation failures create nothing"
    );
    let events = app.get("/v2/events", app.sk()).await;
    assert_eq!(
        events.body["data"].as_array().unwrap().len(),
        0,
        "and emit nothing"
    );
}

#[tokio::test]
async fn amounts_and_currencies_are_checked_against_the_currency_table() {
    let Some(app) = spawn_app().await else { return };
    let pay = |amount: serde_json::Value, currency: &str| json!({"amount": amount, "currency": currency, "payment_method": card("4242424242424242")});
    let cases = [
        (pay(json!(49), "usd"), "amount_too_small", "amount"),
        (pay(json!(29), "gbp"), "amount_too_small", "amount"),
        (pay(json!(0), "eur"), "amount_too_small", "amount"),
        (pay(json!(-5), "usd"), "amount_too_small", "amount"),
        (pay(json!(100_000_000), "usd"), "amount_too_large", "amount"),
        (
            pay(json!(10.5), "usd"),
            "parameter_invalid_integer",
            "amount",
        ),
        (
            pay(json!("100"), "usd"),
            "parameter_invalid_integer",
            "amount",
        ),
        (pay(json!(1000), "usx"), "parameter_invalid", "currency"),
        (pay(json!(1000), "dollars"), "parameter_invalid", "currency"),
    ];
    for (body, code, param) in cases {
        let a = app.post("/v2/payments", app.sk(), body.clone()).await;
        assert_eq!(a.status, 400, "{body}: {}", a.body);
        assert_eq!(a.error_type(), "invalid_request_error");
        assert_eq!(a.error_code(), code, "{body}");
        assert_eq!(a.error_param(), param, "{body}");
    }
    for (amount, currency) in [(30, "gbp"), (50, "USD"), (99_999_999, "usd"), (50, "jpy")] {
        let a = app
            .post("/v2/payments", app.sk(), pay(json!(amount), currency))
            .await;
        assert_eq!(a.status, 200, "{amount} {currency}: {}", a.body);
        assert_eq!(a.body["currency"], currency.to_lowercase());
    }
}

#[tokio::test]
async fn missing_required_parameters_are_named() {
    let Some(app) = spawn_app().await else { return };
    for (body, param) in [
        (
            json!({"currency": "usd", "payment_method": card("4242424242424242")}),
            "amount",
        ),
        (
            json!({"amount": 1000, "payment_method": card("4242424242424242")}),
            "currency",
        ),
        (json!({"amount": 1000, "currency": "usd"}), "payment_method"),
        (
            json!({"amount": 1000, "currency": "usd", "payment_method": {"type": "card"}}),
            "payment_method[card]",
        ),
        (
            json!({"amount": 1000, "currency": "usd", "payment_method": {"type": "card", "card": {"number": "4242424242424242", "exp_month": 1, "exp_year": 2034}}}),
            "payment_method[card][cvc]",
        ),
    ] {
        let a = app.post("/v2/payments", app.sk(), body).await;
        assert_eq!(a.status, 400);
        assert_eq!(a.error_code(), "parameter_missing");
        assert_eq!(a.error_param(), param);
    }
}

#[tokio::test]
async fn update_changes_description_metadata_and_customer_once() {
    let Some(app) = spawn_app().await else { return };
    let p = app.pay(app.sk(), "4242424242424242", 1000).await.id();
    let c1 = app
        .post("/v2/customers", app.sk(), json!({"email": "a@example.com"}))
        .await
        .id();
    let c2 = app.post("/v2/customers", app.sk(), json!({})).await.id();
    let a = app
        .post(
            &format!("/v2/payments/{p}"),
            app.sk(),
            json!({"description": "order 42", "metadata": {"order": "42", "x": "1"}}),
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(a.body["description"], "order 42");
    let a = app
        .request(
            reqwest::Method::PATCH,
            &format!("/v2/payments/{p}"),
            Some(app.sk()),
            Some(json!({"metadata": {"x": ""}, "customer": c1})),
            &[],
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(a.body["metadata"], json!({"order": "42"}));
    assert_eq!(a.body["customer"], c1.as_str());
    let a = app
        .post(
            &format!("/v2/payments/{p}"),
            app.sk(),
            json!({"customer": c2}),
        )
        .await;
    assert_eq!(a.status, 400);
    assert_eq!(a.error_param(), "customer");
    let a = app
        .post(&format!("/v2/payments/{p}"), app.sk(), json!({"amount": 5}))
        .await;
    assert_eq!(a.error_code(), "parameter_unknown");
    let ev = app
        .get("/v2/events?type=payment.updated&limit=1", app.sk())
        .await;
    assert_eq!(
        ev.body["data"][0]["data"]["previous_attributes"]["customer"],
        serde_json::Value::Null
    );
    assert_eq!(
        ev.body["data"][0]["data"]["object"]["customer"],
        c1.as_str()
    );
}

#[tokio::test]
async fn manual_capture_authorises_then_captures_part_and_refuses_twice() {
    let Some(app) = spawn_app().await else { return };
    let mut body = payment_body("4242424242424242", 5000);
    body["capture"] = json!(false);
    let a = app.post("/v2/payments", app.sk(), body).await;
    assert_eq!(a.body["status"], "requires_capture");
    assert_eq!(a.body["capture_method"], "manual");
    assert_eq!(a.body["amount_captured"], 0);
    let id = a.id();
    let too_much = app
        .post(
            &format!("/v2/payments/{id}/capture"),
            app.sk(),
            json!({"amount": 5001}),
        )
        .await;
    assert_eq!(too_much.status, 400);
    assert_eq!(too_much.error_code(), "amount_too_large");
    let cap = app
        .post(
            &format!("/v2/payments/{id}/capture"),
            app.sk(),
            json!({"amount": 3000}),
        )
        .await;
    assert_eq!(cap.status, 200, "{}", cap.body);
    assert_eq!(cap.body["status"], "succeeded");
    assert_eq!(cap.body["amount"], 5000);
    assert_eq!(cap.body["amount_captured"], 3000);
    let again = app
        .post(&format!("/v2/payments/{id}/capture"), app.sk(), json!({}))
        .await;
    assert_eq!(again.status, 400);
    assert_eq!(again.error_code(), "payment_unexpected_state");
    assert!(again.body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("succeeded"));
    let cancel = app
        .post(&format!("/v2/payments/{id}/cancel"), app.sk(), json!({}))
        .await;
    assert_eq!(cancel.error_code(), "payment_unexpected_state");
}

#[tokio::test]
async fn cancel_releases_an_authorisation_with_a_reason() {
    let Some(app) = spawn_app().await else { return };
    let mut body = payment_body("4242424242424242", 5000);
    body["capture"] = json!(false);
    let id = app.post("/v2/payments", app.sk(), body).await.id();
    let bad = app
        .post(
            &format!("/v2/payments/{id}/cancel"),
            app.sk(),
            json!({"cancellation_reason": "bored"}),
        )
        .await;
    assert_eq!(bad.error_param(), "cancellation_reason");
    let c = app
        .post(
            &format!("/v2/payments/{id}/cancel"),
            app.sk(),
            json!({"cancellation_reason": "requested_by_customer"}),
        )
        .await;
    assert_eq!(c.status, 200, "{}", c.body);
    assert_eq!(c.body["status"], "canceled");
    assert_eq!(c.body["cancellation_reason"], "requested_by_customer");
    assert!(c.body["canceled_at"].as_i64().is_some());
    let ev = app.get("/v2/events?type=payment.canceled", app.sk()).await;
    assert_eq!(ev.body["data"][0]["data"]["object"]["id"], id.as_str());
    let cap = app
        .post(&format!("/v2/payments/{id}/capture"), app.sk(), json!({}))
        .await;
    assert_eq!(cap.error_code(), "payment_unexpected_state");
    // A succeeded payment cannot be canceled.
    let done = app.pay(app.sk(), "4242424242424242", 1000).await.id();
    let c = app
        .post(&format!("/v2/payments/{done}/cancel"), app.sk(), json!({}))
        .await;
    assert_eq!(c.status, 400);
    assert_eq!(c.error_code(), "payment_unexpected_state");
}

#[tokio::test]
async fn events_record_the_request_that_caused_them() {
    let Some(app) = spawn_app().await else { return };
    let a = app
        .request(
            reqwest::Method::POST,
            "/v2/payments",
            Some(app.sk()),
            Some(payment_body("4242424242424242", 1000)),
            &[("Idempotency-Key", "evt-key-1")],
        )
        .await;
    let request_id = a.header("request-id").unwrap().to_string();
    let ev = app.get("/v2/events?type=payment.succeeded", app.sk()).await;
    let e = &ev.body["data"][0];
    assert_eq!(e["object"], "event");
    assert_eq!(e["api_version"], "2.1");
    assert_eq!(e["livemode"], false);
    assert_eq!(e["request"]["id"], request_id.as_str());
    assert_eq!(e["request"]["idempotency_key"], "evt-key-1");
    assert_eq!(e["data"]["object"], a.body);
    let one = app
        .get(
            &format!("/v2/events/{}", e["id"].as_str().unwrap()),
            app.sk(),
        )
        .await;
    assert_eq!(one.body, *e);
}

#[tokio::test]
async fn card_numbers_never_reach_the_data_dir_in_clear() {
    let Some(app) = spawn_app().await else { return };
    for (number, _) in SUCCESS_CARDS {
        app.pay(app.sk(), number, 1000).await;
    }
    for (number, _, _) in DECLINE_CARDS {
        app.pay(app.sk(), number, 1000).await;
    }
    let stored = app.stored_bytes().await;
    {
        for number in SUCCESS_CARDS
            .iter()
            .map(|c| c.0)
            .chain(DECLINE_CARDS.iter().map(|c| c.0))
        {
            assert!(
                !contains(&stored, number),
                "{number} found in the stored data"
            );
        }
    }
}
