//! The dashboard over plain HTTP (no browser): login and its throttle, cookies, CSRF, logout,
//! account isolation, escaping, error pages, and the key, payment and webhook forms.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{spawn_app, spawn_app_with, App, Browser};
use reqwest::{Method, StatusCode};
use serde_json::json;

async fn logged_in(app: &App) -> Browser {
    let mut b = app.browser();
    let page = b.login(&app.account.email, &app.account.password).await;
    assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.body);
    assert_eq!(page.location(), "/dashboard/overview");
    b
}

#[tokio::test]
async fn login_with_a_wrong_password_says_so_and_starts_no_session() {
    let app = spawn_app().await;
    let mut b = app.browser();
    let page = b.login(&app.account.email, "wrong password").await;
    assert_eq!(page.status, StatusCode::UNAUTHORIZED);
    assert!(page.content_type().starts_with("text/html"));
    assert!(page.body.contains("Incorrect e-mail or password."));
    assert!(!b.cookies.contains_key("tender_session"));
    // The same answer for an e-mail nobody has.
    let page = b.login("nobody@example.com", "whatever1").await;
    assert_eq!(page.status, StatusCode::UNAUTHORIZED);
    assert!(page.body.contains("Incorrect e-mail or password."));
    let page = b.get("/dashboard/payments").await;
    assert_eq!(page.status, StatusCode::SEE_OTHER);
    assert_eq!(page.location(), "/dashboard/login");
}

#[tokio::test]
async fn login_is_locked_for_fifteen_minutes_after_five_failures() {
    let app = spawn_app().await;
    let mut b = app.browser();
    for _ in 0..4 {
        assert_eq!(
            b.login(&app.account.email, "nope-nope").await.status,
            StatusCode::UNAUTHORIZED
        );
    }
    let fifth = b.login(&app.account.email, "nope-nope").await;
    assert_eq!(fifth.status, StatusCode::TOO_MANY_REQUESTS);
    assert!(fifth.body.contains("locked for 15 minutes"));
    // Even the right password is refused while locked, and other e-mails are not affected.
    let right = b.login(&app.account.email, &app.account.password).await;
    assert_eq!(right.status, StatusCode::TOO_MANY_REQUESTS);
    assert!(right.body.contains("Too many failed attempts"));
    assert!(!b.cookies.contains_key("tender_session"));
    let other = app.other_account("other-password").await;
    assert_eq!(
        b.login(&other.email, "other-password").await.status,
        StatusCode::SEE_OTHER
    );

    app.clock.advance(15 * 60);
    let mut b = app.browser();
    let page = b.login(&app.account.email, &app.account.password).await;
    assert_eq!(page.status, StatusCode::SEE_OTHER);
}

#[tokio::test]
async fn the_session_cookie_is_http_only_strict_scoped_and_expires() {
    let app = spawn_app().await;
    let mut b = app.browser();
    let page = b.login(&app.account.email, &app.account.password).await;
    let cookie = page
        .set_cookies()
        .into_iter()
        .find(|c| c.starts_with("tender_session="))
        .expect("session cookie");
    for part in [
        "HttpOnly",
        "SameSite=Strict",
        "Path=/dashboard",
        "Max-Age=43200",
    ] {
        assert!(cookie.contains(part), "{cookie} lacks {part}");
    }
    assert!(!cookie.contains("Secure"), "plain HTTP: {cookie}");
    // The login form's own cookie has the same attributes.
    let login = app.browser().get("/dashboard/login").await;
    let c = login.set_cookies().join("\n");
    assert!(c.contains("tender_login=") && c.contains("HttpOnly") && c.contains("SameSite=Strict"));

    let tls = spawn_app_with(|c| c.secure_cookies = true).await;
    let page = tls
        .browser()
        .login(&tls.account.email, &tls.account.password)
        .await;
    assert!(page
        .set_cookies()
        .iter()
        .any(|c| c.starts_with("tender_session=") && c.contains("; Secure")));
}

#[tokio::test]
async fn a_session_expires_after_twelve_hours() {
    let app = spawn_app().await;
    let mut b = logged_in(&app).await;
    assert_eq!(b.get("/dashboard/payments").await.status, StatusCode::OK);
    app.clock.advance(12 * 3600 + 1);
    let page = b.get("/dashboard/payments").await;
    assert_eq!(page.status, StatusCode::SEE_OTHER);
    assert_eq!(page.location(), "/dashboard/login");
}

#[tokio::test]
async fn posts_without_the_right_csrf_token_get_a_403_page() {
    let app = spawn_app().await;
    let mut b = logged_in(&app).await;
    let missing = b.post("/dashboard/keys", &[("kind", "secret")]).await;
    assert_eq!(missing.status, StatusCode::FORBIDDEN);
    assert!(missing.content_type().starts_with("text/html"));
    assert!(missing.body.contains("Form expired"));
    let wrong = b
        .post(
            "/dashboard/keys",
            &[
                ("csrf_token", "0123456789abcdef0123456789abcdef"),
                ("kind", "secret"),
            ],
        )
        .await;
    assert_eq!(wrong.status, StatusCode::FORBIDDEN);
    let wrong_logout = b.post("/dashboard/logout", &[("csrf_token", "x")]).await;
    assert_eq!(wrong_logout.status, StatusCode::FORBIDDEN);
    assert_eq!(
        b.get("/dashboard/payments").await.status,
        StatusCode::OK,
        "still logged in"
    );
    let right = b
        .submit("/dashboard/keys", "/dashboard/keys", &[("kind", "secret")])
        .await;
    assert_eq!(right.status, StatusCode::OK);
    assert!(right.body.contains("sk_test_"));

    // The login form needs its double-submit token too.
    let mut fresh = app.browser();
    let page = fresh
        .post(
            "/dashboard/login",
            &[
                ("email", &app.account.email),
                ("password", &app.account.password),
            ],
        )
        .await;
    assert_eq!(page.status, StatusCode::FORBIDDEN);
    assert!(!fresh.cookies.contains_key("tender_session"));
}

#[tokio::test]
async fn every_form_carries_the_csrf_token() {
    let app = spawn_app().await;
    let key = app.account.keys.test.secret.clone();
    let customer = app
        .api(
            Method::POST,
            "/customers",
            &key,
            Some(json!({"name": "Ada"})),
        )
        .await;
    let pay = app
        .pay(
            &key,
            1500,
            json!({"customer": customer["id"], "capture": false}),
        )
        .await;
    let mut b = logged_in(&app).await;
    let token = b.get("/dashboard/payments").await.csrf();
    for path in [
        "/dashboard/payments".to_string(),
        format!("/dashboard/payments/{}", pay["id"].as_str().unwrap()),
        format!("/dashboard/customers/{}", customer["id"].as_str().unwrap()),
        "/dashboard/keys".into(),
        "/dashboard/webhooks".into(),
        "/dashboard/account".into(),
        "/dashboard/products".into(),
        "/dashboard/subscriptions".into(),
    ] {
        let page = b.get(&path).await;
        assert_eq!(page.status, StatusCode::OK, "{path}");
        let forms = page.body.matches("method=\"post\"").count();
        let tokens = page
            .body
            .matches(&format!("name=\"csrf_token\" value=\"{token}\""))
            .count();
        assert!(
            forms > 0 && forms == tokens,
            "{path}: {forms} forms, {tokens} tokens"
        );
    }
}

