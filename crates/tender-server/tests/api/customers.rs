//! Customers (CONTRACT §4.5): create, validate, retrieve, update, delete, list, events.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::{answer, payment_body, spawn_app, Answer, TestApp};

async fn create(app: &TestApp, body: Value) -> Answer {
    let a = app.post("/v2/customers", app.sk(), body).await;
    assert_eq!(a.status, StatusCode::OK, "body: {}", a.body);
    a
}

fn full_customer() -> Value {
    json!({
        "email": "jenny.rosen@example.com",
        "name": "Jenny Rosen",
        "phone": "+33612345678",
        "address": {
            "line1": "1 rue de Rivoli",
            "line2": "Bâtiment B",
            "city": "Paris",
            "state": "Île-de-France",
            "postal_code": "75001",
            "country": "fr"
        },
        "description": "Our best customer",
        "metadata": {"crm_id": "42", "tier": "gold"}
    })
}

fn assert_invalid(a: &Answer, code: &str, param: &str) {
    assert_eq!(a.status, StatusCode::BAD_REQUEST, "body: {}", a.body);
    assert_eq!(a.error_type(), "invalid_request_error", "body: {}", a.body);
    assert_eq!(a.error_code(), code, "body: {}", a.body);
    assert_eq!(a.error_param(), param, "body: {}", a.body);
}

async fn events_of_type(app: &TestApp, kind: &str) -> Vec<Value> {
    let a = app
        .get(&format!("/v2/events?type={kind}&limit=100"), app.sk())
        .await;
    assert_eq!(a.status, StatusCode::OK, "body: {}", a.body);
    a.body["data"].as_array().expect("data").clone()
}

#[tokio::test]
async fn creating_a_customer_with_every_field_returns_them_all() {
    let Some(app) = spawn_app().await else { return };
    let a = create(&app, full_customer()).await;
    let c = &a.body;
    assert_eq!(c["object"], "customer");
    assert_eq!(c["livemode"], false);
    let id = a.id();
    assert!(id.starts_with("cus_"), "{id}");
    assert_eq!(id.len(), 28, "{id}");
    assert!(id[4..].chars().all(|ch| ch.is_ascii_alphanumeric()), "{id}");
    assert_eq!(c["email"], "jenny.rosen@example.com");
    assert_eq!(c["name"], "Jenny Rosen");
    assert_eq!(c["phone"], "+33612345678");
    assert_eq!(c["description"], "Our best customer");
    assert_eq!(c["address"]["line1"], "1 rue de Rivoli");
    assert_eq!(c["address"]["line2"], "Bâtiment B");
    assert_eq!(c["address"]["city"], "Paris");
    assert_eq!(c["address"]["state"], "Île-de-France");
    assert_eq!(c["address"]["postal_code"], "75001");
    assert_eq!(c["metadata"], json!({"crm_id": "42", "tier": "gold"}));
    assert!(c["created"].as_i64().is_some_and(|t| t > 1_600_000_000));
}

#[tokio::test]
async fn a_lower_case_country_is_normalised_to_upper_case() {
    let Some(app) = spawn_app().await else { return };
    let a = create(&app, full_customer()).await;
    assert_eq!(a.body["address"]["country"], "FR");
    let got = app
        .get(&format!("/v2/customers/{}", a.id()), app.sk())
        .await;
    assert_eq!(got.body["address"]["country"], "FR");
}

#[tokio::test]
async fn a_customer_created_with_the_live_key_is_in_livemode() {
    let Some(app) = spawn_app().await else { return };
    let a = app
        .post("/v2/customers", app.sk_live(), json!({"name": "Live"}))
        .await;
    assert_eq!(a.status, StatusCode::OK, "body: {}", a.body);
    assert_eq!(a.body["livemode"], true);
}

#[tokio::test]
async fn a_customer_can_be_created_from_an_empty_object() {
    let Some(app) = spawn_app().await else { return };
    let a = create(&app, json!({})).await;
    assert!(a.id().starts_with("cus_"));
    assert_eq!(a.body["object"], "customer");
    assert_eq!(a.body["email"], Value::Null);
    assert_eq!(a.body["name"], Value::Null);
    assert_eq!(a.body["metadata"], json!({}));
}

