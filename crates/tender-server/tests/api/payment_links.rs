//! Payment Links (CONTRACT §14): a lasting address; each visit opens a fresh Checkout Session
//! for the link's lines, paid on the hosted page and followed by the link's `after_completion`.
//! Through `/v2` and through `/v1` (Stripe's `payment_link`, checked against its shape).

use serde_json::{json, Value};

use crate::billing::created;
use crate::helpers::*;
use crate::stripe::{get, ok, post};

fn browser() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

async fn price(app: &TestApp, amount: i64, recurring: Option<&str>) -> String {
    let prod = created(app, "/v2/products", json!({"name": "Print"})).await;
    let mut body = json!({"product": prod["id"], "currency": "usd", "unit_amount": amount});
    if let Some(interval) = recurring {
        body["recurring"] = json!({"interval": interval});
    }
    created(app, "/v2/prices", body).await["id"]
        .as_str()
        .unwrap()
        .to_string()
}

/// Opens the link's address: the session page it sends the customer to.
async fn visit(http: &reqwest::Client, url: &str) -> (u16, String) {
    let r = http.get(url).send().await.unwrap();
    let status = r.status().as_u16();
    let location = r
        .headers()
        .get("location")
        .map(|l| l.to_str().unwrap().to_string())
        .unwrap_or_default();
    (status, location)
}

async fn pay(http: &reqwest::Client, page: &str) -> (u16, String) {
    let html = http.get(page).send().await.unwrap().text().await.unwrap();
    let at = html.find("name=\"token\" value=\"").unwrap() + 20;
    let token = &html[at..at + html[at..].find('"').unwrap()];
    let r = http
        .post(page)
        .form(&[
            ("token", token),
            ("email", "link@example.com"),
            ("card_number", "4242424242424242"),
            ("card_expiry", "12/34"),
            ("card_cvc", "123"),
        ])
        .send()
        .await
        .unwrap();
    let location = r
        .headers()
        .get("location")
        .map(|l| l.to_str().unwrap().to_string())
        .unwrap_or_default();
    (r.status().as_u16(), location)
}

