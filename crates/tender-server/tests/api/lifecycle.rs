//! The payment lifecycle beyond one call: saved cards and recurring charges, expiry of
//! uncaptured authorisations, bank transfers, and 3-D Secure through the receipt host.

use serde_json::json;

use crate::helpers::*;

async fn tokenize(app: &TestApp, key: &str, number: &str) -> Answer {
    app.post(
        "/v2/payment_methods",
        key,
        json!({"type": "card", "card": card(number)["card"].clone()}),
    )
    .await
}

/// Runs the tasks due at the test clock's time, then checks that `what` happened.
async fn after_tasks<F, Fut>(app: &TestApp, what: &str, check: F)
where
    F: FnOnce() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    app.run_due_tasks().await;
    assert!(check().await, "{what} did not happen when its task ran");
}

#[tokio::test]
async fn a_publishable_key_tokenises_a_card_and_nothing_else() {
    let Some(app) = spawn_stepped_app().await else {
        return;
    };
    let pm = tokenize(&app, app.pk(), "4242424242424242").await;
    assert_eq!(pm.status, 200, "{}", pm.body);
    assert_eq!(pm.body["object"], "payment_method");
    assert_eq!(pm.body["type"], "card");
    assert_eq!(pm.body["card"]["brand"], "visa");
    assert_eq!(pm.body["card"]["last4"], "4242");
    assert_eq!(pm.body["customer"], serde_json::Value::Null);
    assert!(pm.body["card"]["fingerprint"].as_str().unwrap().len() >= 16);
    assert!(!String::from_utf8_lossy(&pm.raw).contains("4242424242424242"));
    let get = app
        .get(&format!("/v2/payment_methods/{}", pm.id()), app.pk())
        .await;
    assert_eq!(get.status, 403);
    let bad = tokenize(&app, app.pk(), "4242424242424241").await;
    assert_eq!(
        (bad.status.as_u16(), bad.error_code()),
        (402, "incorrect_number")
    );
}

#[tokio::test]
async fn the_same_card_has_the_same_fingerprint_within_an_account_only() {
    let Some(app) = spawn_stepped_app().await else {
        return;
    };
    let a = tokenize(&app, app.sk(), "4242424242424242").await;
    let b = tokenize(&app, app.sk(), "4242424242424242").await;
    let c = tokenize(&app, app.sk(), "5555555555554444").await;
    assert_eq!(a.body["card"]["fingerprint"], b.body["card"]["fingerprint"]);
    assert_ne!(a.body["card"]["fingerprint"], c.body["card"]["fingerprint"]);
    let other = app.other_account().await;
    let d = tokenize(&app, &other.keys.test.secret, "4242424242424242").await;
    assert_ne!(a.body["card"]["fingerprint"], d.body["card"]["fingerprint"]);
    let pay = app.pay(app.sk(), "4242424242424242", 1000).await;
    assert_eq!(
        pay.body["payment_method"]["card"]["fingerprint"],
        a.body["card"]["fingerprint"]
    );
}

#[tokio::test]
async fn a_saved_card_is_charged_again_and_again_for_its_customer() {
    let Some(app) = spawn_stepped_app().await else {
        return;
    };
    let cus = app
        .post(
            "/v2/customers",
            app.sk(),
            json!({"email": "sub@example.com"}),
        )
        .await
        .id();
    let pm = tokenize(&app, app.pk(), "4242424242424242").await.id();
    let attached = app
        .post(
            &format!("/v2/payment_methods/{pm}/attach"),
            app.sk(),
            json!({"customer": cus}),
        )
        .await;
    assert_eq!(attached.status, 200, "{}", attached.body);
    assert_eq!(attached.body["customer"], cus.as_str());
    for month in 0..3 {
        let p = app.post("/v2/payments", app.sk(), json!({"amount": 999, "currency": "eur", "customer": cus, "payment_method": pm, "description": format!("month {month}")})).await;
        assert_eq!(p.status, 200, "{}", p.body);
        assert_eq!(p.body["status"], "succeeded");
        assert_eq!(p.body["payment_method"]["id"], pm.as_str());
        assert_eq!(p.body["payment_method"]["card"]["last4"], "4242");
    }
    let list = app
        .get(&format!("/v2/payments?customer={cus}"), app.sk())
        .await;
    assert_eq!(list.body["data"].as_array().unwrap().len(), 3);
    let listed = app
        .get(&format!("/v2/payment_methods?customer={cus}"), app.sk())
        .await;
    assert_eq!(listed.body["data"][0]["id"], pm.as_str());
    let missing = app.get("/v2/payment_methods", app.sk()).await;
    assert_eq!(
        (missing.status.as_u16(), missing.error_param()),
        (400, "customer")
    );

    // Charging it for another customer, or without the customer, is refused.
    let other = app.post("/v2/customers", app.sk(), json!({})).await.id();
    let p = app
        .post(
            "/v2/payments",
            app.sk(),
            json!({"amount": 999, "currency": "eur", "customer": other, "payment_method": pm}),
        )
        .await;
    assert_eq!(p.status, 400);
    let p = app
        .post(
            "/v2/payments",
            app.sk(),
            json!({"amount": 999, "currency": "eur", "payment_method": pm}),
        )
        .await;
    assert_eq!(p.status, 400);
}

