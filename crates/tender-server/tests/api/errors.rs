//! Errors, body rules, standard headers, limits and versioning (CONTRACT §4, §4.7, §4.10).

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::{answer, card, payment_body, spawn_app, Answer, TestApp};

/// A request with a raw body and content type, read as an [`Answer`] (which panics on a
/// non-JSON body).
async fn raw(
    app: &TestApp,
    method: Method,
    path: &str,
    key: Option<&str>,
    content_type: Option<&str>,
    body: Vec<u8>,
) -> Answer {
    let mut req = app.client.request(method, format!("{}{}", app.base, path));
    if let Some(k) = key {
        req = req.bearer_auth(k);
    }
    if let Some(ct) = content_type {
        req = req.header("Content-Type", ct);
    }
    let resp = req.body(body).send().await.expect("request");
    answer(resp).await
}

async fn raw_json(app: &TestApp, path: &str, body: impl Into<Vec<u8>>) -> Answer {
    raw(
        app,
        Method::POST,
        path,
        Some(app.sk()),
        Some("application/json"),
        body.into(),
    )
    .await
}

/// The standard headers and, for errors, a JSON error envelope whose `request_id` is the
/// `Request-Id` header.
fn assert_standard(a: &Answer) {
    let rid = a
        .header("request-id")
        .unwrap_or_else(|| panic!("{} without a Request-Id header: {}", a.status, a.body));
    assert!(rid.starts_with("req_"), "Request-Id {rid}");
    assert!(rid.len() > 4);
    assert_eq!(
        a.header("tender-version"),
        Some("2.1"),
        "{} without Tender-Version",
        a.status
    );
    let ct = a.header("content-type").unwrap_or_default();
    assert!(
        ct.starts_with("application/json"),
        "{} with content type {ct:?}",
        a.status
    );
    if !a.status.is_success() {
        let e = &a.body["error"];
        assert!(
            e.is_object(),
            "{} without an error object: {}",
            a.status,
            a.body
        );
        assert!(
            e["type"].as_str().is_some_and(|s| !s.is_empty()),
            "{}",
            a.body
        );
        assert!(
            e["code"].as_str().is_some_and(|s| !s.is_empty()),
            "{}",
            a.body
        );
        assert!(
            e["message"].as_str().is_some_and(|s| !s.is_empty()),
            "{}",
            a.body
        );
        assert_eq!(e["request_id"].as_str(), Some(rid), "{}", a.body);
        let text = String::from_utf8_lossy(&a.raw).to_lowercase();
        assert!(!text.contains("<html"), "{text}");
        assert!(!text.contains("panicked"), "{text}");
    }
}

fn assert_error(a: &Answer, status: StatusCode, kind: &str, code: &str) {
    assert_eq!(a.status, status, "body: {}", a.body);
    assert_eq!(a.error_type(), kind, "body: {}", a.body);
    assert_eq!(a.error_code(), code, "body: {}", a.body);
    assert_standard(a);
}

fn assert_bad_param(a: &Answer, code: &str, param: &str) {
    assert_error(a, StatusCode::BAD_REQUEST, "invalid_request_error", code);
    assert_eq!(a.error_param(), param, "body: {}", a.body);
}

#[tokio::test]
async fn an_unknown_path_under_v2_is_a_json_404_resource_missing() {
    let Some(app) = spawn_app().await else { return };
    let a = app.get("/v2/nope", app.sk()).await;
    assert_error(
        &a,
        StatusCode::NOT_FOUND,
        "invalid_request_error",
        "resource_missing",
    );
    let p = app.post("/v2/nope/deeper", app.sk(), json!({})).await;
    assert_error(
        &p,
        StatusCode::NOT_FOUND,
        "invalid_request_error",
        "resource_missing",
    );
}

