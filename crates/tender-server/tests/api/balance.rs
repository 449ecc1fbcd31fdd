//! The balance (CONTRACT §9): fees, balance transactions, availability, `GET /balance`, and the
//! ledger's invariants after each step (`BalanceBook::verify_ledger`, what `tender ledger verify`
//! runs).

use serde_json::{json, Value};
use tender_core::balance::fees::Pricing;

use crate::helpers::*;

/// Fails the test unless every invariant of the ledger holds in test mode.
pub async fn assert_ledger_holds(app: &TestApp) {
    let scope = tender_core::auth::Scope {
        account: app.account.account.clone(),
        mode: tender_core::auth::Mode::Test,
    };
    let report = app.services.balance().verify_ledger(&scope).await.unwrap();
    assert!(report.differences.is_empty(), "{:#?}", report.differences);
}

pub async fn balance(app: &TestApp) -> (i64, i64) {
    let b = app.get("/v2/balance", app.sk()).await;
    assert_eq!(b.status, 200, "{}", b.body);
    let usd = |list: &Value| {
        list.as_array()
            .unwrap()
            .iter()
            .find(|e| e["currency"] == "usd")
            .map_or(0, |e| e["amount"].as_i64().unwrap())
    };
    (usd(&b.body["available"]), usd(&b.body["pending"]))
}

/// The balance transaction of a payment or refund.
async fn txn_of(app: &TestApp, object: &Value) -> Value {
    let id = object["balance_transaction"]
        .as_str()
        .expect("a balance transaction");
    let t = app
        .get(&format!("/v2/balance_transactions/{id}"), app.sk())
        .await;
    assert_eq!(t.status, 200, "{}", t.body);
    t.body
}

/// Runs due tasks until none is left and no pending balance transaction is due.
pub async fn settle_tasks(app: &TestApp) {
    for _ in 0..200 {
        app.run_due_tasks().await;
        let pending = app
            .get("/v2/balance_transactions?limit=100", app.sk())
            .await;
        let due = pending.body["data"].as_array().unwrap().iter().any(|t| {
            t["status"] == "pending" && t["available_on"].as_i64().unwrap() <= app.services.now()
        });
        if !due {
            return;
        }
    }
    panic!("due balance transactions never became available");
}

