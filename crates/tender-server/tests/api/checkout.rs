//! Checkout Sessions (CONTRACT §14) driven as a shop and its customer would: the shop creates a
//! session through the API, the customer's browser (here plain HTTP, no JavaScript) opens its
//! page on the receipt host and posts the form. A decline shows the reason and takes another
//! card; a form sent twice charges once; the third decline ends the tries; the session
//! completes once, with its event once.

use serde_json::{json, Value};

use crate::billing::created;
use crate::helpers::*;

const GOOD: &str = "4242 4242 4242 4242";
const DECLINES: &str = "4000000000000002";
const THREE_DS: &str = "4000002500003155";

fn browser() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

pub(crate) fn token_of(html: &str) -> String {
    let at = html.find("name=\"token\" value=\"").expect("a form token") + 20;
    html[at..at + html[at..].find('"').unwrap()].to_string()
}

/// A payment-mode session for two lines (15.00 × 2 and 2.50), made with `price_data`.
pub(crate) async fn payment_session(app: &TestApp, extra: Value) -> Value {
    let mut body = json!({
        "mode": "payment",
        "success_url": "https://shop.example/thanks?session={CHECKOUT_SESSION_ID}",
        "cancel_url": "https://shop.example/cart",
        "line_items": [
            {"price_data": {"currency": "usd", "unit_amount": 1500, "product_data": {"name": "Tea towel"}}, "quantity": 2},
            {"price_data": {"currency": "usd", "unit_amount": 250, "product_data": {"name": "Postcard"}}},
        ],
    });
    for (k, v) in extra.as_object().unwrap() {
        body[k] = v.clone();
    }
    created(app, "/v2/checkout_sessions", body).await
}

/// The page at `url`: its status, its HTML.
pub(crate) async fn open(http: &reqwest::Client, url: &str) -> (u16, String) {
    let r = http.get(url).send().await.unwrap();
    (r.status().as_u16(), r.text().await.unwrap())
}

/// Posts the page's form as a browser without JavaScript does.
pub(crate) async fn submit(
    http: &reqwest::Client,
    url: &str,
    token: &str,
    email: &str,
    number: &str,
) -> reqwest::Response {
    http.post(url)
        .form(&[
            ("token", token),
            ("email", email),
            ("card_number", number),
            ("card_expiry", "12 / 34"),
            ("card_cvc", "123"),
        ])
        .send()
        .await
        .unwrap()
}

pub(crate) async fn events_of(app: &TestApp, kind: &str) -> Vec<Value> {
    let r = app
        .get(&format!("/v2/events?type={kind}&limit=100"), app.sk())
        .await;
    r.body["data"].as_array().unwrap().clone()
}