#[tokio::test]
async fn another_api_version_path_is_a_json_404_resource_missing() {
    let Some(app) = spawn_app().await else { return };
    // (`/` itself leads a browser to the dashboard: tests/dashboard.rs.)
    for path in ["/v3", "/v3/payments"] {
        let a = app.get(path, app.sk()).await;
        assert_error(
            &a,
            StatusCode::NOT_FOUND,
            "invalid_request_error",
            "resource_missing",
        );
    }
    // `/v1` is Stripe's API (tests/api/stripe.rs): a path Stripe does not have is Stripe's
    // 404, which names Tender's own operation of that name where there is one, and only then.
    let hinted = app.get("/v1/payments", app.sk()).await;
    assert_eq!(hinted.status, StatusCode::NOT_FOUND);
    assert_eq!(hinted.error_type(), "invalid_request_error");
    let message = hinted.body["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("Unrecognized request URL (GET: /v1/payments)"),
        "{message}"
    );
    assert!(message.contains("GET /v2/payments"), "{message}");
    let unhinted = app.get("/v1/coupons", app.sk()).await;
    let message = unhinted.body["error"]["message"].as_str().unwrap();
    assert!(!message.contains("/v2"), "{message}");
}

#[tokio::test]
async fn an_unknown_path_is_a_json_404_even_without_a_key() {
    let Some(app) = spawn_app().await else { return };
    let a = app
        .request(Method::GET, "/v3/payments", None, None, &[])
        .await;
    assert_error(
        &a,
        StatusCode::NOT_FOUND,
        "invalid_request_error",
        "resource_missing",
    );
    let a = app.request(Method::GET, "/v1/nope", None, None, &[]).await;
    assert_eq!(a.status, StatusCode::NOT_FOUND);
    assert!(a.body["error"]["message"]
        .as_str()
        .unwrap()
        .starts_with("Unrecognized request URL"));
}

#[tokio::test]
async fn a_wrong_method_is_a_json_405_method_not_allowed() {
    let Some(app) = spawn_app().await else { return };
    let put = app
        .request(
            Method::PUT,
            "/v2/payments",
            Some(app.sk()),
            Some(json!({})),
            &[],
        )
        .await;
    assert_error(
        &put,
        StatusCode::METHOD_NOT_ALLOWED,
        "invalid_request_error",
        "method_not_allowed",
    );
    let delete = app.delete("/v2/payments", app.sk()).await;
    assert_error(
        &delete,
        StatusCode::METHOD_NOT_ALLOWED,
        "invalid_request_error",
        "method_not_allowed",
    );
    let get_capture = app
        .get(
            &format!("/v2/payments/pay_{}/capture", "a".repeat(24)),
            app.sk(),
        )
        .await;
    assert_error(
        &get_capture,
        StatusCode::METHOD_NOT_ALLOWED,
        "invalid_request_error",
        "method_not_allowed",
    );
}

#[tokio::test]
async fn a_body_over_64_kib_is_413_body_too_large() {
    let Some(app) = spawn_app().await else { return };
    let body = format!(
        "{{\"description\":\"x\",\"metadata\":{{\"k\":\"{}\"}}}}",
        "v".repeat(70 * 1024)
    );
    let a = raw_json(&app, "/v2/customers", body).await;
    assert_error(
        &a,
        StatusCode::PAYLOAD_TOO_LARGE,
        "invalid_request_error",
        "body_too_large",
    );
    let list = app.get("/v2/customers", app.sk()).await;
    assert_eq!(list.body["data"], json!([]));
}

#[tokio::test]
async fn a_body_of_exactly_64_kib_is_accepted_and_one_byte_more_is_not() {
    let Some(app) = spawn_app().await else { return };
    let core = "{\"name\":\"padded\"}";
    let exact = format!("{core}{}", " ".repeat(64 * 1024 - core.len()));
    assert_eq!(exact.len(), 64 * 1024);
    let a = raw_json(&app, "/v2/customers", exact.clone()).await;
    assert_eq!(a.status, StatusCode::OK, "body: {}", a.body);
    assert_eq!(a.body["name"], "padded");
    let over = format!("{exact} ");
    let b = raw_json(&app, "/v2/customers", over).await;
    assert_error(
        &b,
        StatusCode::PAYLOAD_TOO_LARGE,
        "invalid_request_error",
        "body_too_large",
    );
}

#[tokio::test]
async fn a_text_plain_body_is_415_unsupported_media_type() {
    let Some(app) = spawn_app().await else { return };
    let a = raw(
        &app,
        Method::POST,
        "/v2/customers",
        Some(app.sk()),
        Some("text/plain"),
        br#"{"name":"x"}"#.to_vec(),
    )
    .await;
    assert_error(
        &a,
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "invalid_request_error",
        "unsupported_media_type",
    );
}

