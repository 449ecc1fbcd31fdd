//! An invoice takes the customer's money once, however its tries cross: a try that asked for
//! 3-D Secure may be authenticated by the customer late, after the merchant (or the hosted
//! page) tried again. Whatever the order, the customer pays the invoice's amount once.

use serde_json::{json, Value};

use crate::billing::{created, save_card};
use crate::helpers::*;

const THREE_DS: &str = "4000002500003155";
const GOOD: &str = "4242424242424242";
const DECLINES: &str = "4000000000000341";

/// A customer whose only card asks for 3-D Secure, subscribed to a 20.00 usd monthly plan: the
/// first try waits for the customer. The customer, the invoice and that try (with the address
/// of its authentication page).
async fn waiting_start(app: &TestApp) -> (String, String, String, String) {
    let cus = created(app, "/v2/customers", json!({"email": "once@example.com"})).await;
    let cus = cus["id"].as_str().unwrap().to_string();
    save_card(app, &cus, THREE_DS).await;
    let prod = created(app, "/v2/products", json!({"name": "Plan"})).await;
    let price = created(
        app,
        "/v2/prices",
        json!({"product": prod["id"], "currency": "usd", "unit_amount": 2000,
               "recurring": {"interval": "month"}}),
    )
    .await;
    let sub = created(
        app,
        "/v2/subscriptions",
        json!({"customer": cus, "items": [{"price": price["id"]}]}),
    )
    .await;
    assert_eq!(sub["status"], "incomplete");
    let invoice = sub["latest_invoice"].as_str().unwrap().to_string();
    let inv = app.get(&format!("/v2/invoices/{invoice}"), app.sk()).await;
    let try1 = inv.body["payment"].as_str().unwrap().to_string();
    let p = app.get(&format!("/v2/payments/{try1}"), app.sk()).await;
    assert_eq!(p.body["status"], "requires_action");
    let url = p.body["next_action"]["redirect_to_url"]["url"]
        .as_str()
        .unwrap()
        .to_string();
    (cus, invoice, try1, url)
}

/// The customer completes 3-D Secure on `url`: the HTTP status of the answer.
async fn authenticate(url: &str) -> u16 {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
        .post(url)
        .form(&[("outcome", "complete")])
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

/// What the customer paid: captured less refunded, over all their payments.
async fn paid_by(app: &TestApp, customer: &str) -> i64 {
    let list = app
        .get(
            &format!("/v2/payments?customer={customer}&limit=100"),
            app.sk(),
        )
        .await;
    list.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["amount_captured"].as_i64().unwrap() - p["amount_refunded"].as_i64().unwrap())
        .sum()
}

async fn status(app: &TestApp, path: &str) -> Value {
    app.get(path, app.sk()).await.body["status"].clone()
}

#[tokio::test]
async fn paid_by_hand_the_try_waiting_for_3ds_is_canceled_and_cannot_be_authenticated() {
    let Some(app) = spawn_stepped_app().await else {
        return;
    };
    let (cus, invoice, try1, url) = waiting_start(&app).await;
    let good = save_card(&app, &cus, GOOD).await;
    let paid = created(
        &app,
        &format!("/v2/invoices/{invoice}/pay"),
        json!({"payment_method": good}),
    )
    .await;
    assert_eq!(paid["status"], "paid");
    let p = app.get(&format!("/v2/payments/{try1}"), app.sk()).await;
    assert_eq!(
        (&p.body["status"], &p.body["cancellation_reason"]),
        (&json!("canceled"), &json!("duplicate"))
    );
    // The customer's authentication page no longer takes the payment.
    authenticate(&url).await;
    assert_eq!(
        status(&app, &format!("/v2/payments/{try1}")).await,
        "canceled"
    );
    app.run_due_tasks().await;
    assert_eq!(paid_by(&app, &cus).await, 2000);
}