#[tokio::test]
async fn a_customer_can_be_created_from_an_empty_body_without_content_type() {
    let Some(app) = spawn_app().await else { return };
    let a = app
        .request(Method::POST, "/v2/customers", Some(app.sk()), None, &[])
        .await;
    assert_eq!(a.status, StatusCode::OK, "body: {}", a.body);
    assert!(a.id().starts_with("cus_"));
}

#[tokio::test]
async fn a_customer_can_be_created_from_an_empty_body_with_json_content_type() {
    let Some(app) = spawn_app().await else { return };
    let resp = app
        .client
        .post(format!("{}/v2/customers", app.base))
        .bearer_auth(app.sk())
        .header("Content-Type", "application/json")
        .send()
        .await
        .expect("request");
    let a = answer(resp).await;
    assert_eq!(a.status, StatusCode::OK, "body: {}", a.body);
    assert!(a.id().starts_with("cus_"));
}

#[tokio::test]
async fn an_implausible_email_is_400_email_invalid() {
    let Some(app) = spawn_app().await else { return };
    for email in [
        "not-an-email",
        "@example.com",
        "jenny@",
        "jenny@localhost",
        "jenny rosen@example.com",
        "a@b@example.com",
    ] {
        let a = app
            .post("/v2/customers", app.sk(), json!({ "email": email }))
            .await;
        assert_invalid(&a, "email_invalid", "email");
    }
}

#[tokio::test]
async fn an_email_over_512_characters_is_400_email_invalid() {
    let Some(app) = spawn_app().await else { return };
    let email = format!("{}@example.com", "a".repeat(512));
    let a = app
        .post("/v2/customers", app.sk(), json!({ "email": email }))
        .await;
    assert_invalid(&a, "email_invalid", "email");
}

#[tokio::test]
async fn a_phone_that_is_not_plus_and_8_to_15_digits_is_400_phone_invalid() {
    let Some(app) = spawn_app().await else { return };
    for phone in [
        "12345",
        "+12",
        "33612345678",
        "+1234567890123456",
        "+33 6 12 34 56 78",
        "+3361234567a",
    ] {
        let a = app
            .post("/v2/customers", app.sk(), json!({ "phone": phone }))
            .await;
        assert_invalid(&a, "phone_invalid", "phone");
    }
}

#[tokio::test]
async fn a_phone_of_8_and_of_15_digits_is_accepted() {
    let Some(app) = spawn_app().await else { return };
    for phone in ["+12345678", "+123456789012345"] {
        let a = create(&app, json!({ "phone": phone })).await;
        assert_eq!(a.body["phone"], phone);
    }
}

#[tokio::test]
async fn an_unknown_country_is_400_country_invalid_naming_address_country() {
    let Some(app) = spawn_app().await else { return };
    for country in ["XX", "FRA", "F", "12"] {
        let a = app
            .post(
                "/v2/customers",
                app.sk(),
                json!({"address": {"country": country}}),
            )
            .await;
        assert_invalid(&a, "country_invalid", "address[country]");
    }
}

#[tokio::test]
async fn an_unknown_address_field_is_400_parameter_unknown_in_bracket_form() {
    let Some(app) = spawn_app().await else { return };
    let a = app
        .post(
            "/v2/customers",
            app.sk(),
            json!({"address": {"zip": "75001"}}),
        )
        .await;
    assert_invalid(&a, "parameter_unknown", "address[zip]");
}

#[tokio::test]
async fn an_invalid_customer_is_not_created() {
    let Some(app) = spawn_app().await else { return };
    let a = app
        .post(
            "/v2/customers",
            app.sk(),
            json!({"email": "ok@example.com", "phone": "12345"}),
        )
        .await;
    assert_eq!(a.status, StatusCode::BAD_REQUEST);
    let list = app.get("/v2/customers", app.sk()).await;
    assert_eq!(list.body["data"], json!([]));
    assert!(events_of_type(&app, "customer.created").await.is_empty());
}

#[tokio::test]
async fn a_created_customer_can_be_retrieved_unchanged() {
    let Some(app) = spawn_app().await else { return };
    let created = create(&app, full_customer()).await;
    let got = app
        .get(&format!("/v2/customers/{}", created.id()), app.sk())
        .await;
    assert_eq!(got.status, StatusCode::OK, "body: {}", got.body);
    assert_eq!(got.body, created.body);
}

