//! Recurring billing (CONTRACT §10) through the API, on a test clock: a year of renewals,
//! dunning to `unpaid` and recovery with a new card, hard declines, the incomplete start and its
//! expiry, paying and voiding by hand, products and prices, and bad input.

use serde_json::{json, Value};

use crate::balance::assert_ledger_holds;
use crate::helpers::*;

const DAY: i64 = 86_400;
/// 2027-01-31T10:00:00Z: a month end, so monthly periods clamp (28 Feb, 31 Mar, 30 Apr…).
const JAN_31_2027: i64 = 1_801_389_600;
const GOOD: &str = "4242424242424242";
const DECLINES: &str = "4000000000000341";
const LOST: &str = "4000000000004905";

pub(crate) async fn created(app: &TestApp, path: &str, body: Value) -> Value {
    let r = app.post(path, app.sk(), body).await;
    assert_eq!(r.status, 200, "{path}: {}", r.body);
    r.body
}

async fn clock(app: &TestApp, at: i64) -> String {
    let c = created(
        app,
        "/v2/test_helpers/test_clocks",
        json!({"frozen_time": at, "name": "year"}),
    )
    .await;
    assert_eq!(c["object"], "test_helpers.test_clock");
    assert_eq!(c["status"], "ready");
    assert_eq!(c["frozen_time"], at);
    c["id"].as_str().unwrap().to_string()
}

/// A customer of `clock` with a saved card `number`.
async fn customer_with_card(app: &TestApp, clock: Option<&str>, number: &str) -> (String, String) {
    let mut body = json!({"email": "sub@example.com"});
    if let Some(c) = clock {
        body["test_clock"] = json!(c);
    }
    let cus = created(app, "/v2/customers", body).await;
    assert_eq!(cus["test_clock"], json!(clock));
    let cus = cus["id"].as_str().unwrap().to_string();
    let pm = save_card(app, &cus, number).await;
    (cus, pm)
}

pub(crate) async fn save_card(app: &TestApp, customer: &str, number: &str) -> String {
    let pm = created(app, "/v2/payment_methods", card(number)).await;
    let pm = pm["id"].as_str().unwrap().to_string();
    created(
        app,
        &format!("/v2/payment_methods/{pm}/attach"),
        json!({"customer": customer}),
    )
    .await;
    pm
}

/// A recurring usd price of `amount` every `interval`.
async fn price(app: &TestApp, amount: i64, interval: &str) -> String {
    let prod = created(app, "/v2/products", json!({"name": "Plan"})).await;
    let p = created(
        app,
        "/v2/prices",
        json!({"product": prod["id"], "currency": "usd", "unit_amount": amount,
               "recurring": {"interval": interval}}),
    )
    .await;
    p["id"].as_str().unwrap().to_string()
}

