//! Lists (CONTRACT §4.8): envelope, limits, strict newest-first order, cursors, filters.

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::helpers::{card, spawn_app, Answer, TestApp};

async fn new_customer(app: &TestApp, n: usize) -> Value {
    let a = app
        .post("/v2/customers", app.sk(), json!({"name": format!("c{n}")}))
        .await;
    assert_eq!(a.status, StatusCode::OK, "body: {}", a.body);
    a.body
}

/// Creates `n` customers as fast as possible; their ids in creation order.
async fn customers(app: &TestApp, n: usize) -> Vec<String> {
    let mut ids = Vec::with_capacity(n);
    for i in 0..n {
        ids.push(
            new_customer(app, i).await["id"]
                .as_str()
                .expect("id")
                .to_string(),
        );
    }
    ids
}

async fn list(app: &TestApp, path: &str) -> Answer {
    let a = app.get(path, app.sk()).await;
    assert_eq!(a.status, StatusCode::OK, "{path}: {}", a.body);
    a
}

fn ids(a: &Answer) -> Vec<String> {
    a.body["data"]
        .as_array()
        .unwrap_or_else(|| panic!("no data: {}", a.body))
        .iter()
        .map(|o| o["id"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn newest_first(created: &[String]) -> Vec<String> {
    created.iter().rev().cloned().collect()
}

fn assert_bad(a: &Answer, code: &str, param: &str) {
    assert_eq!(a.status, StatusCode::BAD_REQUEST, "body: {}", a.body);
    assert_eq!(a.error_type(), "invalid_request_error", "body: {}", a.body);
    assert_eq!(a.error_code(), code, "body: {}", a.body);
    assert_eq!(a.error_param(), param, "body: {}", a.body);
}

#[tokio::test]
async fn an_empty_list_has_the_envelope() {
    let Some(app) = spawn_app().await else { return };
    let a = list(&app, "/v2/payments").await;
    assert_eq!(
        a.body,
        json!({"object": "list", "data": [], "has_more": false, "url": "/v2/payments"})
    );
}

#[tokio::test]
async fn each_collection_names_its_own_url() {
    let Some(app) = spawn_app().await else { return };
    for (path, url) in [
        ("/v2/payments", "/v2/payments"),
        ("/v2/customers", "/v2/customers"),
        ("/v2/events", "/v2/events"),
        ("/v2/customers?limit=3", "/v2/customers"),
    ] {
        let a = list(&app, path).await;
        assert_eq!(a.body["object"], "list", "{path}");
        assert_eq!(a.body["url"], url, "{path}");
        assert!(a.body["data"].is_array(), "{path}");
        assert!(a.body["has_more"].is_boolean(), "{path}");
    }
}

#[tokio::test]
async fn the_default_limit_is_10_with_has_more() {
    let Some(app) = spawn_app().await else { return };
    let created = customers(&app, 11).await;
    let a = list(&app, "/v2/customers").await;
    assert_eq!(ids(&a), newest_first(&created)[..10].to_vec());
    assert_eq!(a.body["has_more"], true);
    assert_eq!(a.body["url"], "/v2/customers");
}

#[tokio::test]
async fn exactly_limit_objects_means_has_more_is_false() {
    let Some(app) = spawn_app().await else { return };
    let created = customers(&app, 10).await;
    let a = list(&app, "/v2/customers").await;
    assert_eq!(ids(&a), newest_first(&created));
    assert_eq!(a.body["has_more"], false);
    let b = list(&app, "/v2/customers?limit=9").await;
    assert_eq!(b.body["has_more"], true);
    assert_eq!(ids(&b).len(), 9);
}

#[tokio::test]
async fn list_items_are_the_full_objects() {
    let Some(app) = spawn_app().await else { return };
    let c = new_customer(&app, 1).await;
    let a = list(&app, "/v2/customers").await;
    assert_eq!(a.body["data"][0], c);
}

#[tokio::test]
async fn pages_of_7_through_25_objects_made_within_one_second_are_exactly_reverse_creation_order() {
    let Some(app) = spawn_app().await else { return };
    let created = customers(&app, 25).await;
    let expected = newest_first(&created);

    let mut seen: Vec<String> = Vec::new();
    let mut path = "/v2/customers?limit=7".to_string();
    let mut pages = 0;
    loop {
        let a = list(&app, &path).await;
        let page = ids(&a);
        pages += 1;
        assert!(page.len() <= 7);
        seen.extend(page.iter().cloned());
        if a.body["has_more"] == false {
            break;
        }
        assert_eq!(page.len(), 7, "a page with has_more is full");
        assert!(pages < 10, "pagination does not end");
        path = format!(
            "/v2/customers?limit=7&starting_after={}",
            page.last().expect("non-empty page")
        );
    }
    assert_eq!(pages, 4, "25 objects in pages of 7 are 4 pages");
    assert_eq!(seen, expected, "no duplicates, no gaps, newest first");
}

#[tokio::test]
async fn payments_made_within_one_second_are_listed_strictly_newest_first() {
    let Some(app) = spawn_app().await else { return };
    let mut created = Vec::new();
    for i in 0..12 {
        let a = app.pay(app.sk(), "4242424242424242", 1000 + i).await;
        assert_eq!(a.status, StatusCode::OK, "body: {}", a.body);
        created.push(a.id());
    }
    let first = list(&app, "/v2/payments?limit=5").await;
    let second = list(
        &app,
        &format!(
            "/v2/payments?limit=5&starting_after={}",
            ids(&first).last().expect("id")
        ),
    )
    .await;
    let third = list(
        &app,
        &format!(
            "/v2/payments?limit=5&starting_after={}",
            ids(&second).last().expect("id")
        ),
    )
    .await;
    let mut all = ids(&first);
    all.extend(ids(&second));
    all.extend(ids(&third));
    assert_eq!(all, newest_first(&created));
    assert_eq!(third.body["has_more"], false);
    assert_eq!(second.body["has_more"], true);
}

#[tokio::test]
async fn ending_before_gives_the_previous_page() {
    let Some(app) = spawn_app().await else { return };
    let created = customers(&app, 20).await;
    let expected = newest_first(&created);
    let page1 = list(&app, "/v2/customers?limit=7").await;
    let page2 = list(
        &app,
        &format!(
            "/v2/customers?limit=7&starting_after={}",
            ids(&page1).last().expect("id")
        ),
    )
    .await;
    assert_eq!(ids(&page2), expected[7..14].to_vec());

    let back = list(
        &app,
        &format!("/v2/customers?limit=7&ending_before={}", ids(&page2)[0]),
    )
    .await;
    assert_eq!(ids(&back), ids(&page1), "newest first, like the first page");
    assert_eq!(
        back.body["has_more"], false,
        "nothing newer than the first page"
    );

    let back_from_page3 = list(
        &app,
        &format!("/v2/customers?limit=7&ending_before={}", expected[14]),
    )
    .await;
    assert_eq!(ids(&back_from_page3), expected[7..14].to_vec());
    assert_eq!(
        back_from_page3.body["has_more"], true,
        "page 1 is newer still"
    );
}

#[tokio::test]
async fn ending_before_the_newest_object_is_an_empty_page() {
    let Some(app) = spawn_app().await else { return };
    let created = customers(&app, 3).await;
    let a = list(&app, &format!("/v2/customers?ending_before={}", created[2])).await;
    assert_eq!(ids(&a), Vec::<String>::new());
    assert_eq!(a.body["has_more"], false);
}

#[tokio::test]
async fn starting_after_the_oldest_object_is_an_empty_page() {
    let Some(app) = spawn_app().await else { return };
    let created = customers(&app, 3).await;
    let a = list(
        &app,
        &format!("/v2/customers?starting_after={}", created[0]),
    )
    .await;
    assert_eq!(ids(&a), Vec::<String>::new());
    assert_eq!(a.body["has_more"], false);
}

#[tokio::test]
async fn an_unknown_starting_after_is_400_resource_missing() {
    let Some(app) = spawn_app().await else { return };
    customers(&app, 2).await;
    let missing = format!("cus_{}", "z".repeat(24));
    let a = app
        .get(&format!("/v2/customers?starting_after={missing}"), app.sk())
        .await;
    assert_bad(&a, "resource_missing", "starting_after");
    let garbage = app
        .get("/v2/customers?starting_after=garbage", app.sk())
        .await;
    assert_bad(&garbage, "resource_missing", "starting_after");
}

#[tokio::test]
async fn an_id_of_another_collection_as_cursor_is_400_resource_missing() {
    let Some(app) = spawn_app().await else { return };
    let pay = app.pay(app.sk(), "4242424242424242", 1000).await.id();
    customers(&app, 1).await;
    let a = app
        .get(&format!("/v2/customers?starting_after={pay}"), app.sk())
        .await;
    assert_bad(&a, "resource_missing", "starting_after");
}

#[tokio::test]
async fn an_unknown_ending_before_is_400_resource_missing() {
    let Some(app) = spawn_app().await else { return };
    let a = app
        .get(
            &format!("/v2/payments?ending_before=pay_{}", "z".repeat(24)),
            app.sk(),
        )
        .await;
    assert_bad(&a, "resource_missing", "ending_before");
}

#[tokio::test]
async fn both_cursors_at_once_are_400_parameter_invalid() {
    let Some(app) = spawn_app().await else { return };
    let created = customers(&app, 3).await;
    let a = app
        .get(
            &format!(
                "/v2/customers?starting_after={}&ending_before={}",
                created[2], created[0]
            ),
            app.sk(),
        )
        .await;
    assert_eq!(a.status, StatusCode::BAD_REQUEST, "body: {}", a.body);
    assert_eq!(a.error_type(), "invalid_request_error");
    assert_eq!(a.error_code(), "parameter_invalid");
    assert!(
        ["starting_after", "ending_before"].contains(&a.error_param()),
        "param names a cursor: {}",
        a.body
    );
}

#[tokio::test]
async fn a_limit_outside_1_to_100_is_400_naming_limit() {
    let Some(app) = spawn_app().await else { return };
    for limit in ["0", "101", "-1", "1000000"] {
        let a = app
            .get(&format!("/v2/payments?limit={limit}"), app.sk())
            .await;
        assert_eq!(a.status, StatusCode::BAD_REQUEST, "{limit}: {}", a.body);
        assert_eq!(a.error_type(), "invalid_request_error");
        assert_eq!(a.error_param(), "limit", "{limit}");
    }
}

#[tokio::test]
async fn a_non_numeric_limit_is_400_naming_limit() {
    let Some(app) = spawn_app().await else { return };
    for limit in ["abc", "1.5", "", "ten"] {
        let a = app
            .get(&format!("/v2/customers?limit={limit}"), app.sk())
            .await;
        assert_eq!(a.status, StatusCode::BAD_REQUEST, "{limit:?}: {}", a.body);
        assert_eq!(a.error_param(), "limit", "{limit:?}");
    }
}

#[tokio::test]
async fn limits_1_and_100_are_accepted() {
    let Some(app) = spawn_app().await else { return };
    let created = customers(&app, 3).await;
    let one = list(&app, "/v2/customers?limit=1").await;
    assert_eq!(ids(&one), vec![created[2].clone()]);
    assert_eq!(one.body["has_more"], true);
    let hundred = list(&app, "/v2/customers?limit=100").await;
    assert_eq!(ids(&hundred), newest_first(&created));
    assert_eq!(hundred.body["has_more"], false);
}

#[tokio::test]
async fn created_filters_select_by_creation_time() {
    let Some(app) = spawn_app().await else { return };
    let a = new_customer(&app, 0).await;
    app.clock.advance(100);
    let b = new_customer(&app, 1).await;
    app.clock.advance(100);
    let c = new_customer(&app, 2).await;
    let (ta, tb, tc) = (
        a["created"].as_i64().expect("created"),
        b["created"].as_i64().expect("created"),
        c["created"].as_i64().expect("created"),
    );
    assert!(ta + 100 <= tb && tb + 100 <= tc, "{ta} {tb} {tc}");
    let id = |v: &Value| v["id"].as_str().expect("id").to_string();

    let gte = list(&app, &format!("/v2/customers?created[gte]={tb}")).await;
    assert_eq!(ids(&gte), vec![id(&c), id(&b)]);
    let gt = list(&app, &format!("/v2/customers?created[gt]={tb}")).await;
    assert_eq!(ids(&gt), vec![id(&c)]);
    let lt = list(&app, &format!("/v2/customers?created[lt]={tb}")).await;
    assert_eq!(ids(&lt), vec![id(&a)]);
    let lte = list(&app, &format!("/v2/customers?created[lte]={tb}")).await;
    assert_eq!(ids(&lte), vec![id(&b), id(&a)]);
    let between = list(
        &app,
        &format!("/v2/customers?created[gt]={ta}&created[lt]={tc}"),
    )
    .await;
    assert_eq!(ids(&between), vec![id(&b)]);
    let none = list(&app, &format!("/v2/customers?created[gt]={tc}")).await;
    assert_eq!(ids(&none), Vec::<String>::new());
}

#[tokio::test]
async fn created_filters_work_with_url_encoded_brackets() {
    let Some(app) = spawn_app().await else { return };
    let a = new_customer(&app, 0).await;
    app.clock.advance(50);
    let b = new_customer(&app, 1).await;
    let tb = b["created"].as_i64().expect("created");
    let r = list(&app, &format!("/v2/customers?created%5Blt%5D={tb}")).await;
    assert_eq!(ids(&r), vec![a["id"].as_str().expect("id").to_string()]);
}

#[tokio::test]
async fn created_filters_combine_with_pagination() {
    let Some(app) = spawn_app().await else { return };
    let _old = customers(&app, 3).await;
    app.clock.advance(1000);
    let recent = customers(&app, 5).await;
    let since = app
        .get(&format!("/v2/customers/{}", recent[0]), app.sk())
        .await
        .body["created"]
        .as_i64()
        .expect("created");
    let p1 = list(&app, &format!("/v2/customers?limit=3&created[gte]={since}")).await;
    assert_eq!(p1.body["has_more"], true);
    let p2 = list(
        &app,
        &format!(
            "/v2/customers?limit=3&created[gte]={since}&starting_after={}",
            ids(&p1).last().expect("id")
        ),
    )
    .await;
    assert_eq!(p2.body["has_more"], false);
    let mut all = ids(&p1);
    all.extend(ids(&p2));
    assert_eq!(all, newest_first(&recent));
}

#[tokio::test]
async fn created_filters_work_on_payments_and_events() {
    let Some(app) = spawn_app().await else { return };
    let p1 = app.pay(app.sk(), "4242424242424242", 1000).await;
    app.clock.advance(60);
    let p2 = app.pay(app.sk(), "4242424242424242", 2000).await;
    let t2 = p2.body["created"].as_i64().expect("created");
    let r = list(&app, &format!("/v2/payments?created[gte]={t2}")).await;
    assert_eq!(ids(&r), vec![p2.id()]);
    let r = list(&app, &format!("/v2/payments?created[lt]={t2}")).await;
    assert_eq!(ids(&r), vec![p1.id()]);
    let ev = list(&app, &format!("/v2/events?created[gte]={t2}")).await;
    let data = ev.body["data"].as_array().expect("data");
    assert!(!data.is_empty());
    assert!(data
        .iter()
        .all(|e| e["created"].as_i64().expect("created") >= t2));
    assert!(data
        .iter()
        .any(|e| e["data"]["object"]["id"] == json!(p2.id())));
    assert!(data
        .iter()
        .all(|e| e["data"]["object"]["id"] != json!(p1.id())));
}

#[tokio::test]
async fn a_non_integer_created_filter_is_400_naming_it() {
    let Some(app) = spawn_app().await else { return };
    let a = app
        .get("/v2/customers?created[gte]=yesterday", app.sk())
        .await;
    assert_eq!(a.status, StatusCode::BAD_REQUEST, "body: {}", a.body);
    assert_eq!(a.error_param(), "created[gte]");
}

#[tokio::test]
async fn payments_can_be_filtered_by_customer() {
    let Some(app) = spawn_app().await else { return };
    let cus = app
        .post("/v2/customers", app.sk(), json!({"name": "payer"}))
        .await
        .id();
    let other = app
        .post("/v2/customers", app.sk(), json!({"name": "other"}))
        .await
        .id();
    let pay_for = |customer: &str, amount: i64| {
        json!({"amount": amount, "currency": "usd", "customer": customer,
               "payment_method": card("4242424242424242")})
    };
    let mine1 = app
        .post("/v2/payments", app.sk(), pay_for(&cus, 1000))
        .await;
    assert_eq!(mine1.status, StatusCode::OK, "body: {}", mine1.body);
    app.post("/v2/payments", app.sk(), pay_for(&other, 1100))
        .await;
    app.pay(app.sk(), "4242424242424242", 1200).await;
    let mine2 = app
        .post("/v2/payments", app.sk(), pay_for(&cus, 1300))
        .await;

    let r = list(&app, &format!("/v2/payments?customer={cus}")).await;
    assert_eq!(ids(&r), vec![mine2.id(), mine1.id()]);
    assert!(r.body["data"]
        .as_array()
        .expect("data")
        .iter()
        .all(|p| p["customer"] == json!(cus)));
    let all = list(&app, "/v2/payments").await;
    assert_eq!(ids(&all).len(), 4);
    let nobody = list(
        &app,
        &format!("/v2/payments?customer=cus_{}", "n".repeat(24)),
    )
    .await;
    assert_eq!(ids(&nobody), Vec::<String>::new());
}

#[tokio::test]
async fn payments_can_be_filtered_by_status() {
    let Some(app) = spawn_app().await else { return };
    let ok1 = app.pay(app.sk(), "4242424242424242", 1000).await;
    assert_eq!(ok1.status, StatusCode::OK);
    let declined = app.pay(app.sk(), "4000000000000002", 1000).await;
    assert_eq!(
        declined.status,
        StatusCode::PAYMENT_REQUIRED,
        "body: {}",
        declined.body
    );
    let failed_id = declined.body["error"]["payment"]
        .as_str()
        .expect("the decline names its failed payment")
        .to_string();
    let ok2 = app.pay(app.sk(), "5555555555554444", 2000).await;
    let held = app
        .post(
            "/v2/payments",
            app.sk(),
            json!({"amount": 3000, "currency": "usd", "capture": false,
                   "payment_method": card("4242424242424242")}),
        )
        .await;
    assert_eq!(
        held.body["status"], "requires_capture",
        "body: {}",
        held.body
    );

    let failed = list(&app, "/v2/payments?status=failed").await;
    assert_eq!(ids(&failed), vec![failed_id]);
    assert_eq!(failed.body["data"][0]["status"], "failed");
    let succeeded = list(&app, "/v2/payments?status=succeeded").await;
    assert_eq!(ids(&succeeded), vec![ok2.id(), ok1.id()]);
    let rc = list(&app, "/v2/payments?status=requires_capture").await;
    assert_eq!(ids(&rc), vec![held.id()]);
    let canceled = list(&app, "/v2/payments?status=canceled").await;
    assert_eq!(ids(&canceled), Vec::<String>::new());
}

#[tokio::test]
async fn the_status_filter_follows_state_changes() {
    let Some(app) = spawn_app().await else { return };
    let held = app
        .post(
            "/v2/payments",
            app.sk(),
            json!({"amount": 3000, "currency": "usd", "capture": false,
                   "payment_method": card("4242424242424242")}),
        )
        .await;
    let id = held.id();
    let cap = app
        .post(&format!("/v2/payments/{id}/capture"), app.sk(), json!({}))
        .await;
    assert_eq!(cap.status, StatusCode::OK, "body: {}", cap.body);
    let rc = list(&app, "/v2/payments?status=requires_capture").await;
    assert_eq!(ids(&rc), Vec::<String>::new());
    let s = list(&app, "/v2/payments?status=succeeded").await;
    assert_eq!(ids(&s), vec![id]);
}

#[tokio::test]
async fn customer_and_status_filters_combine() {
    let Some(app) = spawn_app().await else { return };
    let cus = app.post("/v2/customers", app.sk(), json!({})).await.id();
    let with = |number: &str| {
        json!({"amount": 1000, "currency": "usd", "customer": cus,
               "payment_method": card(number)})
    };
    let good = app
        .post("/v2/payments", app.sk(), with("4242424242424242"))
        .await;
    let bad = app
        .post("/v2/payments", app.sk(), with("4000000000000002"))
        .await;
    assert_eq!(bad.status, StatusCode::PAYMENT_REQUIRED);
    app.pay(app.sk(), "4000000000000002", 1000).await;

    let r = list(&app, &format!("/v2/payments?customer={cus}&status=failed")).await;
    assert_eq!(
        ids(&r),
        vec![bad.body["error"]["payment"]
            .as_str()
            .expect("payment")
            .to_string()]
    );
    let r = list(
        &app,
        &format!("/v2/payments?customer={cus}&status=succeeded"),
    )
    .await;
    assert_eq!(ids(&r), vec![good.id()]);
    let all_failed = list(&app, "/v2/payments?status=failed").await;
    assert_eq!(ids(&all_failed).len(), 2);
}

#[tokio::test]
async fn an_unknown_status_filter_is_400_naming_status() {
    let Some(app) = spawn_app().await else { return };
    let a = app.get("/v2/payments?status=lost", app.sk()).await;
    assert_bad(&a, "parameter_invalid", "status");
}

#[tokio::test]
async fn an_unknown_query_parameter_is_400_parameter_unknown() {
    let Some(app) = spawn_app().await else { return };
    for (path, param) in [
        ("/v2/payments?colour=red", "colour"),
        ("/v2/customers?status=failed", "status"),
        ("/v2/customers?customer=cus_x", "customer"),
        ("/v2/events?created[foo]=1", "created[foo]"),
        ("/v2/payments?limit=3&sort=asc", "sort"),
    ] {
        let a = app.get(path, app.sk()).await;
        assert_bad(&a, "parameter_unknown", param);
    }
}

#[tokio::test]
async fn a_repeated_query_parameter_is_400() {
    let Some(app) = spawn_app().await else { return };
    let a = app.get("/v2/payments?limit=1&limit=2", app.sk()).await;
    assert_eq!(a.status, StatusCode::BAD_REQUEST, "body: {}", a.body);
    assert_eq!(a.error_param(), "limit");
}

#[tokio::test]
async fn events_are_listed_newest_first_and_filtered_by_type() {
    let Some(app) = spawn_app().await else { return };
    let created = customers(&app, 4).await;
    app.post(
        &format!("/v2/customers/{}", created[1]),
        app.sk(),
        json!({"name": "renamed"}),
    )
    .await;
    let all = list(&app, "/v2/events").await;
    let types: Vec<&str> = all.body["data"]
        .as_array()
        .expect("data")
        .iter()
        .filter_map(|e| e["type"].as_str())
        .collect();
    assert_eq!(
        types,
        vec![
            "customer.updated",
            "customer.created",
            "customer.created",
            "customer.created",
            "customer.created"
        ]
    );
    let objs: Vec<&str> = all.body["data"]
        .as_array()
        .expect("data")
        .iter()
        .filter_map(|e| e["data"]["object"]["id"].as_str())
        .collect();
    assert_eq!(
        objs,
        vec![
            created[1].as_str(),
            created[3].as_str(),
            created[2].as_str(),
            created[1].as_str(),
            created[0].as_str()
        ]
    );
    let created_only = list(&app, "/v2/events?type=customer.created&limit=2").await;
    assert_eq!(created_only.body["has_more"], true);
    assert!(created_only.body["data"]
        .as_array()
        .expect("data")
        .iter()
        .all(|e| e["type"] == "customer.created"));
}

#[tokio::test]
async fn a_query_value_over_5000_characters_is_400() {
    let Some(app) = spawn_app().await else { return };
    let a = app
        .get(
            &format!("/v2/customers?email={}", "e".repeat(5001)),
            app.sk(),
        )
        .await;
    assert_eq!(a.status, StatusCode::BAD_REQUEST, "body: {}", a.body);
    assert_eq!(a.error_param(), "email");
}
