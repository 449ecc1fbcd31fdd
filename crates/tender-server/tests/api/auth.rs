//! Authentication, keys, modes and accounts (CONTRACT §3).

use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::helpers::{answer, spawn_app, Answer, TestApp};

/// A request with a raw `Authorization` header value (or none).
async fn with_authorization(app: &TestApp, path: &str, authorization: Option<&str>) -> Answer {
    let mut req = app.client.get(format!("{}{}", app.base, path));
    if let Some(value) = authorization {
        req = req.header("Authorization", value);
    }
    answer(req.send().await.expect("request")).await
}

fn assert_unauthenticated(a: &Answer, code: &str) {
    assert_eq!(a.status, StatusCode::UNAUTHORIZED, "body: {}", a.body);
    assert_eq!(a.error_type(), "authentication_error", "body: {}", a.body);
    assert_eq!(a.error_code(), code, "body: {}", a.body);
    assert_eq!(
        a.header("www-authenticate"),
        Some("Basic realm=\"Tender\""),
        "a 401 must name the Basic realm"
    );
}

async fn create_customer(app: &TestApp, key: &str) -> String {
    let a = app
        .post("/v2/customers", key, json!({"email": "jenny@example.com"}))
        .await;
    assert_eq!(a.status, StatusCode::OK, "body: {}", a.body);
    a.id()
}

/// Asserts two 404 answers are the same error apart from the text that names the id and the
/// request id.
fn assert_same_missing(found: &Answer, missing: &Answer) {
    assert_eq!(found.status, StatusCode::NOT_FOUND, "body: {}", found.body);
    assert_eq!(
        missing.status,
        StatusCode::NOT_FOUND,
        "body: {}",
        missing.body
    );
    assert_eq!(found.error_type(), "invalid_request_error");
    assert_eq!(found.error_type(), missing.error_type());
    assert_eq!(found.error_code(), "resource_missing");
    assert_eq!(found.error_code(), missing.error_code());
    assert_eq!(found.error_param(), missing.error_param());
    let keys = |a: &Answer| {
        let mut k: Vec<String> = a.body["error"]
            .as_object()
            .expect("error object")
            .keys()
            .cloned()
            .collect();
        k.sort();
        k
    };
    assert_eq!(keys(found), keys(missing), "same fields in both bodies");
}