/// Advances the clock to `to` and runs tasks (from two runners at once, as two nodes would)
/// until it is ready again.
async fn advance(app: &TestApp, clock: &str, to: i64) -> Value {
    let r = app
        .post(
            &format!("/v2/test_helpers/test_clocks/{clock}/advance"),
            app.sk(),
            json!({"frozen_time": to}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["status"], "advancing");
    assert_eq!(
        r.body["status_details"]["advancing"]["target_frozen_time"],
        to
    );
    for _ in 0..500 {
        let (a, b) = tokio::join!(
            app.services.run_due_tasks(100),
            app.services.run_due_tasks(100)
        );
        a.unwrap();
        b.unwrap();
        let c = app
            .get(&format!("/v2/test_helpers/test_clocks/{clock}"), app.sk())
            .await;
        if c.body["status"] == "ready" {
            assert_eq!(c.body["frozen_time"], to);
            return c.body;
        }
    }
    panic!("the clock never finished advancing");
}

async fn list(app: &TestApp, path: &str) -> Vec<Value> {
    let r = app.get(path, app.sk()).await;
    assert_eq!(r.status, 200, "{path}: {}", r.body);
    let mut data = r.body["data"].as_array().unwrap().clone();
    data.reverse();
    data
}

async fn get(app: &TestApp, path: &str) -> Value {
    let r = app.get(path, app.sk()).await;
    assert_eq!(r.status, 200, "{path}: {}", r.body);
    r.body
}

#[tokio::test]
async fn a_year_on_a_test_clock_bills_a_monthly_subscription_twelve_times_and_a_yearly_one_once() {
    let Some(app) = spawn_app().await else { return };
    let clock = clock(&app, JAN_31_2027).await;
    let (cus, pm) = customer_with_card(&app, Some(&clock), GOOD).await;
    let monthly = price(&app, 1500, "month").await;
    let yearly = price(&app, 12_000, "year").await;

    let m = created(
        &app,
        "/v2/subscriptions",
        json!({"customer": cus, "items": [{"price": monthly, "quantity": 2}]}),
    )
    .await;
    assert_eq!(m["object"], "subscription");
    assert_eq!(m["status"], "active", "{m}");
    assert_eq!(m["current_period_start"], JAN_31_2027);
    assert_eq!(m["created"], JAN_31_2027, "dated in the clock's time");
    assert_eq!(m["test_clock"], clock.as_str());
    assert_eq!(m["items"]["data"][0]["price"]["id"], monthly.as_str());
    assert_eq!(m["items"]["data"][0]["quantity"], 2);
    // 28 February 2027, same time of day.
    assert_eq!(m["current_period_end"], JAN_31_2027 + 28 * DAY);
    let first = get(
        &app,
        &format!("/v2/invoices/{}", m["latest_invoice"].as_str().unwrap()),
    )
    .await;
    assert_eq!(first["status"], "paid");
    assert_eq!(first["amount_due"], 3000);
    assert_eq!(first["amount_paid"], 3000);
    assert_eq!(first["attempt_count"], 1);
    assert_eq!(first["lines"]["data"][0]["amount"], 3000);
    assert_eq!(
        first["lines"]["data"][0]["description"],
        "2 × Plan (at 15.00 USD / month)"
    );
    assert!(first["hosted_invoice_url"]
        .as_str()
        .unwrap()
        .ends_with(first["id"].as_str().unwrap()));
    let paid = get(
        &app,
        &format!("/v2/payments/{}", first["payment"].as_str().unwrap()),
    )
    .await;
    assert_eq!(paid["invoice"], first["id"]);
    assert_eq!(paid["customer"], cus.as_str());
    assert_eq!(paid["payment_method"]["id"], pm.as_str());
    assert_eq!(paid["status"], "succeeded");

    let y = created(
        &app,
        "/v2/subscriptions",
        json!({"customer": cus, "items": [{"price": yearly}]}),
    )
    .await;
    assert_eq!(y["status"], "active");

    // A year less a second: the 13th monthly period and the second year have not begun.
    let year = JAN_31_2027 + 365 * DAY - 1;
    let ready = advance(&app, &clock, year).await;
    assert_eq!(ready["status_details"], json!({}));
    let ready_events = list(&app, "/v2/events?type=test_helpers.test_clock.ready").await;
    assert_eq!(ready_events.len(), 1);

    let m_id = m["id"].as_str().unwrap();
    let invoices = list(&app, &format!("/v2/invoices?subscription={m_id}&limit=100")).await;
    assert_eq!(invoices.len(), 12);
    let mut start = JAN_31_2027;
    for inv in &invoices {
        assert_eq!(inv["status"], "paid", "{inv}");
        assert_eq!(inv["amount_paid"], 3000);
        assert_eq!(inv["period_start"], start, "periods follow each other");
        start = inv["period_end"].as_i64().unwrap();
    }
    // Ends clamp to each month's last day, at 10:00: the last one is 31 January 2028.
    assert_eq!(start, JAN_31_2027 + 365 * DAY);
    assert_eq!(invoices[1]["period_end"], JAN_31_2027 + (28 + 31) * DAY);
    let y_id = y["id"].as_str().unwrap();
    assert_eq!(
        list(&app, &format!("/v2/invoices?subscription={y_id}"))
            .await
            .len(),
        1
    );
    let payments = list(&app, &format!("/v2/payments?customer={cus}&limit=100")).await;
    assert_eq!(payments.len(), 13, "12 monthly and 1 yearly, none twice");
    assert!(payments
        .iter()
        .all(|p| p["status"] == "succeeded" && p["invoice"].is_string()));
    let sub = get(&app, &format!("/v2/subscriptions/{m_id}")).await;
    assert_eq!(sub["status"], "active");
    assert_eq!(sub["current_period_end"], JAN_31_2027 + 365 * DAY);
    assert_eq!(sub["latest_invoice"], invoices[11]["id"]);
    assert_eq!(
        list(&app, "/v2/events?type=invoice.paid&limit=100")
            .await
            .len(),
        13
    );
    assert_eq!(
        list(&app, "/v2/events?type=invoice.created&limit=100")
            .await
            .len(),
        13
    );
    // Filters of the lists.
    assert_eq!(
        list(&app, &format!("/v2/subscriptions?price={yearly}"))
            .await
            .len(),
        1
    );
    assert_eq!(
        list(
            &app,
            &format!("/v2/subscriptions?customer={cus}&status=active")
        )
        .await
        .len(),
        2
    );
    assert_eq!(list(&app, "/v2/invoices?status=open").await.len(), 0);

    // One second more: the 13th period begins.
    advance(&app, &clock, year + 1).await;
    assert_eq!(
        list(&app, &format!("/v2/invoices?subscription={m_id}&limit=100"))
            .await
            .len(),
        13
    );
    // Every payment of the year is on the ledger.
    assert_ledger_holds(&app).await;
}

#[tokio::test]
async fn a_declining_card_goes_past_due_is_retried_on_days_1_3_5_7_and_ends_unpaid() {
    let Some(app) = spawn_app().await else { return };
    let clock = clock(&app, JAN_31_2027).await;
    let (cus, _) = customer_with_card(&app, Some(&clock), DECLINES).await;
    let monthly = price(&app, 2000, "month").await;
    let s = created(
        &app,
        "/v2/subscriptions",
        json!({"customer": cus, "items": [{"price": monthly}], "trial_period_days": 14}),
    )
    .await;
    assert_eq!(s["status"], "trialing");
    assert_eq!(s["latest_invoice"], Value::Null);
    let trial_end = JAN_31_2027 + 14 * DAY;
    assert_eq!(s["trial_end"], trial_end);
    assert_eq!(s["current_period_end"], trial_end);

    advance(&app, &clock, trial_end - 3 * DAY).await;
    assert_eq!(
        list(&app, "/v2/events?type=customer.subscription.trial_will_end")
            .await
            .len(),
        1
    );

    advance(&app, &clock, trial_end).await;
    let id = s["id"].as_str().unwrap();
    let sub = get(&app, &format!("/v2/subscriptions/{id}")).await;
    assert_eq!(sub["status"], "past_due");
    let inv_id = sub["latest_invoice"].as_str().unwrap().to_string();
    let inv = get(&app, &format!("/v2/invoices/{inv_id}")).await;
    assert_eq!(inv["status"], "open");
    assert_eq!(inv["attempt_count"], 1);
    assert_eq!(inv["period_start"], trial_end);
    assert_eq!(inv["next_payment_attempt"], trial_end + DAY);

    advance(&app, &clock, trial_end + 8 * DAY).await;
    let inv = get(&app, &format!("/v2/invoices/{inv_id}")).await;
    assert_eq!(inv["status"], "uncollectible", "{inv}");
    assert_eq!(inv["attempt_count"], 5);
    assert_eq!(inv["next_payment_attempt"], Value::Null);
    assert_eq!(inv["amount_paid"], 0);
    let tries: Vec<i64> = list(&app, &format!("/v2/payments?customer={cus}&limit=100"))
        .await
        .iter()
        .map(|p| {
            assert_eq!(p["status"], "failed");
            assert_eq!(p["decline_code"], "generic_decline");
            assert_eq!(p["invoice"], inv_id.as_str());
            p["created"].as_i64().unwrap() - trial_end
        })
        .collect();
    assert_eq!(tries, vec![0, DAY, 3 * DAY, 5 * DAY, 7 * DAY]);
    assert_eq!(
        get(&app, &format!("/v2/subscriptions/{id}")).await["status"],
        "unpaid"
    );
    assert_eq!(
        list(&app, "/v2/events?type=invoice.payment_failed")
            .await
            .len(),
        5
    );
    assert_eq!(
        list(&app, "/v2/events?type=invoice.marked_uncollectible")
            .await
            .len(),
        1
    );
}

#[tokio::test]
async fn a_past_due_subscription_recovers_when_the_customer_saves_a_new_card() {
    let Some(app) = spawn_app().await else { return };
    let clock = clock(&app, JAN_31_2027).await;
    let (cus, _) = customer_with_card(&app, Some(&clock), DECLINES).await;
    let monthly = price(&app, 2000, "month").await;
    let s = created(
        &app,
        "/v2/subscriptions",
        json!({"customer": cus, "items": [{"price": monthly}], "trial_period_days": 3}),
    )
    .await;
    let trial_end = JAN_31_2027 + 3 * DAY;
    advance(&app, &clock, trial_end).await;
    let id = s["id"].as_str().unwrap();
    assert_eq!(
        get(&app, &format!("/v2/subscriptions/{id}")).await["status"],
        "past_due"
    );

    let good = save_card(&app, &cus, GOOD).await;
    advance(&app, &clock, trial_end + DAY).await;
    let sub = get(&app, &format!("/v2/subscriptions/{id}")).await;
    assert_eq!(sub["status"], "active");
    let inv = get(
        &app,
        &format!("/v2/invoices/{}", sub["latest_invoice"].as_str().unwrap()),
    )
    .await;
    assert_eq!(inv["status"], "paid");
    assert_eq!(inv["attempt_count"], 2);
    let paid = get(
        &app,
        &format!("/v2/payments/{}", inv["payment"].as_str().unwrap()),
    )
    .await;
    assert_eq!(paid["payment_method"]["id"], good.as_str());
    assert_eq!(paid["status"], "succeeded");
    assert_ledger_holds(&app).await;
}

#[tokio::test]
async fn a_hard_decline_is_not_retried() {
    let Some(app) = spawn_app().await else { return };
    let clock = clock(&app, JAN_31_2027).await;
    // Saving the lost card succeeds; every charge of it declines.
    let (cus, _) = customer_with_card(&app, Some(&clock), LOST).await;
    let monthly = price(&app, 2000, "month").await;
    let s = created(
        &app,
        "/v2/subscriptions",
        json!({"customer": cus, "items": [{"price": monthly}], "trial_period_days": 1}),
    )
    .await;
    advance(&app, &clock, JAN_31_2027 + 10 * DAY).await;
    let id = s["id"].as_str().unwrap();
    let sub = get(&app, &format!("/v2/subscriptions/{id}")).await;
    assert_eq!(sub["status"], "unpaid");
    let inv = get(
        &app,
        &format!("/v2/invoices/{}", sub["latest_invoice"].as_str().unwrap()),
    )
    .await;
    assert_eq!(inv["status"], "uncollectible");
    assert_eq!(inv["attempt_count"], 1);
    let p = get(
        &app,
        &format!("/v2/payments/{}", inv["payment"].as_str().unwrap()),
    )
    .await;
    assert_eq!(p["decline_code"], "lost_card");
}

#[tokio::test]
async fn a_declined_start_is_incomplete_then_paid_by_hand_or_expired() {
    let Some(app) = spawn_app().await else { return };
    let clock = clock(&app, JAN_31_2027).await;
    let (cus, _) = customer_with_card(&app, Some(&clock), DECLINES).await;
    let monthly = price(&app, 2000, "month").await;
    let mut subs = Vec::new();
    for _ in 0..2 {
        let s = created(
            &app,
            "/v2/subscriptions",
            json!({"customer": cus, "items": [{"price": monthly}]}),
        )
        .await;
        assert_eq!(s["status"], "incomplete");
        let inv = get(
            &app,
            &format!("/v2/invoices/{}", s["latest_invoice"].as_str().unwrap()),
        )
        .await;
        assert_eq!(inv["status"], "open");
        assert_eq!(inv["attempt_count"], 1);
        assert_eq!(
            inv["next_payment_attempt"],
            Value::Null,
            "a start is tried once"
        );
        subs.push((
            s["id"].as_str().unwrap().to_string(),
            inv["id"].as_str().unwrap().to_string(),
        ));
    }
    // The first is paid by hand with a good card of the customer's.
    let good = save_card(&app, &cus, GOOD).await;
    let paid = app
        .post(
            &format!("/v2/invoices/{}/pay", subs[0].1),
            app.sk(),
            json!({"payment_method": good}),
        )
        .await;
    assert_eq!(paid.status, 200, "{}", paid.body);
    assert_eq!(paid.body["status"], "paid");
    assert_eq!(paid.body["attempt_count"], 2);
    assert_eq!(
        get(&app, &format!("/v2/subscriptions/{}", subs[0].0)).await["status"],
        "active"
    );
    // Paying by hand with the declining card answers the decline.
    let bad = save_card(&app, &cus, DECLINES).await;
    let declined = app
        .post(
            &format!("/v2/invoices/{}/pay", subs[1].1),
            app.sk(),
            json!({"payment_method": bad}),
        )
        .await;
    assert_eq!(declined.status, 402, "{}", declined.body);
    assert_eq!(declined.body["error"]["decline_code"], "generic_decline");
    assert!(declined.body["error"]["payment"]
        .as_str()
        .unwrap()
        .starts_with("pay_"));
    // The second expires 23 hours on, its invoice void.
    advance(&app, &clock, JAN_31_2027 + 23 * 3600).await;
    let s = get(&app, &format!("/v2/subscriptions/{}", subs[1].0)).await;
    assert_eq!(s["status"], "incomplete_expired");
    assert_eq!(
        get(&app, &format!("/v2/invoices/{}", subs[1].1)).await["status"],
        "void"
    );
    assert_eq!(
        get(&app, &format!("/v2/subscriptions/{}", subs[0].0)).await["status"],
        "active"
    );
}

#[tokio::test]
async fn a_key_the_merchant_sends_never_takes_the_place_of_an_invoice_try() {
    // Tender keys its own tries of an invoice; a client's Idempotency-Key that happens to spell
    // such a key (the one the previous design used, `tender-invoice:{id}:{n}`) is the client's,
    // whatever it sent under it, and the try still charges the card. Two invoices: under the old
    // key of each one's second try, a payment of the client's, then the very body the try is
    // fingerprinted over (refused, and that refusal kept under the key).
    let Some(app) = spawn_app().await else { return };
    let clock = clock(&app, JAN_31_2027).await;
    let (cus, _) = customer_with_card(&app, Some(&clock), DECLINES).await;
    let monthly = price(&app, 2000, "month").await;
    let mut invoices = Vec::new();
    for _ in 0..2 {
        let s = created(
            &app,
            "/v2/subscriptions",
            json!({"customer": cus, "items": [{"price": monthly}]}),
        )
        .await;
        invoices.push(s["latest_invoice"].as_str().unwrap().to_string());
    }
    let sent = [
        (payment_body(GOOD, 700), 200),
        (json!({"invoice": invoices[1], "attempt": 2}), 400),
    ];
    for (inv, (body, status)) in invoices.iter().zip(sent) {
        let own = app
            .request(
                reqwest::Method::POST,
                "/v2/payments",
                Some(app.sk()),
                Some(body),
                &[("Idempotency-Key", &format!("tender-invoice:{inv}:2"))],
            )
            .await;
        assert_eq!(own.status, status, "{}", own.body);
    }
    let good = save_card(&app, &cus, GOOD).await;
    for inv in &invoices {
        let paid = app
            .post(
                &format!("/v2/invoices/{inv}/pay"),
                app.sk(),
                json!({"payment_method": good}),
            )
            .await;
        assert_eq!(paid.status, 200, "{inv}: {}", paid.body);
        assert_eq!(paid.body["status"], "paid");
        assert_eq!(paid.body["attempt_count"], 2);
        let payment = get(
            &app,
            &format!("/v2/payments/{}", paid.body["payment"].as_str().unwrap()),
        )
        .await;
        assert_eq!(payment["amount"], 2000);
        assert_eq!(payment["invoice"], inv.as_str());
    }
}

#[tokio::test]
async fn a_try_run_again_after_its_invoice_write_was_lost_answers_what_its_payment_says() {
    // A crash between a try's payment and the invoice's update: the invoice still says no try
    // was made, so the next try runs under the first try's key. It must not charge again (not
    // even the better card given now) and must report the first payment's decline, read from
    // that payment as stored. The lost write is made by putting the invoice back as it was.
    use tender_core::billing::invoice::Invoice;
    use tender_core::documents::document::Document;
    use tender_core::store::{Collection, WriteBatch, WriteOp};

    let Some(app) = spawn_app().await else { return };
    let clock = clock(&app, JAN_31_2027).await;
    let (cus, _) = customer_with_card(&app, Some(&clock), DECLINES).await;
    let monthly = price(&app, 2000, "month").await;
    let s = created(
        &app,
        "/v2/subscriptions",
        json!({"customer": cus, "items": [{"price": monthly}]}),
    )
    .await;
    let inv = s["latest_invoice"].as_str().unwrap().to_string();
    let first = get(&app, &format!("/v2/invoices/{inv}")).await;
    assert_eq!(first["attempt_count"], 1);
    let declined = first["payments"][0].as_str().unwrap().to_string();

    let scope = app
        .services
        .accounts()
        .authenticate(app.sk())
        .await
        .unwrap()
        .scope;
    let record = app
        .services
        .store
        .find_record(&scope, Collection::Invoices, &inv)
        .await
        .unwrap()
        .unwrap();
    let mut lost: Invoice = serde_json::from_str(&record.body).unwrap();
    lost.attempt_count = 0;
    lost.payments.clear();
    lost.payment = None;
    app.services
        .store
        .commit(WriteBatch {
            scope: scope.clone(),
            ops: vec![WriteOp::Update {
                collection: Collection::Invoices,
                id: inv.clone(),
                expected_version: record.version,
                index: lost.index(),
                body: serde_json::to_string(&lost).unwrap(),
            }],
            idempotency: None,
        })
        .await
        .unwrap();

    let good = save_card(&app, &cus, GOOD).await;
    let pay_path = format!("/v2/invoices/{inv}/pay");
    let by_hand = json!({"payment_method": good});
    let again = app.post(&pay_path, app.sk(), by_hand.clone()).await;
    assert_eq!(again.status, 402, "{}", again.body);
    assert_eq!(again.body["error"]["payment"], declined.as_str());
    assert_eq!(again.body["error"]["decline_code"], "generic_decline");
    let after = get(&app, &format!("/v2/invoices/{inv}")).await;
    assert_eq!(after["status"], "open");
    assert_eq!(after["attempt_count"], 1);
    assert_eq!(after["payments"], json!([declined]));
    // The next try is a new one: it charges the card given.
    let paid = app.post(&pay_path, app.sk(), by_hand).await;
    assert_eq!(paid.status, 200, "{}", paid.body);
    assert_eq!(paid.body["status"], "paid");
    assert_eq!(paid.body["attempt_count"], 2);
    let payments = list(&app, &format!("/v2/payments?customer={cus}")).await;
    assert_eq!(payments.len(), 2, "one payment per try: {payments:?}");
}

#[tokio::test]
async fn canceling_now_or_at_the_period_end() {
    let Some(app) = spawn_app().await else { return };
    let clock = clock(&app, JAN_31_2027).await;
    let (cus, _) = customer_with_card(&app, Some(&clock), GOOD).await;
    let weekly = price(&app, 700, "week").await;
    let now = created(
        &app,
        "/v2/subscriptions",
        json!({"customer": cus, "items": [{"price": weekly}]}),
    )
    .await;
    let later = created(
        &app,
        "/v2/subscriptions",
        json!({"customer": cus, "items": [{"price": weekly}]}),
    )
    .await;
    let c = app
        .delete(
            &format!("/v2/subscriptions/{}", now["id"].as_str().unwrap()),
            app.sk(),
        )
        .await;
    assert_eq!(c.status, 200, "{}", c.body);
    assert_eq!(c.body["status"], "canceled");
    assert_eq!(c.body["canceled_at"], JAN_31_2027);
    let again = app
        .delete(
            &format!("/v2/subscriptions/{}", now["id"].as_str().unwrap()),
            app.sk(),
        )
        .await;
    assert_eq!(again.status, 400);
    assert_eq!(again.body["error"]["code"], "subscription_unexpected_state");
    let u = app
        .post(
            &format!("/v2/subscriptions/{}", later["id"].as_str().unwrap()),
            app.sk(),
            json!({"cancel_at_period_end": true, "metadata": {"why": "moving"}}),
        )
        .await;
    assert_eq!(u.status, 200, "{}", u.body);
    assert_eq!(u.body["cancel_at_period_end"], true);
    advance(&app, &clock, JAN_31_2027 + 20 * DAY).await;
    let ended = get(
        &app,
        &format!("/v2/subscriptions/{}", later["id"].as_str().unwrap()),
    )
    .await;
    assert_eq!(ended["status"], "canceled");
    assert_eq!(ended["ended_at"], JAN_31_2027 + 7 * DAY);
    // One invoice each: nothing was billed after the cancellations.
    assert_eq!(
        list(&app, &format!("/v2/invoices?customer={cus}"))
            .await
            .len(),
        2
    );
    assert_eq!(
        list(&app, "/v2/events?type=customer.subscription.deleted")
            .await
            .len(),
        2
    );
}

#[tokio::test]
async fn products_and_prices() {
    let Some(app) = spawn_app().await else { return };
    let prod = created(
        &app,
        "/v2/products",
        json!({"name": "Gold", "description": "The best", "metadata": {"tier": "1"}}),
    )
    .await;
    assert_eq!(prod["object"], "product");
    assert_eq!(prod["active"], true);
    let id = prod["id"].as_str().unwrap();
    assert!(id.starts_with("prod_"));
    let u = created(
        &app,
        &format!("/v2/products/{id}"),
        json!({"active": false, "description": ""}),
    )
    .await;
    assert_eq!(u["active"], false);
    assert_eq!(u["description"], Value::Null);
    let up = list(&app, "/v2/events?type=product.updated").await;
    assert_eq!(up[0]["data"]["previous_attributes"]["active"], true);
    assert_eq!(list(&app, "/v2/products?active=false").await.len(), 1);
    assert_eq!(list(&app, "/v2/products?active=true").await.len(), 0);

    let once = created(
        &app,
        "/v2/prices",
        json!({"product": id, "currency": "eur", "unit_amount": 0}),
    )
    .await;
    assert_eq!(once["type"], "one_time");
    assert_eq!(once["recurring"], Value::Null);
    let monthly = created(
        &app,
        "/v2/prices",
        json!({"product": id, "currency": "usd", "unit_amount": 999, "nickname": "Monthly",
               "recurring": {"interval": "month", "interval_count": 3}}),
    )
    .await;
    assert_eq!(monthly["type"], "recurring");
    assert_eq!(
        monthly["recurring"],
        json!({"interval": "month", "interval_count": 3})
    );
    let p = created(
        &app,
        &format!("/v2/prices/{}", monthly["id"].as_str().unwrap()),
        json!({"active": false}),
    )
    .await;
    assert_eq!(p["active"], false);
    assert_eq!(p["unit_amount"], 999);
    assert_eq!(
        list(&app, &format!("/v2/prices?product={id}")).await.len(),
        2
    );
    assert_eq!(list(&app, "/v2/prices?type=recurring").await.len(), 1);
    assert_eq!(list(&app, "/v2/prices?currency=eur").await.len(), 1);
    assert_eq!(list(&app, "/v2/prices?active=true").await.len(), 1);
    // A price's amount never changes.
    let r = app
        .post(
            &format!("/v2/prices/{}", monthly["id"].as_str().unwrap()),
            app.sk(),
            json!({"unit_amount": 5}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(r.body["error"]["code"], "parameter_unknown");
    // A product with prices is not deleted; one without is.
    let d = app.delete(&format!("/v2/products/{id}"), app.sk()).await;
    assert_eq!(d.status, 400, "{}", d.body);
    assert_eq!(d.body["error"]["code"], "product_has_prices");
    let bare = created(&app, "/v2/products", json!({"name": "Bare"})).await;
    let d = app
        .delete(
            &format!("/v2/products/{}", bare["id"].as_str().unwrap()),
            app.sk(),
        )
        .await;
    assert_eq!(d.status, 200, "{}", d.body);
    assert_eq!(
        d.body,
        json!({"id": bare["id"], "object": "product", "deleted": true})
    );
    assert_eq!(list(&app, "/v2/events?type=product.deleted").await.len(), 1);
    assert_eq!(list(&app, "/v2/events?type=price.created").await.len(), 2);
}

#[tokio::test]
async fn bad_billing_input_gets_a_clear_4xx() {
    let Some(app) = spawn_app().await else { return };
    let clock = clock(&app, JAN_31_2027).await;
    let (cus, pm) = customer_with_card(&app, Some(&clock), GOOD).await;
    let (_, other_pm) = customer_with_card(&app, None, GOOD).await;
    let monthly = price(&app, 1000, "month").await;
    let yearly = price(&app, 1000, "year").await;
    let prod = created(&app, "/v2/products", json!({"name": "Euro"})).await;
    let eur = created(
        &app,
        "/v2/prices",
        json!({"product": prod["id"], "currency": "eur", "unit_amount": 1000, "recurring": {"interval": "month"}}),
    )
    .await;
    let once = created(
        &app,
        "/v2/prices",
        json!({"product": prod["id"], "currency": "usd", "unit_amount": 1000}),
    )
    .await;
    let advance_path = format!("/v2/test_helpers/test_clocks/{clock}/advance");
    let cases: Vec<(&str, Value, &str, &str)> = vec![
        (
            "/v2/subscriptions",
            json!({"customer": cus, "items": [{"price": monthly}, {"price": eur["id"]}]}),
            "items[1][price]",
            "parameter_invalid",
        ),
        (
            "/v2/subscriptions",
            json!({"customer": cus, "items": [{"price": monthly}, {"price": yearly}]}),
            "items[1][price]",
            "parameter_invalid",
        ),
        (
            "/v2/subscriptions",
            json!({"customer": cus, "items": [{"price": once["id"]}]}),
            "items[0][price]",
            "parameter_invalid",
        ),
        (
            "/v2/subscriptions",
            json!({"customer": cus, "items": [{"price": "price_nope"}]}),
            "items[0][price]",
            "resource_missing",
        ),
        (
            "/v2/subscriptions",
            json!({"customer": cus, "items": []}),
            "items",
            "parameter_invalid",
        ),
        (
            "/v2/subscriptions",
            json!({"customer": cus, "items": [{"price": monthly, "quantity": 0}]}),
            "items[0][quantity]",
            "parameter_invalid",
        ),
        (
            "/v2/subscriptions",
            json!({"customer": cus, "items": [{"price": monthly}], "default_payment_method": other_pm}),
            "default_payment_method",
            "payment_method_unexpected_state",
        ),
        (
            "/v2/subscriptions",
            json!({"customer": "cus_nope", "items": [{"price": monthly}]}),
            "customer",
            "resource_missing",
        ),
        (
            "/v2/subscriptions",
            json!({"customer": cus, "items": [{"price": monthly}], "trial_period_days": 0}),
            "trial_period_days",
            "parameter_invalid",
        ),
        (
            "/v2/subscriptions",
            json!({"customer": cus}),
            "items",
            "parameter_missing",
        ),
        (
            "/v2/subscriptions",
            json!({"customer": cus, "items": "x"}),
            "items",
            "parameter_invalid",
        ),
        (
            "/v2/prices",
            json!({"product": prod["id"], "currency": "usd", "unit_amount": 100, "recurring": {"interval": "fortnight"}}),
            "recurring[interval]",
            "parameter_invalid",
        ),
        (
            "/v2/prices",
            json!({"product": prod["id"], "currency": "usd", "unit_amount": 100, "recurring": {"interval": "month", "interval_count": 13}}),
            "recurring[interval_count]",
            "parameter_invalid",
        ),
        (
            "/v2/prices",
            json!({"product": prod["id"], "currency": "usd", "unit_amount": -1}),
            "unit_amount",
            "parameter_invalid",
        ),
        (
            "/v2/prices",
            json!({"product": prod["id"], "currency": "xyz", "unit_amount": 1}),
            "currency",
            "parameter_invalid",
        ),
        (
            "/v2/prices",
            json!({"product": "prod_nope", "currency": "usd", "unit_amount": 1}),
            "product",
            "resource_missing",
        ),
        (
            "/v2/products",
            json!({"name": ""}),
            "name",
            "parameter_invalid",
        ),
        ("/v2/products", json!({}), "name", "parameter_missing"),
        (
            "/v2/customers",
            json!({"test_clock": "clock_nope"}),
            "test_clock",
            "resource_missing",
        ),
        (
            &advance_path,
            json!({"frozen_time": JAN_31_2027 - 1}),
            "frozen_time",
            "parameter_invalid",
        ),
        (
            &advance_path,
            json!({"frozen_time": JAN_31_2027 + 800 * DAY}),
            "frozen_time",
            "parameter_invalid",
        ),
        (
            "/v2/test_helpers/test_clocks",
            json!({"frozen_time": -5}),
            "frozen_time",
            "parameter_invalid",
        ),
        (
            "/v2/test_helpers/test_clocks",
            json!({}),
            "frozen_time",
            "parameter_missing",
        ),
    ];
    for (path, body, param, code) in cases {
        let r = app.post(path, app.sk(), body.clone()).await;
        assert_eq!(r.status, 400, "{path} {body}: {}", r.body);
        assert_eq!(r.body["error"]["code"], code, "{path} {body}: {}", r.body);
        assert_eq!(r.body["error"]["param"], param, "{path} {body}: {}", r.body);
    }
    // A customer without a card cannot start paying at once.
    let bare = created(&app, "/v2/customers", json!({})).await;
    let r = app
        .post(
            "/v2/subscriptions",
            app.sk(),
            json!({"customer": bare["id"], "items": [{"price": monthly}]}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(r.body["error"]["code"], "parameter_missing");
    // Test clocks are test mode's only.
    let r = app
        .post(
            "/v2/test_helpers/test_clocks",
            app.sk_live(),
            json!({"frozen_time": JAN_31_2027}),
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    // An advancing clock is not advanced again; a paid invoice is not voided or paid.
    let s = created(
        &app,
        "/v2/subscriptions",
        json!({"customer": cus, "items": [{"price": monthly}], "default_payment_method": pm}),
    )
    .await;
    let inv = s["latest_invoice"].as_str().unwrap();
    for action in ["void", "pay"] {
        let r = app
            .post(&format!("/v2/invoices/{inv}/{action}"), app.sk(), json!({}))
            .await;
        assert_eq!(r.status, 400, "{action}: {}", r.body);
        assert_eq!(r.body["error"]["code"], "invoice_unexpected_state");
    }
    let r = app
        .post(
            &format!("/v2/test_helpers/test_clocks/{clock}/advance"),
            app.sk(),
            json!({"frozen_time": JAN_31_2027 + DAY}),
        )
        .await;
    assert_eq!(r.status, 200);
    let r = app
        .post(
            &format!("/v2/test_helpers/test_clocks/{clock}/advance"),
            app.sk(),
            json!({"frozen_time": JAN_31_2027 + 2 * DAY}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(r.body["error"]["code"], "test_clock_unexpected_state");
    for (path, param) in [
        ("/v2/subscriptions?status=frozen", "status"),
        ("/v2/subscriptions?price=nope", "price"),
        ("/v2/invoices?status=late", "status"),
        ("/v2/prices?type=monthly", "type"),
        ("/v2/products?active=yes", "active"),
    ] {
        let r = app.get(path, app.sk()).await;
        assert_eq!(r.status, 400, "{path}: {}", r.body);
        assert_eq!(r.body["error"]["param"], param, "{path}");
    }
}

#[tokio::test]
async fn deleting_a_test_clock_deletes_its_customers_and_their_subscriptions() {
    let Some(app) = spawn_app().await else { return };
    let clock = clock(&app, JAN_31_2027).await;
    let (cus, _) = customer_with_card(&app, Some(&clock), GOOD).await;
    let monthly = price(&app, 1000, "month").await;
    let s = created(
        &app,
        "/v2/subscriptions",
        json!({"customer": cus, "items": [{"price": monthly}]}),
    )
    .await;
    let sub = format!("/v2/subscriptions/{}", s["id"].as_str().unwrap());
    // One that had already ended goes too.
    let (other, _) = customer_with_card(&app, Some(&clock), GOOD).await;
    let ended = created(
        &app,
        "/v2/subscriptions",
        json!({"customer": other, "items": [{"price": monthly}]}),
    )
    .await;
    let ended = format!("/v2/subscriptions/{}", ended["id"].as_str().unwrap());
    assert_eq!(app.delete(&ended, app.sk()).await.status, 200);
    assert_eq!(get(&app, &ended).await["status"], "canceled");
    // A customer of no clock keeps its subscription.
    let (kept_customer, _) = customer_with_card(&app, None, GOOD).await;
    let kept = created(
        &app,
        "/v2/subscriptions",
        json!({"customer": kept_customer, "items": [{"price": monthly}]}),
    )
    .await;

    let d = app
        .delete(&format!("/v2/test_helpers/test_clocks/{clock}"), app.sk())
        .await;
    assert_eq!(d.status, 200, "{}", d.body);
    assert_eq!(d.body["deleted"], true);
    for gone in [
        format!("/v2/customers/{cus}"),
        format!("/v2/customers/{other}"),
        format!("/v2/test_helpers/test_clocks/{clock}"),
        sub,
        ended,
    ] {
        let r = app.get(&gone, app.sk()).await;
        assert_eq!(r.status, 404, "{gone}: {}", r.body);
    }
    assert_eq!(
        list(&app, "/v2/subscriptions").await.len(),
        1,
        "only the subscription of no clock is listed"
    );
    assert_eq!(
        get(
            &app,
            &format!("/v2/subscriptions/{}", kept["id"].as_str().unwrap())
        )
        .await["status"],
        "active"
    );
    // The running one ended first, with its event; its invoice stays (its payment moved money).
    let deleted = list(&app, "/v2/events?type=customer.subscription.deleted").await;
    let ids: Vec<&Value> = deleted.iter().map(|e| &e["data"]["object"]["id"]).collect();
    assert!(ids.contains(&&s["id"]), "{ids:?}");
    let invoice = s["latest_invoice"].as_str().unwrap();
    assert_eq!(
        get(&app, &format!("/v2/invoices/{invoice}")).await["status"],
        "paid"
    );
}

#[tokio::test]
async fn a_test_clock_customers_payment_lives_in_the_clocks_time() {
    let Some(app) = spawn_app().await else { return };
    let clock = clock(&app, JAN_31_2027).await;
    let (cus, pm) = customer_with_card(&app, Some(&clock), GOOD).await;
    let held = created(
        &app,
        "/v2/payments",
        json!({"amount": 2500, "currency": "usd", "customer": cus, "payment_method": pm,
               "capture": false}),
    )
    .await;
    assert_eq!(held["status"], "requires_capture");
    assert_eq!(held["created"], JAN_31_2027, "dated in the clock's time");
    let id = held["id"].as_str().unwrap();
    // Six days on the clock: the hold stands.
    advance(&app, &clock, JAN_31_2027 + 6 * DAY).await;
    assert_eq!(
        get(&app, &format!("/v2/payments/{id}")).await["status"],
        "requires_capture"
    );
    // Past seven days the authorisation expires, as it would in real time.
    advance(&app, &clock, JAN_31_2027 + 8 * DAY).await;
    let expired = get(&app, &format!("/v2/payments/{id}")).await;
    assert_eq!(expired["status"], "canceled", "{expired}");
    assert_eq!(expired["cancellation_reason"], "abandoned");
    // A customer of no clock is in wall time: the same advance leaves its hold alone.
    let (plain, plain_pm) = customer_with_card(&app, None, GOOD).await;
    let wall = created(
        &app,
        "/v2/payments",
        json!({"amount": 2500, "currency": "usd", "customer": plain,
               "payment_method": plain_pm, "capture": false}),
    )
    .await;
    assert_ne!(wall["created"], JAN_31_2027);
    advance(&app, &clock, JAN_31_2027 + 20 * DAY).await;
    let wall = get(
        &app,
        &format!("/v2/payments/{}", wall["id"].as_str().unwrap()),
    )
    .await;
    assert_eq!(wall["status"], "requires_capture");
}

#[tokio::test]
async fn deleting_a_customer_cancels_its_subscriptions_and_stops_their_billing() {
    let Some(app) = spawn_app().await else { return };
    let (cus, pm) = customer_with_card(&app, None, GOOD).await;
    let monthly = price(&app, 1000, "month").await;
    let s = created(
        &app,
        "/v2/subscriptions",
        json!({"customer": cus, "items": [{"price": monthly}]}),
    )
    .await;
    assert_eq!(s["status"], "active");
    let d = app.delete(&format!("/v2/customers/{cus}"), app.sk()).await;
    assert_eq!(d.status, 200, "{}", d.body);
    assert_eq!(d.body["deleted"], true);

    let sub = get(
        &app,
        &format!("/v2/subscriptions/{}", s["id"].as_str().unwrap()),
    )
    .await;
    assert_eq!(sub["status"], "canceled");
    assert!(sub["ended_at"].is_i64(), "{sub}");
    let ended = list(&app, "/v2/events?type=customer.subscription.deleted").await;
    assert_eq!(ended.len(), 1);
    assert_eq!(ended[0]["data"]["object"]["id"], s["id"]);
    // Its card went with it, so nothing is left to charge; a new subscription is refused.
    let card = get(&app, &format!("/v2/payment_methods/{pm}")).await;
    assert_eq!(card["customer"], Value::Null);
    let again = app
        .post(
            "/v2/subscriptions",
            app.sk(),
            json!({"customer": cus, "items": [{"price": monthly}]}),
        )
        .await;
    assert_eq!(again.status, 400, "{}", again.body);
    assert_eq!(again.body["error"]["code"], "resource_missing");
    assert_eq!(again.body["error"]["param"], "customer");
}

/// GETs a page of the receipt host: status and HTML.
async fn receipt_page(url: &str) -> (u16, String) {
    let r = reqwest::get(url).await.unwrap();
    let status = r.status().as_u16();
    assert!(r.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/html"));
    (status, r.text().await.unwrap())
}

/// The one-time token a hosted invoice page's pay button sends.
fn token_of(html: &str) -> String {
    let at = html.find("name=\"token\" value=\"").expect("a pay token") + 20;
    html[at..at + html[at..].find('"').unwrap()].to_string()
}

/// Presses the pay button of the page at `url` as its form does (token, no Origin).
async fn press(http: &reqwest::Client, url: &str, token: &str) -> reqwest::Response {
    http.post(format!("{url}/pay"))
        .form(&[("token", token)])
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn the_hosted_invoice_page_shows_the_invoice_and_its_pay_button_pays_it() {
    let Some(app) = spawn_app().await else { return };
    let clock = clock(&app, JAN_31_2027).await;
    let (cus, _) = customer_with_card(&app, Some(&clock), DECLINES).await;
    let monthly = price(&app, 1500, "month").await;
    let s = created(
        &app,
        "/v2/subscriptions",
        json!({"customer": cus, "items": [{"price": monthly, "quantity": 2}],
               "trial_period_days": 3}),
    )
    .await;
    advance(&app, &clock, JAN_31_2027 + 3 * DAY).await;
    let sub = get(
        &app,
        &format!("/v2/subscriptions/{}", s["id"].as_str().unwrap()),
    )
    .await;
    assert_eq!(sub["status"], "past_due");
    let inv_id = sub["latest_invoice"].as_str().unwrap().to_string();
    let inv = get(&app, &format!("/v2/invoices/{inv_id}")).await;
    let url = inv["hosted_invoice_url"].as_str().unwrap().to_string();
    assert_eq!(url, format!("{}/invoices/{inv_id}", app.receipt_base));

    // Open: lines, total, what is due, and a button naming the card it charges.
    let (status, html) = receipt_page(&url).await;
    assert_eq!(status, 200);
    assert!(html.contains("TEST MODE"));
    assert!(html.contains(&inv_id));
    assert!(html.contains(inv["lines"]["data"][0]["description"].as_str().unwrap()));
    assert!(html.contains("30.00 USD"), "{html}");
    assert!(html.contains("2 × Plan (at 15.00 USD / month)"), "{html}");
    assert!(html.contains(">Due<"), "{html}");
    assert!(html.contains("2027-02-03 – 2027-03-03"), "{html}");
    assert!(html.contains("Pay 30.00 USD with Visa •••• 0341"), "{html}");
    assert!(!html.contains("4000000000000341"));

    // The button, with the declining card: the page says why, nothing is paid.
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let r = press(&http, &url, &token_of(&html)).await;
    assert_eq!(r.status().as_u16(), 402);
    let html = r.text().await.unwrap();
    assert!(html.contains("Your card was declined"), "{html}");
    assert!(html.contains("Payment tried 2 times"), "{html}");
    let inv = get(&app, &format!("/v2/invoices/{inv_id}")).await;
    assert_eq!(inv["status"], "open");
    assert_eq!(inv["attempt_count"], 2);

    // A new card saved: the button now names it, and pays the invoice.
    save_card(&app, &cus, GOOD).await;
    let (_, html) = receipt_page(&url).await;
    assert!(html.contains("Pay 30.00 USD with Visa •••• 4242"), "{html}");
    let token = token_of(&html);
    let (_, second_tab) = receipt_page(&url).await;
    let r = press(&http, &url, &token).await;
    assert_eq!(r.status().as_u16(), 303);
    assert_eq!(r.headers()["location"], format!("/invoices/{inv_id}"));
    let inv = get(&app, &format!("/v2/invoices/{inv_id}")).await;
    assert_eq!(inv["status"], "paid");
    assert_eq!(inv["amount_paid"], 3000);
    let sub = get(
        &app,
        &format!("/v2/subscriptions/{}", s["id"].as_str().unwrap()),
    )
    .await;
    assert_eq!(sub["status"], "active");
    let (_, html) = receipt_page(&url).await;
    assert!(html.contains(">Paid<"), "{html}");
    assert!(!html.contains("<button"), "no pay button once paid: {html}");
    assert!(html.contains(&format!("href=\"/{}\"", inv["payment"].as_str().unwrap())));

    // Pressed again (the same page, or a second tab): nothing more is charged.
    let r = press(&http, &url, &token).await;
    assert_eq!(r.status().as_u16(), 303);
    let r = press(&http, &url, &token_of(&second_tab)).await;
    assert_eq!(r.status().as_u16(), 409);
    assert!(r.text().await.unwrap().contains("cannot be paid now"));
    let inv = get(&app, &format!("/v2/invoices/{inv_id}")).await;
    assert_eq!(inv["payments"].as_array().unwrap().len(), 3);

    // No such invoice: the receipt host's 404 page, for both.
    let missing = format!("{}/invoices/in_doesnotexist0000000000000", app.receipt_base);
    assert_eq!(receipt_page(&missing).await.0, 404);
    let r = http.post(format!("{missing}/pay")).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 404);
}

#[tokio::test]
async fn the_hosted_pay_button_needs_its_pages_token_and_origin_is_throttled_and_one_press_is_one_try(
) {
    let Some(app) = spawn_app().await else { return };
    let clock = clock(&app, JAN_31_2027).await;
    let (cus, _) = customer_with_card(&app, Some(&clock), DECLINES).await;
    let monthly = price(&app, 1500, "month").await;
    let s = created(
        &app,
        "/v2/subscriptions",
        json!({"customer": cus, "items": [{"price": monthly}], "trial_period_days": 3}),
    )
    .await;
    advance(&app, &clock, JAN_31_2027 + 3 * DAY).await;
    let sub = get(
        &app,
        &format!("/v2/subscriptions/{}", s["id"].as_str().unwrap()),
    )
    .await;
    let inv_id = sub["latest_invoice"].as_str().unwrap().to_string();
    let url = format!("{}/invoices/{inv_id}", app.receipt_base);
    let attempts = |inv: &Value| inv["attempt_count"].as_i64().unwrap();
    let before = attempts(&get(&app, &format!("/v2/invoices/{inv_id}")).await);
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    // T3-I4: every page of the receipt host says what it may load and where it may go.
    let page = http.get(&url).send().await.unwrap();
    for (name, value) in [
        ("x-content-type-options", "nosniff"),
        ("referrer-policy", "no-referrer"),
        ("x-frame-options", "DENY"),
    ] {
        assert_eq!(page.headers()[name], value);
    }
    let csp = page.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(csp.contains("default-src 'none'") && csp.contains("frame-ancestors 'none'"));
    let html = page.text().await.unwrap();
    let token = token_of(&html);

    // T3-M4: no token, a forged one, or another site's form: refused, nothing tried.
    let none = http.post(format!("{url}/pay")).send().await.unwrap();
    assert_eq!(none.status().as_u16(), 400);
    assert!(none.text().await.unwrap().contains("expired"));
    let last = if token.ends_with('0') { "1" } else { "0" };
    let forged = press(&http, &url, &format!("{}{last}", &token[..token.len() - 1])).await;
    assert_eq!(forged.status().as_u16(), 400);
    let cross = http
        .post(format!("{url}/pay"))
        .header("Origin", "https://evil.example")
        .form(&[("token", token.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(cross.status().as_u16(), 403);
    let cross_site = http
        .post(format!("{url}/pay"))
        .header("Origin", "null")
        .header("Sec-Fetch-Site", "cross-site")
        .form(&[("token", token.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(cross_site.status().as_u16(), 403);
    assert_eq!(
        attempts(&get(&app, &format!("/v2/invoices/{inv_id}")).await),
        before
    );

    // T3-L1: eight presses of one page at once: one try, each answered with the page.
    let presses: Vec<_> = (0..8)
        .map(|_| {
            let (http, url, token) = (http.clone(), url.clone(), token.clone());
            tokio::spawn(async move {
                let r = http
                    .post(format!("{url}/pay"))
                    .header(
                        "Origin",
                        url::Url::parse(&url)
                            .unwrap()
                            .origin()
                            .ascii_serialization(),
                    )
                    .form(&[("token", token)])
                    .send()
                    .await
                    .unwrap();
                let status = r.status().as_u16();
                if status != 303 {
                    let html = r.text().await.unwrap();
                    assert!(html.contains("Invoice"), "{status}: {html}");
                }
                status
            })
        })
        .collect();
    for p in presses {
        let status = p.await.unwrap();
        assert!([303, 402, 409].contains(&status), "{status}");
    }
    let inv = get(&app, &format!("/v2/invoices/{inv_id}")).await;
    assert_eq!(attempts(&inv), before + 1, "one press, one try");

    // At most 10 posts a minute to one page (8 + 3 forged and foreign ones so far count).
    let mut limited = None;
    for _ in 0..10 {
        let r = press(&http, &url, &token).await;
        if r.status().as_u16() == 429 {
            limited = Some(r);
            break;
        }
    }
    let limited = limited.expect("no limit per page");
    assert!(limited.headers().contains_key("retry-after"));
    assert!(limited.text().await.unwrap().contains("Too many attempts"));
    assert_eq!(
        attempts(&get(&app, &format!("/v2/invoices/{inv_id}")).await),
        before + 1
    );
}

/// Asks clock `c` to advance a day (without running the advance).
async fn advance_a_day(app: &TestApp, c: &str) -> Answer {
    app.post(
        &format!("/v2/test_helpers/test_clocks/{c}/advance"),
        app.sk(),
        json!({"frozen_time": JAN_31_2027 + DAY}),
    )
    .await
}

#[tokio::test]
async fn test_clocks_have_quotas_that_racing_requests_cannot_pass() {
    // The server runs no tasks of its own: advancing clocks stay advancing until the test
    // steps them.
    let Some(app) = spawn_app_with(Options {
        run_tasks: false,
        ..Options::default()
    })
    .await
    else {
        return;
    };
    // T3-M5: at most 3 clocks of an account advance at once.
    let mut clocks = Vec::new();
    for _ in 0..4 {
        clocks.push(clock(&app, JAN_31_2027).await);
    }
    let tries = futures::future::join_all(clocks.iter().map(|c| advance_a_day(&app, c))).await;
    let ok = tries.iter().filter(|r| r.status == 200).count();
    assert_eq!(
        ok,
        3,
        "{:?}",
        tries.iter().map(|r| r.body.to_string()).collect::<Vec<_>>()
    );
    let refused = tries.iter().find(|r| r.status != 200).unwrap();
    assert_eq!(refused.status, 400);
    assert_eq!(refused.error_code(), "test_clocks_advancing_limit");
    assert_eq!(refused.error_param(), "test_clock");
    while app.services.run_due_tasks(100).await.unwrap() > 0 {}
    let waiting = clocks
        .iter()
        .zip(&tries)
        .find(|(_, r)| r.status != 200)
        .unwrap()
        .0;
    assert_eq!(advance_a_day(&app, waiting).await.status, 200);
    while app.services.run_due_tasks(100).await.unwrap() > 0 {}

    // At most 100 customers on one clock, however fast they come.
    let crowded = clock(&app, JAN_31_2027).await;
    let made = futures::future::join_all((0..110).map(|i| {
        app.post(
            "/v2/customers",
            app.sk(),
            json!({"name": format!("C{i}"), "test_clock": crowded}),
        )
    }))
    .await;
    assert_eq!(made.iter().filter(|r| r.status == 200).count(), 100);
    let over = made.iter().find(|r| r.status != 200).unwrap();
    assert_eq!(over.status, 400, "{}", over.body);
    assert_eq!(over.error_code(), "test_clock_customers_limit");
    let listed = app
        .get(
            &format!("/v2/customers?test_clock={crowded}&limit=100"),
            app.sk(),
        )
        .await;
    if listed.status == 200 {
        assert!(!listed.body["has_more"].as_bool().unwrap());
    }

    // An advance that would make more than 10,000 invoices is refused before it starts.
    let busy = clock(&app, JAN_31_2027).await;
    let daily = price(&app, 100, "day").await;
    for _ in 0..14 {
        let (cus, _) = customer_with_card(&app, Some(&busy), GOOD).await;
        created(
            &app,
            "/v2/subscriptions",
            json!({"customer": cus, "items": [{"price": daily}]}),
        )
        .await;
    }
    // 14 daily subscriptions × 729 days: 10,206 renewals.
    let too_far = app
        .post(
            &format!("/v2/test_helpers/test_clocks/{busy}/advance"),
            app.sk(),
            json!({"frozen_time": JAN_31_2027 + 729 * DAY}),
        )
        .await;
    assert_eq!(too_far.status, 400, "{}", too_far.body);
    assert_eq!(too_far.error_code(), "test_clock_advance_too_large");
    assert_eq!(too_far.error_param(), "frozen_time");
    assert!(too_far.body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("10000"));
    let c = app
        .get(&format!("/v2/test_helpers/test_clocks/{busy}"), app.sk())
        .await;
    assert_eq!(c.body["status"], "ready");
    // 14 × 700 = 9,800: allowed.
    let fine = app
        .post(
            &format!("/v2/test_helpers/test_clocks/{busy}/advance"),
            app.sk(),
            json!({"frozen_time": JAN_31_2027 + 700 * DAY}),
        )
        .await;
    assert_eq!(fine.status, 200, "{}", fine.body);
}

/// The sequence part of invoice number `n` (`PREFIX-0001` → 1), and its prefix.
fn number_parts(n: &Value) -> (String, u64) {
    let n = n.as_str().unwrap_or_else(|| panic!("no number: {n}"));
    let (prefix, seq) = n.rsplit_once('-').unwrap();
    assert!(seq.len() >= 4, "{n}");
    (prefix.to_string(), seq.parse().unwrap())
}

#[tokio::test]
async fn invoice_numbers_are_gap_free_per_account_even_when_invoices_are_made_at_once() {
    let Some(app) = spawn_app().await else { return };
    let clock = clock(&app, JAN_31_2027).await;
    let monthly = price(&app, 1000, "month").await;
    let mut customers = Vec::new();
    for _ in 0..12 {
        customers.push(customer_with_card(&app, Some(&clock), GOOD).await.0);
    }
    // Twelve first invoices finalized at once, then twelve renewals in one advance (two task
    // runners side by side).
    let subs = futures::future::join_all(customers.iter().map(|c| {
        app.post(
            "/v2/subscriptions",
            app.sk(),
            json!({"customer": c, "items": [{"price": monthly}]}),
        )
    }))
    .await;
    assert!(subs.iter().all(|s| s.status == 200), "{:?}", subs[0].body);
    advance(&app, &clock, JAN_31_2027 + 30 * DAY).await;

    let invoices = list(&app, "/v2/invoices?limit=100").await;
    assert_eq!(invoices.len(), 24);
    let parts: Vec<(String, u64)> = invoices
        .iter()
        .map(|i| number_parts(&i["number"]))
        .collect();
    let prefix = &parts[0].0;
    assert_eq!(prefix.len(), 8);
    assert!(
        parts.iter().all(|(p, _)| p == prefix),
        "one prefix: {parts:?}"
    );
    let mut seqs: Vec<u64> = parts.iter().map(|(_, n)| *n).collect();
    seqs.sort_unstable();
    assert_eq!(seqs, (1..=24).collect::<Vec<u64>>(), "no gap, none twice");
    // A renewal is numbered after every first invoice: numbers follow finalization.
    for i in &invoices {
        let (_, n) = number_parts(&i["number"]);
        if i["billing_reason"] == "subscription_cycle" {
            assert!(n > 12, "{i}");
        }
    }
    // The same number in /v1 and on the customer's page.
    let first = &invoices[0];
    let id = first["id"].as_str().unwrap();
    let v1 = app.get(&format!("/v1/invoices/{id}"), app.sk()).await;
    assert_eq!(v1.body["number"], first["number"]);
    let (status, page) = receipt_page(first["hosted_invoice_url"].as_str().unwrap()).await;
    assert_eq!(status, 200);
    assert!(page.contains(first["number"].as_str().unwrap()), "{page}");
    // And in the PDF the page links to (and /v1's invoice_pdf names).
    let pdf_url = format!("{}/pdf", first["hosted_invoice_url"].as_str().unwrap());
    assert!(page.contains(&format!("/invoices/{id}/pdf")), "{page}");
    assert_eq!(v1.body["invoice_pdf"], pdf_url.as_str());
    let pdf = reqwest::get(&pdf_url).await.unwrap();
    assert_eq!(pdf.status(), 200);
    assert_eq!(pdf.headers()["content-type"], "application/pdf");
    let bytes = pdf.bytes().await.unwrap();
    assert!(bytes.starts_with(b"%PDF-"));
    let text = lopdf::Document::load_mem(&bytes)
        .unwrap()
        .extract_text(&[1])
        .unwrap();
    for expected in [first["number"].as_str().unwrap(), "Total", "10.00", "Paid"] {
        assert!(text.contains(expected), "{expected} not in the PDF: {text}");
    }
    let missing = reqwest::get(pdf_url.replace(id, "in_nosuchinvoice00000000"))
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);
    // Another account has a prefix of its own and starts at 1.
    let other = app.other_account().await;
    let sk = &other.keys.test.secret;
    let c = app
        .post("/v2/customers", sk, json!({"email": "o@example.com"}))
        .await;
    let cus = c.body["id"].as_str().unwrap();
    let pm = app.post("/v2/payment_methods", sk, card(GOOD)).await;
    let pm = pm.body["id"].as_str().unwrap();
    app.post(
        &format!("/v2/payment_methods/{pm}/attach"),
        sk,
        json!({"customer": cus}),
    )
    .await;
    let p = app
        .post("/v2/products", sk, json!({"name": "Other plan"}))
        .await;
    let pr = app
        .post(
            "/v2/prices",
            sk,
            json!({"product": p.body["id"], "currency": "usd", "unit_amount": 500,
                   "recurring": {"interval": "month"}}),
        )
        .await;
    let s = app
        .post(
            "/v2/subscriptions?expand[]=latest_invoice",
            sk,
            json!({"customer": cus, "items": [{"price": pr.body["id"]}]}),
        )
        .await;
    assert_eq!(s.status, 200, "{}", s.body);
    let inv = s.body["latest_invoice"].as_str().unwrap();
    let theirs = app.get(&format!("/v2/invoices/{inv}"), sk).await;
    let (their_prefix, n) = number_parts(&theirs.body["number"]);
    assert_ne!(&their_prefix, prefix);
    assert_eq!(n, 1);
}