#[tokio::test]
async fn a_form_encoded_body_is_415_unsupported_media_type() {
    let Some(app) = spawn_app().await else { return };
    let a = raw(
        &app,
        Method::POST,
        "/v2/payments",
        Some(app.sk()),
        Some("application/x-www-form-urlencoded"),
        b"amount=1000&currency=usd".to_vec(),
    )
    .await;
    assert_error(
        &a,
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "invalid_request_error",
        "unsupported_media_type",
    );
}

#[tokio::test]
async fn a_body_without_content_type_is_415() {
    let Some(app) = spawn_app().await else { return };
    let a = raw(
        &app,
        Method::POST,
        "/v2/customers",
        Some(app.sk()),
        None,
        br#"{"name":"x"}"#.to_vec(),
    )
    .await;
    assert_error(
        &a,
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "invalid_request_error",
        "unsupported_media_type",
    );
}

#[tokio::test]
async fn a_json_content_type_with_a_charset_is_accepted() {
    let Some(app) = spawn_app().await else { return };
    let a = raw(
        &app,
        Method::POST,
        "/v2/customers",
        Some(app.sk()),
        Some("application/json; charset=utf-8"),
        br#"{"name":"charset"}"#.to_vec(),
    )
    .await;
    assert_eq!(a.status, StatusCode::OK, "body: {}", a.body);
    assert_eq!(a.body["name"], "charset");
}

#[tokio::test]
async fn malformed_json_is_400_invalid_json() {
    let Some(app) = spawn_app().await else { return };
    for body in [
        "{",
        "{\"name\": }",
        "{'name': 'x'}",
        "not json",
        "{\"name\":\"x\"} trailing",
    ] {
        let a = raw_json(&app, "/v2/customers", body).await;
        assert_error(
            &a,
            StatusCode::BAD_REQUEST,
            "invalid_request_error",
            "invalid_json",
        );
    }
}

#[tokio::test]
async fn a_json_body_that_is_not_an_object_is_400() {
    let Some(app) = spawn_app().await else { return };
    for body in [
        "[]",
        "[{\"name\":\"x\"}]",
        "\"string\"",
        "42",
        "null",
        "true",
    ] {
        let a = raw_json(&app, "/v2/customers", body).await;
        assert_eq!(a.status, StatusCode::BAD_REQUEST, "{body}: {}", a.body);
        assert_eq!(a.error_type(), "invalid_request_error", "{body}");
        assert_standard(&a);
    }
    let p = raw_json(&app, "/v2/payments", "[1,2,3]").await;
    assert_eq!(p.status, StatusCode::BAD_REQUEST, "body: {}", p.body);
    assert_eq!(
        app.get("/v2/customers", app.sk()).await.body["data"],
        json!([])
    );
}

#[tokio::test]
async fn an_unknown_top_level_parameter_is_400_parameter_unknown() {
    let Some(app) = spawn_app().await else { return };
    let mut body = payment_body("4242424242424242", 1000);
    body["colour"] = json!("red");
    let a = app.post("/v2/payments", app.sk(), body).await;
    assert_bad_param(&a, "parameter_unknown", "colour");
    assert!(a.body["error"]["message"]
        .as_str()
        .is_some_and(|m| m.contains("colour")));
    assert_eq!(
        app.get("/v2/payments", app.sk()).await.body["data"],
        json!([])
    );
}

#[tokio::test]
async fn an_unknown_nested_parameter_is_named_in_bracket_form() {
    let Some(app) = spawn_app().await else { return };
    let mut body = payment_body("4242424242424242", 1000);
    body["payment_method"]["card"]["foo"] = json!("bar");
    let a = app.post("/v2/payments", app.sk(), body).await;
    assert_bad_param(&a, "parameter_unknown", "payment_method[card][foo]");

    let mut body = payment_body("4242424242424242", 1000);
    body["payment_method"]["colour"] = json!("red");
    let b = app.post("/v2/payments", app.sk(), body).await;
    assert_bad_param(&b, "parameter_unknown", "payment_method[colour]");
}