#[tokio::test]
async fn a_try_authenticated_late_pays_the_invoice_which_is_not_charged_again() {
    let Some(app) = spawn_stepped_app().await else {
        return;
    };
    let (cus, invoice, try1, url) = waiting_start(&app).await;
    // The customer authenticates; the invoice learns of it only when its settle task runs.
    authenticate(&url).await;
    assert_eq!(
        status(&app, &format!("/v2/payments/{try1}")).await,
        "succeeded"
    );
    assert_eq!(
        status(&app, &format!("/v2/invoices/{invoice}")).await,
        "open"
    );
    // A void now would keep the customer's money for an invoice that asks for none.
    let void = app
        .post(&format!("/v2/invoices/{invoice}/void"), app.sk(), json!({}))
        .await;
    assert_eq!(
        (void.status, void.error_code()),
        (reqwest::StatusCode::BAD_REQUEST, "invoice_unexpected_state")
    );
    // Paid by hand with another card meanwhile: paid by the payment that succeeded.
    let good = save_card(&app, &cus, GOOD).await;
    let paid = created(
        &app,
        &format!("/v2/invoices/{invoice}/pay"),
        json!({"payment_method": good}),
    )
    .await;
    assert_eq!(
        (&paid["status"], &paid["payment"], &paid["payments"]),
        (&json!("paid"), &json!(try1), &json!([try1]))
    );
    app.run_due_tasks().await;
    assert_eq!(paid_by(&app, &cus).await, 2000);
    let refunds = app.get("/v2/refunds", app.sk()).await;
    assert_eq!(refunds.body["data"], json!([]));
}

#[tokio::test]
async fn voided_after_a_declined_retry_every_waiting_try_is_canceled() {
    let Some(app) = spawn_stepped_app().await else {
        return;
    };
    let (cus, invoice, try1, url) = waiting_start(&app).await;
    // A second try by hand, declined: the first still waits for the customer.
    let declines = save_card(&app, &cus, DECLINES).await;
    let r = app
        .post(
            &format!("/v2/invoices/{invoice}/pay"),
            app.sk(),
            json!({"payment_method": declines}),
        )
        .await;
    assert_eq!(r.status, reqwest::StatusCode::PAYMENT_REQUIRED);
    assert_eq!(
        status(&app, &format!("/v2/payments/{try1}")).await,
        "requires_action"
    );
    created(&app, &format!("/v2/invoices/{invoice}/void"), json!({})).await;
    assert_eq!(
        status(&app, &format!("/v2/payments/{try1}")).await,
        "canceled"
    );
    authenticate(&url).await;
    app.run_due_tasks().await;
    assert_eq!(paid_by(&app, &cus).await, 0);
}

#[tokio::test]
async fn racing_a_late_authentication_against_a_try_by_hand_charges_once() {
    let Some(app) = spawn_stepped_app().await else {
        return;
    };
    // However the two interleave, each customer ends up paying 20.00 once (a payment that
    // won its race after the invoice was paid is refunded by its settle task).
    let mut starts = Vec::new();
    for _ in 0..6 {
        let (cus, invoice, _, url) = waiting_start(&app).await;
        let good = save_card(&app, &cus, GOOD).await;
        starts.push((cus, invoice, url, good));
    }
    let races = starts.iter().map(|(_, invoice, url, good)| {
        let app = &app;
        async move {
            let path = format!("/v2/invoices/{invoice}/pay");
            let pay = app.post(&path, app.sk(), json!({"payment_method": good}));
            let (_, answer) = tokio::join!(authenticate(url), pay);
            assert_eq!(answer.status, reqwest::StatusCode::OK, "{}", answer.body);
        }
    });
    futures::future::join_all(races).await;
    for _ in 0..3 {
        app.run_due_tasks().await;
    }
    for (cus, invoice, _, _) in &starts {
        assert_eq!(
            status(&app, &format!("/v2/invoices/{invoice}")).await,
            "paid"
        );
        assert_eq!(paid_by(&app, cus).await, 2000, "{cus}");
    }
    crate::balance::assert_ledger_holds(&app).await;
}