#[tokio::test]
async fn a_customer_pays_on_the_hosted_page_after_a_decline_and_the_session_completes_once() {
    let Some(app) = spawn_app().await else { return };
    let session = payment_session(&app, json!({"client_reference_id": "order-7"})).await;
    let id = session["id"].as_str().unwrap().to_string();
    assert_eq!(session["status"], "open");
    assert_eq!(session["amount_total"], 3250);
    let url = session["url"].as_str().unwrap().to_string();
    assert_eq!(url, format!("{}/checkout/{id}", app.receipt_base));
    let lines = app
        .get(&format!("/v2/checkout_sessions/{id}/line_items"), app.sk())
        .await;
    assert_eq!(lines.body["data"].as_array().unwrap().len(), 2);
    assert_eq!(lines.body["data"][0]["description"], "Tea towel");
    assert_eq!(lines.body["data"][0]["amount_total"], 3000);

    let http = browser();
    let (status, html) = open(&http, &url).await;
    assert_eq!(status, 200);
    for shown in [
        "Tea towel",
        "Postcard",
        "32.50 USD",
        "Pay 32.50 USD",
        "TEST MODE",
    ] {
        assert!(html.contains(shown), "the page shows {shown}");
    }

    // Declined: the bank's reason on the page, the number nowhere in it, another try possible.
    let declined = submit(&http, &url, &token_of(&html), "ada@example.com", DECLINES).await;
    assert_eq!(declined.status().as_u16(), 402);
    let html = declined.text().await.unwrap();
    assert!(html.contains("Your card was declined."), "{html}");
    assert!(!html.contains(DECLINES) && !html.contains("0000 0002"));
    assert!(html.contains("ada@example.com"), "the e-mail typed stays");

    // Another card, on the page's fresh token: paid, and on to the shop with the session id.
    let token = token_of(&html);
    let paid = submit(&http, &url, &token, "ada@example.com", GOOD).await;
    assert_eq!(paid.status().as_u16(), 303);
    assert_eq!(
        paid.headers()["location"],
        format!("https://shop.example/thanks?session={id}").as_str()
    );
    // The same form again (a double press, a replay): the same answer, no second charge.
    let again = submit(&http, &url, &token, "ada@example.com", GOOD).await;
    assert_eq!(again.status().as_u16(), 303);

    let done = app
        .get(&format!("/v2/checkout_sessions/{id}"), app.sk())
        .await;
    assert_eq!(done.body["status"], "complete");
    assert_eq!(done.body["payment_status"], "paid");
    assert_eq!(done.body["url"], Value::Null);
    assert_eq!(done.body["declined_attempts"], 1);
    let payment = done.body["payment_intent"].as_str().unwrap();
    let customer = done.body["customer"].as_str().unwrap();
    let p = app.get(&format!("/v2/payments/{payment}"), app.sk()).await;
    assert_eq!(p.body["status"], "succeeded");
    assert_eq!(p.body["amount"], 3250);
    assert_eq!(p.body["customer"], customer);
    let c = app
        .get(&format!("/v2/customers/{customer}"), app.sk())
        .await;
    assert_eq!(c.body["email"], "ada@example.com");
    let charged = app
        .get(&format!("/v2/payments?customer={customer}"), app.sk())
        .await;
    let succeeded = charged.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["status"] == "succeeded")
        .count();
    assert_eq!(succeeded, 1, "one charge, however often the form came");

    let completed = events_of(&app, "checkout_session.completed").await;
    assert_eq!(completed.len(), 1);
    assert_eq!(completed[0]["data"]["object"]["id"], id.as_str());
    assert_eq!(
        completed[0]["data"]["object"]["client_reference_id"],
        "order-7"
    );
    // The page of a complete session sends the customer on.
    let (status, _) = open(&http, &url).await;
    assert_eq!(status, 303);
}

#[tokio::test]
async fn the_third_decline_ends_the_sessions_tries_and_a_forged_form_is_refused() {
    let Some(app) = spawn_app().await else { return };
    let session = payment_session(&app, json!({"customer_email": "eve@example.com"})).await;
    let url = session["url"].as_str().unwrap().to_string();
    let http = browser();
    let (_, html) = open(&http, &url).await;
    assert!(html.contains("eve@example.com") && !html.contains("name=\"email\""));
    // No token, or another site's form: nothing tried.
    let bare = http
        .post(&url)
        .form(&[("card_number", GOOD)])
        .send()
        .await
        .unwrap();
    assert_eq!(bare.status().as_u16(), 400);
    let cross = http
        .post(&url)
        .header("Origin", "https://evil.example")
        .form(&[("token", token_of(&html).as_str()), ("card_number", GOOD)])
        .send()
        .await
        .unwrap();
    assert_eq!(cross.status().as_u16(), 403);

    let mut html = html;
    for _ in 0..3 {
        let r = submit(&http, &url, &token_of(&html), "", DECLINES).await;
        assert_eq!(r.status().as_u16(), 402);
        html = r.text().await.unwrap();
    }
    // The page takes no more cards.
    assert!(
        !html.contains("name=\"card_number\""),
        "no form after the limit"
    );
    assert!(html.contains("Too many declined cards"));
    let (_, page) = open(&http, &url).await;
    assert!(!page.contains("name=\"card_number\""));
    let id = session["id"].as_str().unwrap();
    let s = app
        .get(&format!("/v2/checkout_sessions/{id}"), app.sk())
        .await;
    assert_eq!(s.body["status"], "open");
    assert_eq!(s.body["declined_attempts"], 3);
    let payment = s.body["payment_intent"].as_str().unwrap();
    let p = app.get(&format!("/v2/payments/{payment}"), app.sk()).await;
    assert_eq!(p.body["status"], "failed");
}