#[tokio::test]
async fn a_non_integer_amount_is_400_parameter_invalid_integer() {
    let Some(app) = spawn_app().await else { return };
    for amount in [json!(10.5), json!("100"), json!(true), json!([100])] {
        let body = json!({"amount": amount, "currency": "usd",
                          "payment_method": card("4242424242424242")});
        let a = app.post("/v2/payments", app.sk(), body).await;
        assert_bad_param(&a, "parameter_invalid_integer", "amount");
    }
}

#[tokio::test]
async fn a_missing_amount_is_400_parameter_missing() {
    let Some(app) = spawn_app().await else { return };
    let body = json!({"currency": "usd", "payment_method": card("4242424242424242")});
    let a = app.post("/v2/payments", app.sk(), body).await;
    assert_bad_param(&a, "parameter_missing", "amount");
}

#[tokio::test]
async fn a_non_integer_expiry_month_names_the_nested_parameter() {
    let Some(app) = spawn_app().await else { return };
    let mut body = payment_body("4242424242424242", 1000);
    body["payment_method"]["card"]["exp_month"] = json!("12");
    let a = app.post("/v2/payments", app.sk(), body).await;
    assert_bad_param(
        &a,
        "parameter_invalid_integer",
        "payment_method[card][exp_month]",
    );
}

#[tokio::test]
async fn successful_responses_carry_request_id_and_tender_version() {
    let Some(app) = spawn_app().await else { return };
    let created = app
        .post("/v2/customers", app.sk(), json!({"name": "h"}))
        .await;
    assert_eq!(created.status, StatusCode::OK);
    assert_standard(&created);
    let list = app.get("/v2/customers", app.sk()).await;
    assert_standard(&list);
    let paid = app.pay(app.sk(), "4242424242424242", 1000).await;
    assert_eq!(paid.status, StatusCode::OK, "body: {}", paid.body);
    assert_standard(&paid);
}

#[tokio::test]
async fn every_error_carries_request_id_and_tender_version_matching_the_body() {
    let Some(app) = spawn_app().await else { return };
    let answers = vec![
        app.request(Method::GET, "/v2/payments", None, None, &[])
            .await,
        app.get("/v2/payments", "sk_test_garbage").await,
        app.get("/v2/payments", app.pk()).await,
        app.get("/v2/nope", app.sk()).await,
        app.get("/v3/payments", app.sk()).await,
        app.request(Method::PUT, "/v2/payments", Some(app.sk()), None, &[])
            .await,
        app.get(&format!("/v2/payments/pay_{}", "x".repeat(24)), app.sk())
            .await,
        app.post("/v2/payments", app.sk(), json!({"amount": 1}))
            .await,
        app.pay(app.sk(), "4000000000000002", 1000).await,
        raw_json(&app, "/v2/customers", "{").await,
        raw(
            &app,
            Method::POST,
            "/v2/customers",
            Some(app.sk()),
            Some("text/plain"),
            b"x".to_vec(),
        )
        .await,
        raw_json(&app, "/v2/customers", vec![b' '; 65 * 1024]).await,
        app.request(
            Method::GET,
            "/v2/payments",
            Some(app.sk()),
            None,
            &[("Tender-Version", "1.0")],
        )
        .await,
    ];
    let mut ids = std::collections::HashSet::new();
    for a in &answers {
        assert!(!a.status.is_success(), "{}", a.body);
        assert_standard(a);
        assert!(
            ids.insert(a.header("request-id").unwrap_or_default().to_string()),
            "request ids are unique"
        );
    }
}

#[tokio::test]
async fn a_card_decline_error_also_carries_the_request_id() {
    let Some(app) = spawn_app().await else { return };
    let a = app.pay(app.sk(), "4000000000000002", 1000).await;
    assert_error(
        &a,
        StatusCode::PAYMENT_REQUIRED,
        "card_error",
        "card_declined",
    );
}

