//! Prices found by their lookup key (CONTRACT §13: `lookup_key`, `transfer_lookup_key`, lists
//! by `lookup_keys[]`), through `/v1` as Stripe's SDKs call it and through `/v2`.

use reqwest::StatusCode;
use serde_json::json;

use crate::helpers::spawn_app;
use crate::stripe::{get, ok, post};

#[tokio::test]
async fn a_lookup_key_names_one_price_moves_on_request_and_finds_it_in_a_list() {
    let Some(app) = spawn_app().await else { return };
    let price = |key: &'static str, amount: &'static str| {
        let app = &app;
        async move {
            post(
                app,
                "/prices",
                &[
                    ("product_data[name]", "Pro"),
                    ("currency", "usd"),
                    ("unit_amount", amount),
                    ("recurring[interval]", "month"),
                    ("lookup_key", key),
                ],
            )
            .await
        }
    };
    let old = ok(&price("pro_monthly", "1500").await, "Price");
    assert_eq!(old["lookup_key"], "pro_monthly");
    let basic = ok(&price("basic_monthly", "500").await, "Price");
    // A key another price has is refused, unless it is moved on purpose.
    let taken = price("pro_monthly", "1900").await;
    assert_eq!(
        (taken.status, taken.error_code(), taken.error_param()),
        (StatusCode::BAD_REQUEST, "lookup_key_in_use", "lookup_key"),
        "{}",
        taken.body
    );
    let new = ok(
        &post(
            &app,
            "/prices",
            &[
                ("product", old["product"].as_str().unwrap()),
                ("currency", "usd"),
                ("unit_amount", "1900"),
                ("recurring[interval]", "month"),
                ("lookup_key", "pro_monthly"),
                ("transfer_lookup_key", "true"),
            ],
        )
        .await,
        "Price",
    );
    let was = get(
        &app,
        &format!("/prices/{}", old["id"].as_str().unwrap()),
        &[],
    )
    .await;
    assert_eq!(was.body["lookup_key"], json!(null));
    let events = get(&app, "/events", &[("type", "price.updated")]).await;
    assert_eq!(events.body["data"][0]["data"]["object"]["id"], old["id"]);
    assert_eq!(
        events.body["data"][0]["data"]["previous_attributes"]["lookup_key"],
        "pro_monthly"
    );
    // The shop's page asks for its plans by key.
    let found = get(
        &app,
        "/prices",
        &[
            ("lookup_keys[]", "pro_monthly"),
            ("lookup_keys[]", "basic_monthly"),
            ("lookup_keys[]", "unknown"),
            ("expand[]", "data.product"),
        ],
    )
    .await;
    assert_eq!(found.status, StatusCode::OK, "{}", found.body);
    let ids: Vec<&str> = found.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [new["id"].as_str().unwrap(), basic["id"].as_str().unwrap()]
    );
    assert_eq!(found.body["data"][0]["product"]["name"], "Pro");
    let one = get(
        &app,
        "/prices",
        &[
            ("lookup_keys[]", "pro_monthly"),
            ("lookup_keys[]", "basic_monthly"),
            ("limit", "1"),
        ],
    )
    .await;
    assert_eq!(one.body["has_more"], true);
    // Cleared by update, then free for another price; /v2 finds it the same way.
    ok(
        &post(
            &app,
            &format!("/prices/{}", basic["id"].as_str().unwrap()),
            &[("lookup_key", "")],
        )
        .await,
        "Price",
    );
    let v2 = app.get("/v2/prices?lookup_key=pro_monthly", app.sk()).await;
    assert_eq!(v2.body["data"][0]["id"], new["id"]);
    let v2 = app
        .get("/v2/prices?lookup_key=basic_monthly", app.sk())
        .await;
    assert_eq!(v2.body["data"], json!([]));
    let long = "k".repeat(201);
    let a = get(&app, "/prices", &[("lookup_keys[]", long.as_str())]).await;
    assert_eq!(
        (a.status, a.error_param()),
        (StatusCode::BAD_REQUEST, "lookup_keys")
    );
    let a = app
        .get(&format!("/v2/prices?lookup_key={long}"), app.sk())
        .await;
    assert_eq!(a.status, StatusCode::BAD_REQUEST, "{}", a.body);
    let a = post(
        &app,
        "/prices",
        &[
            ("product", old["product"].as_str().unwrap()),
            ("currency", "usd"),
            ("unit_amount", "100"),
            ("lookup_key", &long),
        ],
    )
    .await;
    assert_eq!(
        (a.status, a.error_param()),
        (StatusCode::BAD_REQUEST, "lookup_key")
    );
}