/// The message with the ids replaced, so that the shapes can be compared.
fn message_shape(a: &Answer, id: &str) -> String {
    a.body["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .replace(id, "<ID>")
}

#[tokio::test]
async fn a_request_without_authorization_is_401_api_key_missing_with_the_basic_realm() {
    let Some(app) = spawn_app().await else { return };
    let a = with_authorization(&app, "/v2/payments", None).await;
    assert_unauthenticated(&a, "api_key_missing");
    assert!(a.body["error"]["message"]
        .as_str()
        .is_some_and(|m| !m.is_empty()));
}

#[tokio::test]
async fn a_post_without_authorization_is_401_api_key_missing() {
    let Some(app) = spawn_app().await else { return };
    let a = app
        .request(
            Method::POST,
            "/v2/customers",
            None,
            Some(json!({"email": "a@example.com"})),
            &[],
        )
        .await;
    assert_unauthenticated(&a, "api_key_missing");
}

#[tokio::test]
async fn a_garbage_key_is_401_api_key_invalid() {
    let Some(app) = spawn_app().await else { return };
    let a = app.get("/v2/payments", "not-a-key-at-all").await;
    assert_unauthenticated(&a, "api_key_invalid");
}

#[tokio::test]
async fn a_well_formed_but_unknown_secret_key_is_401_api_key_invalid() {
    let Some(app) = spawn_app().await else { return };
    let unknown = format!("sk_test_{}", "A".repeat(24));
    let a = app.get("/v2/payments", &unknown).await;
    assert_unauthenticated(&a, "api_key_invalid");
}

#[tokio::test]
async fn a_real_key_with_one_character_changed_is_401_api_key_invalid() {
    let Some(app) = spawn_app().await else { return };
    let mut key = app.sk().to_string();
    let last = key.pop().expect("non-empty key");
    key.push(if last == 'a' { 'b' } else { 'a' });
    let a = app.get("/v2/payments", &key).await;
    assert_unauthenticated(&a, "api_key_invalid");
}

#[tokio::test]
async fn bearer_without_a_key_is_401() {
    let Some(app) = spawn_app().await else { return };
    for value in ["Bearer", "Bearer ", "Bearer    "] {
        let a = with_authorization(&app, "/v2/payments", Some(value)).await;
        assert_eq!(a.status, StatusCode::UNAUTHORIZED, "{value:?}: {}", a.body);
        assert_eq!(a.error_type(), "authentication_error", "{value:?}");
        assert_eq!(
            a.header("www-authenticate"),
            Some("Basic realm=\"Tender\""),
            "{value:?}"
        );
    }
}

#[tokio::test]
async fn an_unknown_authorization_scheme_is_401_even_with_a_valid_key() {
    let Some(app) = spawn_app().await else { return };
    for value in [
        "Token x".to_string(),
        format!("Token {}", app.sk()),
        app.sk().to_string(),
        format!("Digest {}", app.sk()),
    ] {
        let a = with_authorization(&app, "/v2/payments", Some(&value)).await;
        assert_eq!(a.status, StatusCode::UNAUTHORIZED, "{value:?}: {}", a.body);
        assert_eq!(a.error_type(), "authentication_error", "{value:?}");
        assert_eq!(a.error_code(), "api_key_invalid", "{value:?}");
    }
}

#[tokio::test]
async fn basic_auth_with_garbage_base64_is_401_api_key_invalid() {
    let Some(app) = spawn_app().await else { return };
    let a = with_authorization(&app, "/v2/payments", Some("Basic !!!not-base64!!!")).await;
    assert_unauthenticated(&a, "api_key_invalid");
}

#[tokio::test]
async fn basic_auth_with_the_key_as_user_and_an_empty_password_works() {
    let Some(app) = spawn_app().await else { return };
    let resp = app
        .client
        .get(format!("{}/v2/payments", app.base))
        .basic_auth(app.sk(), Some(""))
        .send()
        .await
        .expect("request");
    let a = answer(resp).await;
    assert_eq!(a.status, StatusCode::OK, "body: {}", a.body);
    assert_eq!(a.body["object"], "list");
}

#[tokio::test]
async fn basic_auth_with_the_key_as_user_and_no_password_works() {
    let Some(app) = spawn_app().await else { return };
    let resp = app
        .client
        .get(format!("{}/v2/customers", app.base))
        .basic_auth(app.sk(), None::<&str>)
        .send()
        .await
        .expect("request");
    let a = answer(resp).await;
    assert_eq!(a.status, StatusCode::OK, "body: {}", a.body);
}

#[tokio::test]
async fn basic_auth_creates_objects_just_like_bearer() {
    let Some(app) = spawn_app().await else { return };
    let resp = app
        .client
        .post(format!("{}/v2/customers", app.base))
        .basic_auth(app.sk(), Some(""))
        .json(&json!({"name": "Basic"}))
        .send()
        .await
        .expect("request");
    let a = answer(resp).await;
    assert_eq!(a.status, StatusCode::OK, "body: {}", a.body);
    let got = app
        .get(&format!("/v2/customers/{}", a.id()), app.sk())
        .await;
    assert_eq!(got.status, StatusCode::OK);
    assert_eq!(got.body["name"], "Basic");
}

#[tokio::test]
async fn basic_auth_with_an_unknown_key_is_401_api_key_invalid() {
    let Some(app) = spawn_app().await else { return };
    let resp = app
        .client
        .get(format!("{}/v2/payments", app.base))
        .basic_auth("sk_test_nope", Some(""))
        .send()
        .await
        .expect("request");
    assert_unauthenticated(&answer(resp).await, "api_key_invalid");
}

#[tokio::test]
async fn basic_auth_with_a_password_is_refused() {
    let Some(app) = spawn_app().await else { return };
    let resp = app
        .client
        .get(format!("{}/v2/payments", app.base))
        .basic_auth(app.sk(), Some("hunter2"))
        .send()
        .await
        .expect("request");
    let a = answer(resp).await;
    assert_eq!(a.status, StatusCode::UNAUTHORIZED, "body: {}", a.body);
    assert_eq!(a.error_type(), "authentication_error");
}

#[tokio::test]
async fn a_publishable_key_cannot_list_payments() {
    let Some(app) = spawn_app().await else { return };
    let a = app.get("/v2/payments", app.pk()).await;
    assert_eq!(a.status, StatusCode::FORBIDDEN, "body: {}", a.body);
    assert_eq!(a.error_type(), "permission_error");
    assert_eq!(a.error_code(), "secret_key_required");
}

#[tokio::test]
async fn a_publishable_key_cannot_create_a_payment_and_nothing_is_created() {
    let Some(app) = spawn_app().await else { return };
    let a = app.pay(app.pk(), "4242424242424242", 1000).await;
    assert_eq!(a.status, StatusCode::FORBIDDEN, "body: {}", a.body);
    assert_eq!(a.error_type(), "permission_error");
    assert_eq!(a.error_code(), "secret_key_required");
    let list = app.get("/v2/payments", app.sk()).await;
    assert_eq!(list.body["data"].as_array().map(Vec::len), Some(0));
}

#[tokio::test]
async fn a_publishable_key_cannot_list_customers() {
    let Some(app) = spawn_app().await else { return };
    let a = app.get("/v2/customers", app.pk()).await;
    assert_eq!(a.status, StatusCode::FORBIDDEN, "body: {}", a.body);
    assert_eq!(a.error_type(), "permission_error");
    assert_eq!(a.error_code(), "secret_key_required");
}

#[tokio::test]
async fn a_live_publishable_key_cannot_create_a_customer() {
    let Some(app) = spawn_app().await else { return };
    let a = app
        .post(
            "/v2/customers",
            &app.account.keys.live.publishable,
            json!({"name": "x"}),
        )
        .await;
    assert_eq!(a.status, StatusCode::FORBIDDEN, "body: {}", a.body);
    assert_eq!(a.error_type(), "permission_error");
    assert_eq!(a.error_code(), "secret_key_required");
}

#[tokio::test]
async fn a_forbidden_answer_carries_no_www_authenticate_challenge() {
    let Some(app) = spawn_app().await else { return };
    let a = app.get("/v2/customers", app.pk()).await;
    assert_eq!(a.status, StatusCode::FORBIDDEN);
    assert!(a.header("www-authenticate").is_none());
}

#[tokio::test]
async fn a_test_key_never_sees_a_customer_created_with_the_live_key() {
    let Some(app) = spawn_app().await else { return };
    let live_id = create_customer(&app, app.sk_live()).await;
    assert!(live_id.starts_with("cus_"));

    let live = app
        .get(&format!("/v2/customers/{live_id}"), app.sk_live())
        .await;
    assert_eq!(live.status, StatusCode::OK);
    assert_eq!(live.body["livemode"], true);

    let via_test = app.get(&format!("/v2/customers/{live_id}"), app.sk()).await;
    let missing_id = format!("cus_{}", "Z".repeat(24));
    let missing = app
        .get(&format!("/v2/customers/{missing_id}"), app.sk())
        .await;
    assert_same_missing(&via_test, &missing);
    assert_eq!(
        message_shape(&via_test, &live_id),
        message_shape(&missing, &missing_id)
    );
}

#[tokio::test]
async fn a_live_key_never_sees_a_customer_created_with_the_test_key() {
    let Some(app) = spawn_app().await else { return };
    let test_id = create_customer(&app, app.sk()).await;
    let a = app
        .get(&format!("/v2/customers/{test_id}"), app.sk_live())
        .await;
    assert_eq!(a.status, StatusCode::NOT_FOUND, "body: {}", a.body);
    assert_eq!(a.error_code(), "resource_missing");
}

#[tokio::test]
async fn a_test_key_cannot_update_or_delete_a_live_customer() {
    let Some(app) = spawn_app().await else { return };
    let live_id = create_customer(&app, app.sk_live()).await;
    let path = format!("/v2/customers/{live_id}");
    let upd = app.post(&path, app.sk(), json!({"name": "hijack"})).await;
    assert_eq!(upd.status, StatusCode::NOT_FOUND, "body: {}", upd.body);
    let del = app.delete(&path, app.sk()).await;
    assert_eq!(del.status, StatusCode::NOT_FOUND, "body: {}", del.body);
    let still = app.get(&path, app.sk_live()).await;
    assert_eq!(still.status, StatusCode::OK);
    assert_eq!(still.body["name"], serde_json::Value::Null);
}

#[tokio::test]
async fn test_and_live_lists_are_separate() {
    let Some(app) = spawn_app().await else { return };
    let live_id = create_customer(&app, app.sk_live()).await;
    let test_id = create_customer(&app, app.sk()).await;
    let test_list = app.get("/v2/customers", app.sk()).await;
    let ids: Vec<&str> = test_list.body["data"]
        .as_array()
        .expect("data")
        .iter()
        .filter_map(|c| c["id"].as_str())
        .collect();
    assert_eq!(ids, vec![test_id.as_str()]);
    let live_list = app.get("/v2/customers", app.sk_live()).await;
    let ids: Vec<&str> = live_list.body["data"]
        .as_array()
        .expect("data")
        .iter()
        .filter_map(|c| c["id"].as_str())
        .collect();
    assert_eq!(ids, vec![live_id.as_str()]);
}

#[tokio::test]
async fn another_accounts_customer_is_404_like_a_missing_one() {
    let Some(app) = spawn_app().await else { return };
    let b = app.other_account().await;
    let theirs = create_customer(&app, &b.keys.test.secret).await;

    let found = app.get(&format!("/v2/customers/{theirs}"), app.sk()).await;
    let missing_id = format!("cus_{}", "Q".repeat(24));
    let missing = app
        .get(&format!("/v2/customers/{missing_id}"), app.sk())
        .await;
    assert_same_missing(&found, &missing);
    assert_eq!(
        message_shape(&found, &theirs),
        message_shape(&missing, &missing_id)
    );
}

#[tokio::test]
async fn another_accounts_payment_is_404_like_a_missing_one() {
    let Some(app) = spawn_app().await else { return };
    let b = app.other_account().await;
    let paid = app.pay(&b.keys.test.secret, "4242424242424242", 1500).await;
    assert_eq!(paid.status, StatusCode::OK, "body: {}", paid.body);
    let theirs = paid.id();

    let found = app.get(&format!("/v2/payments/{theirs}"), app.sk()).await;
    let missing_id = format!("pay_{}", "Q".repeat(24));
    let missing = app
        .get(&format!("/v2/payments/{missing_id}"), app.sk())
        .await;
    assert_same_missing(&found, &missing);
    assert_eq!(
        message_shape(&found, &theirs),
        message_shape(&missing, &missing_id)
    );
}

#[tokio::test]
async fn another_accounts_payment_cannot_be_updated_captured_or_canceled() {
    let Some(app) = spawn_app().await else { return };
    let b = app.other_account().await;
    let paid = app
        .post(
            "/v2/payments",
            &b.keys.test.secret,
            json!({"amount": 1500, "currency": "usd", "capture": false,
                   "payment_method": crate::helpers::card("4242424242424242")}),
        )
        .await;
    assert_eq!(paid.status, StatusCode::OK, "body: {}", paid.body);
    let theirs = paid.id();
    for path in [
        format!("/v2/payments/{theirs}"),
        format!("/v2/payments/{theirs}/capture"),
        format!("/v2/payments/{theirs}/cancel"),
    ] {
        let body = if path.ends_with(&theirs) {
            json!({"description": "mine now"})
        } else {
            json!({})
        };
        let a = app.post(&path, app.sk(), body).await;
        assert_eq!(a.status, StatusCode::NOT_FOUND, "{path}: {}", a.body);
        assert_eq!(a.error_code(), "resource_missing", "{path}");
    }
    let still = app
        .get(&format!("/v2/payments/{theirs}"), &b.keys.test.secret)
        .await;
    assert_eq!(still.body["status"], "requires_capture");
    assert_ne!(still.body["description"], "mine now");
}

#[tokio::test]
async fn another_accounts_customer_cannot_be_updated_or_deleted() {
    let Some(app) = spawn_app().await else { return };
    let b = app.other_account().await;
    let theirs = create_customer(&app, &b.keys.test.secret).await;
    let path = format!("/v2/customers/{theirs}");
    let upd = app.post(&path, app.sk(), json!({"name": "x"})).await;
    assert_eq!(upd.status, StatusCode::NOT_FOUND, "body: {}", upd.body);
    assert_eq!(upd.error_code(), "resource_missing");
    let del = app.delete(&path, app.sk()).await;
    assert_eq!(del.status, StatusCode::NOT_FOUND, "body: {}", del.body);
    assert_eq!(
        app.get(&path, &b.keys.test.secret).await.status,
        StatusCode::OK
    );
}

#[tokio::test]
async fn another_accounts_customer_cannot_be_used_on_a_payment() {
    let Some(app) = spawn_app().await else { return };
    let b = app.other_account().await;
    let theirs = create_customer(&app, &b.keys.test.secret).await;
    let mut body = crate::helpers::payment_body("4242424242424242", 1000);
    body["customer"] = json!(theirs);
    let a = app.post("/v2/payments", app.sk(), body).await;
    assert_eq!(a.status, StatusCode::BAD_REQUEST, "body: {}", a.body);
    assert_eq!(a.error_code(), "resource_missing");
    assert_eq!(a.error_param(), "customer");
}

#[tokio::test]
async fn lists_of_one_account_never_contain_another_accounts_objects() {
    let Some(app) = spawn_app().await else { return };
    let b = app.other_account().await;
    let mine_customer = create_customer(&app, app.sk()).await;
    let mine_payment = app.pay(app.sk(), "4242424242424242", 2000).await.id();
    let theirs_customer = create_customer(&app, &b.keys.test.secret).await;
    let theirs_payment = app
        .pay(&b.keys.test.secret, "4242424242424242", 3000)
        .await
        .id();

    let ids = |a: &Answer| -> Vec<String> {
        a.body["data"]
            .as_array()
            .expect("data")
            .iter()
            .map(|o| o["id"].as_str().unwrap_or_default().to_string())
            .collect()
    };
    let b_customers = ids(&app.get("/v2/customers", &b.keys.test.secret).await);
    assert_eq!(b_customers, vec![theirs_customer.clone()]);
    let b_payments = ids(&app.get("/v2/payments", &b.keys.test.secret).await);
    assert_eq!(b_payments, vec![theirs_payment.clone()]);
    let a_customers = ids(&app.get("/v2/customers", app.sk()).await);
    assert_eq!(a_customers, vec![mine_customer]);
    let a_payments = ids(&app.get("/v2/payments", app.sk()).await);
    assert_eq!(a_payments, vec![mine_payment]);

    let b_events = app.get("/v2/events?limit=100", &b.keys.test.secret).await;
    for e in b_events.body["data"].as_array().expect("data") {
        let id = e["data"]["object"]["id"].as_str().unwrap_or_default();
        assert!(
            id == theirs_customer || id == theirs_payment,
            "B sees an event about {id}"
        );
    }
}

#[tokio::test]
async fn another_accounts_id_as_a_list_cursor_is_refused_like_an_unknown_one() {
    let Some(app) = spawn_app().await else { return };
    let b = app.other_account().await;
    let theirs = create_customer(&app, &b.keys.test.secret).await;
    create_customer(&app, app.sk()).await;
    let a = app
        .get(&format!("/v2/customers?starting_after={theirs}"), app.sk())
        .await;
    assert_eq!(a.status, StatusCode::BAD_REQUEST, "body: {}", a.body);
    assert_eq!(a.error_code(), "resource_missing");
    assert_eq!(a.error_param(), "starting_after");
}

#[tokio::test]
async fn another_accounts_event_is_404() {
    let Some(app) = spawn_app().await else { return };
    let b = app.other_account().await;
    create_customer(&app, &b.keys.test.secret).await;
    let events = app.get("/v2/events", &b.keys.test.secret).await;
    let evt = events.body["data"][0]["id"]
        .as_str()
        .expect("an event")
        .to_string();
    let a = app.get(&format!("/v2/events/{evt}"), app.sk()).await;
    assert_eq!(a.status, StatusCode::NOT_FOUND, "body: {}", a.body);
    assert_eq!(a.error_code(), "resource_missing");
}

#[tokio::test]
async fn the_second_account_keys_work_on_their_own_objects() {
    let Some(app) = spawn_app().await else { return };
    let b = app.other_account().await;
    let id = create_customer(&app, &b.keys.test.secret).await;
    let a = app
        .get(&format!("/v2/customers/{id}"), &b.keys.test.secret)
        .await;
    assert_eq!(a.status, StatusCode::OK);
    assert_eq!(a.id(), id);
}
