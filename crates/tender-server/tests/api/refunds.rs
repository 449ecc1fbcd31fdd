//! Refunds: full and partial, over-refund, state rules, concurrency.

use serde_json::json;

use crate::helpers::*;

#[tokio::test]
async fn full_refund_by_default_marks_the_payment_refunded() {
    let Some(app) = spawn_app().await else { return };
    let p = app.pay(app.sk(), "4242424242424242", 2500).await.id();
    let r = app
        .post(
            "/v2/refunds",
            app.sk(),
            json!({"payment": p, "reason": "requested_by_customer", "metadata": {"k": "v"}}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["object"], "refund");
    assert_eq!(r.body["amount"], 2500);
    assert_eq!(r.body["currency"], "usd");
    assert_eq!(r.body["payment"], p.as_str());
    assert_eq!(r.body["status"], "succeeded");
    assert_eq!(r.body["reason"], "requested_by_customer");
    assert!(r.id().starts_with("re_"));
    let pay = app.get(&format!("/v2/payments/{p}"), app.sk()).await;
    assert_eq!(pay.body["amount_refunded"], 2500);
    assert_eq!(pay.body["refunded"], true);
    assert_eq!(
        pay.body["status"], "succeeded",
        "refunds do not change the status"
    );
    let ev = app.get("/v2/events?type=refund.created", app.sk()).await;
    assert_eq!(ev.body["data"][0]["data"]["object"]["id"], r.id().as_str());
    let again = app
        .post("/v2/refunds", app.sk(), json!({"payment": p}))
        .await;
    assert_eq!(again.status, 400);
    assert_eq!(again.error_code(), "amount_too_large");
}

#[tokio::test]
async fn partial_refunds_add_up_and_cannot_exceed_what_is_left() {
    let Some(app) = spawn_app().await else { return };
    let p = app.pay(app.sk(), "4242424242424242", 1000).await.id();
    assert_eq!(
        app.post(
            "/v2/refunds",
            app.sk(),
            json!({"payment": p, "amount": 300})
        )
        .await
        .status,
        200
    );
    assert_eq!(
        app.post(
            "/v2/refunds",
            app.sk(),
            json!({"payment": p, "amount": 300})
        )
        .await
        .status,
        200
    );
    let over = app
        .post(
            "/v2/refunds",
            app.sk(),
            json!({"payment": p, "amount": 401}),
        )
        .await;
    assert_eq!(over.status, 400);
    assert_eq!(over.error_code(), "amount_too_large");
    assert_eq!(over.error_param(), "amount");
    let rest = app
        .post("/v2/refunds", app.sk(), json!({"payment": p}))
        .await;
    assert_eq!(rest.body["amount"], 400);
    let pay = app.get(&format!("/v2/payments/{p}"), app.sk()).await;
    assert_eq!(pay.body["amount_refunded"], 1000);
    assert_eq!(pay.body["refunded"], true);
    let list = app.get(&format!("/v2/refunds?payment={p}"), app.sk()).await;
    let amounts: Vec<i64> = list.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["amount"].as_i64().unwrap())
        .collect();
    assert_eq!(amounts, vec![400, 300, 300]);
}

#[tokio::test]
async fn only_succeeded_payments_can_be_refunded() {
    let Some(app) = spawn_app().await else { return };
    let failed = app.pay(app.sk(), "4000000000000002", 1000).await.body["error"]["payment"]
        .as_str()
        .unwrap()
        .to_string();
    let r = app
        .post("/v2/refunds", app.sk(), json!({"payment": failed}))
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(r.error_code(), "payment_unexpected_state");
    let mut body = payment_body("4242424242424242", 1000);
    body["capture"] = json!(false);
    let uncaptured = app.post("/v2/payments", app.sk(), body).await.id();
    let r = app
        .post("/v2/refunds", app.sk(), json!({"payment": uncaptured}))
        .await;
    assert_eq!(r.error_code(), "payment_unexpected_state");
    let r = app
        .post(
            "/v2/refunds",
            app.sk(),
            json!({"payment": "pay_doesnotexist0000000000"}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(r.error_code(), "resource_missing");
    assert_eq!(r.error_param(), "payment");
    let r = app
        .post(
            "/v2/refunds",
            app.sk(),
            json!({"payment": uncaptured, "reason": "changed_mind"}),
        )
        .await;
    assert_eq!(r.error_param(), "reason");
}

#[tokio::test]
async fn a_partially_captured_payment_refunds_at_most_the_captured_amount() {
    let Some(app) = spawn_app().await else { return };
    let mut body = payment_body("4242424242424242", 5000);
    body["capture"] = json!(false);
    let id = app.post("/v2/payments", app.sk(), body).await.id();
    app.post(
        &format!("/v2/payments/{id}/capture"),
        app.sk(),
        json!({"amount": 2000}),
    )
    .await;
    let r = app
        .post(
            "/v2/refunds",
            app.sk(),
            json!({"payment": id, "amount": 2001}),
        )
        .await;
    assert_eq!(r.error_code(), "amount_too_large");
    let r = app
        .post("/v2/refunds", app.sk(), json!({"payment": id}))
        .await;
    assert_eq!(r.body["amount"], 2000);
}

#[tokio::test]
async fn twenty_concurrent_partial_refunds_never_exceed_the_captured_amount() {
    let Some(app) = spawn_app().await else { return };
    let p = app.pay(app.sk(), "4242424242424242", 1000).await.id();
    let futures =
        (0..20).map(|_| app.post("/v2/refunds", app.sk(), json!({"payment": p, "amount": 70})));
    let answers = futures::future::join_all(futures).await;
    let ok = answers.iter().filter(|a| a.status == 200).count();
    let refused = answers
        .iter()
        .filter(|a| a.status == 400 && a.error_code() == "amount_too_large")
        .count();
    assert_eq!(ok, 14, "1000 / 70 = 14 refunds fit");
    assert_eq!(ok + refused, 20, "every other answer is amount_too_large");
    let pay = app.get(&format!("/v2/payments/{p}"), app.sk()).await;
    assert_eq!(pay.body["amount_refunded"], 980);
    let list = app
        .get(&format!("/v2/refunds?payment={p}&limit=100"), app.sk())
        .await;
    assert_eq!(list.body["data"].as_array().unwrap().len(), 14);
}

#[tokio::test]
async fn refund_metadata_can_be_updated_and_is_retrievable() {
    let Some(app) = spawn_app().await else { return };
    let p = app.pay(app.sk(), "4242424242424242", 1000).await.id();
    let r = app
        .post(
            "/v2/refunds",
            app.sk(),
            json!({"payment": p, "amount": 100}),
        )
        .await
        .id();
    let u = app
        .post(
            &format!("/v2/refunds/{r}"),
            app.sk(),
            json!({"metadata": {"ticket": "7"}}),
        )
        .await;
    assert_eq!(u.status, 200);
    assert_eq!(u.body["metadata"]["ticket"], "7");
    let g = app.get(&format!("/v2/refunds/{r}"), app.sk()).await;
    assert_eq!(g.body, u.body);
    let bad = app
        .post(&format!("/v2/refunds/{r}"), app.sk(), json!({"amount": 5}))
        .await;
    assert_eq!(bad.error_code(), "parameter_unknown");
    let other = app.other_account().await;
    assert_eq!(
        app.get(&format!("/v2/refunds/{r}"), &other.keys.test.secret)
            .await
            .status,
        404
    );
}