#[tokio::test]
async fn retrieving_a_missing_customer_is_404_resource_missing() {
    let Some(app) = spawn_app().await else { return };
    for id in [format!("cus_{}", "a".repeat(24)), "nope".to_string()] {
        let a = app.get(&format!("/v2/customers/{id}"), app.sk()).await;
        assert_eq!(a.status, StatusCode::NOT_FOUND, "body: {}", a.body);
        assert_eq!(a.error_type(), "invalid_request_error");
        assert_eq!(a.error_code(), "resource_missing");
    }
}

#[tokio::test]
async fn updating_with_post_changes_the_given_fields_and_keeps_the_others() {
    let Some(app) = spawn_app().await else { return };
    let created = create(&app, full_customer()).await;
    let path = format!("/v2/customers/{}", created.id());
    let a = app
        .post(
            &path,
            app.sk(),
            json!({"name": "Jenny R.", "email": "jr@example.org"}),
        )
        .await;
    assert_eq!(a.status, StatusCode::OK, "body: {}", a.body);
    assert_eq!(a.body["name"], "Jenny R.");
    assert_eq!(a.body["email"], "jr@example.org");
    assert_eq!(a.body["phone"], "+33612345678");
    assert_eq!(a.body["description"], "Our best customer");
    assert_eq!(a.body["address"]["country"], "FR");
    assert_eq!(a.body["created"], created.body["created"]);
    let got = app.get(&path, app.sk()).await;
    assert_eq!(got.body, a.body);
}

#[tokio::test]
async fn updating_with_patch_is_the_same_as_post() {
    let Some(app) = spawn_app().await else { return };
    let created = create(&app, full_customer()).await;
    let path = format!("/v2/customers/{}", created.id());
    let a = app
        .request(
            Method::PATCH,
            &path,
            Some(app.sk()),
            Some(json!({"phone": "+14155550100", "address": {"country": "us", "city": "SF"}})),
            &[],
        )
        .await;
    assert_eq!(a.status, StatusCode::OK, "body: {}", a.body);
    assert_eq!(a.body["phone"], "+14155550100");
    assert_eq!(a.body["address"]["country"], "US");
    assert_eq!(a.body["address"]["city"], "SF");
    assert_eq!(app.get(&path, app.sk()).await.body, a.body);
}

#[tokio::test]
async fn updating_metadata_merges_keys_and_an_empty_value_removes_one() {
    let Some(app) = spawn_app().await else { return };
    let created = create(&app, full_customer()).await;
    let path = format!("/v2/customers/{}", created.id());
    let a = app
        .post(
            &path,
            app.sk(),
            json!({"metadata": {"tier": "", "region": "eu", "crm_id": "43"}}),
        )
        .await;
    assert_eq!(a.status, StatusCode::OK, "body: {}", a.body);
    assert_eq!(a.body["metadata"], json!({"crm_id": "43", "region": "eu"}));
    assert_eq!(
        app.get(&path, app.sk()).await.body["metadata"],
        json!({"crm_id": "43", "region": "eu"})
    );
}

#[tokio::test]
async fn updating_with_an_empty_string_clears_a_field() {
    let Some(app) = spawn_app().await else { return };
    let created = create(&app, full_customer()).await;
    let path = format!("/v2/customers/{}", created.id());
    let a = app.post(&path, app.sk(), json!({"description": ""})).await;
    assert_eq!(a.status, StatusCode::OK, "body: {}", a.body);
    assert_eq!(a.body["description"], Value::Null);
    assert_eq!(a.body["name"], "Jenny Rosen");
}

#[tokio::test]
async fn an_update_is_validated_like_a_creation() {
    let Some(app) = spawn_app().await else { return };
    let created = create(&app, full_customer()).await;
    let path = format!("/v2/customers/{}", created.id());
    assert_invalid(
        &app.post(&path, app.sk(), json!({"email": "nope"})).await,
        "email_invalid",
        "email",
    );
    assert_invalid(
        &app.post(&path, app.sk(), json!({"phone": "+12"})).await,
        "phone_invalid",
        "phone",
    );
    assert_invalid(
        &app.post(&path, app.sk(), json!({"address": {"country": "XX"}}))
            .await,
        "country_invalid",
        "address[country]",
    );
    assert_invalid(
        &app.post(&path, app.sk(), json!({"colour": "red"})).await,
        "parameter_unknown",
        "colour",
    );
    assert_eq!(app.get(&path, app.sk()).await.body, created.body);
}