#[tokio::test]
async fn an_unattached_token_pays_once_and_is_then_consumed() {
    let Some(app) = spawn_stepped_app().await else {
        return;
    };
    let pm = tokenize(&app, app.pk(), "5555555555554444").await.id();
    let first = app
        .post(
            "/v2/payments",
            app.sk(),
            json!({"amount": 1000, "currency": "usd", "payment_method": pm}),
        )
        .await;
    assert_eq!(first.status, 200, "{}", first.body);
    let second = app
        .post(
            "/v2/payments",
            app.sk(),
            json!({"amount": 1000, "currency": "usd", "payment_method": pm}),
        )
        .await;
    assert_eq!(second.status, 400);
    assert_eq!(second.error_param(), "payment_method");
    let missing = app.post("/v2/payments", app.sk(), json!({"amount": 1000, "currency": "usd", "payment_method": "pm_nothere000000000000000000"})).await;
    assert_eq!(
        (missing.error_code(), missing.error_param()),
        ("resource_missing", "payment_method")
    );
}

#[tokio::test]
async fn save_payment_method_attaches_the_card_to_the_customer() {
    let Some(app) = spawn_stepped_app().await else {
        return;
    };
    let cus = app.post("/v2/customers", app.sk(), json!({})).await.id();
    let mut body = payment_body("378282246310005", 5000);
    body["customer"] = json!(cus);
    body["save_payment_method"] = json!(true);
    let p = app.post("/v2/payments", app.sk(), body).await;
    assert_eq!(p.status, 200, "{}", p.body);
    let pm = p.body["payment_method"]["id"].as_str().unwrap().to_string();
    let saved = app
        .get(&format!("/v2/payment_methods/{pm}"), app.sk())
        .await;
    assert_eq!(saved.body["customer"], cus.as_str());
    assert_eq!(saved.body["card"]["brand"], "amex");
    let again = app
        .post(
            "/v2/payments",
            app.sk(),
            json!({"amount": 700, "currency": "usd", "customer": cus, "payment_method": pm}),
        )
        .await;
    assert_eq!(again.status, 200, "{}", again.body);
    let no_customer = app.post("/v2/payments", app.sk(), json!({"amount": 700, "currency": "usd", "save_payment_method": true, "payment_method": card("4242424242424242")})).await;
    assert_eq!(
        (no_customer.status.as_u16(), no_customer.error_param()),
        (400, "customer")
    );
}