#[tokio::test]
async fn an_unknown_tender_version_is_400_api_version_invalid() {
    let Some(app) = spawn_app().await else { return };
    for version in ["2.0", "1", "2.1.0", "latest"] {
        let a = app
            .request(
                Method::GET,
                "/v2/payments",
                Some(app.sk()),
                None,
                &[("Tender-Version", version)],
            )
            .await;
        assert_error(
            &a,
            StatusCode::BAD_REQUEST,
            "invalid_request_error",
            "api_version_invalid",
        );
    }
    let post = app
        .request(
            Method::POST,
            "/v2/customers",
            Some(app.sk()),
            Some(json!({"name": "v"})),
            &[("Tender-Version", "2.0")],
        )
        .await;
    assert_eq!(post.status, StatusCode::BAD_REQUEST);
    assert_eq!(post.error_code(), "api_version_invalid");
    assert_eq!(
        app.get("/v2/customers", app.sk()).await.body["data"],
        json!([])
    );
}

#[tokio::test]
async fn tender_version_2_1_is_accepted() {
    let Some(app) = spawn_app().await else { return };
    let a = app
        .request(
            Method::POST,
            "/v2/customers",
            Some(app.sk()),
            Some(json!({"name": "v"})),
            &[("Tender-Version", "2.1")],
        )
        .await;
    assert_eq!(a.status, StatusCode::OK, "body: {}", a.body);
    assert_standard(&a);
}

#[tokio::test]
async fn a_description_over_1000_characters_is_400() {
    let Some(app) = spawn_app().await else { return };
    let mut body = payment_body("4242424242424242", 1000);
    body["description"] = json!("d".repeat(1001));
    let a = app.post("/v2/payments", app.sk(), body).await;
    assert_eq!(a.status, StatusCode::BAD_REQUEST, "body: {}", a.body);
    assert_eq!(a.error_param(), "description");
    assert_standard(&a);
    let mut ok = payment_body("4242424242424242", 1000);
    ok["description"] = json!("d".repeat(1000));
    assert_eq!(
        app.post("/v2/payments", app.sk(), ok).await.status,
        StatusCode::OK
    );
}

#[tokio::test]
async fn a_description_of_1000_multibyte_characters_is_accepted() {
    let Some(app) = spawn_app().await else { return };
    let a = app
        .post(
            "/v2/customers",
            app.sk(),
            json!({"description": "é".repeat(1000)}),
        )
        .await;
    assert_eq!(a.status, StatusCode::OK, "body: {}", a.body);
}

#[tokio::test]
async fn a_string_over_5000_characters_is_400_naming_it() {
    let Some(app) = spawn_app().await else { return };
    let a = app
        .post("/v2/customers", app.sk(), json!({"name": "n".repeat(5001)}))
        .await;
    assert_eq!(a.status, StatusCode::BAD_REQUEST, "body: {}", a.body);
    assert_eq!(a.error_param(), "name");
    assert_standard(&a);
    let b = app
        .post(
            "/v2/customers",
            app.sk(),
            json!({"address": {"line1": "l".repeat(5001)}}),
        )
        .await;
    assert_eq!(b.status, StatusCode::BAD_REQUEST, "body: {}", b.body);
    assert_eq!(b.error_param(), "address[line1]");
    let ok = app
        .post("/v2/customers", app.sk(), json!({"name": "n".repeat(5000)}))
        .await;
    assert_eq!(ok.status, StatusCode::OK, "body: {}", ok.body);
}

#[tokio::test]
async fn payment_metadata_with_51_keys_is_400_naming_metadata() {
    let Some(app) = spawn_app().await else { return };
    let keys: serde_json::Map<String, Value> =
        (0..51).map(|i| (format!("key{i}"), json!("v"))).collect();
    let mut body = payment_body("4242424242424242", 1000);
    body["metadata"] = Value::Object(keys);
    let a = app.post("/v2/payments", app.sk(), body).await;
    assert_bad_param(&a, "parameter_invalid", "metadata");

    let keys: serde_json::Map<String, Value> =
        (0..50).map(|i| (format!("key{i}"), json!("v"))).collect();
    let mut ok = payment_body("4242424242424242", 1000);
    ok["metadata"] = Value::Object(keys);
    let b = app.post("/v2/payments", app.sk(), ok).await;
    assert_eq!(b.status, StatusCode::OK, "body: {}", b.body);
}

#[tokio::test]
async fn a_metadata_key_with_a_bracket_is_400_naming_metadata() {
    let Some(app) = spawn_app().await else { return };
    for key in ["a[b", "a]", "[x]"] {
        let mut body = payment_body("4242424242424242", 1000);
        body["metadata"] = json!({ key: "v" });
        let a = app.post("/v2/payments", app.sk(), body).await;
        assert_bad_param(&a, "parameter_invalid", "metadata");
    }
}