#[tokio::test]
async fn updating_a_missing_customer_is_404() {
    let Some(app) = spawn_app().await else { return };
    let a = app
        .post(
            &format!("/v2/customers/cus_{}", "b".repeat(24)),
            app.sk(),
            json!({"name": "x"}),
        )
        .await;
    assert_eq!(a.status, StatusCode::NOT_FOUND, "body: {}", a.body);
    assert_eq!(a.error_code(), "resource_missing");
}

#[tokio::test]
async fn deleting_a_customer_returns_the_deleted_stub() {
    let Some(app) = spawn_app().await else { return };
    let created = create(&app, full_customer()).await;
    let id = created.id();
    let a = app.delete(&format!("/v2/customers/{id}"), app.sk()).await;
    assert_eq!(a.status, StatusCode::OK, "body: {}", a.body);
    assert_eq!(
        a.body,
        json!({"id": id, "object": "customer", "deleted": true})
    );
}

#[tokio::test]
async fn a_deleted_customer_is_404_to_retrieve_update_delete_and_absent_from_lists() {
    let Some(app) = spawn_app().await else { return };
    let id = create(&app, full_customer()).await.id();
    let path = format!("/v2/customers/{id}");
    assert_eq!(app.delete(&path, app.sk()).await.status, StatusCode::OK);

    let got = app.get(&path, app.sk()).await;
    assert_eq!(got.status, StatusCode::NOT_FOUND, "body: {}", got.body);
    assert_eq!(got.error_code(), "resource_missing");
    let upd = app.post(&path, app.sk(), json!({"name": "ghost"})).await;
    assert_eq!(upd.status, StatusCode::NOT_FOUND, "body: {}", upd.body);
    assert_eq!(upd.error_code(), "resource_missing");
    let patch = app
        .request(
            Method::PATCH,
            &path,
            Some(app.sk()),
            Some(json!({"name": "ghost"})),
            &[],
        )
        .await;
    assert_eq!(patch.status, StatusCode::NOT_FOUND);
    let again = app.delete(&path, app.sk()).await;
    assert_eq!(again.status, StatusCode::NOT_FOUND, "body: {}", again.body);
    let list = app.get("/v2/customers", app.sk()).await;
    assert_eq!(list.body["data"], json!([]));
}

#[tokio::test]
async fn a_deleted_customer_cannot_be_charged() {
    let Some(app) = spawn_app().await else { return };
    let id = create(&app, json!({})).await.id();
    app.delete(&format!("/v2/customers/{id}"), app.sk()).await;
    let mut body = payment_body("4242424242424242", 1000);
    body["customer"] = json!(id);
    let a = app.post("/v2/payments", app.sk(), body).await;
    assert_invalid(&a, "resource_missing", "customer");
}

#[tokio::test]
async fn a_deleted_customers_payments_keep_its_id() {
    let Some(app) = spawn_app().await else { return };
    let id = create(&app, json!({})).await.id();
    let mut body = payment_body("4242424242424242", 1000);
    body["customer"] = json!(id);
    let paid = app.post("/v2/payments", app.sk(), body).await;
    assert_eq!(paid.status, StatusCode::OK, "body: {}", paid.body);
    app.delete(&format!("/v2/customers/{id}"), app.sk()).await;
    let got = app
        .get(&format!("/v2/payments/{}", paid.id()), app.sk())
        .await;
    assert_eq!(got.body["customer"], json!(id));
}

#[tokio::test]
async fn customers_can_be_listed_filtered_by_email() {
    let Some(app) = spawn_app().await else { return };
    let a1 = create(&app, json!({"email": "same@example.com", "name": "one"})).await;
    create(&app, json!({"email": "other@example.com"})).await;
    let a2 = create(&app, json!({"email": "same@example.com", "name": "two"})).await;
    create(&app, json!({})).await;

    let list = app
        .get("/v2/customers?email=same%40example.com", app.sk())
        .await;
    assert_eq!(list.status, StatusCode::OK, "body: {}", list.body);
    assert_eq!(list.body["object"], "list");
    assert_eq!(list.body["url"], "/v2/customers");
    let ids: Vec<&str> = list.body["data"]
        .as_array()
        .expect("data")
        .iter()
        .filter_map(|c| c["id"].as_str())
        .collect();
    assert_eq!(ids, vec![a2.id(), a1.id()]);

    let none = app
        .get("/v2/customers?email=nobody@example.com", app.sk())
        .await;
    assert_eq!(none.body["data"], json!([]));
    assert_eq!(none.body["has_more"], false);
}