#[tokio::test]
async fn card_0341_saves_but_every_charge_declines() {
    let Some(app) = spawn_stepped_app().await else {
        return;
    };
    let cus = app.post("/v2/customers", app.sk(), json!({})).await.id();
    let pm = tokenize(&app, app.sk(), "4000000000000341").await.id();
    let attached = app
        .post(
            &format!("/v2/payment_methods/{pm}/attach"),
            app.sk(),
            json!({"customer": cus}),
        )
        .await;
    assert_eq!(attached.status, 200, "{}", attached.body);
    for _ in 0..2 {
        let p = app
            .post(
                "/v2/payments",
                app.sk(),
                json!({"amount": 1000, "currency": "usd", "customer": cus, "payment_method": pm}),
            )
            .await;
        assert_eq!(p.status, 402);
        assert_eq!(
            (
                p.error_code(),
                p.body["error"]["decline_code"].as_str().unwrap()
            ),
            ("card_declined", "generic_decline")
        );
    }
    // A card that declines cannot be saved.
    let bad = tokenize(&app, app.sk(), "4000000000000002").await.id();
    let refused = app
        .post(
            &format!("/v2/payment_methods/{bad}/attach"),
            app.sk(),
            json!({"customer": cus}),
        )
        .await;
    assert_eq!(refused.status, 402);
}

#[tokio::test]
async fn detaching_or_deleting_the_customer_stops_the_card_from_being_charged() {
    let Some(app) = spawn_stepped_app().await else {
        return;
    };
    let cus = app.post("/v2/customers", app.sk(), json!({})).await.id();
    let pm1 = tokenize(&app, app.sk(), "4242424242424242").await.id();
    let pm2 = tokenize(&app, app.sk(), "5555555555554444").await.id();
    for pm in [&pm1, &pm2] {
        app.post(
            &format!("/v2/payment_methods/{pm}/attach"),
            app.sk(),
            json!({"customer": cus}),
        )
        .await;
    }
    let d = app
        .post(
            &format!("/v2/payment_methods/{pm1}/detach"),
            app.sk(),
            json!({}),
        )
        .await;
    assert_eq!(d.status, 200);
    assert_eq!(d.body["customer"], serde_json::Value::Null);
    let p = app
        .post(
            "/v2/payments",
            app.sk(),
            json!({"amount": 1000, "currency": "usd", "customer": cus, "payment_method": pm1}),
        )
        .await;
    assert_eq!(p.status, 400);
    assert_eq!(
        app.delete(&format!("/v2/customers/{cus}"), app.sk())
            .await
            .status,
        200
    );
    let pm = app
        .get(&format!("/v2/payment_methods/{pm2}"), app.sk())
        .await;
    assert_eq!(
        pm.body["customer"],
        serde_json::Value::Null,
        "deleting the customer detached its card"
    );
    let p = app
        .post(
            "/v2/payments",
            app.sk(),
            json!({"amount": 1000, "currency": "usd", "payment_method": pm2}),
        )
        .await;
    assert_eq!(p.status, 400);
}