#[tokio::test]
async fn three_d_secure_on_the_hosted_page_returns_to_it_and_completes_the_session() {
    let Some(app) = spawn_app().await else { return };
    let session = payment_session(&app, json!({})).await;
    let url = session["url"].as_str().unwrap().to_string();
    let http = browser();
    let (_, html) = open(&http, &url).await;
    let r = submit(&http, &url, &token_of(&html), "kim@example.com", THREE_DS).await;
    assert_eq!(r.status().as_u16(), 303);
    let auth = r.headers()["location"].to_str().unwrap().to_string();
    assert!(
        auth.starts_with(&format!("{}/authenticate/", app.receipt_base)),
        "{auth}"
    );
    let done = http
        .post(&auth)
        .form(&[("outcome", "complete")])
        .send()
        .await
        .unwrap();
    assert_eq!(done.status().as_u16(), 303);
    let back = done.headers()["location"].to_str().unwrap().to_string();
    assert!(back.starts_with(&url), "{back}");
    let (status, _) = open(&http, &back).await;
    assert_eq!(status, 303, "the page, paid, sends the customer on");
    let id = session["id"].as_str().unwrap();
    let s = app
        .get(&format!("/v2/checkout_sessions/{id}"), app.sk())
        .await;
    assert_eq!(s.body["status"], "complete");
    assert_eq!(s.body["payment_status"], "paid");
    assert_eq!(events_of(&app, "checkout_session.completed").await.len(), 1);
}

#[tokio::test]
async fn subscription_and_setup_sessions_start_a_subscription_and_save_a_card() {
    let Some(app) = spawn_app().await else { return };
    let http = browser();
    let sub_session = created(
        &app,
        "/v2/checkout_sessions",
        json!({
            "mode": "subscription",
            "success_url": "https://shop.example/welcome",
            "subscription_data": {"trial_period_days": 14},
            "line_items": [{"price_data": {"currency": "eur", "unit_amount": 900,
                "product_data": {"name": "Pro plan"}, "recurring": {"interval": "month"}}}],
        }),
    )
    .await;
    let url = sub_session["url"].as_str().unwrap();
    let (_, html) = open(&http, url).await;
    assert!(
        html.contains("Pro plan") && html.contains("14 days free") && html.contains("Subscribe")
    );
    let r = submit(&http, url, &token_of(&html), "sam@example.com", GOOD).await;
    assert_eq!(r.status().as_u16(), 303);
    let id = sub_session["id"].as_str().unwrap();
    let s = app
        .get(&format!("/v2/checkout_sessions/{id}"), app.sk())
        .await;
    assert_eq!(s.body["status"], "complete");
    assert_eq!(s.body["payment_status"], "no_payment_required");
    let sub = s.body["subscription"].as_str().unwrap();
    let sub = app.get(&format!("/v2/subscriptions/{sub}"), app.sk()).await;
    assert_eq!(sub.body["status"], "trialing");
    assert_eq!(sub.body["customer"], s.body["customer"]);
    assert!(sub.body["default_payment_method"].is_string());

    // Setup mode: a declined card first, then one saved to the shop's own customer.
    let cus = created(&app, "/v2/customers", json!({"email": "lee@example.com"})).await;
    let setup = created(
        &app,
        "/v2/checkout_sessions",
        json!({"mode": "setup", "customer": cus["id"], "success_url": "https://shop.example/saved"}),
    )
    .await;
    let url = setup["url"].as_str().unwrap();
    let (_, html) = open(&http, url).await;
    assert!(html.contains("Save card") && !html.contains("name=\"email\""));
    let r = submit(&http, url, &token_of(&html), "", DECLINES).await;
    assert_eq!(r.status().as_u16(), 402);
    let html = r.text().await.unwrap();
    let r = submit(&http, url, &token_of(&html), "", GOOD).await;
    assert_eq!(r.status().as_u16(), 303);
    let id = setup["id"].as_str().unwrap();
    let s = app
        .get(&format!("/v2/checkout_sessions/{id}"), app.sk())
        .await;
    assert_eq!(s.body["status"], "complete");
    assert_eq!(s.body["payment_status"], "no_payment_required");
    assert_eq!(s.body["customer"], cus["id"]);
    let seti = s.body["setup_intent"].as_str().unwrap();
    let seti = app
        .get(&format!("/v2/setup_intents/{seti}"), app.sk())
        .await;
    assert_eq!(seti.body["status"], "succeeded");
    let pms = app
        .get(
            &format!(
                "/v2/payment_methods?customer={}",
                cus["id"].as_str().unwrap()
            ),
            app.sk(),
        )
        .await;
    assert_eq!(pms.body["data"].as_array().map(Vec::len), Some(1));
}