#[tokio::test]
async fn the_email_filter_follows_updates() {
    let Some(app) = spawn_app().await else { return };
    let id = create(&app, json!({"email": "old@example.com"})).await.id();
    app.post(
        &format!("/v2/customers/{id}"),
        app.sk(),
        json!({"email": "new@example.com"}),
    )
    .await;
    let old = app
        .get("/v2/customers?email=old@example.com", app.sk())
        .await;
    assert_eq!(old.body["data"], json!([]));
    let new = app
        .get("/v2/customers?email=new@example.com", app.sk())
        .await;
    assert_eq!(new.body["data"][0]["id"], json!(id));
}

#[tokio::test]
async fn creating_a_customer_emits_customer_created_with_the_object() {
    let Some(app) = spawn_app().await else { return };
    let created = create(&app, full_customer()).await;
    let events = events_of_type(&app, "customer.created").await;
    assert_eq!(events.len(), 1, "{events:?}");
    let e = &events[0];
    assert_eq!(e["object"], "event");
    assert_eq!(e["type"], "customer.created");
    assert_eq!(e["api_version"], "2.1");
    assert_eq!(e["livemode"], false);
    assert_eq!(e["data"]["object"], created.body);
    assert_eq!(
        e["request"]["id"].as_str(),
        created.header("request-id"),
        "the event names the request that caused it"
    );
    let one = app
        .get(
            &format!("/v2/events/{}", e["id"].as_str().expect("id")),
            app.sk(),
        )
        .await;
    assert_eq!(one.status, StatusCode::OK);
    assert_eq!(&one.body, e);
}

#[tokio::test]
async fn updating_a_customer_emits_customer_updated_with_previous_attributes() {
    let Some(app) = spawn_app().await else { return };
    let created = create(&app, full_customer()).await;
    let path = format!("/v2/customers/{}", created.id());
    let updated = app
        .post(
            &path,
            app.sk(),
            json!({"name": "Jenny R.", "metadata": {"tier": "silver"}}),
        )
        .await;
    assert_eq!(updated.status, StatusCode::OK);
    let events = events_of_type(&app, "customer.updated").await;
    assert_eq!(events.len(), 1, "{events:?}");
    let e = &events[0];
    assert_eq!(e["data"]["object"], updated.body);
    let prev = &e["data"]["previous_attributes"];
    assert_eq!(prev["name"], "Jenny Rosen");
    assert_eq!(prev["metadata"], json!({"crm_id": "42", "tier": "gold"}));
    assert!(
        prev.get("email").is_none(),
        "unchanged fields are not in previous_attributes: {prev}"
    );
    assert!(prev.get("phone").is_none(), "{prev}");
    assert_eq!(e["request"]["id"].as_str(), updated.header("request-id"));
}

#[tokio::test]
async fn deleting_a_customer_emits_customer_deleted() {
    let Some(app) = spawn_app().await else { return };
    let created = create(&app, json!({"email": "bye@example.com"})).await;
    let id = created.id();
    app.delete(&format!("/v2/customers/{id}"), app.sk()).await;
    let events = events_of_type(&app, "customer.deleted").await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["data"]["object"]["id"], json!(id));
    assert_eq!(events[0]["data"]["object"]["email"], "bye@example.com");
}

#[tokio::test]
async fn the_event_type_filter_only_returns_that_type() {
    let Some(app) = spawn_app().await else { return };
    let id = create(&app, json!({})).await.id();
    let path = format!("/v2/customers/{id}");
    app.post(&path, app.sk(), json!({"name": "a"})).await;
    app.post(&path, app.sk(), json!({"name": "b"})).await;
    app.delete(&path, app.sk()).await;
    assert_eq!(events_of_type(&app, "customer.created").await.len(), 1);
    let updates = events_of_type(&app, "customer.updated").await;
    assert_eq!(updates.len(), 2);
    assert!(updates.iter().all(|e| e["type"] == "customer.updated"));
    assert_eq!(updates[0]["data"]["object"]["name"], "b");
    assert_eq!(updates[0]["data"]["previous_attributes"]["name"], "a");
    assert_eq!(updates[1]["data"]["object"]["name"], "a");
    assert_eq!(
        updates[1]["data"]["previous_attributes"]["name"],
        Value::Null
    );
    assert_eq!(events_of_type(&app, "customer.deleted").await.len(), 1);
    let all = app.get("/v2/events", app.sk()).await;
    assert_eq!(all.body["data"].as_array().map(Vec::len), Some(4));
}

