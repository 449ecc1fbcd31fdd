//! CORS (CONTRACT §14): a shop's page on its own origin may call, with a publishable key, the
//! routes that tokenise a card and read or confirm the intent it was given; no other route
//! answers a browser from another origin.

use reqwest::{Method, StatusCode};

use crate::helpers::*;
use crate::stripe::{ok, post, v1};

const SHOP: &str = "https://shop.example";

/// A browser's preflight for `method path` from the shop's origin.
async fn preflight(app: &TestApp, method: &str, path: &str) -> reqwest::Response {
    app.client
        .request(Method::OPTIONS, format!("{}{path}", app.base))
        .header("origin", SHOP)
        .header("access-control-request-method", method)
        .header(
            "access-control-request-headers",
            "authorization, content-type",
        )
        .send()
        .await
        .unwrap()
}

fn allowed_origin(resp: &reqwest::Response) -> Option<&str> {
    resp.headers()
        .get("access-control-allow-origin")
        .map(|v| v.to_str().unwrap())
}

#[tokio::test]
async fn the_routes_a_publishable_key_may_call_answer_a_browser_from_any_origin() {
    let Some(app) = spawn_app().await else { return };
    for (method, path) in [
        ("POST", "/v1/payment_methods"),
        ("POST", "/v2/payment_methods"),
        ("GET", "/v1/payment_intents/pi_any"),
        ("POST", "/v1/payment_intents/pi_any/confirm"),
        ("GET", "/v1/setup_intents/seti_any"),
        ("POST", "/v1/setup_intents/seti_any/confirm"),
    ] {
        let p = preflight(&app, method, path).await;
        assert_eq!(p.status(), StatusCode::NO_CONTENT, "{method} {path}");
        assert_eq!(allowed_origin(&p), Some("*"), "{method} {path}");
        let h = p.headers();
        assert_eq!(h["access-control-allow-methods"], method);
        let allowed = h["access-control-allow-headers"].to_str().unwrap();
        assert!(allowed.contains("Authorization") && allowed.contains("Content-Type"));
        assert!(
            h.get("access-control-allow-credentials").is_none(),
            "never credentials"
        );
    }

    // The card tokenised from the page: the answer (and an error's) is readable by it.
    let made = v1(
        &app,
        Method::POST,
        "/payment_methods",
        app.pk(),
        &[
            ("type", "card"),
            ("card[number]", "4242424242424242"),
            ("card[exp_month]", "12"),
            ("card[exp_year]", "2040"),
            ("card[cvc]", "123"),
        ],
        &[("origin", SHOP)],
    )
    .await;
    assert_eq!(made.status, StatusCode::OK, "{}", made.body);
    assert_eq!(made.header("access-control-allow-origin"), Some("*"));
    assert!(made
        .header("access-control-expose-headers")
        .is_some_and(|h| h.contains("Request-Id")));
    let bad = v1(
        &app,
        Method::POST,
        "/payment_methods",
        app.pk(),
        &[("type", "card"), ("card[number]", "4242424242424241")],
        &[("origin", SHOP)],
    )
    .await;
    assert!(bad.status.is_client_error());
    assert_eq!(bad.header("access-control-allow-origin"), Some("*"));
}

#[tokio::test]
async fn no_secret_key_route_answers_a_browser() {
    let Some(app) = spawn_app().await else { return };
    for (method, path) in [
        ("POST", "/v1/customers"),
        ("POST", "/v1/payment_intents"),
        ("POST", "/v1/payment_intents/pi_any/capture"),
        ("GET", "/v1/payment_methods"),
        ("GET", "/v1/balance"),
        ("POST", "/v2/payments"),
        ("GET", "/v2/payment_methods"),
        ("POST", "/v2/refunds"),
    ] {
        let p = preflight(&app, method, path).await;
        assert_ne!(p.status(), StatusCode::NO_CONTENT, "{method} {path}");
        assert_eq!(allowed_origin(&p), None, "{method} {path}");
    }
    // Their answers name no origin, so a browser keeps them from the page.
    let customer = v1(
        &app,
        Method::POST,
        "/customers",
        app.sk(),
        &[],
        &[("origin", SHOP)],
    )
    .await;
    assert_eq!(customer.status, StatusCode::OK);
    assert_eq!(customer.header("access-control-allow-origin"), None);
    let intent = ok(
        &post(
            &app,
            "/payment_intents",
            &[("amount", "100"), ("currency", "usd")],
        )
        .await,
        "PaymentIntent",
    );
    let read = v1(
        &app,
        Method::GET,
        &format!("/payment_intents/{}", intent["id"].as_str().unwrap()),
        app.sk(),
        &[],
        &[("origin", SHOP)],
    )
    .await;
    // A route open to browsers is marked whoever calls it: the mark says what a page may read,
    // and a secret key in a page is the page's mistake, not a door CORS opens.
    assert_eq!(read.header("access-control-allow-origin"), Some("*"));
}
