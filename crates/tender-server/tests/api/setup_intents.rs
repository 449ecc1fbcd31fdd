//! SetupIntents (`seti_…`, CONTRACT §13): a card saved for later without charging it, through
//! `/v1` as Stripe's SDKs call it and through `/v2`, the same object both ways.

use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::helpers::spawn_app;
use crate::stripe::{get, ok, post, v1};

#[tokio::test]
async fn a_card_saved_by_a_setup_intent_pays_later_without_the_customer() {
    let Some(app) = spawn_app().await else { return };
    let cus = ok(
        &post(&app, "/customers", &[("email", "later@example.com")]).await,
        "Customer",
    );
    let cus = cus["id"].as_str().unwrap();
    let seti = ok(
        &post(
            &app,
            "/setup_intents",
            &[
                ("customer", cus),
                ("payment_method", "pm_card_visa"),
                ("confirm", "true"),
                ("usage", "off_session"),
                ("metadata[plan]", "pro"),
            ],
        )
        .await,
        "SetupIntent",
    );
    assert_eq!(seti["status"], "succeeded");
    assert_eq!(seti["usage"], "off_session");
    assert_eq!(seti["metadata"]["plan"], "pro");
    let id = seti["id"].as_str().unwrap();
    assert!(id.starts_with("seti_"), "{id}");
    assert!(seti["client_secret"]
        .as_str()
        .unwrap()
        .starts_with(&format!("{id}_secret_")));
    // The card is the customer's now, and nothing was charged.
    let pm = seti["payment_method"].as_str().unwrap();
    let cards = get(&app, &format!("/customers/{cus}/payment_methods"), &[]).await;
    assert_eq!(cards.body["data"][0]["id"], pm, "{}", cards.body);
    let charges = get(&app, "/charges", &[("customer", cus)]).await;
    assert_eq!(charges.body["data"], json!([]));
    // Later, off session: the saved card pays.
    let pi = ok(
        &post(
            &app,
            "/payment_intents",
            &[
                ("amount", "4900"),
                ("currency", "usd"),
                ("customer", cus),
                ("payment_method", pm),
                ("off_session", "true"),
                ("confirm", "true"),
            ],
        )
        .await,
        "PaymentIntent",
    );
    assert_eq!(pi["status"], "succeeded");
    // The same object through /v2, and its events under Stripe's names.
    let v2 = app.get(&format!("/v2/setup_intents/{id}"), app.sk()).await;
    assert_eq!(v2.status, StatusCode::OK, "{}", v2.body);
    assert_eq!(
        (&v2.body["status"], &v2.body["payment_method"]),
        (&json!("succeeded"), &json!(pm))
    );
    for name in ["setup_intent.created", "setup_intent.succeeded"] {
        let events = get(&app, "/events", &[("type", name)]).await;
        assert_eq!(events.body["data"][0]["data"]["object"]["id"], id, "{name}");
    }
    let mine = get(&app, "/setup_intents", &[("customer", cus)]).await;
    assert_eq!(mine.body["data"][0]["id"], id);
    let attached = get(&app, "/events", &[("type", "payment_method.attached")]).await;
    let object = &attached.body["data"][0]["data"]["object"];
    crate::stripe_shapes::assert_shape("PaymentMethod", object);
    assert_eq!(
        (&object["id"], &object["customer"]),
        (&json!(pm), &json!(cus))
    );
    // A manual capture's authorisation is Stripe's amount_capturable_updated.
    let held = ok(
        &post(
            &app,
            "/payment_intents",
            &[
                ("amount", "700"),
                ("currency", "usd"),
                ("customer", cus),
                ("payment_method", pm),
                ("capture_method", "manual"),
                ("confirm", "true"),
            ],
        )
        .await,
        "PaymentIntent",
    );
    let capturable = get(
        &app,
        "/events",
        &[("type", "payment_intent.amount_capturable_updated")],
    )
    .await;
    let object = &capturable.body["data"][0]["data"]["object"];
    assert_eq!(object["id"], held["id"]);
    assert_eq!(object["amount_capturable"], 700);
}

#[tokio::test]
async fn a_declined_setup_is_a_402_carrying_the_intent_which_another_card_completes() {
    let Some(app) = spawn_app().await else { return };
    let cus = ok(&post(&app, "/customers", &[]).await, "Customer");
    let cus = cus["id"].as_str().unwrap();
    let seti = ok(
        &post(&app, "/setup_intents", &[("customer", cus)]).await,
        "SetupIntent",
    );
    assert_eq!(seti["status"], "requires_payment_method");
    let path = format!("/setup_intents/{}/confirm", seti["id"].as_str().unwrap());
    let a = post(
        &app,
        &path,
        &[("payment_method", "pm_card_chargeDeclinedInsufficientFunds")],
    )
    .await;
    assert_eq!(a.status, StatusCode::PAYMENT_REQUIRED, "{}", a.body);
    let e = &a.body["error"];
    assert_eq!(
        (&e["type"], &e["code"], &e["decline_code"]),
        (
            &json!("card_error"),
            &json!("card_declined"),
            &json!("insufficient_funds")
        )
    );
    let failed = &e["setup_intent"];
    crate::stripe_shapes::assert_shape("SetupIntent", failed);
    assert_eq!(failed["status"], "requires_payment_method");
    assert_eq!(
        failed["last_setup_error"]["decline_code"],
        "insufficient_funds"
    );
    assert_eq!(failed["payment_method"], json!(null));
    let events = get(&app, "/events", &[("type", "setup_intent.setup_failed")]).await;
    assert_eq!(events.body["data"][0]["data"]["object"]["id"], seti["id"]);
    // The declined card was not saved to the customer; another card completes the intent.
    let cards = get(&app, &format!("/customers/{cus}/payment_methods"), &[]).await;
    assert_eq!(cards.body["data"], json!([]));
    let done = ok(
        &post(&app, &path, &[("payment_method", "pm_card_mastercard")]).await,
        "SetupIntent",
    );
    assert_eq!(done["status"], "succeeded");
    assert_eq!(done["last_setup_error"], json!(null));
    // A succeeded intent is settled: neither confirmed again nor canceled.
    let again = post(&app, &path, &[("payment_method", "pm_card_visa")]).await;
    assert_eq!(
        (again.status, again.error_code()),
        (StatusCode::BAD_REQUEST, "setup_intent_unexpected_state")
    );
}

