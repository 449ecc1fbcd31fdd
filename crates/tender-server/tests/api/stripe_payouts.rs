//! `POST /v1/payouts` (CONTRACT §13): Stripe's payout names no bank account, so it goes to the
//! account's default destination (set in the dashboard or with `tender accounts
//! payout-destination`), and without one it is refused.

use reqwest::StatusCode;
use tender_core::secret::Secret;

use crate::balance::settle_tasks;
use crate::helpers::spawn_stepped_app;
use crate::stripe::{get, ok, post};

#[tokio::test]
async fn a_payout_goes_to_the_default_destination_and_without_one_is_a_400() {
    let Some(app) = spawn_stepped_app().await else {
        return;
    };
    ok(
        &post(
            &app,
            "/payment_intents",
            &[
                ("amount", "10000"),
                ("currency", "usd"),
                ("payment_method", "pm_card_visa"),
                ("confirm", "true"),
            ],
        )
        .await,
        "PaymentIntent",
    );
    app.clock.advance(61);
    settle_tasks(&app).await;
    let asked = [("amount", "5000"), ("currency", "usd")];
    let refused = post(&app, "/payouts", &asked).await;
    assert_eq!(
        (refused.status, refused.error_param()),
        (StatusCode::BAD_REQUEST, "destination"),
        "{}",
        refused.body
    );
    assert_eq!(refused.body["error"]["type"], "invalid_request_error");
    // A destination given with Stripe's parameter is not one Tender knows.
    let a = post(
        &app,
        "/payouts",
        &[
            ("amount", "5000"),
            ("currency", "usd"),
            ("destination", "ba_1"),
        ],
    )
    .await;
    assert_eq!(
        (a.status, a.error_code()),
        (StatusCode::BAD_REQUEST, "parameter_unknown")
    );
    let account = &app.account.account;
    let book = app.services.balance();
    let bad = book
        .set_payout_destination(account, Secret::new("DE00 1234".into()), "Ada")
        .await;
    assert!(bad.is_err(), "an invalid IBAN is refused");
    let shown = book
        .set_payout_destination(
            account,
            Secret::new("DE89 3704 0044 0532 0130 00".into()),
            "Ada Lovelace",
        )
        .await
        .unwrap();
    assert_eq!(
        (shown.country.as_str(), shown.last4.as_str()),
        ("DE", "3000")
    );
    let po = ok(&post(&app, "/payouts", &asked).await, "Payout");
    assert_eq!(
        (po["amount"].as_i64(), po["status"].as_str()),
        (Some(5000), Some("pending"))
    );
    let v2 = app
        .get(
            &format!("/v2/payouts/{}", po["id"].as_str().unwrap()),
            app.sk(),
        )
        .await;
    assert_eq!(v2.body["destination"]["last4"], "3000");
    assert_eq!(
        v2.body["destination"]["account_holder_name"],
        "Ada Lovelace"
    );
    let balance = get(&app, "/balance", &[]).await;
    let available = balance.body["available"][0]["amount"].as_i64().unwrap();
    // More than is available: the balance may not go below zero.
    let a = post(
        &app,
        "/payouts",
        &[
            ("amount", &(available + 1).to_string()),
            ("currency", "usd"),
        ],
    )
    .await;
    assert_eq!(a.status, StatusCode::BAD_REQUEST, "{}", a.body);
    // The IBAN is stored sealed, never in clear.
    assert!(!crate::helpers::contains(
        &app.stored_bytes().await,
        "DE89370400440532013000"
    ));
}