#[tokio::test]
async fn a_payment_with_a_nonexistent_customer_is_400_resource_missing_naming_customer() {
    let Some(app) = spawn_app().await else { return };
    let mut body = payment_body("4242424242424242", 1000);
    body["customer"] = json!(format!("cus_{}", "c".repeat(24)));
    let a = app.post("/v2/payments", app.sk(), body).await;
    assert_invalid(&a, "resource_missing", "customer");
    let list = app.get("/v2/payments", app.sk()).await;
    assert_eq!(list.body["data"], json!([]));
}

#[tokio::test]
async fn a_payment_with_a_malformed_customer_id_is_400_resource_missing_naming_customer() {
    let Some(app) = spawn_app().await else { return };
    let mut body = payment_body("4242424242424242", 1000);
    body["customer"] = json!("not-a-customer");
    let a = app.post("/v2/payments", app.sk(), body).await;
    assert_invalid(&a, "resource_missing", "customer");
}

#[tokio::test]
async fn a_payment_with_an_existing_customer_names_it() {
    let Some(app) = spawn_app().await else { return };
    let id = create(&app, json!({})).await.id();
    let mut body = payment_body("4242424242424242", 1000);
    body["customer"] = json!(id);
    let a = app.post("/v2/payments", app.sk(), body).await;
    assert_eq!(a.status, StatusCode::OK, "body: {}", a.body);
    assert_eq!(a.body["customer"], json!(id));
}

#[tokio::test]
async fn a_description_over_1000_characters_is_refused() {
    let Some(app) = spawn_app().await else { return };
    let a = app
        .post(
            "/v2/customers",
            app.sk(),
            json!({"description": "d".repeat(1001)}),
        )
        .await;
    assert_eq!(a.status, StatusCode::BAD_REQUEST, "body: {}", a.body);
    assert_eq!(a.error_param(), "description");
    let ok = create(&app, json!({"description": "d".repeat(1000)})).await;
    assert_eq!(
        ok.body["description"].as_str().map(|s| s.chars().count()),
        Some(1000)
    );
}

#[tokio::test]
async fn customer_metadata_limits_are_enforced() {
    let Some(app) = spawn_app().await else { return };
    let too_many: serde_json::Map<String, Value> =
        (0..51).map(|i| (format!("k{i}"), json!("v"))).collect();
    for metadata in [
        Value::Object(too_many),
        json!({"a[b]": "v"}),
        json!({"k": "v".repeat(501)}),
        json!({"k".repeat(41): "v"}),
        json!({"k": 1}),
    ] {
        let a = app
            .post("/v2/customers", app.sk(), json!({ "metadata": metadata }))
            .await;
        assert_invalid(&a, "parameter_invalid", "metadata");
    }
}

#[tokio::test]
async fn an_update_that_would_exceed_50_metadata_keys_is_refused() {
    let Some(app) = spawn_app().await else { return };
    let fifty: serde_json::Map<String, Value> =
        (0..50).map(|i| (format!("k{i}"), json!("v"))).collect();
    let id = create(&app, json!({ "metadata": fifty })).await.id();
    let a = app
        .post(
            &format!("/v2/customers/{id}"),
            app.sk(),
            json!({"metadata": {"one_more": "v"}}),
        )
        .await;
    assert_invalid(&a, "parameter_invalid", "metadata");
    let swap = app
        .post(
            &format!("/v2/customers/{id}"),
            app.sk(),
            json!({"metadata": {"k0": "", "one_more": "v"}}),
        )
        .await;
    assert_eq!(swap.status, StatusCode::OK, "body: {}", swap.body);
    assert_eq!(swap.body["metadata"].as_object().map(|m| m.len()), Some(50));
}