#[tokio::test]
async fn a_browser_with_the_client_secret_confirms_its_setup_and_nothing_more() {
    let Some(app) = spawn_app().await else { return };
    let cus = ok(&post(&app, "/customers", &[]).await, "Customer");
    let seti = ok(
        &post(
            &app,
            "/setup_intents",
            &[
                ("customer", cus["id"].as_str().unwrap()),
                ("metadata[internal]", "x"),
            ],
        )
        .await,
        "SetupIntent",
    );
    let id = seti["id"].as_str().unwrap();
    let secret = seti["client_secret"].as_str().unwrap();
    let pk = app.pk();
    let path = format!("/setup_intents/{id}");
    let a = v1(&app, Method::GET, &path, pk, &[], &[]).await;
    assert_eq!(
        (a.status, a.error_param()),
        (StatusCode::BAD_REQUEST, "client_secret")
    );
    let a = v1(
        &app,
        Method::GET,
        &path,
        pk,
        &[("client_secret", "seti_x_secret_wrong")],
        &[],
    )
    .await;
    assert_eq!(a.status, StatusCode::NOT_FOUND);
    let a = v1(
        &app,
        Method::POST,
        &format!("{path}/cancel"),
        pk,
        &[("client_secret", secret)],
        &[],
    )
    .await;
    assert_eq!(a.status, StatusCode::UNAUTHORIZED);
    let done = v1(
        &app,
        Method::POST,
        &format!("{path}/confirm"),
        pk,
        &[
            ("client_secret", secret),
            ("payment_method_data[type]", "card"),
            ("payment_method_data[card][number]", "4242424242424242"),
            ("payment_method_data[card][exp_month]", "12"),
            ("payment_method_data[card][exp_year]", "2040"),
            ("payment_method_data[card][cvc]", "123"),
        ],
        &[],
    )
    .await;
    assert_eq!(done.status, StatusCode::OK, "{}", done.body);
    assert_eq!(done.body["status"], "succeeded");
    assert!(
        done.body.get("customer").is_none() && done.body.get("metadata").is_none(),
        "a browser sees neither: {}",
        done.body
    );
    let full = ok(&get(&app, &path, &[]).await, "SetupIntent");
    assert_eq!(full["metadata"]["internal"], "x");
    assert_eq!(full["customer"], cus["id"]);
}

#[tokio::test]
async fn a_setup_intent_is_canceled_before_it_succeeds_and_bad_input_is_a_400() {
    let Some(app) = spawn_app().await else { return };
    let seti = ok(
        &post(
            &app,
            "/setup_intents",
            &[("payment_method", "pm_card_visa")],
        )
        .await,
        "SetupIntent",
    );
    assert_eq!(seti["status"], "requires_confirmation");
    let path = format!("/setup_intents/{}", seti["id"].as_str().unwrap());
    let canceled = ok(
        &post(
            &app,
            &format!("{path}/cancel"),
            &[("cancellation_reason", "abandoned")],
        )
        .await,
        "SetupIntent",
    );
    assert_eq!(
        (&canceled["status"], &canceled["cancellation_reason"]),
        (&json!("canceled"), &json!("abandoned"))
    );
    let a = post(&app, &format!("{path}/confirm"), &[]).await;
    assert_eq!(a.error_code(), "setup_intent_unexpected_state");
    for (params, param) in [
        (vec![("usage", "sometimes")], "usage"),
        (vec![("customer", "cus_nope")], "customer"),
        (vec![("confirm", "true")], "payment_method"),
        (vec![("payment_method", "pm_nope")], "payment_method"),
        (vec![("return_url", "https://shop.example")], "return_url"),
    ] {
        let a = post(&app, "/setup_intents", &params).await;
        assert_eq!(
            (a.status, a.error_param()),
            (StatusCode::BAD_REQUEST, param),
            "{params:?}: {}",
            a.body
        );
        assert_eq!(a.body["error"]["type"], "invalid_request_error");
    }
    let a = get(&app, "/setup_intents/seti_nope", &[]).await;
    assert_eq!(a.status, StatusCode::NOT_FOUND);
    // /v2 speaks JSON, with Tender's errors.
    let a = app
        .post(
            "/v2/setup_intents",
            app.sk(),
            json!({"usage": "off_session", "confirm": true}),
        )
        .await;
    assert_eq!(
        (a.status, a.error_param()),
        (StatusCode::BAD_REQUEST, "payment_method")
    );
}
