//! `tender.js` and its card field as a browser fetches them (CONTRACT §14): the script's type
//! and caching, the field's page security, and who may frame the field and the 3-D Secure page
//! (any page, until the account lists its shop origins). The flows themselves run in Chromium
//! (`tests/browser/tender_js.rs`).

use reqwest::{Method, StatusCode};
use tender_core::accounts::checkout_settings::CheckoutSettings;

use crate::helpers::*;

async fn fetch(app: &TestApp, url: &str, headers: &[(&str, &str)]) -> reqwest::Response {
    let mut req = app.client.request(Method::GET, url);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    req.send().await.unwrap()
}

fn header<'a>(resp: &'a reqwest::Response, name: &str) -> &'a str {
    resp.headers()
        .get(name)
        .map(|v| v.to_str().unwrap())
        .unwrap_or("")
}

#[tokio::test]
async fn tender_js_is_served_as_a_cacheable_script_revalidated_by_its_etag() {
    let Some(app) = spawn_app().await else { return };
    let url = format!("{}/v1/tender.js", app.base);
    let resp = fetch(&app, &url, &[]).await;
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(
        header(&resp, "content-type"),
        "text/javascript; charset=utf-8"
    );
    assert_eq!(header(&resp, "cache-control"), "public, max-age=3600");
    assert_eq!(header(&resp, "x-content-type-options"), "nosniff");
    let tag = header(&resp, "etag").to_string();
    assert!(tag.starts_with('"') && tag.len() > 10, "{tag}");
    let body = resp.text().await.unwrap();
    assert!(body.contains("Tender.version = VERSION") && body.contains("confirmCardPayment"));
    let again = fetch(&app, &url, &[("if-none-match", &tag)]).await;
    assert_eq!(again.status(), StatusCode::NOT_MODIFIED);
    let field_js = fetch(&app, &format!("{}/v1/elements/card.js", app.base), &[]).await;
    assert_eq!(field_js.status(), StatusCode::OK);
    assert_eq!(
        header(&field_js, "content-type"),
        "text/javascript; charset=utf-8"
    );
}

#[tokio::test]
async fn the_card_field_runs_only_its_own_script_and_needs_a_publishable_key() {
    let Some(app) = spawn_app().await else { return };
    let field = |key: &str| format!("{}/v1/elements/card?key={key}", app.base);
    let resp = fetch(&app, &field(app.pk()), &[]).await;
    assert_eq!(resp.status(), StatusCode::OK);
    let csp = header(&resp, "content-security-policy").to_string();
    for part in [
        "default-src 'none'",
        "script-src 'self'",
        "connect-src 'self'",
        "frame-ancestors *",
    ] {
        assert!(csp.contains(part), "{part} in {csp}");
    }
    assert_eq!(header(&resp, "cache-control"), "no-store");
    assert_eq!(header(&resp, "referrer-policy"), "no-referrer");
    let page = resp.text().await.unwrap();
    assert!(page.contains("autocomplete=\"cc-number\"") && page.contains("/v1/elements/card.js"));

    // A secret key, an unknown key, no key: the page explains and nobody may frame it.
    let sk = app.sk().to_string();
    for key in [sk.as_str(), "pk_test_unknownunknownunknown", ""] {
        let resp = fetch(&app, &field(key), &[]).await;
        assert_eq!(resp.status(), StatusCode::BAD_REQUEST, "{key}");
        assert!(header(&resp, "content-security-policy").contains("frame-ancestors 'none'"));
        let page = resp.text().await.unwrap();
        assert!(!page.contains("script") && !page.contains(&sk), "{page}");
    }
}

#[tokio::test]
async fn an_account_that_lists_its_shop_origins_is_framed_by_those_alone() {
    let Some(app) = spawn_app().await else { return };
    let action = app.pay(app.sk(), "4000002500003155", 1500).await;
    let three_ds = action.body["next_action"]["redirect_to_url"]["url"]
        .as_str()
        .unwrap()
        .to_string();
    let before = fetch(&app, &three_ds, &[]).await;
    assert!(header(&before, "content-security-policy").contains("frame-ancestors *"));
    assert_eq!(header(&before, "x-frame-options"), "");

    let settings = CheckoutSettings {
        frame_origins: vec![
            "https://Shop.example/".into(),
            "http://127.0.0.1:3000".into(),
        ],
        ..CheckoutSettings::default()
    };
    app.services
        .accounts()
        .set_checkout_settings(&app.account.account, settings)
        .await
        .unwrap();
    let listed = "frame-ancestors https://shop.example http://127.0.0.1:3000";
    let field = fetch(
        &app,
        &format!("{}/v1/elements/card?key={}", app.base, app.pk()),
        &[],
    )
    .await;
    assert!(header(&field, "content-security-policy").ends_with(listed));
    let three_ds = fetch(&app, &three_ds, &[]).await;
    assert!(header(&three_ds, "content-security-policy").contains(listed));

    // The other hosted pages are never framed, whatever the setting.
    let receipt = fetch(&app, &format!("{}/{}", app.receipt_base, action.id()), &[]).await;
    assert!(header(&receipt, "content-security-policy").contains("frame-ancestors 'none'"));
    assert_eq!(header(&receipt, "x-frame-options"), "DENY");

    // An origin with a path, a wildcard or plain http to a public host is refused, naming it.
    for bad in ["https://shop.example/cart", "*", "http://shop.example"] {
        let refused = app
            .services
            .accounts()
            .set_checkout_settings(
                &app.account.account,
                CheckoutSettings {
                    frame_origins: vec![bad.into()],
                    ..CheckoutSettings::default()
                },
            )
            .await
            .unwrap_err();
        assert!(
            refused.to_string().contains("frame_origins")
                || format!("{refused:?}").contains("frame_origins"),
            "{bad}: {refused:?}"
        );
    }
}