#[tokio::test]
async fn logout_ends_the_session_on_the_server_too() {
    let app = spawn_app().await;
    let mut b = logged_in(&app).await;
    let stolen = b.cookies.clone();
    let page = b
        .submit("/dashboard/payments", "/dashboard/logout", &[])
        .await;
    assert_eq!(page.status, StatusCode::SEE_OTHER);
    assert_eq!(page.location(), "/dashboard/login");
    assert!(page
        .set_cookies()
        .iter()
        .any(|c| c.starts_with("tender_session=;") && c.contains("Max-Age=0")));
    assert!(!b.cookies.contains_key("tender_session"));
    // Replaying the old cookie does not work either.
    b.cookies = stolen;
    let page = b.get("/dashboard/payments").await;
    assert_eq!(page.status, StatusCode::SEE_OTHER);
    assert_eq!(page.location(), "/dashboard/login");
}

#[tokio::test]
async fn one_accounts_session_never_reaches_another_accounts_data() {
    let app = spawn_app().await;
    let key_a = app.account.keys.test.secret.clone();
    let customer = app
        .api(
            Method::POST,
            "/customers",
            &key_a,
            Some(json!({"name": "Only A"})),
        )
        .await;
    let pay = app
        .pay(&key_a, 2000, json!({"customer": customer["id"]}))
        .await;
    let pay_id = pay["id"].as_str().unwrap();
    let cus_id = customer["id"].as_str().unwrap();

    let other = app.other_account("password-b").await;
    let mut b = app.browser();
    assert_eq!(
        b.login(&other.email, "password-b").await.status,
        StatusCode::SEE_OTHER
    );
    let page = b.get(&format!("/dashboard/payments/{pay_id}")).await;
    assert_eq!(page.status, StatusCode::NOT_FOUND);
    assert!(page.content_type().starts_with("text/html"));
    assert!(!page.body.contains(pay_id));
    assert_eq!(
        b.get(&format!("/dashboard/customers/{cus_id}"))
            .await
            .status,
        StatusCode::NOT_FOUND
    );
    let list = b.get("/dashboard/payments").await;
    assert!(!list.body.contains(pay_id));
    let list = b.get("/dashboard/customers").await;
    assert!(!list.body.contains(cus_id));
    let refund = b
        .submit(
            "/dashboard/payments",
            &format!("/dashboard/payments/{pay_id}/refund"),
            &[],
        )
        .await;
    assert_eq!(refund.status, StatusCode::NOT_FOUND);
    // A's keys cannot be revoked from B's session.
    let keys = app
        .services
        .store
        .list_api_keys(&app.account.account)
        .await
        .unwrap();
    let revoke = b
        .submit(
            "/dashboard/payments",
            &format!("/dashboard/keys/{}/revoke", keys[0].id),
            &[],
        )
        .await;
    assert_eq!(revoke.status, StatusCode::NOT_FOUND);
    let fetched = app
        .api(Method::GET, &format!("/payments/{pay_id}"), &key_a, None)
        .await;
    assert_eq!(fetched["amount_refunded"], 0);
    assert_eq!(
        app.api(Method::GET, "/customers", &key_a, None).await["data"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[tokio::test]
async fn pages_escape_what_users_typed() {
    let app = spawn_app().await;
    let key = app.account.keys.test.secret.clone();
    let evil = "<script>alert(1)</script>";
    let customer = app
        .api(
            Method::POST,
            "/customers",
            &key,
            Some(json!({"name": evil, "email": "x@example.com", "description": evil, "metadata": {"note": evil}})),
        )
        .await;
    let pay = app
        .pay(
            &key,
            1234,
            json!({"customer": customer["id"], "description": evil, "metadata": {"k": evil}}),
        )
        .await;
    let mut b = logged_in(&app).await;
    b.submit(
        "/dashboard/webhooks",
        "/dashboard/webhooks",
        &[
            ("url", "http://127.0.0.1:9/hook"),
            ("description", evil),
            ("enabled_events", "*"),
        ],
    )
    .await;
    let events = app.api(Method::GET, "/events", &key, None).await;
    let event_id = events["data"][0]["id"].as_str().unwrap().to_string();
    for path in [
        "/dashboard/customers".to_string(),
        format!("/dashboard/customers/{}", customer["id"].as_str().unwrap()),
        "/dashboard/payments".into(),
        format!("/dashboard/payments/{}", pay["id"].as_str().unwrap()),
        "/dashboard/webhooks".into(),
        format!("/dashboard/events/{event_id}"),
        format!("/dashboard/payments?customer={}", urlencode(evil)),
        format!("/dashboard/customers?email={}", urlencode(evil)),
    ] {
        let page = b.get(&path).await;
        assert_eq!(page.status, StatusCode::OK, "{path}");
        assert!(
            !page.body.contains("<script"),
            "{path} has raw user content"
        );
        assert!(
            page.body.contains("&lt;script&gt;"),
            "{path} lacks the escaped text"
        );
    }
    // The account's own name (set by the operator) is escaped too.
    let named = app
        .services
        .accounts()
        .create_account(
            "named@example.com",
            Some(evil.into()),
            Some("password-n".into()),
        )
        .await
        .unwrap();
    let mut n = app.browser();
    n.login(&named.email, "password-n").await;
    let page = n.get("/dashboard/account").await;
    assert!(!page.body.contains("<script") && page.body.contains("&lt;script&gt;"));

    let csp = b.get("/dashboard/payments").await;
    assert!(csp.headers["content-security-policy"]
        .to_str()
        .unwrap()
        .contains("default-src 'none'"));
}

fn urlencode(s: &str) -> String {
    form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

#[tokio::test]
async fn unknown_dashboard_paths_get_an_html_404_and_the_api_keeps_json() {
    let app = spawn_app().await;
    let mut b = logged_in(&app).await;
    let page = b.get("/dashboard/nothing-here").await;
    assert_eq!(page.status, StatusCode::NOT_FOUND);
    assert!(page.content_type().starts_with("text/html"));
    assert!(page.body.contains("Not found"));
    let page = b.get("/dashboard/payments/pay_doesnotexist").await;
    assert_eq!(page.status, StatusCode::NOT_FOUND);
    assert!(page.content_type().starts_with("text/html"));
    let page = b.post("/dashboard/payments", &[]).await;
    assert_eq!(page.status, StatusCode::METHOD_NOT_ALLOWED);
    assert!(page.content_type().starts_with("text/html"));
    let api = b.get("/v2/nothing-here").await;
    assert!(api.content_type().starts_with("application/json"));
    assert!(api.headers.contains_key("request-id"));
    let root = b.get("/nothing").await;
    assert!(root.content_type().starts_with("application/json"));
    let css = b.get("/dashboard/static/style.css").await;
    assert_eq!(css.status, StatusCode::OK);
    assert!(css.content_type().starts_with("text/css"));
    let home = b.get("/dashboard").await;
    assert_eq!(home.location(), "/dashboard/overview");
}

#[tokio::test]
async fn keys_are_created_shown_once_rolled_and_revoked() {
    let app = spawn_app().await;
    let mut b = logged_in(&app).await;
    let page = b
        .submit("/dashboard/keys", "/dashboard/keys", &[("kind", "secret")])
        .await;
    let key = extract(&page.body, "id=\"new-key\">", "<");
    assert!(key.starts_with("sk_test_"), "{key}");
    app.api(Method::GET, "/payments", &key, None).await;
    // Listed afterwards by its last four only.
    let list = b.get("/dashboard/keys").await;
    assert!(!list.body.contains(&key));
    assert!(list.body.contains(&format!("…{}", &key[key.len() - 4..])));

    let keys = app
        .services
        .store
        .list_api_keys(&app.account.account)
        .await
        .unwrap();
    let id = &keys
        .iter()
        .find(|k| k.last4 == key[key.len() - 4..])
        .unwrap()
        .id;
    let rolled = b
        .submit(
            "/dashboard/keys",
            &format!("/dashboard/keys/{id}/roll"),
            &[("grace", "0")],
        )
        .await;
    assert_eq!(rolled.status, StatusCode::OK);
    let new_key = extract(&rolled.body, "id=\"new-key\">", "<");
    assert_ne!(new_key, key);
    assert_eq!(api_status(&app, &key).await, StatusCode::UNAUTHORIZED);
    assert_eq!(api_status(&app, &new_key).await, StatusCode::OK);

    let too_long = b
        .submit(
            "/dashboard/keys",
            &format!("/dashboard/keys/{id}/roll"),
            &[("grace", "700000")],
        )
        .await;
    assert_eq!(too_long.status, StatusCode::BAD_REQUEST);
    assert!(too_long.body.contains("between 0 and 7 days"));

    let keys = app
        .services
        .store
        .list_api_keys(&app.account.account)
        .await
        .unwrap();
    let new_id = &keys
        .iter()
        .find(|k| k.last4 == new_key[new_key.len() - 4..])
        .unwrap()
        .id;
    let revoked = b
        .submit(
            "/dashboard/keys",
            &format!("/dashboard/keys/{new_id}/revoke"),
            &[],
        )
        .await;
    assert_eq!(revoked.status, StatusCode::SEE_OTHER);
    assert_eq!(api_status(&app, &new_key).await, StatusCode::UNAUTHORIZED);
    assert!(b
        .get(revoked.location())
        .await
        .body
        .contains("The key was revoked."));

    // A revoked key cannot be brought back by rolling it (security review M1).
    let revived = b
        .submit(
            "/dashboard/keys",
            &format!("/dashboard/keys/{new_id}/roll"),
            &[("grace", "604800")],
        )
        .await;
    assert_eq!(revived.status, StatusCode::BAD_REQUEST);
    assert!(
        revived.body.contains("cannot be rolled"),
        "{}",
        revived.body
    );
    assert_eq!(api_status(&app, &new_key).await, StatusCode::UNAUTHORIZED);
}

async fn api_status(app: &App, key: &str) -> StatusCode {
    reqwest::Client::new()
        .get(format!("{}/v2/payments", app.base))
        .bearer_auth(key)
        .send()
        .await
        .unwrap()
        .status()
}

fn extract(body: &str, after: &str, until: &str) -> String {
    let start = body
        .find(after)
        .unwrap_or_else(|| panic!("{after} not in page"))
        + after.len();
    let end = body[start..].find(until).unwrap() + start;
    body[start..end].to_string()
}

#[tokio::test]
async fn payment_actions_show_mistakes_on_the_page_and_succeed_otherwise() {
    let app = spawn_app().await;
    let key = app.account.keys.test.secret.clone();
    let pay = app.pay(&key, 1000, json!({})).await;
    let id = pay["id"].as_str().unwrap();
    let path = format!("/dashboard/payments/{id}");
    let mut b = logged_in(&app).await;

    let bad = b
        .submit(&path, &format!("{path}/refund"), &[("amount", "abc")])
        .await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    assert!(bad.body.contains("Enter the amount in USD"), "{}", bad.body);
    let too_much = b
        .submit(&path, &format!("{path}/refund"), &[("amount", "11.00")])
        .await;
    assert_eq!(too_much.status, StatusCode::BAD_REQUEST);
    assert!(too_much.body.contains("notice error"));
    let capture = b.submit(&path, &format!("{path}/capture"), &[]).await;
    assert_eq!(capture.status, StatusCode::BAD_REQUEST);
    assert!(capture.body.contains("succeeded"));

    // A refund asks for confirmation first, and nothing moves until it is given.
    let confirm = b
        .submit(
            &path,
            &format!("{path}/refund"),
            &[("amount", "2.50"), ("reason", "duplicate")],
        )
        .await;
    assert_eq!(confirm.status, StatusCode::OK);
    assert!(
        confirm.body.contains("Refund 2.50 USD of this payment"),
        "{}",
        confirm.body
    );
    assert!(confirm.body.contains("name=\"confirmed\" value=\"yes\""));
    let untouched = app
        .api(Method::GET, &format!("/payments/{id}"), &key, None)
        .await;
    assert_eq!(untouched["amount_refunded"], 0);
    let ok = b
        .submit(
            &path,
            &format!("{path}/refund"),
            &[
                ("amount", "2.50"),
                ("reason", "duplicate"),
                ("confirmed", "yes"),
            ],
        )
        .await;
    assert_eq!(ok.status, StatusCode::SEE_OTHER);
    let page = b.get(ok.location()).await;
    assert!(page.body.contains("Refund created."));
    assert!(page.body.contains("2.50 USD"));
    let fetched = app
        .api(Method::GET, &format!("/payments/{id}"), &key, None)
        .await;
    assert_eq!(fetched["amount_refunded"], 250);

    // Capture and cancel of uncaptured payments.
    let held = app.pay(&key, 3000, json!({"capture": false})).await;
    let held_path = format!("/dashboard/payments/{}", held["id"].as_str().unwrap());
    let cap = b
        .submit(
            &held_path,
            &format!("{held_path}/capture"),
            &[("amount", "20"), ("confirmed", "yes")],
        )
        .await;
    assert_eq!(cap.status, StatusCode::SEE_OTHER);
    let held = app
        .api(
            Method::GET,
            &format!("/payments/{}", held["id"].as_str().unwrap()),
            &key,
            None,
        )
        .await;
    assert_eq!(held["status"], "succeeded");
    assert_eq!(held["amount_captured"], 2000);
    let other = app.pay(&key, 3000, json!({"capture": false})).await;
    let other_path = format!("/dashboard/payments/{}", other["id"].as_str().unwrap());
    let cancel = b
        .submit(&other_path, &format!("{other_path}/cancel"), &[])
        .await;
    assert_eq!(cancel.status, StatusCode::OK, "a confirmation page first");
    assert!(cancel.body.contains("Cancel this payment of 30.00 USD?"));
    let cancel = b
        .submit(
            &other_path,
            &format!("{other_path}/cancel"),
            &[("confirmed", "yes")],
        )
        .await;
    assert_eq!(cancel.status, StatusCode::SEE_OTHER);
    assert!(b
        .get(cancel.location())
        .await
        .body
        .contains("Payment canceled."));
}

#[tokio::test]
async fn payments_are_filtered_and_paged() {
    let app = spawn_app().await;
    let key = app.account.keys.test.secret.clone();
    let mut ids = Vec::new();
    for i in 0..25 {
        let p = app.pay(&key, 100 + i, json!({"capture": i % 5 != 0})).await;
        ids.push(p["id"].as_str().unwrap().to_string());
    }
    let mut b = logged_in(&app).await;
    let first = b.get("/dashboard/payments").await;
    assert!(first.body.contains(&ids[24]) && !first.body.contains(&ids[4]));
    let older = extract(
        &first.body,
        "href=\"/dashboard/payments?starting_after=",
        "\"",
    );
    let second = b
        .get(&format!("/dashboard/payments?starting_after={older}"))
        .await;
    assert!(second.body.contains(&ids[0]) && !second.body.contains(&ids[24]));
    assert!(
        second.body.contains("ending_before="),
        "a link back to newer payments"
    );
    let held = b.get("/dashboard/payments?status=requires_capture").await;
    assert_eq!(held.body.matches("class=\"badge warn\"").count(), 5);
    let bad = b.get("/dashboard/payments?starting_after=pay_nope").await;
    assert_eq!(bad.status, StatusCode::OK);
    assert!(bad.body.contains("notice error"));
}

#[tokio::test]
async fn the_mode_switch_shows_the_other_modes_data() {
    let app = spawn_app().await;
    let test_pay = app.pay(&app.account.keys.test.secret, 700, json!({})).await;
    // Live mode declines test cards, but the failed payment is recorded in live mode.
    let declined: serde_json::Value = reqwest::Client::new()
        .post(format!("{}/v2/payments", app.base))
        .bearer_auth(&app.account.keys.live.secret)
        .json(&json!({"amount": 800, "currency": "usd", "payment_method": {"type": "card",
            "card": {"number": "4242424242424242", "exp_month": 12, "exp_year": 2034, "cvc": "123"}}}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let live_pay = json!({"id": declined["error"]["payment"]});
    let mut b = logged_in(&app).await;
    let page = b.get("/dashboard/payments").await;
    assert!(page.body.contains(test_pay["id"].as_str().unwrap()));
    assert!(!page.body.contains(live_pay["id"].as_str().unwrap()));
    assert!(page.body.contains("Test mode"));
    let switched = b
        .submit(
            "/dashboard/payments",
            "/dashboard/mode",
            &[("mode", "live"), ("return_to", "/dashboard/payments")],
        )
        .await;
    assert_eq!(switched.location(), "/dashboard/payments");
    let page = b.get("/dashboard/payments").await;
    assert!(!page.body.contains(test_pay["id"].as_str().unwrap()));
    assert!(page.body.contains(live_pay["id"].as_str().unwrap()));
    assert!(!page.body.contains("Test mode"));
    let keys = b.get("/dashboard/keys").await;
    assert!(keys.body.contains("pk_live_") && !keys.body.contains("pk_test_"));
}

#[tokio::test]
async fn password_change_needs_the_current_password() {
    let app = spawn_app().await;
    let mut b = logged_in(&app).await;
    let wrong = b
        .submit(
            "/dashboard/account",
            "/dashboard/account/password",
            &[
                ("current_password", "not it"),
                ("new_password", "new-password-1"),
                ("confirm_password", "new-password-1"),
            ],
        )
        .await;
    assert_eq!(wrong.status, StatusCode::BAD_REQUEST);
    assert!(wrong.body.contains("The current password is wrong."));
    let mismatch = b
        .submit(
            "/dashboard/account",
            "/dashboard/account/password",
            &[
                ("current_password", &app.account.password),
                ("new_password", "new-password-1"),
                ("confirm_password", "other"),
            ],
        )
        .await;
    assert!(mismatch.body.contains("do not match"));
    let ok = b
        .submit(
            "/dashboard/account",
            "/dashboard/account/password",
            &[
                ("current_password", &app.account.password),
                ("new_password", "new-password-1"),
                ("confirm_password", "new-password-1"),
            ],
        )
        .await;
    assert_eq!(ok.status, StatusCode::SEE_OTHER);
    assert_eq!(
        app.browser()
            .login(&app.account.email, "new-password-1")
            .await
            .status,
        StatusCode::SEE_OTHER
    );
    assert_eq!(
        app.browser()
            .login(&app.account.email, &app.account.password)
            .await
            .status,
        StatusCode::UNAUTHORIZED
    );
}

#[tokio::test]
async fn webhook_endpoints_are_added_with_their_secret_shown_once_disabled_and_deleted() {
    let app = spawn_app().await;
    let mut b = logged_in(&app).await;
    let bad = b
        .submit(
            "/dashboard/webhooks",
            "/dashboard/webhooks",
            &[("url", "not a url"), ("enabled_events", "*")],
        )
        .await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    assert!(bad.body.contains("notice error"));
    let added = b
        .submit(
            "/dashboard/webhooks",
            "/dashboard/webhooks",
            &[
                ("url", "http://127.0.0.1:9/hook"),
                ("enabled_events", "payment.succeeded"),
            ],
        )
        .await;
    assert_eq!(added.status, StatusCode::OK);
    let secret = extract(&added.body, "id=\"endpoint-secret\">", "<");
    assert!(secret.starts_with("whsec_"));
    let list = b.get("/dashboard/webhooks").await;
    assert!(!list.body.contains(&secret));
    let key = app.account.keys.test.secret.clone();
    let endpoints = app.api(Method::GET, "/webhook_endpoints", &key, None).await;
    let id = endpoints["data"][0]["id"].as_str().unwrap().to_string();
    assert_eq!(
        endpoints["data"][0]["enabled_events"],
        json!(["payment.succeeded"])
    );
    let page = b
        .submit(
            "/dashboard/webhooks",
            &format!("/dashboard/webhooks/{id}/disable"),
            &[],
        )
        .await;
    assert_eq!(page.status, StatusCode::SEE_OTHER);
    let e = app
        .api(Method::GET, &format!("/webhook_endpoints/{id}"), &key, None)
        .await;
    assert_eq!(e["status"], "disabled");
    b.submit(
        "/dashboard/webhooks",
        &format!("/dashboard/webhooks/{id}/enable"),
        &[],
    )
    .await;
    let e = app
        .api(Method::GET, &format!("/webhook_endpoints/{id}"), &key, None)
        .await;
    assert_eq!(e["status"], "enabled");

    // The event's page shows its delivery and lets it be resent.
    let pay = app.pay(&key, 500, json!({})).await;
    let events = app
        .api(Method::GET, "/events?type=payment.succeeded", &key, None)
        .await;
    let event_id = events["data"][0]["id"].as_str().unwrap().to_string();
    assert_eq!(events["data"][0]["data"]["object"]["id"], pay["id"]);
    let page = b.get(&format!("/dashboard/events/{event_id}")).await;
    assert!(page.body.contains("http://127.0.0.1:9/hook"));
    let resent = b
        .submit(
            &format!("/dashboard/events/{event_id}"),
            &format!("/dashboard/events/{event_id}/resend"),
            &[("webhook_endpoint", &id)],
        )
        .await;
    assert_eq!(resent.status, StatusCode::SEE_OTHER);
    assert!(b
        .get(resent.location())
        .await
        .body
        .contains("Delivery scheduled"));

    let deleted = b
        .submit(
            "/dashboard/webhooks",
            &format!("/dashboard/webhooks/{id}/delete"),
            &[],
        )
        .await;
    assert_eq!(deleted.status, StatusCode::SEE_OTHER);
    let list = app.api(Method::GET, "/webhook_endpoints", &key, None).await;
    assert_eq!(list["data"].as_array().unwrap().len(), 0);
}

/// Security review L7: a changed password ends every other session of the account (whoever
/// logged in with the old password is out), and a wrong current password counts as a failed
/// login.
#[tokio::test]
async fn a_password_change_ends_the_other_sessions_and_wrong_current_passwords_are_throttled() {
    let app = spawn_app().await;
    let mut mine = logged_in(&app).await;
    let mut theirs = logged_in(&app).await;
    let ok = mine
        .submit(
            "/dashboard/account",
            "/dashboard/account/password",
            &[
                ("current_password", &app.account.password),
                ("new_password", "new-password-1"),
                ("confirm_password", "new-password-1"),
            ],
        )
        .await;
    assert_eq!(ok.status, StatusCode::SEE_OTHER);
    assert_eq!(mine.get("/dashboard/payments").await.status, StatusCode::OK);
    let out = theirs.get("/dashboard/payments").await;
    assert_eq!(out.status, StatusCode::SEE_OTHER);
    assert_eq!(out.location(), "/dashboard/login");

    let mut last = StatusCode::OK;
    for _ in 0..6 {
        last = mine
            .submit(
                "/dashboard/account",
                "/dashboard/account/password",
                &[
                    ("current_password", "a wrong guess"),
                    ("new_password", "new-password-2"),
                    ("confirm_password", "new-password-2"),
                ],
            )
            .await
            .status;
    }
    assert_eq!(last, StatusCode::TOO_MANY_REQUESTS);
}

/// Security review L4: forty logins at once (thirty-nine wrong, one right) evaluate at most
/// five guesses; the rest are refused before any password is checked.
#[tokio::test]
async fn concurrent_logins_cannot_race_past_the_throttle() {
    let app = spawn_app().await;
    let attempts = (0..40).map(|i| {
        let mut b = app.browser();
        let email = app.account.email.clone();
        let password = if i == 20 {
            app.account.password.clone()
        } else {
            format!("wrong-{i}")
        };
        async move { b.login(&email, &password).await.status }
    });
    let statuses = futures::future::join_all(attempts).await;
    let evaluated = statuses
        .iter()
        .filter(|s| **s != StatusCode::TOO_MANY_REQUESTS)
        .count();
    let wrong_evaluated = statuses
        .iter()
        .filter(|s| **s == StatusCode::UNAUTHORIZED)
        .count();
    assert!(
        wrong_evaluated < 5 && evaluated <= 5,
        "{evaluated} passwords checked: {statuses:?}"
    );
}

/// First-run review finding 7: the business name and public e-mail customers see are set on the
/// Account page; a bad e-mail is shown as a mistake.
#[tokio::test]
async fn the_business_name_and_public_email_are_set_on_the_account_page() {
    let app = spawn_app().await;
    let mut b = logged_in(&app).await;
    let bad = b
        .submit(
            "/dashboard/account",
            "/dashboard/account/profile",
            &[("name", "Corner Café"), ("public_email", "not an e-mail")],
        )
        .await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    assert!(bad.body.contains("Invalid email address."));
    let saved = b
        .submit(
            "/dashboard/account",
            "/dashboard/account/profile",
            &[
                ("name", "Corner Café"),
                ("public_email", "hello@corner.example"),
            ],
        )
        .await;
    assert_eq!(saved.status, StatusCode::SEE_OTHER);
    let page = b.get(saved.location()).await;
    assert!(page.body.contains("Saved."));
    assert!(page.body.contains("value=\"Corner Café\""));
    let account = app
        .services
        .store
        .find_account(&app.account.account)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(account.name.as_deref(), Some("Corner Café"));
    assert_eq!(
        account.public_email.as_deref(),
        Some("hello@corner.example")
    );
}

/// First-run review finding 7: payments export to CSV (quoted cells, no formula injection) and
/// the bare address leads to the dashboard.
#[tokio::test]
async fn payments_export_as_csv_and_the_bare_address_leads_to_the_dashboard() {
    let app = spawn_app().await;
    let key = app.account.keys.test.secret.clone();
    app.pay(&key, 2500, json!({"description": "=HYPERLINK(\"x\")"}))
        .await;
    app.pay(&key, 1999, json!({"description": "Order \"1002\", blue"}))
        .await;
    let mut b = logged_in(&app).await;
    let csv = b.get("/dashboard/payments.csv").await;
    assert_eq!(csv.status, StatusCode::OK);
    assert!(csv.content_type().starts_with("text/csv"));
    let lines: Vec<&str> = csv.body.lines().collect();
    assert_eq!(lines.len(), 3, "{}", csv.body);
    assert!(lines[0].starts_with("id,created_utc,amount,currency,status"));
    assert!(
        lines[1].contains("\"19.99\",\"usd\",\"succeeded\""),
        "{}",
        lines[1]
    );
    assert!(
        lines[1].contains("\"Order \"\"1002\"\", blue\""),
        "{}",
        lines[1]
    );
    assert!(
        lines[2].contains("\"'=HYPERLINK(\"\"x\"\")\""),
        "{}",
        lines[2]
    );

    let root = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
        .get(format!("{}/", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(root.status(), StatusCode::SEE_OTHER);
    assert_eq!(root.headers()["location"], "/dashboard");
}

/// First-run review finding 7: customers are created and edited on the dashboard, with
/// mistakes shown on the page.
#[tokio::test]
async fn customers_are_created_and_edited_on_the_dashboard() {
    let app = spawn_app().await;
    let mut b = logged_in(&app).await;
    let bad = b
        .submit(
            "/dashboard/customers",
            "/dashboard/customers",
            &[("name", "Ada"), ("email", "not-an-email")],
        )
        .await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    assert!(bad.body.contains("notice error"), "{}", bad.body);
    let created = b
        .submit(
            "/dashboard/customers",
            "/dashboard/customers",
            &[
                ("name", "Ada Lovelace"),
                ("email", "ada@example.com"),
                ("phone", "+442071234567"),
            ],
        )
        .await;
    assert_eq!(created.status, StatusCode::SEE_OTHER);
    let path = created.location().split('?').next().unwrap().to_string();
    let page = b.get(created.location()).await;
    assert!(page.body.contains("Customer created."));
    assert!(page.body.contains("Ada Lovelace"));
    let edited = b
        .submit(
            &path,
            &path,
            &[
                ("name", "Ada King"),
                ("email", "ada@example.com"),
                ("phone", ""),
            ],
        )
        .await;
    assert_eq!(edited.status, StatusCode::SEE_OTHER);
    let id = path.rsplit('/').next().unwrap();
    let key = app.account.keys.test.secret.clone();
    let c = app
        .api(Method::GET, &format!("/customers/{id}"), &key, None)
        .await;
    assert_eq!(c["name"], "Ada King");
    assert_eq!(
        c["phone"],
        serde_json::Value::Null,
        "a blank field clears it"
    );
}

/// First-run review finding 7: a webhook endpoint is edited, and its secret rolled, on the
/// dashboard; the new secret is shown once.
#[tokio::test]
async fn webhook_endpoints_are_edited_and_their_secret_rolled_on_the_dashboard() {
    let app = spawn_app().await;
    let key = app.account.keys.test.secret.clone();
    let e = app
        .api(
            Method::POST,
            "/webhook_endpoints",
            &key,
            Some(json!({"url": "http://127.0.0.1:9/old", "enabled_events": ["*"]})),
        )
        .await;
    let id = e["id"].as_str().unwrap();
    let old_secret = e["secret"].as_str().unwrap();
    let mut b = logged_in(&app).await;
    let edited = b
        .submit(
            "/dashboard/webhooks",
            &format!("/dashboard/webhooks/{id}/edit"),
            &[
                ("url", "http://127.0.0.1:9/new"),
                ("description", "orders"),
                ("enabled_events", "payment.succeeded"),
            ],
        )
        .await;
    assert_eq!(edited.status, StatusCode::SEE_OTHER);
    let now = app
        .api(Method::GET, &format!("/webhook_endpoints/{id}"), &key, None)
        .await;
    assert_eq!(now["url"], "http://127.0.0.1:9/new");
    assert_eq!(now["enabled_events"], json!(["payment.succeeded"]));
    let rolled = b
        .submit(
            "/dashboard/webhooks",
            &format!("/dashboard/webhooks/{id}/roll"),
            &[],
        )
        .await;
    assert_eq!(rolled.status, StatusCode::OK);
    let secret = extract(&rolled.body, "id=\"endpoint-secret\">", "<");
    assert!(
        secret.starts_with("whsec_") && secret != old_secret,
        "{secret}"
    );
    assert!(
        !b.get("/dashboard/webhooks").await.body.contains(&secret),
        "shown once"
    );
}

/// First-run review finding 7: times show seconds, in the time zone the viewer chose, summer
/// time included (second review: a fixed offset was an hour off half the year).
#[tokio::test]
async fn times_show_seconds_in_the_viewers_time_zone() {
    use chrono::TimeZone;
    let app = spawn_app().await;
    let key = app.account.keys.test.secret.clone();
    let p = app.pay(&key, 1234, json!({})).await;
    let created = p["created"].as_i64().unwrap();
    let mut b = logged_in(&app).await;
    let path = format!("/dashboard/payments/{}", p["id"].as_str().unwrap());
    let utc = tender_core::clock::format_local(created, 0);
    assert!(b.get(&path).await.body.contains(&format!("{utc} UTC")));
    let set = b
        .submit(
            "/dashboard/account",
            "/dashboard/account/timezone",
            &[("zone", "Europe/Berlin")],
        )
        .await;
    assert_eq!(set.status, StatusCode::SEE_OTHER);
    // Berlin's own offset at that moment: +1 in winter (CET), +2 in summer (CEST).
    let berlin = chrono_tz::Europe::Berlin
        .timestamp_opt(created, 0)
        .unwrap()
        .format("%Y-%m-%d %H:%M:%S %Z")
        .to_string();
    assert!(
        berlin.ends_with(" CET") || berlin.ends_with(" CEST"),
        "{berlin}"
    );
    let page = b.get(&path).await;
    assert!(page.body.contains(&berlin), "{berlin}: {}", page.body);
    for bad in ["Mars/Olympus_Mons", "120", "Etc/GMT+5"] {
        let refused = b
            .submit(
                "/dashboard/account",
                "/dashboard/account/timezone",
                &[("zone", bad)],
            )
            .await;
        assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{bad}");
    }
}

/// First-run review finding 7: payments are filtered by date.
#[tokio::test]
async fn payments_are_filtered_by_date() {
    let app = spawn_app().await;
    let key = app.account.keys.test.secret.clone();
    let old = app.pay(&key, 1111, json!({})).await;
    app.clock.advance(3 * 86_400);
    let new = app.pay(&key, 2222, json!({})).await;
    let day = |p: &serde_json::Value| {
        tender_core::clock::format_local(p["created"].as_i64().unwrap(), 0)[..10].to_string()
    };
    let mut b = logged_in(&app).await;
    let page = b
        .get(&format!("/dashboard/payments?from={}", day(&new)))
        .await;
    assert!(page.body.contains(new["id"].as_str().unwrap()));
    assert!(!page.body.contains(old["id"].as_str().unwrap()));
    let page = b
        .get(&format!("/dashboard/payments?to={}", day(&old)))
        .await;
    assert!(page.body.contains(old["id"].as_str().unwrap()));
    assert!(!page.body.contains(new["id"].as_str().unwrap()));
    let bad = b.get("/dashboard/payments?from=yesterday").await;
    assert!(bad.body.contains("Dates are written YYYY-MM-DD."));
}

#[tokio::test]
async fn connectors_are_added_reordered_disabled_rotated_and_deleted_without_showing_secrets() {
    let app = spawn_app().await;
    let key = app.account.keys.test.secret.clone();
    let mut b = logged_in(&app).await;
    let empty = b.get("/dashboard/connectors").await;
    assert!(empty.body.contains("built-in simulator"), "{}", empty.body);
    let bad = b
        .submit(
            "/dashboard/connectors",
            "/dashboard/connectors",
            &[("type", "stripe"), ("api_key", "sk_live_wrongmode")],
        )
        .await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    assert!(bad.body.contains("notice error"));
    let added = b
        .submit(
            "/dashboard/connectors",
            "/dashboard/connectors",
            &[
                ("type", "stripe"),
                ("name", "Stripe EU"),
                ("api_key", "sk_test_dashboard4321"),
                ("webhook_secret", "whsec_dashboard_secret"),
                ("priority", "3"),
            ],
        )
        .await;
    assert_eq!(added.status, StatusCode::SEE_OTHER);
    let list = b.get("/dashboard/connectors").await;
    assert!(list.body.contains("Stripe EU") && list.body.contains("…4321"));
    assert!(!list.body.contains("sk_test_dashboard4321"));
    assert!(!list.body.contains("whsec_dashboard_secret"));
    let connectors = app.api(Method::GET, "/connectors", &key, None).await;
    let id = connectors["data"][0]["id"].as_str().unwrap().to_string();
    assert_eq!(connectors["data"][0]["priority"], 3);
    assert_eq!(connectors["data"][0]["raw_card_data"], false);
    // Reorder and rotate the key.
    let edited = b
        .submit(
            "/dashboard/connectors",
            &format!("/dashboard/connectors/{id}/edit"),
            &[
                ("name", "Stripe EU"),
                ("priority", "1"),
                ("api_key", "sk_test_rotated9999"),
            ],
        )
        .await;
    assert_eq!(edited.status, StatusCode::SEE_OTHER);
    let c = app
        .api(Method::GET, &format!("/connectors/{id}"), &key, None)
        .await;
    assert_eq!(c["priority"], 1);
    assert_eq!(c["api_key_last4"], "9999");
    b.submit(
        "/dashboard/connectors",
        &format!("/dashboard/connectors/{id}/disable"),
        &[],
    )
    .await;
    let c = app
        .api(Method::GET, &format!("/connectors/{id}"), &key, None)
        .await;
    assert_eq!(c["status"], "disabled");
    // A payment with the connector disabled goes to the simulator, and its page says so.
    let paid = app
        .api(
            Method::POST,
            "/payments",
            &key,
            Some(json!({"amount": 1000, "currency": "usd", "payment_method": {"type": "card",
                "card": {"number": "4242424242424242", "exp_month": 12, "exp_year": 2034, "cvc": "123"}}})),
        )
        .await;
    let page = b
        .get(&format!(
            "/dashboard/payments/{}",
            paid["id"].as_str().unwrap()
        ))
        .await;
    assert!(
        page.body.contains("Tender&#39;s simulator") || page.body.contains("Tender's simulator")
    );
    let deleted = b
        .submit(
            "/dashboard/connectors",
            &format!("/dashboard/connectors/{id}/delete"),
            &[],
        )
        .await;
    assert_eq!(deleted.status, StatusCode::SEE_OTHER);
    let gone = app.api(Method::GET, "/connectors", &key, None).await;
    assert_eq!(gone["data"], json!([]));
}

#[tokio::test]
async fn a_payments_page_names_the_connector_and_the_processors_reference() {
    let app = spawn_app().await;
    let key = app.account.keys.test.secret.clone();
    let conn = app
        .api(
            Method::POST,
            "/connectors",
            &key,
            Some(json!({"type": "simulator"})),
        )
        .await;
    let paid = app
        .api(
            Method::POST,
            "/payments",
            &key,
            Some(json!({"amount": 1000, "currency": "usd", "payment_method": {"type": "card",
                "card": {"number": "4242424242424242", "exp_month": 12, "exp_year": 2034, "cvc": "123"}}})),
        )
        .await;
    let mut b = logged_in(&app).await;
    let page = b
        .get(&format!(
            "/dashboard/payments/{}",
            paid["id"].as_str().unwrap()
        ))
        .await;
    assert!(page.body.contains(conn["id"].as_str().unwrap()));
    assert!(page
        .body
        .contains(paid["connector_reference"].as_str().unwrap()));
}

/// The money forms: a payout below the currency's minimum is refused as the API refuses it, and
/// an evidence field emptied on the form is cleared (not kept).
#[tokio::test]
async fn payout_and_evidence_forms_check_and_clear_as_the_api_does() {
    // Stepped: the dispute's task runs where the loop below runs it, not on the server's runner.
    let app = spawn_app_with(|c| c.run_tasks = false).await;
    let key = app.account.keys.test.secret.clone();
    let p = app
        .pay(
            &key,
            5_000,
            json!({"payment_method": {"type": "card", "card": {
                "number": "4000000000000259", "exp_month": 12, "exp_year": 2034, "cvc": "123"}}}),
        )
        .await;
    let mut dispute = serde_json::Value::Null;
    for _ in 0..100 {
        app.clock.advance(3);
        app.services.run_due_tasks(100).await.unwrap();
        let list = app
            .api(
                Method::GET,
                &format!("/disputes?payment={}", p["id"].as_str().unwrap()),
                &key,
                None,
            )
            .await;
        if let Some(d) = list["data"].as_array().unwrap().first() {
            dispute = d.clone();
            break;
        }
    }
    let id = dispute["id"]
        .as_str()
        .expect("the payment was disputed")
        .to_string();
    let mut b = logged_in(&app).await;

    let small = b
        .submit(
            "/dashboard/balance",
            "/dashboard/payouts",
            &[
                ("amount", "0.10"),
                ("currency", "usd"),
                ("iban", "DE89370400440532013000"),
                ("account_holder_name", "Shop"),
            ],
        )
        .await;
    assert_eq!(small.status, StatusCode::BAD_REQUEST, "{}", small.body);
    assert!(small.body.contains("at least"), "{}", small.body);

    let page = format!("/dashboard/disputes/{id}");
    let action = format!("/dashboard/disputes/{id}/evidence");
    let fields = |name: &'static str| {
        [
            ("customer_name", name),
            ("customer_email_address", ""),
            ("product_description", "A lamp"),
            ("uncategorized_text", ""),
        ]
    };
    let saved = b.submit(&page, &action, &fields("Ada Lovelace")).await;
    assert_eq!(saved.status, StatusCode::SEE_OTHER, "{}", saved.body);
    let d = app
        .api(Method::GET, &format!("/disputes/{id}"), &key, None)
        .await;
    assert_eq!(d["evidence"]["customer_name"], "Ada Lovelace");
    let cleared = b.submit(&page, &action, &fields("")).await;
    assert_eq!(cleared.status, StatusCode::SEE_OTHER, "{}", cleared.body);
    let d = app
        .api(Method::GET, &format!("/disputes/{id}"), &key, None)
        .await;
    assert_eq!(
        d["evidence"]["customer_name"],
        serde_json::Value::Null,
        "{d}"
    );
    assert_eq!(d["evidence"]["product_description"], "A lamp");
    assert_eq!(d["status"], "needs_response");
}

/// Billing on the dashboard (CONTRACT §10): a product and its price are made with forms (a
/// mistake shown on the page), a subscription shows its plan, period and invoices, an invoice
/// its lines and every payment tried, and a subscription is canceled with a button.
#[tokio::test]
async fn billing_pages_make_products_and_prices_and_show_and_cancel_subscriptions() {
    let app = spawn_app().await;
    let key = app.account.keys.test.secret.clone();
    let mut b = logged_in(&app).await;

    let bad = b
        .submit(
            "/dashboard/products",
            "/dashboard/products",
            &[("name", "")],
        )
        .await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    assert!(bad.body.contains("notice error"), "{}", bad.body);
    let made = b
        .submit(
            "/dashboard/products",
            "/dashboard/products",
            &[("name", "Gold plan"), ("description", "Everything")],
        )
        .await;
    assert_eq!(made.status, StatusCode::SEE_OTHER);
    let products = app.api(Method::GET, "/products", &key, None).await;
    assert_eq!(products["data"][0]["name"], "Gold plan");
    let product = products["data"][0]["id"].as_str().unwrap().to_string();

    let bad = b
        .submit(
            "/dashboard/products",
            "/dashboard/prices",
            &[
                ("product", &product),
                ("amount", "15.001"),
                ("interval", "month"),
            ],
        )
        .await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    assert!(bad.body.contains("Enter the amount in USD"), "{}", bad.body);
    assert!(
        bad.body.contains("value=\"15.001\""),
        "the form keeps what was typed"
    );
    let made = b
        .submit(
            "/dashboard/products",
            "/dashboard/prices",
            &[
                ("product", &product),
                ("amount", "15.00"),
                ("currency", "usd"),
                ("interval", "month"),
            ],
        )
        .await;
    assert_eq!(made.status, StatusCode::SEE_OTHER, "{}", made.body);
    let prices = app.api(Method::GET, "/prices", &key, None).await;
    let price = &prices["data"][0];
    assert_eq!(price["unit_amount"], 1500);
    assert_eq!(price["recurring"]["interval"], "month");
    let page = b.get("/dashboard/products?done=price").await;
    assert!(page.body.contains("Price created."));
    assert!(page.body.contains("15.00 USD / month"), "{}", page.body);

    // A subscription made through the API.
    let cus = app
        .api(
            Method::POST,
            "/customers",
            &key,
            Some(json!({"name": "Ada"})),
        )
        .await;
    let pm = app
        .api(
            Method::POST,
            "/payment_methods",
            &key,
            Some(
                json!({"type": "card", "card": {"number": "4242424242424242",
                        "exp_month": 12, "exp_year": 2099, "cvc": "123"}}),
            ),
        )
        .await;
    app.api(
        Method::POST,
        &format!("/payment_methods/{}/attach", pm["id"].as_str().unwrap()),
        &key,
        Some(json!({"customer": cus["id"]})),
    )
    .await;
    let sub = app
        .api(
            Method::POST,
            "/subscriptions",
            &key,
            Some(json!({"customer": cus["id"], "items": [{"price": price["id"], "quantity": 2}]})),
        )
        .await;
    assert_eq!(sub["status"], "active", "{sub}");
    let sub_id = sub["id"].as_str().unwrap();
    let inv_id = sub["latest_invoice"].as_str().unwrap();

    let list = b.get("/dashboard/subscriptions").await;
    assert_eq!(list.status, StatusCode::OK);
    assert!(list.body.contains(sub_id));
    // What and who, as a person reads them (second first-run review): the product's name and
    // the customer's name, not the price alone and an id.
    assert!(
        list.body.contains("2 × Gold plan · 15.00 USD / month"),
        "{}",
        list.body
    );
    assert!(list.body.contains(">Ada</a>"), "{}", list.body);
    let canceled = b.get("/dashboard/subscriptions?status=canceled").await;
    assert!(!canceled.body.contains(sub_id));

    let detail = b.get(&format!("/dashboard/subscriptions/{sub_id}")).await;
    assert!(detail.body.contains(inv_id));
    assert!(
        detail
            .body
            .contains("<h1>2 × Gold plan · 15.00 USD / month</h1>"),
        "{}",
        detail.body
    );
    assert!(detail.body.contains("Cancel subscription"));
    let invoice = b.get(&format!("/dashboard/invoices/{inv_id}")).await;
    assert_eq!(invoice.status, StatusCode::OK);
    assert!(
        invoice
            .body
            .contains("2 × Gold plan (at 15.00 USD / month)"),
        "{}",
        invoice.body
    );
    assert!(invoice.body.contains("Payments tried (1)"));
    let inv = app
        .api(Method::GET, &format!("/invoices/{inv_id}"), &key, None)
        .await;
    assert!(invoice.body.contains(inv["payment"].as_str().unwrap()));
    assert!(invoice
        .body
        .contains(inv["hosted_invoice_url"].as_str().unwrap()));
    let invoices = b.get("/dashboard/invoices?status=paid").await;
    assert!(invoices.body.contains(inv_id));
    assert!(!b
        .get("/dashboard/invoices?status=open")
        .await
        .body
        .contains(inv_id));

    let path = format!("/dashboard/subscriptions/{sub_id}");
    let done = b.submit(&path, &format!("{path}/cancel"), &[]).await;
    assert_eq!(done.status, StatusCode::SEE_OTHER);
    let after = app
        .api(Method::GET, &format!("/subscriptions/{sub_id}"), &key, None)
        .await;
    assert_eq!(after["status"], "canceled");
    let page = b.get(done.location()).await;
    assert!(page.body.contains("Subscription canceled."));
    assert!(!page.body.contains("Cancel subscription"));
    // Pressed again from a stale page: the reason, on the page.
    let again = b
        .post(&format!("{path}/cancel"), &[("csrf_token", &page.csrf())])
        .await;
    assert_eq!(again.status, StatusCode::BAD_REQUEST);
    assert!(again.body.contains("notice error"), "{}", again.body);
}

/// A payment made through `/v1` (Stripe's API) is a payment like any other in the dashboard,
/// under its own id; one created and not yet confirmed is listed as waiting.
#[tokio::test]
async fn a_payment_made_through_v1_shows_like_any_other() {
    let app = spawn_app().await;
    let key = app.account.keys.test.secret.clone();
    let client = reqwest::Client::new();
    let v1 = |params: &'static [(&'static str, &'static str)]| {
        client
            .post(format!("{}/v1/payment_intents", app.base))
            .basic_auth(&key, Some(""))
            .form(params)
            .send()
    };
    let paid: serde_json::Value = v1(&[
        ("amount", "4321"),
        ("currency", "usd"),
        ("payment_method", "pm_card_visa"),
        ("confirm", "true"),
        ("description", "Stripe-made"),
    ])
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    let waiting: serde_json::Value = v1(&[("amount", "999"), ("currency", "usd")])
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let pay_id = paid["id"].as_str().unwrap().replacen("pi_", "pay_", 1);
    let waiting_id = waiting["id"].as_str().unwrap().replacen("pi_", "pay_", 1);
    let mut b = logged_in(&app).await;
    let list = b.get("/dashboard/payments").await;
    assert_eq!(list.status, StatusCode::OK);
    assert!(list.body.contains(&pay_id), "{}", list.body);
    assert!(list.body.contains(&waiting_id));
    let page = b.get(&format!("/dashboard/payments/{pay_id}")).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.body.contains("43.21"), "{}", page.body);
    assert!(page.body.contains("Stripe-made"));
    let page = b.get(&format!("/dashboard/payments/{waiting_id}")).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(
        page.body.contains("requires payment method"),
        "{}",
        page.body
    );
    assert!(
        page.body.contains("Cancel payment"),
        "a payment not tried yet may be given up"
    );
}

/// The default payout destination (where `POST /v1/payouts` pays out) is set on the balance
/// page: an invalid IBAN is shown as the API would refuse it; a valid one is shown by its
/// country and last four only.
#[tokio::test]
async fn the_balance_page_sets_the_default_payout_destination() {
    let app = spawn_app().await;
    let mut b = logged_in(&app).await;
    let before = b.get("/dashboard/balance").await;
    assert!(before.body.contains("None yet"), "{}", before.body);
    let bad = b
        .submit(
            "/dashboard/balance",
            "/dashboard/payout_destination",
            &[("iban", "DE00 1234"), ("account_holder_name", "Shop")],
        )
        .await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST, "{}", bad.body);
    assert!(bad.body.contains("IBAN is not valid"), "{}", bad.body);
    let saved = b
        .submit(
            "/dashboard/balance",
            "/dashboard/payout_destination",
            &[
                ("iban", "DE89 3704 0044 0532 0130 00"),
                ("account_holder_name", "Shop GmbH"),
            ],
        )
        .await;
    assert_eq!(saved.status, StatusCode::SEE_OTHER, "{}", saved.body);
    let after = b.get("/dashboard/balance?done=destination").await;
    assert!(after.body.contains("Shop GmbH, DE …3000"), "{}", after.body);
    assert!(!after.body.contains("DE89370400440532013000"));
    let opened = app
        .services
        .balance()
        .payout_destination(&app.account.account)
        .await
        .unwrap()
        .expect("saved");
    assert_eq!(opened.iban.expose(), "DE89370400440532013000");
}

/// The Checkout page (CONTRACT §14): the card-testing limits and the card field's shop origins
/// are set there (checked as the use case checks them), and the guard's blocks are listed.
#[tokio::test]
async fn the_checkout_page_sets_the_card_testing_limits_and_lists_the_blocks() {
    let app = spawn_app().await;
    let mut b = logged_in(&app).await;
    let before = b.get("/dashboard/checkout").await;
    assert_eq!(before.status, StatusCode::OK);
    assert!(before.body.contains("Nothing blocked."), "{}", before.body);
    assert!(
        before.body.contains("name=\"declines_per_address\"")
            && before.body.contains("value=\"10\"")
    );
    let settings = |session: &str, origins: &str| {
        vec![
            ("declines_per_address".to_string(), "10".to_string()),
            ("declines_per_card".to_string(), "10".to_string()),
            ("declines_per_session".to_string(), session.to_string()),
            ("frame_origins".to_string(), origins.to_string()),
        ]
    };
    let bad = settings("1", "https://shop.example/cart");
    let bad: Vec<(&str, &str)> = bad.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let refused = b
        .submit("/dashboard/checkout", "/dashboard/checkout/settings", &bad)
        .await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{}", refused.body);
    assert!(
        refused
            .body
            .contains("is not an origin like https://shop.example"),
        "{}",
        refused.body
    );
    let good = settings("1", "https://shop.example\nhttp://localhost:3000");
    let good: Vec<(&str, &str)> = good.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let saved = b
        .submit("/dashboard/checkout", "/dashboard/checkout/settings", &good)
        .await;
    assert_eq!(saved.status, StatusCode::SEE_OTHER, "{}", saved.body);
    let stored = app
        .services
        .accounts()
        .checkout_settings(&app.account.account)
        .await
        .unwrap();
    assert_eq!(stored.declines_per_session, 1);
    assert_eq!(
        stored.frame_origins,
        ["https://shop.example", "http://localhost:3000"]
    );

    // One decline ends a session now: the block is listed.
    let key = app.account.keys.test.secret.clone();
    let session = app
        .api(
            reqwest::Method::POST,
            "/checkout_sessions",
            &key,
            Some(json!({"mode": "payment", "success_url": "https://shop.example/thanks",
                "line_items": [{"price_data": {"currency": "usd", "unit_amount": 900, "product_data": {"name": "Mug"}}}]})),
        )
        .await;
    let url = session["url"].as_str().unwrap();
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let html = http.get(url).send().await.unwrap().text().await.unwrap();
    let token = extract(&html, "name=\"token\" value=\"", "\"");
    let declined = http
        .post(url)
        .form(&[
            ("token", token.as_str()),
            ("email", "t@example.com"),
            ("card_number", "4000000000000002"),
            ("card_expiry", "12/34"),
            ("card_cvc", "123"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(declined.status(), StatusCode::PAYMENT_REQUIRED);
    let after = b.get("/dashboard/checkout").await;
    assert!(
        after.body.contains("1 decline in one Checkout Session"),
        "{}",
        after.body
    );
    assert!(after.body.contains(session["id"].as_str().unwrap()));
    assert!(after.body.contains("Checkout page"));
}