#[tokio::test]
async fn a_metadata_value_over_500_characters_is_400_naming_metadata() {
    let Some(app) = spawn_app().await else { return };
    let mut body = payment_body("4242424242424242", 1000);
    body["metadata"] = json!({"k": "v".repeat(501)});
    let a = app.post("/v2/payments", app.sk(), body).await;
    assert_bad_param(&a, "parameter_invalid", "metadata");
    let mut ok = payment_body("4242424242424242", 1000);
    ok["metadata"] = json!({"k": "v".repeat(500), "k".repeat(40): "v"});
    assert_eq!(
        app.post("/v2/payments", app.sk(), ok).await.status,
        StatusCode::OK
    );
}

#[tokio::test]
async fn a_metadata_key_over_40_characters_or_a_non_string_value_is_400() {
    let Some(app) = spawn_app().await else { return };
    for metadata in [
        json!({"k".repeat(41): "v"}),
        json!({"k": 1}),
        json!({"k": {"nested": "v"}}),
        json!(["not", "an", "object"]),
        json!("string"),
    ] {
        let mut body = payment_body("4242424242424242", 1000);
        body["metadata"] = metadata;
        let a = app.post("/v2/payments", app.sk(), body).await;
        assert_bad_param(&a, "parameter_invalid", "metadata");
    }
}

#[tokio::test]
async fn deeply_nested_arrays_are_a_400_not_a_500() {
    let Some(app) = spawn_app().await else { return };
    let body = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let a = raw_json(&app, "/v2/payments", body).await;
    assert_eq!(a.status, StatusCode::BAD_REQUEST, "body: {}", a.body);
    assert_eq!(a.error_type(), "invalid_request_error");
    assert_standard(&a);
}

#[tokio::test]
async fn deeply_nested_objects_are_a_400_not_a_500() {
    let Some(app) = spawn_app().await else { return };
    let body = format!(
        "{{\"metadata\":{}1{}}}",
        "{\"a\":".repeat(5_000),
        "}".repeat(5_000)
    );
    let a = raw_json(&app, "/v2/customers", body).await;
    assert_eq!(a.status, StatusCode::BAD_REQUEST, "body: {}", a.body);
    assert_standard(&a);
    let shallow = format!(
        "{{\"metadata\":{{\"k\":{}1{}}}}}",
        "[".repeat(100),
        "]".repeat(100)
    );
    let b = raw_json(&app, "/v2/customers", shallow).await;
    assert_eq!(b.status, StatusCode::BAD_REQUEST, "body: {}", b.body);
    assert_eq!(b.error_param(), "metadata");
}

#[tokio::test]
async fn an_invalid_utf8_body_is_400() {
    let Some(app) = spawn_app().await else { return };
    let mut body = b"{\"name\":\"".to_vec();
    body.extend_from_slice(&[0xff, 0xfe, 0xc3, 0x28]);
    body.extend_from_slice(b"\"}");
    let a = raw(
        &app,
        Method::POST,
        "/v2/customers",
        Some(app.sk()),
        Some("application/json"),
        body,
    )
    .await;
    assert_eq!(a.status, StatusCode::BAD_REQUEST, "body: {}", a.body);
    assert_eq!(a.error_type(), "invalid_request_error");
    assert_standard(&a);
}

#[tokio::test]
async fn a_missing_payment_is_a_json_404_naming_resource_missing() {
    let Some(app) = spawn_app().await else { return };
    for id in [
        format!("pay_{}", "a".repeat(24)),
        "pay_short".into(),
        "x".into(),
    ] {
        let a = app.get(&format!("/v2/payments/{id}"), app.sk()).await;
        assert_error(
            &a,
            StatusCode::NOT_FOUND,
            "invalid_request_error",
            "resource_missing",
        );
    }
}