#[tokio::test]
async fn a_session_expires_by_the_shop_or_by_its_time_and_then_takes_nothing() {
    let Some(app) = spawn_stepped_app().await else {
        return;
    };
    let session = payment_session(&app, json!({})).await;
    let id = session["id"].as_str().unwrap();
    let expired = app
        .post(
            &format!("/v2/checkout_sessions/{id}/expire"),
            app.sk(),
            json!({}),
        )
        .await;
    assert_eq!(expired.status, 200, "{}", expired.body);
    assert_eq!(expired.body["status"], "expired");
    assert_eq!(expired.body["url"], Value::Null);
    let again = app
        .post(
            &format!("/v2/checkout_sessions/{id}/expire"),
            app.sk(),
            json!({}),
        )
        .await;
    assert_eq!(again.status, 400);
    assert_eq!(again.error_code(), "checkout_session_unexpected_state");
    let http = browser();
    let (status, _) = open(&http, session["url"].as_str().unwrap()).await;
    assert_eq!(status, 410);

    // Left alone: at its expires_at (24 h on), its task expires it.
    let other = payment_session(&app, json!({})).await;
    let other_id = other["id"].as_str().unwrap();
    assert_eq!(
        other["expires_at"].as_i64().unwrap() - other["created"].as_i64().unwrap(),
        86_400
    );
    app.clock.advance(86_400);
    app.run_due_tasks().await;
    let s = app
        .get(&format!("/v2/checkout_sessions/{other_id}"), app.sk())
        .await;
    assert_eq!(s.body["status"], "expired");
    assert_eq!(events_of(&app, "checkout_session.expired").await.len(), 2);
    let list = app
        .get("/v2/checkout_sessions?status=expired", app.sk())
        .await;
    assert_eq!(list.body["data"].as_array().unwrap().len(), 2);
    let bad = app.get("/v2/checkout_sessions?status=gone", app.sk()).await;
    assert_eq!((bad.status.as_u16(), bad.error_param()), (400, "status"));
}

#[tokio::test]
async fn a_session_refuses_items_its_mode_cannot_take() {
    let Some(app) = spawn_app().await else { return };
    let monthly = json!({"currency": "usd", "unit_amount": 900,
        "product_data": {"name": "Plan"}, "recurring": {"interval": "month"}});
    for (body, param) in [
        (
            json!({"mode": "payment", "success_url": "https://s.example/ok",
                   "line_items": [{"price_data": monthly}]}),
            "line_items[0]",
        ),
        (
            json!({"mode": "payment", "success_url": "not a url",
                   "line_items": [{"price_data": {"currency": "usd", "unit_amount": 100, "product_data": {"name": "A"}}}]}),
            "success_url",
        ),
        (
            json!({"mode": "setup", "success_url": "https://s.example/ok",
                   "subscription_data": {"trial_period_days": 3}}),
            "subscription_data[trial_period_days]",
        ),
        (
            json!({"mode": "payment", "success_url": "https://s.example/ok", "line_items": []}),
            "line_items",
        ),
        (
            json!({"mode": "rent", "success_url": "https://s.example/ok"}),
            "mode",
        ),
    ] {
        let r = app.post("/v2/checkout_sessions", app.sk(), body).await;
        assert_eq!(r.status, 400, "{}", r.body);
        assert_eq!(r.error_param(), param, "{}", r.body);
    }
    // Nothing was made for a refused session.
    let prices = app.get("/v2/prices", app.sk()).await;
    assert_eq!(prices.body["data"].as_array().unwrap().len(), 0);
}