#[tokio::test]
async fn saved_card_numbers_are_not_in_the_data_dir_in_clear() {
    let Some(app) = spawn_stepped_app().await else {
        return;
    };
    let cus = app.post("/v2/customers", app.sk(), json!({})).await.id();
    let numbers = [
        "4242424242424242",
        "5555555555554444",
        "378282246310005",
        "6011111111111117",
    ];
    for n in numbers {
        let pm = tokenize(&app, app.sk(), n).await.id();
        app.post(
            &format!("/v2/payment_methods/{pm}/attach"),
            app.sk(),
            json!({"customer": cus}),
        )
        .await;
    }
    let stored = app.stored_bytes().await;
    for n in numbers {
        assert!(!contains(&stored, n), "{n} in clear in the stored data");
    }
    if crate::BACKEND == Backend::Postgres {
        return; // The vault key comes from TENDER_VAULT_KEY there.
    }
    // The vault key file exists with owner-only permissions.
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(app.data_dir.path().join("vault.key"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
}

#[tokio::test]
async fn an_authorisation_not_captured_within_seven_days_is_canceled() {
    let Some(app) = spawn_stepped_app().await else {
        return;
    };
    let mut body = payment_body("4242424242424242", 5000);
    body["capture"] = json!(false);
    let kept = app.post("/v2/payments", app.sk(), body.clone()).await.id();
    let captured = app.post("/v2/payments", app.sk(), body).await.id();
    app.post(
        &format!("/v2/payments/{captured}/capture"),
        app.sk(),
        json!({}),
    )
    .await;
    app.clock.advance(6 * 24 * 3600);
    app.run_due_tasks().await;
    assert_eq!(
        app.get(&format!("/v2/payments/{kept}"), app.sk())
            .await
            .body["status"],
        "requires_capture"
    );
    app.clock.advance(24 * 3600 + 1);
    after_tasks(&app, "the expiry", || async {
        app.get(&format!("/v2/payments/{kept}"), app.sk())
            .await
            .body["status"]
            == "canceled"
    })
    .await;
    let p = app.get(&format!("/v2/payments/{kept}"), app.sk()).await;
    assert_eq!(p.body["cancellation_reason"], "abandoned");
    assert_eq!(
        app.get(&format!("/v2/payments/{captured}"), app.sk())
            .await
            .body["status"],
        "succeeded"
    );
    let ev = app.get("/v2/events?type=payment.canceled", app.sk()).await;
    assert_eq!(ev.body["data"][0]["data"]["object"]["id"], kept.as_str());
    assert_eq!(
        ev.body["data"][0]["request"]["id"],
        serde_json::Value::Null,
        "not caused by an API request"
    );
}

fn bank(iban: &str) -> serde_json::Value {
    json!({"amount": 10000, "currency": "eur", "payment_method": {"type": "bank_transfer", "bank_transfer": {"iban": iban, "account_holder_name": "Jenny Rosen"}}})
}

#[tokio::test]
async fn a_bank_transfer_is_processing_then_settles() {
    let Some(app) = spawn_stepped_app().await else {
        return;
    };
    let p = app
        .post(
            "/v2/payments",
            app.sk(),
            bank("DE89 3704 0044 0532 0130 00"),
        )
        .await;
    assert_eq!(p.status, 200, "{}", p.body);
    assert_eq!(p.body["status"], "processing");
    assert_eq!(p.body["payment_method"]["type"], "bank_transfer");
    assert_eq!(
        p.body["payment_method"]["bank_transfer"],
        json!({"last4": "3000", "country": "DE", "account_holder_name": "Jenny Rosen"})
    );
    assert!(!String::from_utf8_lossy(&p.raw).contains("370400440532013000"));
    let id = p.id();
    let early = app
        .post("/v2/refunds", app.sk(), json!({"payment": id}))
        .await;
    assert_eq!(early.error_code(), "payment_unexpected_state");
    app.clock.advance(11);
    after_tasks(&app, "settlement", || async {
        app.get(&format!("/v2/payments/{id}"), app.sk()).await.body["status"] == "succeeded"
    })
    .await;
    let ev = app.get("/v2/events?type=payment.succeeded", app.sk()).await;
    assert_eq!(ev.body["data"][0]["data"]["object"]["id"], id.as_str());

    // Its refund starts pending and settles after the same delay.
    let r = app
        .post(
            "/v2/refunds",
            app.sk(),
            json!({"payment": id, "amount": 2500}),
        )
        .await;
    assert_eq!(r.body["status"], "pending");
    let rid = r.id();
    app.clock.advance(11);
    after_tasks(&app, "refund settlement", || async {
        app.get(&format!("/v2/refunds/{rid}"), app.sk()).await.body["status"] == "succeeded"
    })
    .await;
}

#[tokio::test]
async fn a_test_iban_ending_in_3001_fails_with_insufficient_funds() {
    let Some(app) = spawn_stepped_app().await else {
        return;
    };
    // A valid German IBAN whose account number ends in 3001.
    let iban = valid_iban("DE", "370400440532013001");
    let p = app.post("/v2/payments", app.sk(), bank(&iban)).await;
    assert_eq!(p.status, 200, "{}", p.body);
    let id = p.id();
    app.clock.advance(11);
    after_tasks(&app, "the bounce", || async {
        app.get(&format!("/v2/payments/{id}"), app.sk()).await.body["status"] == "failed"
    })
    .await;
    let p = app.get(&format!("/v2/payments/{id}"), app.sk()).await;
    assert_eq!(p.body["failure_code"], "insufficient_funds");
    let ev = app.get("/v2/events?type=payment.failed", app.sk()).await;
    assert_eq!(ev.body["data"][0]["data"]["object"]["id"], id.as_str());
}

#[tokio::test]
async fn invalid_ibans_are_refused() {
    let Some(app) = spawn_stepped_app().await else {
        return;
    };
    for iban in [
        "DE89370400440532013001",
        "DE8937040044053201300",
        "XX89370400440532013000",
        "hello",
    ] {
        let p = app.post("/v2/payments", app.sk(), bank(iban)).await;
        assert_eq!(
            (p.status.as_u16(), p.error_code(), p.error_param()),
            (
                400,
                "parameter_invalid",
                "payment_method[bank_transfer][iban]"
            ),
            "{iban}"
        );
    }
}

/// An IBAN with correct check digits for `country` + `bban`.
fn valid_iban(country: &str, bban: &str) -> String {
    let rearranged: String = format!("{bban}{country}00")
        .chars()
        .map(|c| {
            if c.is_ascii_alphabetic() {
                (c as u32 - 'A' as u32 + 10).to_string()
            } else {
                c.to_string()
            }
        })
        .collect();
    let rem = rearranged
        .bytes()
        .fold(0u64, |acc, b| (acc * 10 + (b - b'0') as u64) % 97);
    format!("{country}{:02}{bban}", 98 - rem)
}

async fn three_ds(app: &TestApp, capture: bool) -> (String, String) {
    let mut body = payment_body("4000002500003155", 4200);
    body["capture"] = json!(capture);
    body["return_url"] = json!("https://shop.example/done");
    let p = app.post("/v2/payments", app.sk(), body).await;
    assert_eq!(p.status, 200, "{}", p.body);
    assert_eq!(p.body["status"], "requires_action");
    assert_eq!(p.body["next_action"]["type"], "redirect_to_url");
    let url = p.body["next_action"]["redirect_to_url"]["url"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(url.starts_with(&app.receipt_base), "{url}");
    (p.id(), url)
}

#[tokio::test]
async fn three_d_secure_completes_on_the_receipt_host() {
    let Some(app) = spawn_stepped_app().await else {
        return;
    };
    let (id, url) = three_ds(&app, true).await;
    let page = reqwest::get(&url).await.unwrap();
    assert_eq!(page.status(), 200);
    let html = page.text().await.unwrap();
    assert!(
        html.contains("<form")
            && html.contains("value=\"complete\"")
            && html.contains("value=\"fail\"")
    );
    assert!(html.contains("42.00 USD"));
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let done = client
        .post(&url)
        .form(&[("outcome", "complete")])
        .send()
        .await
        .unwrap();
    assert_eq!(done.status(), 303);
    let location = done.headers()["location"].to_str().unwrap();
    assert_eq!(location, format!("https://shop.example/done?payment={id}"));
    let p = app.get(&format!("/v2/payments/{id}"), app.sk()).await;
    assert_eq!(p.body["status"], "succeeded");
    assert_eq!(p.body["amount_captured"], 4200);
    let ev = app.get("/v2/events?type=payment.succeeded", app.sk()).await;
    assert_eq!(ev.body["data"][0]["data"]["object"]["id"], id.as_str());
    // The link is spent: it says the payment was already confirmed, and changes nothing.
    let again = reqwest::get(&url).await.unwrap();
    assert_eq!(again.status(), 200);
    assert!(again.text().await.unwrap().contains("already confirmed"));
    let replay = client
        .post(&url)
        .form(&[("outcome", "fail")])
        .send()
        .await
        .unwrap();
    assert_eq!(replay.status(), 200);
    assert!(replay.text().await.unwrap().contains("already confirmed"));
    let p = app.get(&format!("/v2/payments/{id}"), app.sk()).await;
    assert_eq!(p.body["status"], "succeeded");
}

#[tokio::test]
async fn three_d_secure_failure_fails_the_payment_and_manual_capture_waits() {
    let Some(app) = spawn_stepped_app().await else {
        return;
    };
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let (id, url) = three_ds(&app, true).await;
    client
        .post(&url)
        .form(&[("outcome", "fail")])
        .send()
        .await
        .unwrap();
    let p = app.get(&format!("/v2/payments/{id}"), app.sk()).await;
    assert_eq!(p.body["status"], "failed");
    assert_eq!(p.body["failure_code"], "authentication_failed");

    let (id, url) = three_ds(&app, false).await;
    client
        .post(&url)
        .form(&[("outcome", "complete")])
        .send()
        .await
        .unwrap();
    let p = app.get(&format!("/v2/payments/{id}"), app.sk()).await;
    assert_eq!(p.body["status"], "requires_capture");
    let wrong = reqwest::get(format!("{}/authenticate/{id}/wrongtoken", app.receipt_base))
        .await
        .unwrap();
    assert_eq!(wrong.status(), 404);
}

#[tokio::test]
async fn an_abandoned_authentication_is_canceled_and_can_be_canceled_by_hand() {
    let Some(app) = spawn_stepped_app().await else {
        return;
    };
    let (id, url) = three_ds(&app, true).await;
    app.clock.advance(3601);
    after_tasks(&app, "abandonment", || async {
        app.get(&format!("/v2/payments/{id}"), app.sk()).await.body["status"] == "canceled"
    })
    .await;
    assert_eq!(reqwest::get(&url).await.unwrap().status(), 404);
    let (id2, _) = three_ds(&app, true).await;
    let c = app
        .post(&format!("/v2/payments/{id2}/cancel"), app.sk(), json!({}))
        .await;
    assert_eq!(c.body["status"], "canceled");
}

#[tokio::test]
async fn the_receipt_page_shows_the_payment_and_its_refunds() {
    let Some(app) = spawn_stepped_app().await else {
        return;
    };
    let mut body = payment_body("4242424242424242", 123456);
    body["description"] = json!("<script>alert(1)</script> Espresso");
    let p = app.post("/v2/payments", app.sk(), body).await;
    app.post(
        "/v2/refunds",
        app.sk(),
        json!({"payment": p.id(), "amount": 456}),
    )
    .await;
    let page = reqwest::get(p.body["receipt_url"].as_str().unwrap())
        .await
        .unwrap();
    assert_eq!(page.status(), 200);
    let html = page.text().await.unwrap();
    assert!(html.contains("TEST MODE"));
    assert!(html.contains("1,234.56 USD"), "{html}");
    assert!(html.contains("4.56 USD"));
    assert!(
        html.contains("Visa •••• 4242"),
        "the brand as a customer reads it"
    );
    assert!(html.contains("Partly refunded"));
    assert!(html.contains("Charged in the end: 1,230.00 USD"), "{html}");
    // The login e-mail is never shown to customers; the business name and public e-mail are.
    assert!(!html.contains("admin@tender.local"));
    app.services
        .accounts()
        .update_account_profile(
            &app.account.account,
            Some("Corner Café"),
            Some("hello@corner.example"),
        )
        .await
        .unwrap();
    let named = reqwest::get(p.body["receipt_url"].as_str().unwrap())
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(named.contains("Receipt from Corner Café"), "{named}");
    assert!(named.contains("hello@corner.example"));
    let failed = app.pay(app.sk(), "4000000000000002", 2000).await;
    let failed_page = reqwest::get(
        failed.body["error"]["payment"]
            .as_str()
            .map(|id| format!("{}/{id}", app.receipt_base))
            .unwrap(),
    )
    .await
    .unwrap()
    .text()
    .await
    .unwrap();
    assert!(
        failed_page.contains("You were not charged."),
        "{failed_page}"
    );
    assert!(html.contains("&lt;script&gt;"), "description is escaped");
    assert!(!html.contains("<script>alert"));
    let jpy = app
        .post(
            "/v2/payments",
            app.sk(),
            json!({"amount": 5000, "currency": "jpy", "payment_method": card("4242424242424242")}),
        )
        .await;
    let html = reqwest::get(jpy.body["receipt_url"].as_str().unwrap())
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(html.contains("5,000 JPY"), "jpy has no minor unit");
    let missing = reqwest::get(format!("{}/pay_doesnotexist000000000000", app.receipt_base))
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);
    assert!(missing.text().await.unwrap().contains("Not found"));
}

#[tokio::test]
async fn a_payment_awaiting_authentication_then_capture_sends_an_event_at_each_step() {
    let Some(app) = spawn_stepped_app().await else {
        return;
    };
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let (id, url) = three_ds(&app, false).await;
    let asked = app
        .get("/v2/events?type=payment.requires_action", app.sk())
        .await;
    assert_eq!(asked.body["data"][0]["data"]["object"]["id"], id.as_str());
    client
        .post(&url)
        .form(&[("outcome", "complete")])
        .send()
        .await
        .unwrap();
    let ev = app
        .get("/v2/events?type=payment.requires_capture", app.sk())
        .await;
    let e = &ev.body["data"][0];
    assert_eq!(e["data"]["object"]["id"], id.as_str());
    assert_eq!(e["data"]["object"]["status"], "requires_capture");
    assert_eq!(
        e["data"]["previous_attributes"]["status"],
        "requires_action"
    );
}

#[tokio::test]
async fn the_3001_bounce_is_a_test_mode_rule_and_refund_settlement_sends_refund_updated() {
    let Some(app) = spawn_stepped_app().await else {
        return;
    };
    let iban = valid_iban("DE", "370400440532013001");
    let live = app.post("/v2/payments", app.sk_live(), bank(&iban)).await;
    assert_eq!(live.status, 200, "{}", live.body);
    let id = live.id();
    app.clock.advance(11);
    after_tasks(&app, "live settlement", || async {
        app.get(&format!("/v2/payments/{id}"), app.sk_live())
            .await
            .body["status"]
            == "succeeded"
    })
    .await;
    let r = app
        .post(
            "/v2/refunds",
            app.sk_live(),
            json!({"payment": id, "amount": 100}),
        )
        .await;
    assert_eq!(r.body["status"], "pending");
    app.clock.advance(11);
    after_tasks(&app, "refund.updated", || async {
        let ev = app
            .get("/v2/events?type=refund.updated", app.sk_live())
            .await;
        ev.body["data"][0]["data"]["object"]["id"] == r.id().as_str()
    })
    .await;
    let ev = app
        .get("/v2/events?type=refund.updated", app.sk_live())
        .await;
    assert_eq!(ev.body["data"][0]["data"]["object"]["status"], "succeeded");
    assert_eq!(
        ev.body["data"][0]["data"]["previous_attributes"]["status"],
        "pending"
    );
}

#[tokio::test]
async fn card_errors_on_tokenisation_name_the_card_parameter_and_bank_transfers_cannot_be_saved() {
    let Some(app) = spawn_stepped_app().await else {
        return;
    };
    let bad = app
        .post("/v2/payment_methods", app.pk(), json!({"type": "card", "card": {"number": "4242424242424241", "exp_month": 1, "exp_year": 2040, "cvc": "123"}}))
        .await;
    assert_eq!(
        (bad.status.as_u16(), bad.error_code(), bad.error_param()),
        (402, "incorrect_number", "card[number]")
    );
    let cus = app.post("/v2/customers", app.sk(), json!({})).await.id();
    let mut body = bank("DE89370400440532013000");
    body["customer"] = json!(cus);
    body["save_payment_method"] = json!(true);
    let refused = app.post("/v2/payments", app.sk(), body).await;
    assert_eq!(
        (refused.status.as_u16(), refused.error_param()),
        (400, "save_payment_method")
    );
}

#[tokio::test]
async fn event_filters_and_delivery_logs_refuse_what_cannot_match() {
    let Some(app) = spawn_stepped_app().await else {
        return;
    };
    let bad = app.get("/v2/events?type=payment.exploded", app.sk()).await;
    assert_eq!(
        (bad.status.as_u16(), bad.error_code(), bad.error_param()),
        (400, "parameter_invalid", "type")
    );
    app.post("/v2/customers", app.sk(), json!({})).await;
    let ev = app.get("/v2/events?type=customer.created", app.sk()).await;
    let id = ev.body["data"][0]["id"].as_str().unwrap().to_string();
    let log = app
        .get(&format!("/v2/events/{id}/deliveries"), app.sk())
        .await;
    assert_eq!(log.status, 200);
    let bad = app
        .get(&format!("/v2/events/{id}/deliveries?limit=5"), app.sk())
        .await;
    assert_eq!(
        (bad.status.as_u16(), bad.error_code(), bad.error_param()),
        (400, "parameter_unknown", "limit")
    );
}