#[tokio::test]
async fn error_bodies_are_never_html_even_for_odd_requests() {
    let Some(app) = spawn_app().await else { return };
    let odd = [
        (Method::GET, "/v2/payments/%ff%fe"),
        (Method::GET, "/v2//payments"),
        (Method::OPTIONS, "/v2/payments"),
        (Method::HEAD, "/v1/payments"),
        (Method::GET, "/dashboard-nope"),
    ];
    for (method, path) in odd {
        let resp = app
            .client
            .request(method.clone(), format!("{}{}", app.base, path))
            .bearer_auth(app.sk())
            .send()
            .await
            .expect("request");
        let status = resp.status();
        let ct = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        let has_rid = resp.headers().contains_key("request-id");
        let bytes = resp.bytes().await.expect("body");
        assert!(!status.is_server_error(), "{method} {path}: {status}");
        if method == Method::HEAD {
            continue;
        }
        assert!(
            ct.starts_with("application/json"),
            "{method} {path}: {status} {ct:?}"
        );
        assert!(has_rid, "{method} {path}");
        let v: Value =
            serde_json::from_slice(&bytes).unwrap_or_else(|_| panic!("{method} {path}: not JSON"));
        if !status.is_success() {
            assert!(v["error"]["code"].is_string(), "{method} {path}: {v}");
        }
    }
}

/// Sends raw bytes over TCP and returns the status code and body of the answer.
async fn raw_tcp(app: &TestApp, request: Vec<u8>) -> (u16, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let addr = app.base.trim_start_matches("http://").to_string();
    let stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let (mut rd, mut wr) = stream.into_split();
    let reader = tokio::spawn(async move {
        let mut buf = Vec::new();
        let mut chunk = [0u8; 4096];
        loop {
            match rd.read(&mut chunk).await {
                Ok(0) | Err(_) => break,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
            if let Some(head_end) = find(&buf, b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&buf[..head_end]).to_lowercase();
                let len = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .and_then(|v| v.trim().parse::<usize>().ok());
                if len.is_some_and(|n| buf.len() >= head_end + 4 + n) {
                    break;
                }
            }
        }
        buf
    });
    let _ = wr.write_all(&request).await;
    let _ = wr.flush().await;
    let buf = tokio::time::timeout(std::time::Duration::from_secs(10), reader)
        .await
        .expect("an answer in time")
        .expect("reader");
    let text = String::from_utf8_lossy(&buf).to_string();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {text:?}"));
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, body)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[tokio::test]
async fn a_chunked_body_over_64_kib_without_content_length_is_413() {
    let Some(app) = spawn_app().await else { return };
    let mut req = format!(
        "POST /v2/customers HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n",
        app.sk()
    )
    .into_bytes();
    let payload = format!("{{\"name\":\"{}\"}}", "n".repeat(70 * 1024));
    for part in payload.as_bytes().chunks(8 * 1024) {
        req.extend_from_slice(format!("{:x}\r\n", part.len()).as_bytes());
        req.extend_from_slice(part);
        req.extend_from_slice(b"\r\n");
    }
    req.extend_from_slice(b"0\r\n\r\n");
    let (status, body) = raw_tcp(&app, req).await;
    assert_eq!(status, 413, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap_or_else(|_| panic!("not JSON: {body}"));
    assert_eq!(v["error"]["code"], "body_too_large");
    assert_eq!(
        app.get("/v2/customers", app.sk()).await.body["data"],
        json!([])
    );
}

#[tokio::test]
async fn a_non_ascii_authorization_header_is_401_api_key_invalid() {
    let Some(app) = spawn_app().await else { return };
    let value = reqwest::header::HeaderValue::from_bytes(b"Bearer sk_test_\xff\xfe")
        .expect("obs-text is a valid header value");
    let resp = app
        .client
        .get(format!("{}/v2/payments", app.base))
        .header("Authorization", value)
        .send()
        .await
        .expect("request");
    let a = answer(resp).await;
    assert_error(
        &a,
        StatusCode::UNAUTHORIZED,
        "authentication_error",
        "api_key_invalid",
    );
}

#[tokio::test]
async fn patch_on_a_collection_is_405() {
    let Some(app) = spawn_app().await else { return };
    let a = app
        .request(
            Method::PATCH,
            "/v2/customers",
            Some(app.sk()),
            Some(json!({})),
            &[],
        )
        .await;
    assert_error(
        &a,
        StatusCode::METHOD_NOT_ALLOWED,
        "invalid_request_error",
        "method_not_allowed",
    );
}
