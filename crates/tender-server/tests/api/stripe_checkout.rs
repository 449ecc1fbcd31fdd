//! `/v1/checkout/sessions` as a shop's Stripe code calls it: Stripe's parameters in, Stripe's
//! `checkout.session` and `item` out (each checked against Stripe's published shape), the
//! session paid on Tender's hosted page and told as `checkout.session.completed`.

use serde_json::Value;

use crate::helpers::*;
use crate::stripe::{get, ok, post};
use crate::stripe_shapes::assert_shape;

/// A one-time price of 12.00 usd, made through `/v1`.
async fn one_time_price(app: &TestApp) -> String {
    let price = ok(
        &post(
            app,
            "/prices",
            &[
                ("currency", "usd"),
                ("unit_amount", "1200"),
                ("product_data[name]", "Notebook"),
            ],
        )
        .await,
        "Price",
    );
    price["id"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn a_v1_session_is_stripe_shaped_paid_on_the_hosted_page_and_told_as_stripe_tells_it() {
    let Some(app) = spawn_app().await else { return };
    let price = one_time_price(&app).await;
    let session = ok(
        &post(
            &app,
            "/checkout/sessions",
            &[
                ("mode", "payment"),
                ("line_items[0][price]", &price),
                ("line_items[0][quantity]", "2"),
                ("payment_method_types[0]", "card"),
                (
                    "success_url",
                    "https://shop.example/ok?cs={CHECKOUT_SESSION_ID}",
                ),
                ("customer_email", "jo@example.com"),
                ("metadata[order]", "42"),
            ],
        )
        .await,
        "Checkout.Session",
    );
    let id = session["id"].as_str().unwrap().to_string();
    assert!(id.starts_with("cs_"));
    assert_eq!(session["object"], "checkout.session");
    assert_eq!(session["amount_total"], 2400);
    assert_eq!(session["payment_status"], "unpaid");
    assert_eq!(session["metadata"]["order"], "42");

    // Its lines, as the list and as an expansion.
    let lines = get(
        &app,
        &format!("/checkout/sessions/{id}/line_items"),
        &[("limit", "10")],
    )
    .await;
    assert_eq!(lines.status, 200, "{}", lines.body);
    let data = lines.body["data"].as_array().unwrap();
    assert_eq!(data.len(), 1);
    assert_shape("LineItem", &data[0]);
    assert_eq!(data[0]["price"]["id"], price.as_str());
    assert_eq!(data[0]["quantity"], 2);
    let expanded = ok(
        &get(
            &app,
            &format!("/checkout/sessions/{id}"),
            &[("expand[]", "line_items")],
        )
        .await,
        "Checkout.Session",
    );
    assert_eq!(expanded["line_items"]["data"][0]["amount_total"], 2400);

    // The customer pays on the page.
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let url = session["url"].as_str().unwrap();
    let html = http.get(url).send().await.unwrap().text().await.unwrap();
    let at = html.find("name=\"token\" value=\"").unwrap() + 20;
    let token = &html[at..at + html[at..].find('"').unwrap()];
    let paid = http
        .post(url)
        .form(&[
            ("token", token),
            ("card_number", "4242424242424242"),
            ("card_expiry", "01/40"),
            ("card_cvc", "314"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(paid.status().as_u16(), 303);
    assert_eq!(
        paid.headers()["location"],
        format!("https://shop.example/ok?cs={id}").as_str()
    );
    let done = ok(
        &get(
            &app,
            &format!("/checkout/sessions/{id}"),
            &[("expand[]", "payment_intent")],
        )
        .await,
        "Checkout.Session",
    );
    assert_eq!(done["status"], "complete");
    assert_eq!(done["payment_status"], "paid");
    assert_eq!(done["customer_details"]["email"], "jo@example.com");
    let intent = &done["payment_intent"];
    assert!(intent["id"].as_str().unwrap().starts_with("pi_"));
    assert_eq!(intent["status"], "succeeded");
    assert_eq!(intent["amount"], 2400);

    // A shop finds the session by its PaymentIntent, and hears of it once.
    let found = get(
        &app,
        "/checkout/sessions",
        &[("payment_intent", intent["id"].as_str().unwrap())],
    )
    .await;
    assert_eq!(found.body["data"].as_array().unwrap().len(), 1);
    let events = get(&app, "/events", &[("type", "checkout.session.completed")]).await;
    let events = events.body["data"].as_array().unwrap().clone();
    assert_eq!(events.len(), 1);
    assert_shape("Event", &events[0]);
    assert_shape("Checkout.Session", &events[0]["data"]["object"]);
    assert_eq!(events[0]["data"]["object"]["id"], id.as_str());
}

#[tokio::test]
async fn a_v1_session_expires_and_refuses_what_tender_does_not_do() {
    let Some(app) = spawn_app().await else { return };
    let price = one_time_price(&app).await;
    let base = [
        ("mode", "payment"),
        ("line_items[0][price]", price.as_str()),
        ("success_url", "https://shop.example/ok"),
    ];
    let session = ok(
        &post(&app, "/checkout/sessions", &base).await,
        "Checkout.Session",
    );
    let id = session["id"].as_str().unwrap();
    let expired = ok(
        &post(&app, &format!("/checkout/sessions/{id}/expire"), &[]).await,
        "Checkout.Session",
    );
    assert_eq!(expired["status"], "expired");
    assert_eq!(expired["url"], Value::Null);
    for (extra, param) in [
        (("ui_mode", "embedded"), "ui_mode"),
        (
            ("payment_method_types[0]", "sepa_debit"),
            "payment_method_types",
        ),
        (("locale", "fr"), "locale"),
    ] {
        let mut params = base.to_vec();
        params.push(extra);
        let r = post(&app, "/checkout/sessions", &params).await;
        assert_eq!(r.status, 400, "{}", r.body);
        assert_eq!(r.error_param(), param);
        assert_shape("StripeRawError", &r.body["error"]);
    }
    let missing = get(&app, "/checkout/sessions/cs_000000000000000000000000", &[]).await;
    assert_eq!(missing.status, 404);
}
