//! Cards kept by a connector's processor (CONTRACT §15): behind a connector that takes no card
//! details, a card tokenised at the processor (Stripe.js) is kept there for a customer — a
//! Stripe Customer and an attached PaymentMethod — and a subscription's invoices are charged
//! with it off-session, at that connector only. Against localstripe.

use serde_json::{json, Value};

use crate::connectors::{processor_token, setup, stripe_connector};
use crate::helpers::TestApp;

/// A monthly price of `amount`.
async fn monthly(app: &TestApp, amount: i64) -> String {
    let product = app
        .post("/v2/products", app.sk(), json!({"name": "Pro plan"}))
        .await
        .id();
    app.post(
        "/v2/prices",
        app.sk(),
        json!({"product": product, "currency": "usd", "unit_amount": amount,
               "recurring": {"interval": "month"}}),
    )
    .await
    .id()
}

async fn keep(app: &TestApp, key: &str, token: &str, customer: &str) -> crate::helpers::Answer {
    app.post(
        "/v2/payment_methods",
        key,
        json!({"type": "connector_token", "connector_token": token, "customer": customer}),
    )
    .await
}

#[tokio::test]
async fn a_card_the_processor_keeps_pays_a_subscriptions_invoices_off_session() {
    let Some((app, stripe)) = setup().await else {
        return;
    };
    let conn = stripe_connector(&app, &stripe.base, 0, false).await;
    let customer = app
        .post(
            "/v2/customers",
            app.sk(),
            json!({"email": "saas@example.com"}),
        )
        .await
        .id();
    // The browser tokenised the card at Stripe; the shop's server keeps it for the customer.
    let token = processor_token(&stripe).await;
    let kept = keep(&app, app.sk(), &token, &customer).await;
    assert_eq!(kept.status, 200, "{}", kept.body);
    assert_eq!(kept.body["type"], "card");
    assert_eq!(kept.body["connector"], conn.as_str());
    assert_eq!(kept.body["customer"], customer.as_str());
    assert_eq!(kept.body["card"]["last4"], "4242");
    assert_eq!(kept.body["card"]["brand"], "visa");
    assert_eq!(kept.body["card"]["exp_year"], 2034);
    // At Stripe: the PaymentMethod attached to a Customer that names Tender's.
    let pm = stripe.get(&format!("/v1/payment_methods/{token}")).await;
    let stripe_customer = pm["customer"].as_str().expect("attached").to_string();
    let at_stripe = stripe
        .get(&format!("/v1/customers/{stripe_customer}"))
        .await;
    assert_eq!(at_stripe["metadata"]["tender_customer"], customer.as_str());
    // A second card of the customer joins the same Stripe Customer.
    let second = processor_token(&stripe).await;
    assert_eq!(keep(&app, app.sk(), &second, &customer).await.status, 200);
    let pm = stripe.get(&format!("/v1/payment_methods/{second}")).await;
    assert_eq!(pm["customer"], stripe_customer.as_str());
    // The subscription's first invoice is charged with it, at Stripe, as that Customer.
    let price = monthly(&app, 1500).await;
    let sub = app
        .post(
            "/v2/subscriptions",
            app.sk(),
            json!({"customer": customer, "items": [{"price": price}],
                   "default_payment_method": kept.id()}),
        )
        .await;
    assert_eq!(sub.status, 200, "{}", sub.body);
    assert_eq!(sub.body["status"], "active", "{}", sub.body);
    let invoices = app
        .get(&format!("/v2/invoices?subscription={}", sub.id()), app.sk())
        .await;
    let invoice = &invoices.body["data"][0];
    assert_eq!(invoice["status"], "paid", "{invoice}");
    let payment = app
        .get(
            &format!("/v2/payments/{}", invoice["payment"].as_str().unwrap()),
            app.sk(),
        )
        .await;
    assert_eq!(payment.body["connector"], conn.as_str(), "{}", payment.body);
    assert_eq!(payment.body["payment_method"]["id"], kept.id().as_str());
    let pi = stripe
        .get(&format!(
            "/v1/payment_intents/{}",
            payment.body["connector_reference"].as_str().unwrap()
        ))
        .await;
    assert_eq!(pi["status"], "succeeded");
    assert_eq!(pi["amount"], 1500);
    assert_eq!(pi["customer"], stripe_customer.as_str());
    assert_eq!(pi["payment_method"], token.as_str());
    assert!(
        stripe.off_session(pi["id"].as_str().unwrap()),
        "charged without the customer"
    );
    // A month on, the renewal is charged the same way (its first try comes a little later).
    for days in [31, 3] {
        app.clock.advance(days * 86_400);
        app.services.run_due_tasks(100).await.unwrap();
    }
    let invoices = app
        .get(&format!("/v2/invoices?subscription={}", sub.id()), app.sk())
        .await;
    let paid: Vec<&Value> = invoices.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["status"] == "paid")
        .collect();
    assert_eq!(paid.len(), 2, "{}", invoices.body);
    assert!(app.ledger_problems().await.is_empty());
}

#[tokio::test]
async fn keeping_a_processors_card_is_refused_clearly_when_it_cannot_be() {
    let Some((app, stripe)) = setup().await else {
        return;
    };
    let customer = app
        .post("/v2/customers", app.sk(), json!({"email": "k@example.com"}))
        .await
        .id();
    let token = processor_token(&stripe).await;
    // No connector to a processor: nothing could keep it.
    let none = keep(&app, app.sk(), &token, &customer).await;
    assert_eq!(none.status, 400, "{}", none.body);
    assert_eq!(none.body["error"]["param"], "connector_token");
    stripe_connector(&app, &stripe.base, 0, false).await;
    // A browser's publishable key may not keep cards for customers.
    let browser = keep(&app, app.pk(), &token, &customer).await;
    assert_eq!(browser.status, 400, "{}", browser.body);
    // A token that is no Stripe id never becomes a request elsewhere at Stripe.
    let steering = keep(&app, app.sk(), "pm_x/../../customers", &customer).await;
    assert_eq!(steering.status, 400, "{}", steering.body);
    assert_eq!(steering.body["error"]["code"], "connector_token_unusable");
    // A token Stripe does not know: the processor's refusal, said.
    let unknown = keep(&app, app.sk(), "pm_unknown", &customer).await;
    assert_eq!(unknown.status, 400, "{}", unknown.body);
    assert_eq!(unknown.body["error"]["code"], "connector_token_unusable");
    let listed = app
        .get(
            &format!("/v2/payment_methods?customer={customer}"),
            app.sk(),
        )
        .await;
    assert_eq!(listed.body["data"], json!([]), "nothing kept");
    // An unknown customer.
    let nobody = keep(&app, app.sk(), &token, "cus_nobody000000000000000000").await;
    assert_eq!(nobody.status, 400, "{}", nobody.body);
}
