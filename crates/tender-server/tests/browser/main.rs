//! The dashboard in a real headless Chromium, driven over WebDriver (`chromedriver`): log in,
//! create and reveal a key, pay with it over the API, find the payment, refund it, see the
//! refund on the receipt page, look at the customer, add a webhook endpoint and watch its
//! delivery attempts, log out. A PNG of each main page goes to `<target>/screenshots/`. And a
//! shop's page on another origin calling Tender from the browser (CORS), and taking cards
//! through `tender.js` ([`tender_js`]).
//!
//! Without Chromium and chromedriver the test prints `skipped: chromium not found` and passes,
//! unless `TENDER_REQUIRE_BROWSER=1` (CI sets it). `TENDER_CHROMIUM` / `TENDER_CHROMEDRIVER`
//! name the binaries when they are not `chromium` / `chromedriver` on the PATH.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../common/mod.rs"]
mod common;
mod tender_js;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::json;

/// A headless Chromium behind its own chromedriver, with a fresh profile.
struct Chrome {
    client: Client,
    shots: PathBuf,
    _driver: tokio::process::Child,
    _profile: tempfile::TempDir,
}

/// Ends chromedriver and every Chromium process it started, even when a test panics before
/// closing its session: killing chromedriver alone leaves its browser running.
impl Drop for Chrome {
    fn drop(&mut self) {
        if let Some(pid) = self._driver.id() {
            let _ = std::process::Command::new("kill")
                .args(["-KILL", "--", &format!("-{pid}")])
                .status();
        }
    }
}

fn on_path(names: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|dir| names.iter().map(move |n| dir.join(n)))
        .find(|p| p.is_file())
}

fn find_binary(var: &str, names: &[&str]) -> Option<PathBuf> {
    match std::env::var_os(var) {
        Some(p) => Some(PathBuf::from(p)).filter(|p| p.is_file()),
        None => on_path(names),
    }
}

/// Where screenshots go: `$CARGO_TARGET_DIR/screenshots`, else the workspace's `target/`.
fn screenshot_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"));
    target.join("screenshots")
}