#[tokio::test]
async fn two_forms_sent_at_once_from_two_tabs_start_one_subscription() {
    let Some(app) = spawn_app().await else { return };
    let session = created(
        &app,
        "/v2/checkout_sessions",
        json!({
            "mode": "subscription",
            "success_url": "https://shop.example/welcome",
            "customer_email": "twice@example.com",
            "line_items": [{"price_data": {"currency": "usd", "unit_amount": 2500,
                "product_data": {"name": "Studio plan"}, "recurring": {"interval": "month"}}}],
        }),
    )
    .await;
    let url = session["url"].as_str().unwrap().to_string();
    let http = browser();
    // Two tabs, each with its own page and token, sent together.
    let (_, first) = open(&http, &url).await;
    let (_, second) = open(&http, &url).await;
    let sends: Vec<_> = [token_of(&first), token_of(&second)]
        .into_iter()
        .map(|token| {
            let (http, url) = (http.clone(), url.clone());
            tokio::spawn(async move {
                submit(&http, &url, &token, "", GOOD)
                    .await
                    .status()
                    .as_u16()
            })
        })
        .collect();
    let mut statuses = Vec::new();
    for send in sends {
        statuses.push(send.await.unwrap());
    }
    statuses.sort_unstable();
    // Each is the shop's page (paid) or "in progress" (the other tab holds the session).
    assert!(
        statuses == [303, 303] || statuses == [303, 409],
        "{statuses:?}"
    );
    let subs = app.get("/v2/subscriptions?limit=100", app.sk()).await;
    assert_eq!(
        subs.body["data"].as_array().unwrap().len(),
        1,
        "one subscription"
    );
    let paid = app.get("/v2/payments?limit=100", app.sk()).await;
    let succeeded = paid.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["status"] == "succeeded")
        .count();
    assert_eq!(succeeded, 1, "charged once");
    let id = session["id"].as_str().unwrap();
    let s = app
        .get(&format!("/v2/checkout_sessions/{id}"), app.sk())
        .await;
    assert_eq!(s.body["status"], "complete");
    assert!(s.body.get("trying_until").is_none(), "let go: {}", s.body);
    assert_eq!(events_of(&app, "checkout_session.completed").await.len(), 1);
}

