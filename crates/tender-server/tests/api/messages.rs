//! Error messages a new merchant meets first (first-run review, finding 12): each says what
//! is wrong in the merchant's terms and how to fix it.

use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::helpers::*;

fn message(a: &Answer) -> &str {
    a.body["error"]["message"].as_str().unwrap_or("")
}

#[tokio::test]
async fn amounts_below_the_minimum_are_said_in_money_not_minor_units() {
    let Some(app) = spawn_app().await else { return };
    let a = app.pay(app.sk(), "4242424242424242", 0).await;
    assert_eq!(a.error_code(), "amount_too_small");
    assert!(message(&a).contains("0.50 USD"), "{}", message(&a));
}

#[tokio::test]
async fn key_mistakes_say_which_scheme_is_expected_and_show_the_redacted_key() {
    let Some(app) = spawn_app().await else { return };
    let bare = app
        .client
        .get(format!("{}/v2/payments", app.base))
        .header("authorization", app.sk())
        .send()
        .await
        .unwrap();
    let bare = answer(bare).await;
    assert_eq!(bare.status, StatusCode::UNAUTHORIZED);
    assert_eq!(bare.error_code(), "api_key_invalid");
    assert!(message(&bare).contains("Bearer"), "{}", message(&bare));
    assert!(
        !message(&bare).contains(app.sk()),
        "the key is never echoed"
    );

    let wrong = "sk_test_0000000000000000000000wron";
    let a = app.get("/v2/payments", wrong).await;
    assert_eq!(a.error_code(), "api_key_invalid");
    assert!(message(&a).contains("sk_test_…wron"), "{}", message(&a));
    assert!(!message(&a).contains(wrong));
}

#[tokio::test]
async fn another_api_version_or_a_trailing_slash_gets_a_hint() {
    let Some(app) = spawn_app().await else { return };
    let v1 = app.get("/v1/payments", app.sk()).await;
    assert_eq!(v1.status, StatusCode::NOT_FOUND);
    assert!(message(&v1).contains("/v2/payments"), "{}", message(&v1));
    let slash = app.get("/v2/payments/", app.sk()).await;
    assert_eq!(slash.status, StatusCode::NOT_FOUND);
    assert!(
        message(&slash).contains("try /v2/payments"),
        "{}",
        message(&slash)
    );
}

#[tokio::test]
async fn a_url_without_a_scheme_is_said_in_words() {
    let Some(app) = spawn_app().await else { return };
    let a = app
        .post(
            "/v2/webhook_endpoints",
            app.sk(),
            json!({"url": "shop.example/hooks", "enabled_events": ["*"]}),
        )
        .await;
    assert_eq!(a.error_code(), "url_invalid");
    assert!(message(&a).contains("no scheme"), "{}", message(&a));
}

#[tokio::test]
async fn unknown_parameters_close_to_known_ones_get_a_suggestion() {
    let Some(app) = spawn_app().await else { return };
    let a = app
        .post(
            "/v2/payments",
            app.sk(),
            json!({"ammount": 1000, "currency": "usd", "payment_method": card("4242424242424242")}),
        )
        .await;
    assert_eq!(a.error_code(), "parameter_unknown");
    assert!(
        message(&a).contains("Did you mean amount?"),
        "{}",
        message(&a)
    );
    let paid = app.pay(app.sk(), "4242424242424242", 1000).await;
    let r = app
        .post("/v2/refunds", app.sk(), json!({"charge": paid.id()}))
        .await;
    assert!(
        message(&r).contains("Did you mean payment?"),
        "{}",
        message(&r)
    );
    let l = app
        .request(
            Method::GET,
            "/v2/payments?limt=3",
            Some(app.sk()),
            None,
            &[],
        )
        .await;
    assert!(
        message(&l).contains("Did you mean limit?"),
        "{}",
        message(&l)
    );
}

/// First-run review finding 14: the customers' e-mail filter ignores case.
#[tokio::test]
async fn the_email_filter_ignores_case() {
    let Some(app) = spawn_app().await else { return };
    let c = app
        .post(
            "/v2/customers",
            app.sk(),
            json!({"email": "jenny@example.com"}),
        )
        .await;
    let found = app
        .get("/v2/customers?email=Jenny@Example.COM", app.sk())
        .await;
    assert_eq!(found.body["data"][0]["id"], c.body["id"]);
    assert_eq!(
        found.body["data"][0]["email"], "jenny@example.com",
        "kept as given"
    );
}