impl Chrome {
    /// `None` (test skipped) when Chromium or chromedriver is missing, unless required.
    async fn start() -> Option<Chrome> {
        let chromium = find_binary(
            "TENDER_CHROMIUM",
            &["chromium", "chromium-browser", "google-chrome"],
        );
        let driver = find_binary("TENDER_CHROMEDRIVER", &["chromedriver"]);
        let (Some(chromium), Some(driver)) = (chromium, driver) else {
            if std::env::var("TENDER_REQUIRE_BROWSER").as_deref() == Ok("1") {
                panic!("chromium or chromedriver not found and TENDER_REQUIRE_BROWSER=1");
            }
            println!("skipped: chromium not found");
            return None;
        };
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let driver = tokio::process::Command::new(driver)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            // Its own process group, with the Chromium it starts: see `Drop for Chrome`.
            .process_group(0)
            .kill_on_drop(true)
            .spawn()
            .expect("start chromedriver");
        let url = format!("http://127.0.0.1:{port}");
        let http = reqwest::Client::new();
        let mut ready = false;
        for _ in 0..200 {
            if http.get(format!("{url}/status")).send().await.is_ok() {
                ready = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(ready, "chromedriver did not start on port {port}");
        let profile = tempfile::tempdir().unwrap();
        let args = [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--window-size=1280,1000",
            &format!("--user-data-dir={}", profile.path().display()),
        ];
        let caps = json!({
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": chromium, "args": args},
        });
        let client = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
            .capabilities(caps.as_object().unwrap().clone())
            .connect(&url)
            .await
            .expect("a Chromium session");
        let shots = screenshot_dir();
        std::fs::create_dir_all(&shots).unwrap();
        Some(Chrome {
            client,
            shots,
            _driver: driver,
            _profile: profile,
        })
    }

    async fn shot(&self, name: &str) {
        let png = self.client.screenshot().await.expect("screenshot");
        let path = self.shots.join(format!("{name}.png"));
        std::fs::write(&path, png).unwrap();
        println!("screenshot: {}", path.display());
    }

    async fn css(&self, selector: &str) -> fantoccini::elements::Element {
        self.client
            .wait()
            .at_most(Duration::from_secs(10))
            .for_element(Locator::Css(selector))
            .await
            .unwrap_or_else(|e| panic!("{selector}: {e}"))
    }

    /// The text of `selector` on the current page. An element found on a page that a click
    /// is replacing goes stale before its text is read: it is then found again on the new page.
    async fn text(&self, selector: &str) -> String {
        for _ in 0..50 {
            match self.css(selector).await.text().await {
                Ok(text) => return text,
                Err(fantoccini::error::CmdError::Standard(e))
                    if e.error == fantoccini::error::ErrorStatus::StaleElementReference =>
                {
                    continue
                }
                Err(e) => panic!("{selector}: {e}"),
            }
        }
        panic!("{selector}: stale 50 times in a row")
    }

    async fn page_text(&self) -> String {
        self.text("body").await
    }

    /// Clicks a link or a form's button and waits for the page it loads. Every such click here
    /// replaces the document (the dashboard has no script of its own), so what is read next must
    /// never be the page the click left, which may still show the previous action's notice. The
    /// old page is marked with a global before the click; a new document has a fresh global.
    /// (Holding an element of the old page and waiting for it to go stale does not work:
    /// chromedriver answers some reads of such an element with an unknown error instead.)
    async fn click(&self, selector: &str) {
        let target = self.css(selector).await;
        self.client
            .execute("window.tenderLeft = true;", vec![])
            .await
            .unwrap();
        target.click().await.unwrap();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            // An error here is the navigation under way; only an answer from the new page counts.
            let left = self
                .client
                .execute("return window.tenderLeft === true;", vec![])
                .await;
            if let Ok(serde_json::Value::Bool(false)) = left {
                return;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "{selector}: clicked, but no new page loaded within 10 s ({left:?})"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Ticks a checkbox: a click that stays on the page.
    async fn tick(&self, selector: &str) {
        self.css(selector).await.click().await.unwrap();
    }

    async fn type_into(&self, selector: &str, text: &str) {
        let e = self.css(selector).await;
        e.clear().await.unwrap();
        e.send_keys(text).await.unwrap();
    }

    async fn path(&self) -> String {
        self.client.current_url().await.unwrap().path().to_string()
    }
}

/// A webhook receiver that answers 200.
async fn receiver() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(|| async { "{\"received\":true}" }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

#[tokio::test]
async fn an_account_holder_does_everything_by_clicking() {
    let Some(b) = Chrome::start().await else {
        return;
    };
    let app = common::spawn_app().await;
    let base = &app.base;

    // Log in.
    b.client.goto(&format!("{base}/dashboard")).await.unwrap();
    assert_eq!(b.path().await, "/dashboard/login");
    b.shot("01-login").await;
    b.type_into("#email", &app.account.email).await;
    b.type_into("#password", &app.account.password).await;
    b.click("form button[type=submit]").await;
    b.css("nav a.active[href='/dashboard/overview']").await;
    assert!(b
        .page_text()
        .await
        .contains("No successful payment in the last 30 days yet."));

    // Create a secret key and read it off the page, once.
    b.click("nav a[href='/dashboard/keys']").await;
    b.css("#keys").await;
    b.shot("02-keys").await;
    b.css("select[name=kind]")
        .await
        .select_by_value("secret")
        .await
        .unwrap();
    b.click("form[action='/dashboard/keys'] button").await;
    let key = b.text("#new-key").await;
    assert!(key.starts_with("sk_test_"), "{key}");
    b.shot("03-key-revealed").await;

    // Pay with it over the API: a customer whose card is saved, and a held payment.
    let customer = app
        .api(
            reqwest::Method::POST,
            "/customers",
            &key,
            Some(json!({"name": "Grace Hopper", "email": "grace@example.com"})),
        )
        .await;
    let pay = app
        .pay(
            &key,
            4200,
            json!({"customer": customer["id"], "description": "Order #1001", "save_payment_method": true}),
        )
        .await;
    app.pay(
        &key,
        1999,
        json!({"capture": false, "description": "Order #1002"}),
    )
    .await;
    let pay_id = pay["id"].as_str().unwrap().to_string();

    // The business name customers will see, set on the Account page.
    b.click("nav a[href='/dashboard/account']").await;
    b.type_into("#business_name", "Corner Café").await;
    b.type_into("#public_email", "hello@corner.example").await;
    b.click("form[action='/dashboard/account/profile'] button")
        .await;
    assert!(b.text(".notice.success").await.contains("Saved."));

    // The overview: the figures, the chart, and the payment found by its customer's e-mail
    // typed in another case.
    b.click("nav a[href='/dashboard/overview']").await;
    b.css("#volume-chart").await;
    assert_eq!(b.text("#payment-count").await, "2");
    assert_eq!(b.text("#success-rate").await, "100.0 %");
    b.shot("04-overview").await;
    b.type_into("#q", "Grace@Example.com").await;
    b.click("form.search button").await;
    let results = b.text("#results").await;
    assert!(
        results.contains("Order #1001") && !results.contains("Order #1002"),
        "{results}"
    );
    b.shot("04b-search").await;
    b.click(&format!("#results a[href='/dashboard/payments/{pay_id}']"))
        .await;
    assert_eq!(b.text("#payment-id").await, pay_id);
    b.shot("05-payment").await;
    b.type_into("#refund-amount", "10.00").await;
    b.css("#refund-reason")
        .await
        .select_by_value("requested_by_customer")
        .await
        .unwrap();
    b.click("#refund-form button").await;
    // A confirmation page says what will happen; only its button moves the money.
    b.css("#confirm").await;
    assert!(b
        .page_text()
        .await
        .contains("Refund 10.00 USD of this payment to the customer?"));
    b.shot("05b-refund-confirm").await;
    b.click("#confirm").await;
    assert_eq!(b.text(".notice.success").await, "Refund created.");
    assert_eq!(b.text("#amount-refunded").await, "10.00 USD");
    assert!(b.text("#refunds").await.contains("10.00 USD"));
    assert!(b.text("#events").await.contains("refund.created"));
    b.shot("06-payment-refunded").await;

    // The receipt shows the refund.
    let receipt = b
        .css("#receipt-link")
        .await
        .attr("href")
        .await
        .unwrap()
        .unwrap();
    assert!(receipt.starts_with(&app.receipt_base), "{receipt}");
    b.client.goto(&receipt).await.unwrap();
    let text = b.page_text().await;
    assert!(
        text.contains("TEST MODE") && text.contains("42.00 USD"),
        "{text}"
    );
    assert!(text.contains("Corner Café"), "{text}");
    assert!(text.contains("hello@corner.example"), "{text}");
    assert!(
        text.contains("Refunds") && text.contains("10.00 USD"),
        "{text}"
    );
    // What was finally charged, and the status in a customer's words.
    assert!(
        text.contains("Charged in the end: 32.00 USD") && text.contains("Partly refunded"),
        "{text}"
    );
    b.shot("07-receipt").await;

    // The customer and the saved card.
    b.client
        .goto(&format!("{base}/dashboard/customers"))
        .await
        .unwrap();
    b.css("#customers").await;
    b.shot("08-customers").await;
    b.click(&format!(
        "a[href='/dashboard/customers/{}']",
        customer["id"].as_str().unwrap()
    ))
    .await;
    assert_eq!(b.text("#customer-name").await, "Grace Hopper");
    assert!(b.text("#cards").await.contains("4242"));
    assert!(b.text("table.payments").await.contains("42.00 USD"));
    b.shot("09-customer").await;

    // A webhook endpoint: the secret once, then its delivery attempts.
    let hook = receiver().await;
    b.click("nav a[href='/dashboard/webhooks']").await;
    b.type_into("#url", &hook).await;
    b.type_into("#description", "Order system").await;
    b.click("#add-endpoint button").await;
    let secret = b.text("#endpoint-secret").await;
    assert!(secret.starts_with("whsec_"), "{secret}");
    b.shot("10-webhook-added").await;
    let later = app
        .pay(&key, 3100, json!({"description": "Order #1003"}))
        .await;
    let events = app
        .api(
            reqwest::Method::GET,
            "/events?type=payment.succeeded&limit=1",
            &key,
            None,
        )
        .await;
    assert_eq!(events["data"][0]["data"]["object"]["id"], later["id"]);
    let event_id = events["data"][0]["id"].as_str().unwrap().to_string();
    b.client
        .goto(&format!("{base}/dashboard/webhooks"))
        .await
        .unwrap();
    b.click(&format!("a[href='/dashboard/events/{event_id}']"))
        .await;
    let mut delivered = false;
    for _ in 0..100 {
        let text = b.text("#deliveries").await;
        if text.contains("200") && text.contains("succeeded") {
            delivered = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        b.client.refresh().await.unwrap();
    }
    assert!(delivered, "the delivery attempt shows up");
    assert!(b.text("#deliveries").await.contains(&hook));
    b.shot("11-event-deliveries").await;
    b.click("#deliveries form button").await;
    assert!(b
        .text(".notice.success")
        .await
        .contains("Delivery scheduled"));
    b.client
        .goto(&format!("{base}/dashboard/webhooks"))
        .await
        .unwrap();
    assert!(b.text("#endpoints").await.contains(&hook));
    b.shot("12-webhooks").await;

    // A connector (the simulator, so nothing leaves the machine): added, its payments name it.
    b.click("nav a[href='/dashboard/connectors']").await;
    assert!(b.page_text().await.contains("built-in simulator"));
    b.css("#type option[value='simulator']")
        .await
        .click()
        .await
        .unwrap();
    b.type_into("#name", "Backup simulator").await;
    b.click("#add-connector button").await;
    assert!(b.text(".notice.success").await.contains("Connector added"));
    let table = b.text("#connectors").await;
    assert!(
        table.contains("Backup simulator") && table.contains("enabled"),
        "{table}"
    );
    b.shot("13-connectors").await;
    let routed = app
        .pay(&key, 1500, json!({"description": "Order #1004"}))
        .await;
    let conn = routed["connector"].as_str().unwrap().to_string();
    b.client
        .goto(&format!(
            "{base}/dashboard/payments/{}",
            routed["id"].as_str().unwrap()
        ))
        .await
        .unwrap();
    assert!(b.text("#payment-connector").await.contains(&conn));
    b.shot("14-payment-connector").await;

    // Account page, then log out.
    b.click("nav a[href='/dashboard/account']").await;
    b.css("#current_password").await;
    b.shot("15-account").await;
    b.click("form[action='/dashboard/logout'] button").await;
    b.css("#email").await;
    assert_eq!(b.path().await, "/dashboard/login");
    b.client
        .goto(&format!("{base}/dashboard/payments"))
        .await
        .unwrap();
    assert_eq!(b.path().await, "/dashboard/login");

    b.client.clone().close().await.unwrap();
}

/// A 3-D Secure payment completed by clicking on the authentication page, which works without
/// JavaScript and sends the customer back to the shop's `return_url`.
#[tokio::test]
async fn a_customer_completes_three_d_secure_in_the_browser() {
    let Some(b) = Chrome::start().await else {
        return;
    };
    let app = common::spawn_app().await;
    let http = reqwest::Client::new();
    // The "shop" the customer returns to: here, the payment's own receipt page host.
    let return_url = format!("{}/thanks", app.receipt_base);
    let pay = |number: &'static str| {
        let (http, base, key, return_url) = (
            http.clone(),
            app.base.clone(),
            app.account.keys.test.secret.clone(),
            return_url.clone(),
        );
        async move {
            http.post(format!("{base}/v2/payments"))
                .bearer_auth(key)
                .json(&json!({"amount": 4200, "currency": "eur", "return_url": return_url,
                    "payment_method": {"type": "card", "card": {"number": number, "exp_month": 12, "exp_year": 2034, "cvc": "123"}}}))
                .send()
                .await
                .unwrap()
                .json::<serde_json::Value>()
                .await
                .unwrap()
        }
    };
    let p = pay("4000002500003155").await;
    assert_eq!(p["status"], "requires_action");
    let url = p["next_action"]["redirect_to_url"]["url"].as_str().unwrap();
    b.client.goto(url).await.unwrap();
    assert!(b.page_text().await.contains("42.00 EUR"));
    b.shot("20-3ds-challenge").await;
    b.click("button[value=complete]").await;
    // Back at the return URL (a 404 page on the receipt host here), with the payment id.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let current = b.client.current_url().await.unwrap();
        if current.path() == "/thanks" {
            assert_eq!(
                current.query(),
                Some(format!("payment={}", p["id"].as_str().unwrap()).as_str())
            );
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "not sent back to the return URL: {current}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let after: serde_json::Value = http
        .get(format!(
            "{}/v2/payments/{}",
            app.base,
            p["id"].as_str().unwrap()
        ))
        .bearer_auth(&app.account.keys.test.secret)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(after["status"], "succeeded");
    // The receipt shows it; and the spent link no longer works.
    b.client
        .goto(after["receipt_url"].as_str().unwrap())
        .await
        .unwrap();
    assert!(b.page_text().await.contains("Paid"));
    b.shot("21-3ds-receipt").await;
    // The spent link says the payment was already confirmed (and does nothing).
    b.client.goto(url).await.unwrap();
    assert!(b.page_text().await.contains("already confirmed"));
    b.shot("22-3ds-link-used").await;
}

/// The money pages by clicking: the balance with its chart, a payout created from the form, a
/// dispute answered with evidence and one accepted, and the CSV download's link.
#[tokio::test]
async fn an_account_holder_follows_the_balance_pays_out_and_answers_disputes() {
    let Some(b) = Chrome::start().await else {
        return;
    };
    let app = common::spawn_app().await;
    let base = &app.base;
    let key = app.account.keys.test.secret.clone();
    let run_tasks = |seconds: i64| {
        let (clock, services) = (app.clock.clone(), app.services.clone());
        async move {
            clock.advance(seconds);
            for _ in 0..50 {
                if services.run_due_tasks(100).await.unwrap() == 0 {
                    break;
                }
            }
        }
    };
    // 100.00 and 50.00 paid, both available a minute later; two payments of the disputed card.
    app.pay(&key, 10_000, json!({})).await;
    app.pay(&key, 5_000, json!({})).await;
    let mut disputed = Vec::new();
    for amount in [2_000, 3_000] {
        let p = app
            .pay(
                &key,
                amount,
                json!({"payment_method": {"type": "card", "card": {
                    "number": "4000000000000259", "exp_month": 12, "exp_year": 2034, "cvc": "123"}}}),
            )
            .await;
        disputed.push(p["id"].as_str().unwrap().to_string());
    }
    // The server's own runner may take a task first: wait for what it leads to.
    for _ in 0..100 {
        run_tasks(61).await;
        let list = app.api(reqwest::Method::GET, "/disputes", &key, None).await;
        let balance = app.api(reqwest::Method::GET, "/balance", &key, None).await;
        if list["data"].as_array().unwrap().len() == 2 && balance["pending"][0]["amount"] == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    b.client.goto(&format!("{base}/dashboard")).await.unwrap();
    b.type_into("#email", &app.account.email).await;
    b.type_into("#password", &app.account.password).await;
    b.click("form button[type=submit]").await;
    b.click("nav a[href='/dashboard/balance']").await;
    b.css("#balance-chart").await;
    // 200.00 captured less fees (2.9% + 0.30 each: 3.20, 1.75, 0.88, 1.17) = 193.00; two
    // disputes took 50.00 and 2 × 15.00 of dispute fees.
    assert_eq!(b.text("#balance .available").await, "113.00 USD");
    assert_eq!(b.text("#balance .pending").await, "0.00 USD");
    let chart = b.css("#balance-chart").await.html(false).await.unwrap();
    assert!(
        chart.contains("0 days ago, gross volume: 200.00 USD"),
        "{chart}"
    );
    assert!(chart.contains("0 days ago, net: 113.00 USD"), "{chart}");
    let txns = b.text("#transactions").await;
    assert!(
        txns.contains("adjustment") && txns.contains("charge"),
        "{txns}"
    );
    let href = b
        .css("#export")
        .await
        .attr("action")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(href, "/dashboard/balance.csv");
    b.shot("20-balance").await;

    // A payout over the balance is refused on the page; one within it is created.
    b.type_into("#amount", "500.00").await;
    b.type_into("#iban", "DE89 3704 0044 0532 0130 00").await;
    b.type_into("#account_holder_name", "Corner Café GmbH")
        .await;
    b.click("#create-payout button").await;
    let refused = b.text(".notice.error").await;
    assert!(refused.contains("available balance"), "{refused}");
    b.type_into("#amount", "100.00").await;
    b.type_into("#iban", "DE89 3704 0044 0532 0130 00").await;
    b.type_into("#account_holder_name", "Corner Café GmbH")
        .await;
    b.click("#create-payout button").await;
    assert!(b.text(".notice.success").await.contains("Payout created"));
    assert_eq!(b.text("#balance .available").await, "13.00 USD");
    let payouts = b.text("#payouts").await;
    assert!(
        payouts.contains("100.00 USD") && payouts.contains("pending") && payouts.contains("…3000"),
        "{payouts}"
    );
    assert!(
        !payouts.contains("3704 0044"),
        "the IBAN is never shown whole"
    );
    b.shot("21-payout").await;

    // The first dispute answered with winning evidence; the second accepted.
    b.click("nav a[href='/dashboard/disputes']").await;
    let table = b.text("#disputes").await;
    assert!(table.contains("needs response"), "{table}");
    b.shot("22-disputes").await;
    for (i, id) in disputed.iter().enumerate() {
        let dp = app
            .api(
                reqwest::Method::GET,
                &format!("/disputes?payment={id}"),
                &key,
                None,
            )
            .await["data"][0]["id"]
            .as_str()
            .unwrap()
            .to_string();
        b.client
            .goto(&format!("{base}/dashboard/disputes/{dp}"))
            .await
            .unwrap();
        if i == 0 {
            b.type_into("#customer_name", "Ada Lovelace").await;
            b.type_into("#uncategorized_text", "winning_evidence").await;
            b.tick("#evidence input[name=submit]").await;
            b.click("#evidence button").await;
            assert!(b.text(".notice.success").await.contains("under review"));
            b.shot("23-dispute-submitted").await;
            let mut status = String::new();
            for _ in 0..100 {
                run_tasks(3).await;
                status = app
                    .api(reqwest::Method::GET, &format!("/disputes/{dp}"), &key, None)
                    .await["status"]
                    .as_str()
                    .unwrap()
                    .to_string();
                if status == "won" {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            assert_eq!(status, "won");
        } else {
            b.click("form[action$='/close'] button").await;
            assert!(b.text(".notice.success").await.contains("closed as lost"));
            assert!(b.page_text().await.contains("no longer takes evidence"));
        }
    }
    // Won: 20.00 back (the fee kept).
    b.click("nav a[href='/dashboard/balance']").await;
    assert_eq!(b.text("#balance .available").await, "33.00 USD");
    b.shot("24-balance-after-disputes").await;
    b.client.clone().close().await.unwrap();
}

/// Billing by clicking (CONTRACT §10): a product and its price made on the dashboard, a
/// subscription whose first invoice declined followed to that invoice's tries, the customer's
/// hosted invoice page paying it with a new card, and the subscription canceled.
#[tokio::test]
async fn an_account_holder_sets_up_billing_and_a_customer_pays_on_the_hosted_invoice_page() {
    let Some(b) = Chrome::start().await else {
        return;
    };
    let app = common::spawn_app().await;
    let key = app.account.keys.test.secret.clone();
    b.client
        .goto(&format!("{}/dashboard", app.base))
        .await
        .unwrap();
    b.type_into("#email", &app.account.email).await;
    b.type_into("#password", &app.account.password).await;
    b.click("form button[type=submit]").await;
    b.css("nav a.active[href='/dashboard/overview']").await;

    // A product and a monthly price, from the forms.
    b.click("nav a[href='/dashboard/subscriptions']").await;
    b.click("nav.tabs a[href='/dashboard/products']").await;
    b.type_into("#p-name", "Gold plan").await;
    b.click("#new-product button[type=submit]").await;
    assert!(b.text(".notice").await.contains("Product created."));
    b.type_into("#pr-amount", "15.00").await;
    b.click("#new-price button[type=submit]").await;
    assert!(b.text(".notice").await.contains("Price created."));
    assert!(b.text("#products").await.contains("15.00 USD / month"));
    b.shot("30-billing-products").await;
    let prices = app.api(reqwest::Method::GET, "/prices", &key, None).await;
    let price = prices["data"][0]["id"].as_str().unwrap().to_string();

    // A customer whose card declines subscribes through the API: incomplete, invoice open.
    let card = |number: &str| json!({"type": "card", "card": {"number": number, "exp_month": 12, "exp_year": 2034, "cvc": "123"}});
    let cus = app
        .api(
            reqwest::Method::POST,
            "/customers",
            &key,
            Some(json!({"name": "Ada"})),
        )
        .await;
    let save = |number: &'static str| {
        let (app, key, cus, card) = (&app, key.clone(), cus["id"].clone(), card(number));
        async move {
            let pm = app
                .api(reqwest::Method::POST, "/payment_methods", &key, Some(card))
                .await;
            app.api(
                reqwest::Method::POST,
                &format!("/payment_methods/{}/attach", pm["id"].as_str().unwrap()),
                &key,
                Some(json!({"customer": cus})),
            )
            .await;
        }
    };
    save("4000000000000341").await;
    let sub = app
        .api(
            reqwest::Method::POST,
            "/subscriptions",
            &key,
            Some(json!({"customer": cus["id"], "items": [{"price": price}]})),
        )
        .await;
    assert_eq!(sub["status"], "incomplete");

    // On the dashboard: the subscription, then its invoice with the declined try.
    b.click("nav a[href='/dashboard/subscriptions']").await;
    b.click("#subscriptions a[href^='/dashboard/subscriptions/sub_']")
        .await;
    assert!(b.text("#subscription-status").await.contains("incomplete"));
    b.shot("31-billing-subscription").await;
    b.click(".invoices a[href^='/dashboard/invoices/in_']")
        .await;
    assert!(b.text("#tries").await.contains("Payments tried (1)"));
    assert!(b.text("#tries").await.contains("failed"));
    assert!(b
        .text("#lines")
        .await
        .contains("1 × Gold plan (at 15.00 USD / month)"));
    b.shot("32-billing-invoice").await;

    // The customer's page: the button names the card on file; a new card pays the invoice.
    b.click("a[href^='http'][href*='/invoices/in_']").await;
    assert!(b
        .text("form button")
        .await
        .contains("Pay 15.00 USD with Visa •••• 0341"));
    save("4242424242424242").await;
    b.client.refresh().await.unwrap();
    assert!(b.text("form button").await.contains("•••• 4242"));
    b.shot("33-hosted-invoice").await;
    b.click("form button").await;
    assert_eq!(b.text(".status").await, "Paid");
    b.shot("34-hosted-invoice-paid").await;
    let after = app
        .api(
            reqwest::Method::GET,
            &format!("/subscriptions/{}", sub["id"].as_str().unwrap()),
            &key,
            None,
        )
        .await;
    assert_eq!(after["status"], "active");

    // Back on the dashboard: cancel it.
    b.client
        .goto(&format!(
            "{}/dashboard/subscriptions/{}",
            app.base,
            sub["id"].as_str().unwrap()
        ))
        .await
        .unwrap();
    b.click("form[action$='/cancel'] button").await;
    assert!(b.text(".notice").await.contains("Subscription canceled."));
    assert!(b.text("#subscription-status").await.contains("canceled"));
}

/// The shop's page, on its own origin: tokenises a card with the publishable key straight from
/// the browser, then tries a secret-key route, and writes what it got into `#out`.
const SHOP_PAGE: &str = r#"<!doctype html>
<html><body><pre id="out">working</pre><script>
(async () => {
  const api = "API", out = document.getElementById("out");
  const card = new URLSearchParams({"type": "card", "card[number]": "4242424242424242",
    "card[exp_month]": "12", "card[exp_year]": "2040", "card[cvc]": "123"});
  let pm;
  try {
    const r = await fetch(api + "/v1/payment_methods", {method: "POST", body: card,
      headers: {"Authorization": "Bearer PK", "Content-Type": "application/x-www-form-urlencoded"}});
    pm = await r.json();
  } catch (e) { pm = {error: String(e)}; }
  let secret;
  try {
    await fetch(api + "/v1/customers", {method: "POST", headers: {"Authorization": "Bearer SK"}});
    secret = "read";
  } catch (e) { secret = "blocked"; }
  out.textContent = JSON.stringify({pm: pm.id || pm.error, last4: pm.card && pm.card.last4, secret});
  out.dataset.done = "yes";
})();
</script></body></html>"#;

#[tokio::test]
async fn a_shop_page_on_another_origin_tokenises_a_card_but_no_secret_key_route_answers_it() {
    let Some(b) = Chrome::start().await else {
        return;
    };
    let app = common::spawn_app().await;
    let keys = &app.account.keys.test;
    let page = SHOP_PAGE
        .replace("API", &app.base)
        .replace("PK", &keys.publishable)
        .replace("SK", &keys.secret);
    // Another port of 127.0.0.1: another origin than Tender's.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let shop = format!("http://{}/checkout", listener.local_addr().unwrap());
    let router = axum::Router::new().route(
        "/checkout",
        axum::routing::get(move || async move { axum::response::Html(page) }),
    );
    tokio::spawn(async move { axum::serve(listener, router).await });
    b.client.goto(&shop).await.unwrap();
    // The page marks #out once both calls are answered.
    let out = b.css("#out[data-done]").await.text().await.unwrap();
    let got: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(
        got["pm"].as_str().is_some_and(|p| p.starts_with("pm_")),
        "{got}"
    );
    assert_eq!(got["last4"], "4242");
    assert_eq!(
        got["secret"], "blocked",
        "a secret-key route answered the page"
    );
}

/// A shop's thank-you page, on its own origin: where Checkout sends the customer.
async fn shop() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let app = axum::Router::new().route(
        "/thanks",
        axum::routing::get(|| async {
            axum::response::Html("<!doctype html><h1 id=thanks>Thank you for your order</h1>")
        }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    base
}

/// The hosted Checkout page in a real Chromium, on a desktop and a 390 px phone: the items and
/// the total, a declined card (the reason shown, the number nowhere in the page), another card
/// that pays, and the customer sent on to the shop with the session's id. Then a second
/// session whose card asks for 3-D Secure: Tender's authentication page, and back to the shop.
#[tokio::test]
async fn a_customer_pays_on_the_hosted_checkout_page_after_a_decline_and_with_three_d_secure() {
    let Some(b) = Chrome::start().await else {
        return;
    };
    let app = common::spawn_app().await;
    let key = app.account.keys.test.secret.clone();
    let shop = shop().await;
    let new_session = || {
        let (app, key, shop) = (&app, key.clone(), shop.clone());
        async move {
            app.api(
                reqwest::Method::POST,
                "/checkout_sessions",
                &key,
                Some(json!({
                    "mode": "payment",
                    "success_url": format!("{shop}/thanks?session={{CHECKOUT_SESSION_ID}}"),
                    "cancel_url": format!("{shop}/cart"),
                    "line_items": [
                        {"price_data": {"currency": "eur", "unit_amount": 2400, "product_data": {"name": "Linen apron"}}, "quantity": 2},
                        {"price_data": {"currency": "eur", "unit_amount": 650, "product_data": {"name": "Gift wrap"}}},
                    ],
                })),
            )
            .await
        }
    };
    let session = new_session().await;
    let id = session["id"].as_str().unwrap().to_string();
    b.client
        .goto(session["url"].as_str().unwrap())
        .await
        .unwrap();
    let text = b.page_text().await;
    for shown in ["Linen apron", "Gift wrap", "54.50 EUR", "Pay 54.50 EUR"] {
        assert!(text.contains(shown), "the page shows {shown}: {text}");
    }
    b.shot("40-checkout-desktop").await;
    b.client.set_window_size(390, 844).await.unwrap();
    b.shot("41-checkout-phone").await;

    let fill = |number: &'static str| {
        let b = &b;
        async move {
            b.type_into("#card_number", number).await;
            b.type_into("#card_expiry", "12 / 34").await;
            b.type_into("#card_cvc", "123").await;
        }
    };
    b.type_into("#email", "ada@example.com").await;
    fill("4000 0000 0000 0002").await;
    b.click("button.pay").await;
    assert!(b.text(".notice").await.contains("Your card was declined."));
    let source = b.client.source().await.unwrap();
    assert!(!source.contains("0000 0002") && !source.contains("4000000000000002"));
    b.shot("42-checkout-declined-phone").await;
    b.client.set_window_size(1280, 1000).await.unwrap();

    fill("4242 4242 4242 4242").await;
    b.click("button.pay").await;
    b.css("#thanks").await;
    let landed = b.client.current_url().await.unwrap();
    assert_eq!(landed.path(), "/thanks");
    assert_eq!(landed.query(), Some(format!("session={id}").as_str()));
    let done = app
        .api(
            reqwest::Method::GET,
            &format!("/checkout_sessions/{id}"),
            &key,
            None,
        )
        .await;
    assert_eq!(done["status"], "complete");
    assert_eq!(done["payment_status"], "paid");
    assert_eq!(done["declined_attempts"], 1);

    // 3-D Secure: Tender's authentication page, then back through the session to the shop.
    let session = new_session().await;
    b.client
        .goto(session["url"].as_str().unwrap())
        .await
        .unwrap();
    b.type_into("#email", "kim@example.com").await;
    fill("4000 0025 0000 3155").await;
    b.click("button.pay").await;
    assert!(b.page_text().await.contains("Confirm your payment"));
    b.shot("43-checkout-3ds").await;
    b.click("button[value=complete]").await;
    b.css("#thanks").await;
    let id = session["id"].as_str().unwrap();
    let done = app
        .api(
            reqwest::Method::GET,
            &format!("/checkout_sessions/{id}"),
            &key,
            None,
        )
        .await;
    assert_eq!(done["status"], "complete");

    // A payment link: its address opens a session's page; paid, Tender's confirmation page.
    let product = app
        .api(
            reqwest::Method::POST,
            "/products",
            &key,
            Some(json!({"name": "Concert ticket"})),
        )
        .await;
    let price = app
        .api(
            reqwest::Method::POST,
            "/prices",
            &key,
            Some(json!({"product": product["id"], "currency": "eur", "unit_amount": 3500})),
        )
        .await;
    let link = app
        .api(
            reqwest::Method::POST,
            "/payment_links",
            &key,
            Some(json!({"line_items": [{"price": price["id"]}],
                "after_completion": {"type": "hosted_confirmation",
                    "hosted_confirmation": {"custom_message": "See you at the door."}}})),
        )
        .await;
    b.client.goto(link["url"].as_str().unwrap()).await.unwrap();
    assert!(b.path().await.starts_with("/checkout/cs_"));
    assert!(b.page_text().await.contains("Concert ticket"));
    b.type_into("#email", "lou@example.com").await;
    fill("4242 4242 4242 4242").await;
    b.click("button.pay").await;
    assert!(b.text("#done").await.contains("Payment received"));
    assert!(b.page_text().await.contains("See you at the door."));
    b.shot("44-payment-link-confirmation").await;
}

/// The hosted Checkout page's two other modes in Chromium: a subscription (a declined card,
/// then one that starts it; the customer lands on the shop with the session id) and a card
/// saved for later (setup mode, no e-mail asked: the shop named its customer).
#[tokio::test]
async fn a_customer_subscribes_and_saves_a_card_on_the_hosted_checkout_page() {
    let Some(b) = Chrome::start().await else {
        return;
    };
    let app = common::spawn_app().await;
    let key = app.account.keys.test.secret.clone();
    let shop = shop().await;
    let session = app
        .api(
            reqwest::Method::POST,
            "/checkout_sessions",
            &key,
            Some(json!({
                "mode": "subscription",
                "success_url": format!("{shop}/thanks?session={{CHECKOUT_SESSION_ID}}"),
                "line_items": [{"price_data": {"currency": "eur", "unit_amount": 1200,
                    "product_data": {"name": "Studio plan"}, "recurring": {"interval": "month"}}}],
            })),
        )
        .await;
    let id = session["id"].as_str().unwrap();
    b.client
        .goto(session["url"].as_str().unwrap())
        .await
        .unwrap();
    let text = b.page_text().await;
    assert!(
        text.contains("Studio plan") && text.contains("12.00 EUR"),
        "{text}"
    );
    b.shot("47-checkout-subscription").await;
    b.type_into("#email", "sam@example.com").await;
    for (number, expect_thanks) in [
        ("4000 0000 0000 0002", false),
        ("4242 4242 4242 4242", true),
    ] {
        b.type_into("#card_number", number).await;
        b.type_into("#card_expiry", "12 / 34").await;
        b.type_into("#card_cvc", "123").await;
        b.click("button.pay").await;
        match expect_thanks {
            false => assert!(b.text(".notice").await.contains("Your card was declined.")),
            true => {
                b.css("#thanks").await;
            }
        }
    }
    let done = app
        .api(
            reqwest::Method::GET,
            &format!("/checkout_sessions/{id}"),
            &key,
            None,
        )
        .await;
    assert_eq!(done["status"], "complete");
    let subscription = app
        .api(
            reqwest::Method::GET,
            &format!("/subscriptions/{}", done["subscription"].as_str().unwrap()),
            &key,
            None,
        )
        .await;
    assert_eq!(subscription["status"], "active", "{subscription}");

    // Setup mode: the card is saved to the shop's customer, nothing charged.
    let customer = app
        .api(
            reqwest::Method::POST,
            "/customers",
            &key,
            Some(json!({"email": "kit@example.com"})),
        )
        .await;
    let setup = app
        .api(
            reqwest::Method::POST,
            "/checkout_sessions",
            &key,
            Some(json!({"mode": "setup", "customer": customer["id"],
                "success_url": format!("{shop}/thanks")})),
        )
        .await;
    b.client.goto(setup["url"].as_str().unwrap()).await.unwrap();
    assert!(b.page_text().await.contains("Save card"));
    b.type_into("#card_number", "5555 5555 5555 4444").await;
    b.type_into("#card_expiry", "12 / 34").await;
    b.type_into("#card_cvc", "123").await;
    b.shot("48-checkout-setup").await;
    b.click("button.pay").await;
    b.css("#thanks").await;
    let methods = app
        .api(
            reqwest::Method::GET,
            &format!(
                "/payment_methods?customer={}",
                customer["id"].as_str().unwrap()
            ),
            &key,
            None,
        )
        .await;
    assert_eq!(methods["data"][0]["card"]["last4"], "4444", "{methods}");
}