#[tokio::test]
async fn each_visit_of_a_link_opens_a_fresh_session_and_an_inactive_link_sells_nothing() {
    let Some(app) = spawn_app().await else { return };
    let print = price(&app, 4000, None).await;
    let link = created(
        &app,
        "/v2/payment_links",
        json!({"line_items": [{"price": print, "quantity": 2}],
               "after_completion": {"type": "hosted_confirmation",
                   "hosted_confirmation": {"custom_message": "Your prints ship on Monday."}}}),
    )
    .await;
    assert_eq!(link["mode"], "payment");
    assert_eq!(link["active"], true);
    let url = link["url"].as_str().unwrap().to_string();
    assert_eq!(
        url,
        format!("{}/pay/{}", app.receipt_base, link["id"].as_str().unwrap())
    );

    let http = browser();
    let (status, first) = visit(&http, &url).await;
    assert_eq!(status, 303);
    let (_, second) = visit(&http, &url).await;
    assert!(first.contains("/checkout/cs_") && second.contains("/checkout/cs_"));
    assert_ne!(first, second, "a fresh session on each visit");

    // Paid on the first: Tender's confirmation page, with the link's message.
    let (status, done) = pay(&http, &first).await;
    assert_eq!(status, 303);
    assert!(done.ends_with("/done"), "{done}");
    let page = http.get(&done).send().await.unwrap();
    assert_eq!(page.status().as_u16(), 200);
    let html = page.text().await.unwrap();
    assert!(html.contains("Payment received") && html.contains("Your prints ship on Monday."));
    assert!(html.contains("80.00 USD"));
    let sessions = app
        .get("/v2/checkout_sessions?status=complete", app.sk())
        .await;
    let s = &sessions.body["data"][0];
    assert_eq!(s["payment_link"], link["id"]);
    assert_eq!(s["amount_total"], 8000);

    // Deactivated: its address sells nothing; the open session it made still may be paid.
    let id = link["id"].as_str().unwrap();
    let off = app
        .post(
            &format!("/v2/payment_links/{id}"),
            app.sk(),
            json!({"active": false}),
        )
        .await;
    assert_eq!(off.status, 200, "{}", off.body);
    assert_eq!(off.body["active"], false);
    let gone = http.get(&url).send().await.unwrap();
    assert_eq!(gone.status().as_u16(), 410);
    assert!(gone.text().await.unwrap().contains("no longer available"));
    let (status, _) = pay(&http, &second).await;
    assert_eq!(status, 303);
    let updated = app
        .get("/v2/events?type=payment_link.updated", app.sk())
        .await;
    assert_eq!(
        updated.body["data"][0]["data"]["previous_attributes"]["active"],
        true
    );
    let inactive = app.get("/v2/payment_links?active=false", app.sk()).await;
    assert_eq!(inactive.body["data"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn a_link_of_recurring_prices_subscribes_and_a_link_may_not_mix_them() {
    let Some(app) = spawn_app().await else { return };
    let monthly = price(&app, 1500, Some("month")).await;
    let once = price(&app, 500, None).await;
    let mixed = app
        .post(
            "/v2/payment_links",
            app.sk(),
            json!({"line_items": [{"price": monthly}, {"price": once}]}),
        )
        .await;
    assert_eq!(mixed.status, 400);
    assert_eq!(mixed.error_param(), "line_items[1][price]");
    let no_url = app
        .post(
            "/v2/payment_links",
            app.sk(),
            json!({"line_items": [{"price": monthly}], "after_completion": {"type": "redirect"}}),
        )
        .await;
    assert_eq!(no_url.status, 400);
    assert_eq!(no_url.error_param(), "after_completion[redirect][url]");

    let link = created(
        &app,
        "/v2/payment_links",
        json!({"line_items": [{"price": monthly}],
               "after_completion": {"type": "redirect", "redirect": {"url": "https://club.example/welcome"}}}),
    )
    .await;
    assert_eq!(link["mode"], "subscription");
    let http = browser();
    let (_, page) = visit(&http, link["url"].as_str().unwrap()).await;
    let (status, location) = pay(&http, &page).await;
    assert_eq!(
        (status, location.as_str()),
        (303, "https://club.example/welcome")
    );
    let subs = app.get("/v2/subscriptions", app.sk()).await;
    assert_eq!(subs.body["data"][0]["status"], "active");
}

#[tokio::test]
async fn a_v1_payment_link_is_stripe_shaped() {
    let Some(app) = spawn_app().await else { return };
    let print = price(&app, 1200, None).await;
    let link = ok(
        &post(
            &app,
            "/payment_links",
            &[
                ("line_items[0][price]", print.as_str()),
                ("line_items[0][quantity]", "3"),
                ("after_completion[type]", "redirect"),
                (
                    "after_completion[redirect][url]",
                    "https://shop.example/thanks",
                ),
                ("metadata[campaign]", "spring"),
            ],
        )
        .await,
        "PaymentLink",
    );
    let id = link["id"].as_str().unwrap();
    assert!(id.starts_with("plink_"));
    assert_eq!(
        link["after_completion"]["redirect"]["url"],
        "https://shop.example/thanks"
    );
    let lines = get(&app, &format!("/payment_links/{id}/line_items"), &[]).await;
    assert_eq!(lines.status, 200, "{}", lines.body);
    crate::stripe_shapes::assert_shape("LineItem", &lines.body["data"][0]);
    assert_eq!(lines.body["data"][0]["quantity"], 3);
    let off = ok(
        &post(
            &app,
            &format!("/payment_links/{id}"),
            &[("active", "false")],
        )
        .await,
        "PaymentLink",
    );
    assert_eq!(off["active"], false);
    let listed = get(&app, "/payment_links", &[("active", "false")]).await;
    assert_eq!(listed.body["data"].as_array().map(Vec::len), Some(1));
    let expanded = ok(
        &get(
            &app,
            &format!("/payment_links/{id}"),
            &[("expand[]", "line_items")],
        )
        .await,
        "PaymentLink",
    );
    assert_eq!(expanded["line_items"]["data"][0]["amount_total"], 3600);
    let refused = post(
        &app,
        "/payment_links",
        &[
            ("line_items[0][price]", print.as_str()),
            ("shipping_address_collection[allowed_countries][0]", "US"),
        ],
    )
    .await;
    assert_eq!(refused.status, 400);
    assert_eq!(refused.error_code(), "parameter_unknown");
    let _: Value = refused.body;
}