#[tokio::test]
async fn the_hosted_invoice_page_takes_a_new_card_through_the_same_fields() {
    let Some(app) = spawn_app().await else { return };
    let cus = created(&app, "/v2/customers", json!({"email": "inv@example.com"})).await;
    let cus = cus["id"].as_str().unwrap().to_string();
    crate::billing::save_card(&app, &cus, "4000000000000341").await;
    let prod = created(&app, "/v2/products", json!({"name": "Plan"})).await;
    let price = created(
        &app,
        "/v2/prices",
        json!({"product": prod["id"], "currency": "usd", "unit_amount": 2000,
               "recurring": {"interval": "month"}}),
    )
    .await;
    let sub = created(
        &app,
        "/v2/subscriptions",
        json!({"customer": cus, "items": [{"price": price["id"]}]}),
    )
    .await;
    assert_eq!(sub["status"], "incomplete", "the card on file declined");
    let invoice = sub["latest_invoice"].as_str().unwrap();
    let url = format!("{}/invoices/{invoice}", app.receipt_base);
    let http = browser();
    let (_, html) = open(&http, &url).await;
    assert!(html.contains("Or pay with another card") && html.contains("name=\"card_number\""));

    let new_card = |token: String, number: &'static str| {
        let (http, url) = (http.clone(), url.clone());
        async move {
            http.post(format!("{url}/pay"))
                .form(&[
                    ("token", token.as_str()),
                    ("card_number", number),
                    ("card_expiry", "12 / 34"),
                    ("card_cvc", "123"),
                ])
                .send()
                .await
                .unwrap()
        }
    };
    // A new card that declines: the reason, the number nowhere, the invoice still open.
    let r = new_card(token_of(&html), DECLINES).await;
    assert_eq!(r.status().as_u16(), 402);
    let html = r.text().await.unwrap();
    assert!(html.contains("Your card was declined"), "{html}");
    assert!(!html.contains(DECLINES));
    let inv = app.get(&format!("/v2/invoices/{invoice}"), app.sk()).await;
    assert_eq!(inv.body["status"], "open");

    // One that pays: the invoice paid with it, the card saved to the customer.
    let r = new_card(token_of(&html), GOOD).await;
    assert_eq!(r.status().as_u16(), 303);
    let inv = app.get(&format!("/v2/invoices/{invoice}"), app.sk()).await;
    assert_eq!(inv.body["status"], "paid");
    let paid_by = inv.body["payment"].as_str().unwrap();
    let p = app.get(&format!("/v2/payments/{paid_by}"), app.sk()).await;
    assert_eq!(p.body["payment_method"]["card"]["last4"], "4242");
    let s = app
        .get(
            &format!("/v2/subscriptions/{}", sub["id"].as_str().unwrap()),
            app.sk(),
        )
        .await;
    assert_eq!(s.body["status"], "active");
    let cards = app
        .get(&format!("/v2/payment_methods?customer={cus}"), app.sk())
        .await;
    let last4: Vec<_> = cards.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|pm| pm["card"]["last4"].as_str().unwrap().to_string())
        .collect();
    assert!(last4.contains(&"4242".to_string()), "{last4:?}");
}

#[tokio::test]
async fn an_expired_sessions_unpaid_payment_is_canceled_and_one_in_three_d_secure_holds_it_open() {
    let Some(app) = spawn_app().await else { return };
    let http = browser();
    // Declined once, then expired by the shop: its payment, never authorised, is canceled.
    let session = payment_session(&app, json!({})).await;
    let url = session["url"].as_str().unwrap();
    let (_, html) = open(&http, url).await;
    let r = submit(&http, url, &token_of(&html), "ida@example.com", DECLINES).await;
    assert_eq!(r.status().as_u16(), 402);
    let id = session["id"].as_str().unwrap();
    let expired = app
        .post(
            &format!("/v2/checkout_sessions/{id}/expire"),
            app.sk(),
            json!({}),
        )
        .await;
    assert_eq!(expired.body["status"], "expired");
    let payment = expired.body["payment_intent"].as_str().unwrap();
    let p = app.get(&format!("/v2/payments/{payment}"), app.sk()).await;
    assert_eq!(p.body["status"], "canceled");
    assert_eq!(p.body["cancellation_reason"], "abandoned");

    // Waiting on the customer's bank: the shop cannot expire it under the customer.
    let session = payment_session(&app, json!({})).await;
    let url = session["url"].as_str().unwrap();
    let (_, html) = open(&http, url).await;
    let r = submit(&http, url, &token_of(&html), "joe@example.com", THREE_DS).await;
    assert_eq!(r.status().as_u16(), 303);
    let id = session["id"].as_str().unwrap();
    let refused = app
        .post(
            &format!("/v2/checkout_sessions/{id}/expire"),
            app.sk(),
            json!({}),
        )
        .await;
    assert_eq!(refused.status, 400, "{}", refused.body);
    assert_eq!(refused.error_code(), "checkout_session_unexpected_state");
    let s = app
        .get(&format!("/v2/checkout_sessions/{id}"), app.sk())
        .await;
    assert_eq!(s.body["status"], "open");
}