#[tokio::test]
async fn a_charge_is_pending_less_its_fee_then_available_and_a_refund_leaves_at_once() {
    let Some(app) = spawn_stepped_app().await else {
        return;
    };
    assert_eq!(balance(&app).await, (0, 0));
    let b = app.get("/v2/balance", app.sk()).await;
    assert_eq!(
        b.body,
        json!({"object": "balance", "available": [], "pending": [],
               "processors": {"available": [], "pending": []}, "livemode": false})
    );

    let p = app.pay(app.sk(), "4242424242424242", 1000).await;
    let txn_id = p.body["balance_transaction"].as_str().unwrap().to_string();
    assert!(txn_id.starts_with("txn_"), "{}", p.body);
    assert_eq!(p.body["disputed"], false);
    let t = app
        .get(&format!("/v2/balance_transactions/{txn_id}"), app.sk())
        .await;
    assert_eq!(t.status, 200, "{}", t.body);
    // 2.9% of 1,000 is 29, + 30.
    assert_eq!(t.body["object"], "balance_transaction");
    assert_eq!(t.body["type"], "charge");
    assert_eq!(t.body["amount"], 1000);
    assert_eq!(t.body["fee"], 59);
    assert_eq!(t.body["net"], 941);
    assert_eq!(t.body["status"], "pending");
    assert_eq!(t.body["source"], p.id().as_str());
    assert_eq!(t.body["reporting_category"], "charge");
    assert_eq!(t.body["fee_details"][0]["type"], "tender_fee");
    assert_eq!(t.body["fee_details"][0]["amount"], 59);
    let created = t.body["created"].as_i64().unwrap();
    assert_eq!(t.body["available_on"].as_i64().unwrap(), created + 60);
    assert_eq!(balance(&app).await, (0, 941));
    assert_ledger_holds(&app).await;

    // A minute later (test mode) the money is available.
    app.clock.advance(61);
    settle_tasks(&app).await;
    assert_eq!(balance(&app).await, (941, 0));
    let t = app
        .get(&format!("/v2/balance_transactions/{txn_id}"), app.sk())
        .await;
    assert_eq!(t.body["status"], "available");

    let r = app
        .post(
            "/v2/refunds",
            app.sk(),
            json!({"payment": p.id(), "amount": 300}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let rt = app
        .get(
            &format!(
                "/v2/balance_transactions/{}",
                r.body["balance_transaction"].as_str().unwrap()
            ),
            app.sk(),
        )
        .await;
    assert_eq!(
        (
            &rt.body["type"],
            &rt.body["amount"],
            &rt.body["fee"],
            &rt.body["net"],
            &rt.body["status"]
        ),
        (
            &json!("refund"),
            &json!(-300),
            &json!(0),
            &json!(-300),
            &json!("available")
        )
    );
    assert_eq!(rt.body["source"], r.id().as_str());
    // Refunds return no fee.
    assert_eq!(balance(&app).await, (641, 0));
    assert_ledger_holds(&app).await;

    // A refund may take the available balance below zero.
    let p2 = app.pay(app.sk(), "4242424242424242", 5000).await;
    app.post("/v2/refunds", app.sk(), json!({"payment": p2.id()}))
        .await;
    // 5,000 − (145 + 30) pending; 641 − 5,000 available.
    assert_eq!(balance(&app).await, (641 - 5000, 5000 - 175));
    assert_ledger_holds(&app).await;
}

#[tokio::test]
async fn balance_transactions_filter_by_type_source_currency_and_availability() {
    let Some(app) = spawn_stepped_app().await else {
        return;
    };
    let a = app.pay(app.sk(), "4242424242424242", 2000).await.id();
    app.clock.advance(100);
    let b = app.pay(app.sk(), "4242424242424242", 3000).await.id();
    let r = app
        .post("/v2/refunds", app.sk(), json!({"payment": a}))
        .await;
    let eur = app
        .post(
            "/v2/payments",
            app.sk(),
            json!({"amount": 700, "currency": "eur", "payment_method": {"type": "card", "card": {"number": "4242424242424242", "exp_month": 12, "exp_year": 2034, "cvc": "123"}}}),
        )
        .await;
    assert_eq!(eur.status, 200, "{}", eur.body);

    let ids = |page: &Answer| -> Vec<String> {
        assert_eq!(page.status, 200, "{}", page.body);
        page.body["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["source"].as_str().unwrap().to_string())
            .collect()
    };
    let all = app.get("/v2/balance_transactions", app.sk()).await;
    assert_eq!(all.body["url"], "/v2/balance_transactions");
    assert_eq!(ids(&all), vec![eur.id(), r.id(), b.clone(), a.clone()]);
    let charges = app
        .get("/v2/balance_transactions?type=charge", app.sk())
        .await;
    assert_eq!(ids(&charges), vec![eur.id(), b.clone(), a.clone()]);
    let refunds = app
        .get("/v2/balance_transactions?type=refund", app.sk())
        .await;
    assert_eq!(ids(&refunds), vec![r.id()]);
    let of_a = app
        .get(&format!("/v2/balance_transactions?source={a}"), app.sk())
        .await;
    assert_eq!(ids(&of_a), vec![a.clone()]);
    let in_eur = app
        .get("/v2/balance_transactions?currency=EUR", app.sk())
        .await;
    assert_eq!(ids(&in_eur), vec![eur.id()]);
    // `a` became available 100 s before the others.
    let first = app.get(&format!("/v2/payments/{a}"), app.sk()).await;
    let first_txn = app
        .get(
            &format!(
                "/v2/balance_transactions/{}",
                first.body["balance_transaction"].as_str().unwrap()
            ),
            app.sk(),
        )
        .await;
    let on = first_txn.body["available_on"].as_i64().unwrap();
    let early = app
        .get(
            &format!("/v2/balance_transactions?type=charge&available_on[lte]={on}"),
            app.sk(),
        )
        .await;
    assert_eq!(ids(&early), vec![a.clone()]);
    let late = app
        .get(
            &format!("/v2/balance_transactions?available_on[gt]={on}&type=charge"),
            app.sk(),
        )
        .await;
    assert_eq!(ids(&late), vec![eur.id(), b.clone()]);

    // Bad filters are clear 400s.
    for (query, param) in [
        ("type=bogus", "type"),
        ("currency=xyz", "currency"),
        ("available_on[gt]=soon", "available_on[gt]"),
        ("status=pending", "status"),
    ] {
        let bad = app
            .get(&format!("/v2/balance_transactions?{query}"), app.sk())
            .await;
        assert_eq!(bad.status, 400, "{query}: {}", bad.body);
        assert_eq!(bad.error_param(), param, "{query}");
    }
    let missing = app
        .get("/v2/balance_transactions/txn_nothere", app.sk())
        .await;
    assert_eq!(missing.status, 404);
    // Another account sees none of it.
    let other = app.other_account().await;
    let theirs = app
        .get("/v2/balance_transactions", &other.keys.test.secret)
        .await;
    assert_eq!(theirs.body["data"], json!([]));
    assert_ledger_holds(&app).await;
}

#[tokio::test]
async fn an_accounts_prices_apply_to_new_charges_and_booked_ones_keep_their_fee() {
    let Some(app) = spawn_stepped_app().await else {
        return;
    };
    let before = app.pay(app.sk(), "4242424242424242", 10_000).await;
    app.services
        .balance()
        .set_pricing(
            &app.account.account,
            Pricing {
                card_bps: 125,
                card_fixed: 0,
                ..Pricing::default()
            },
        )
        .await
        .unwrap();
    let after = app.pay(app.sk(), "4242424242424242", 10_000).await;
    assert_eq!(txn_of(&app, &before.body).await["fee"], 320);
    assert_eq!(txn_of(&app, &after.body).await["fee"], 125);
    // Bank transfers: 0.8% capped at 500, booked when the transfer settles.
    let iban = "DE89370400440532013000";
    let bank = app
        .post(
            "/v2/payments",
            app.sk(),
            json!({"amount": 100_000, "currency": "eur", "payment_method": {"type": "bank_transfer", "bank_transfer": {"iban": iban, "account_holder_name": "Jenny Rosen"}}}),
        )
        .await;
    assert_eq!(bank.status, 200, "{}", bank.body);
    assert_eq!(bank.body["balance_transaction"], Value::Null);
    app.clock.advance(11);
    let id = bank.id();
    let mut settled = Value::Null;
    for _ in 0..200 {
        app.run_due_tasks().await;
        settled = app.get(&format!("/v2/payments/{id}"), app.sk()).await.body;
        if settled["status"] == "succeeded" {
            break;
        }
    }
    let txn = app
        .get(
            &format!(
                "/v2/balance_transactions/{}",
                settled["balance_transaction"].as_str().unwrap()
            ),
            app.sk(),
        )
        .await;
    assert_eq!(txn.body["fee"], 500, "{}", txn.body);
    assert_eq!(txn.body["currency"], "eur");
    assert_ledger_holds(&app).await;
}

#[tokio::test]
async fn a_manual_capture_books_what_was_captured_once() {
    let Some(app) = spawn_stepped_app().await else {
        return;
    };
    let mut body = payment_body("4242424242424242", 5000);
    body["capture"] = json!(false);
    let p = app.post("/v2/payments", app.sk(), body).await;
    assert_eq!(p.body["balance_transaction"], Value::Null);
    assert_eq!(balance(&app).await, (0, 0));
    let captured = app
        .post(
            &format!("/v2/payments/{}/capture", p.id()),
            app.sk(),
            json!({"amount": 4000}),
        )
        .await;
    assert_eq!(captured.status, 200, "{}", captured.body);
    // 116 + 30 on the 4,000 captured.
    assert_eq!(balance(&app).await, (0, 4000 - 146));
    let again = app
        .post(
            &format!("/v2/payments/{}/capture", p.id()),
            app.sk(),
            json!({}),
        )
        .await;
    assert_eq!(again.status, 400);
    let charges = app
        .get("/v2/balance_transactions?type=charge", app.sk())
        .await;
    assert_eq!(charges.body["data"].as_array().unwrap().len(), 1);
    assert_ledger_holds(&app).await;
}

/// `amount` paid by card and made available; returns the available balance.
async fn fund(app: &TestApp, payments: usize, amount: i64) -> i64 {
    for _ in 0..payments {
        let p = app.pay(app.sk(), "4242424242424242", amount).await;
        assert_eq!(p.status, 200, "{}", p.body);
    }
    app.clock.advance(61);
    settle_tasks(app).await;
    balance(app).await.0
}

fn payout_body(amount: i64, iban: &str) -> Value {
    json!({"amount": amount, "currency": "usd",
           "destination": {"iban": iban, "account_holder_name": "Jenny Rosen"},
           "metadata": {"ref": "weekly"}})
}

const IBAN: &str = "DE89 3704 0044 0532 0130 00";

/// Steps the payout tasks until `id` reaches `status`.
async fn payout_reaches(app: &TestApp, id: &str, status: &str) -> Value {
    for _ in 0..200 {
        app.clock.advance(11);
        app.run_due_tasks().await;
        let p = app.get(&format!("/v2/payouts/{id}"), app.sk()).await.body;
        if p["status"] == status {
            return p;
        }
    }
    panic!("payout {id} never reached {status}");
}

#[tokio::test]
async fn a_payout_leaves_the_available_balance_at_once_and_is_paid_over_the_bank_delay() {
    let Some(app) = spawn_stepped_app().await else {
        return;
    };
    let available = fund(&app, 1, 10_000).await;
    assert_eq!(available, 10_000 - 320);
    let p = app
        .post("/v2/payouts", app.sk(), payout_body(5000, IBAN))
        .await;
    assert_eq!(p.status, 200, "{}", p.body);
    assert_eq!(p.body["object"], "payout");
    assert_eq!(p.body["status"], "pending");
    assert_eq!(
        p.body["destination"],
        json!({"last4": "3000", "country": "DE", "account_holder_name": "Jenny Rosen"})
    );
    assert!(!String::from_utf8_lossy(&p.raw).contains("370400440532013000"));
    assert!(!contains(&app.stored_bytes().await, "370400440532013000"));
    let t = txn_of(&app, &p.body).await;
    assert_eq!(
        (
            t["type"].as_str(),
            t["amount"].as_i64(),
            t["status"].as_str()
        ),
        (Some("payout"), Some(-5000), Some("available"))
    );
    assert_eq!(balance(&app).await, (available - 5000, 0));
    let by_payout = app
        .get(
            &format!("/v2/balance_transactions?payout={}", p.id()),
            app.sk(),
        )
        .await;
    assert_eq!(by_payout.body["data"].as_array().unwrap().len(), 1);
    assert_ledger_holds(&app).await;

    payout_reaches(&app, &p.id(), "in_transit").await;
    let paid = payout_reaches(&app, &p.id(), "paid").await;
    assert_eq!(paid["failure_code"], Value::Null);
    // Paid out is paid out: the balance does not move again.
    assert_eq!(balance(&app).await, (available - 5000, 0));
    for kind in ["payout.created", "payout.updated", "payout.paid"] {
        let ev = app.get(&format!("/v2/events?type={kind}"), app.sk()).await;
        assert_eq!(
            ev.body["data"][0]["data"]["object"]["id"],
            p.id().as_str(),
            "{kind}"
        );
    }
    let listed = app.get("/v2/payouts?status=paid", app.sk()).await;
    assert_eq!(listed.body["data"][0]["id"], p.id().as_str());
    assert_ledger_holds(&app).await;
}

#[tokio::test]
async fn a_failing_iban_and_a_cancel_give_the_money_back() {
    let Some(app) = spawn_stepped_app().await else {
        return;
    };
    let available = fund(&app, 1, 10_000).await;
    let failing = tender_core::validate::iban::check_digits("DE", "370400440532013001")
        .map(|c| format!("DE{c}370400440532013001"))
        .unwrap();
    let f = app
        .post("/v2/payouts", app.sk(), payout_body(1000, &failing))
        .await;
    assert_eq!(f.status, 200, "{}", f.body);
    let failed = payout_reaches(&app, &f.id(), "failed").await;
    assert_eq!(failed["failure_code"], "account_closed");
    let back = txn_of(
        &app,
        &json!({"balance_transaction": failed["failure_balance_transaction"]}),
    )
    .await;
    assert_eq!(
        (back["type"].as_str(), back["amount"].as_i64()),
        (Some("payout_failure"), Some(1000))
    );
    assert_eq!(balance(&app).await.0, available);
    let ev = app.get("/v2/events?type=payout.failed", app.sk()).await;
    assert_eq!(ev.body["data"][0]["data"]["object"]["id"], f.id().as_str());

    let c = app
        .post("/v2/payouts", app.sk(), payout_body(2000, IBAN))
        .await;
    assert_eq!(balance(&app).await.0, available - 2000);
    let canceled = app
        .post(
            &format!("/v2/payouts/{}/cancel", c.id()),
            app.sk(),
            json!({}),
        )
        .await;
    assert_eq!(canceled.status, 200, "{}", canceled.body);
    assert_eq!(canceled.body["status"], "canceled");
    assert_eq!(balance(&app).await.0, available);
    let again = app
        .post(
            &format!("/v2/payouts/{}/cancel", c.id()),
            app.sk(),
            json!({}),
        )
        .await;
    assert_eq!(again.status, 400);
    assert_eq!(again.error_code(), "payout_unexpected_state");
    let ev = app.get("/v2/events?type=payout.canceled", app.sk()).await;
    assert_eq!(ev.body["data"][0]["data"]["object"]["id"], c.id().as_str());
    assert_ledger_holds(&app).await;
}

#[tokio::test]
async fn bad_payouts_get_clear_400s() {
    let Some(app) = spawn_stepped_app().await else {
        return;
    };
    let available = fund(&app, 1, 2000).await;
    let cases = [
        (
            payout_body(available + 1, IBAN),
            "amount",
            "balance_insufficient",
        ),
        (
            json!({"amount": 100, "currency": "eur", "destination": {"iban": IBAN, "account_holder_name": "J"}}),
            "amount",
            "balance_insufficient",
        ),
        (payout_body(0, IBAN), "amount", "amount_too_small"),
        (payout_body(-5, IBAN), "amount", "amount_too_small"),
        (
            payout_body(100, "DE89 3704 0044 0532 0130 01"),
            "destination[iban]",
            "parameter_invalid",
        ),
        (
            json!({"amount": 100, "currency": "usd"}),
            "destination",
            "parameter_missing",
        ),
        (
            json!({"amount": 100, "currency": "usd", "destination": {"iban": IBAN}}),
            "destination[account_holder_name]",
            "parameter_missing",
        ),
        (
            json!({"amount": 100, "currency": "usd", "destination": {"iban": IBAN, "account_holder_name": "  "}}),
            "destination[account_holder_name]",
            "parameter_invalid",
        ),
        (
            json!({"amount": 100, "currency": "zzz", "destination": {"iban": IBAN, "account_holder_name": "J"}}),
            "currency",
            "parameter_invalid",
        ),
        (
            json!({"amount": "100", "currency": "usd", "destination": {"iban": IBAN, "account_holder_name": "J"}}),
            "amount",
            "parameter_invalid_integer",
        ),
        (
            json!({"amount": 100, "currency": "usd", "destination": {"iban": IBAN, "account_holder_name": "J"}, "method": "instant"}),
            "method",
            "parameter_unknown",
        ),
    ];
    for (body, param, code) in cases {
        let r = app.post("/v2/payouts", app.sk(), body.clone()).await;
        assert_eq!(r.status, 400, "{body}: {}", r.body);
        assert_eq!((r.error_param(), r.error_code()), (param, code), "{body}");
    }
    assert_eq!(balance(&app).await.0, available);
    let exact = app
        .post("/v2/payouts", app.sk(), payout_body(available, IBAN))
        .await;
    assert_eq!(
        exact.status, 200,
        "the whole balance can be paid out: {}",
        exact.body
    );
    assert_eq!(balance(&app).await.0, 0);
    assert_eq!(
        app.get("/v2/payouts/po_nothere", app.sk()).await.status,
        404
    );
    assert_ledger_holds(&app).await;
}

#[tokio::test]
async fn twenty_refunds_and_racing_payouts_never_spend_the_same_money() {
    let Some(app) = spawn_stepped_app().await else {
        return;
    };
    let available = fund(&app, 20, 1000).await;
    assert_eq!(available, 20 * 941);
    let payments = app.get("/v2/payments?limit=20", app.sk()).await;
    let ids: Vec<String> = payments.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap().to_string())
        .collect();
    let refunds = ids.iter().map(|id| {
        let app = &app;
        async move {
            app.post(
                "/v2/refunds",
                app.sk(),
                json!({"payment": id, "amount": 100}),
            )
            .await
            .status
        }
    });
    let payouts = (0..3).map(|_| {
        let app = &app;
        async move {
            app.post("/v2/payouts", app.sk(), payout_body(10_000, IBAN))
                .await
        }
    });
    let (refunded, paid) = tokio::join!(
        futures::future::join_all(refunds),
        futures::future::join_all(payouts)
    );
    assert!(refunded.iter().all(|s| *s == 200), "{refunded:?}");
    let accepted = paid.iter().filter(|p| p.status == 200).count();
    assert_eq!(
        accepted,
        1,
        "exactly one payout fits: {:?}",
        paid.iter().map(|p| &p.body).collect::<Vec<_>>()
    );
    for refused in paid.iter().filter(|p| p.status != 200) {
        assert_eq!(refused.error_code(), "balance_insufficient");
    }
    assert_eq!(balance(&app).await.0, available - 2000 - 10_000);
    assert_ledger_holds(&app).await;
}