/// A browser on client address `ip` (a loopback address of its own).
pub(crate) fn browser_at(ip: &str) -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .local_address(ip.parse::<std::net::IpAddr>().unwrap())
        .build()
        .unwrap()
}

#[tokio::test]
async fn card_testing_is_stopped_per_address_and_per_card_after_ten_declines_an_hour() {
    let Some(app) = spawn_app().await else { return };
    let tester = browser_at("127.0.0.1");
    // Ten declines of one card from one address, over four sessions (three each at most).
    let mut declines = 0;
    while declines < 10 {
        let session = payment_session(&app, json!({})).await;
        let url = session["url"].as_str().unwrap().to_string();
        let (_, mut html) = open(&tester, &url).await;
        for _ in 0..3 {
            if declines == 10 {
                break;
            }
            let r = submit(&tester, &url, &token_of(&html), "t@example.com", DECLINES).await;
            assert_eq!(r.status().as_u16(), 402);
            html = r.text().await.unwrap();
            declines += 1;
        }
    }
    // Declines as the sessions counted them (a session's retries confirm its one payment).
    let declined = |app: &TestApp| {
        let (base, key, client) = (app.base.clone(), app.sk().to_string(), app.client.clone());
        async move {
            let list: Value = client
                .get(format!("{base}/v2/checkout_sessions?limit=100"))
                .bearer_auth(key)
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            list["data"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s["declined_attempts"].as_i64().unwrap())
                .sum::<i64>()
        }
    };
    assert_eq!(declined(&app).await, 10);

    // The address is stopped, whatever the card: the page's 429, nothing sent to the bank.
    let session = payment_session(&app, json!({})).await;
    let url = session["url"].as_str().unwrap().to_string();
    let (_, html) = open(&tester, &url).await;
    let r = submit(&tester, &url, &token_of(&html), "t@example.com", GOOD).await;
    assert_eq!(r.status().as_u16(), 429);
    assert!(r.text().await.unwrap().contains("Too many declined cards"));
    let s = app
        .get(
            &format!("/v2/checkout_sessions/{}", session["id"].as_str().unwrap()),
            app.sk(),
        )
        .await;
    assert_eq!(
        s.body["payment_intent"],
        Value::Null,
        "no payment was even made"
    );

    // The card is stopped from another address too; another card from there pays.
    let elsewhere = browser_at("127.0.0.2");
    let (_, html) = open(&elsewhere, &url).await;
    let r = submit(
        &elsewhere,
        &url,
        &token_of(&html),
        "u@example.com",
        DECLINES,
    )
    .await;
    assert_eq!(r.status().as_u16(), 429);
    let html = r.text().await.unwrap();
    let r = submit(&elsewhere, &url, &token_of(&html), "u@example.com", GOOD).await;
    assert_eq!(r.status().as_u16(), 303);
    assert_eq!(declined(&app).await, 10, "no decline past the limits");

    // Each block told once: the three sessions that took three declines, then the address and
    // the card at their tenth.
    let blocks: Vec<Value> = events_of(&app, "risk.blocked")
        .await
        .into_iter()
        .map(|e| e["data"]["object"].clone())
        .collect();
    let reasons = |r: &str| blocks.iter().filter(|b| b["reason"] == r).count();
    assert_eq!(reasons("declines_per_session"), 3, "{blocks:?}");
    assert_eq!(reasons("declines_per_address"), 1, "{blocks:?}");
    assert_eq!(reasons("declines_per_card"), 1, "{blocks:?}");
    let by_address = blocks
        .iter()
        .find(|b| b["reason"] == "declines_per_address")
        .unwrap();
    assert_eq!(by_address["client_address"], "127.0.0.1");
    assert_eq!(by_address["surface"], "checkout_page");
    assert_eq!(by_address["limit"], 10);
    assert!(
        by_address["blocked_until"].as_i64().unwrap() > by_address["created"].as_i64().unwrap()
    );
}
