//! Disputes (CONTRACT §9): the disputed test card, evidence, submission and its outcome, the
//! close, the due date, and the ledger's invariants after each step.

use serde_json::{json, Value};
use tender_core::balance::fees::Pricing;

use crate::balance::{assert_ledger_holds, balance, settle_tasks};
use crate::helpers::*;

const DISPUTED: &str = "4000000000000259";

/// Moves the clock on a few seconds at a time and runs due tasks until the payment's dispute
/// exists.
async fn dispute_of(app: &TestApp, payment: &str) -> Value {
    for _ in 0..200 {
        app.clock.advance(3);
        app.run_due_tasks().await;
        let list = app
            .get(&format!("/v2/disputes?payment={payment}"), app.sk())
            .await;
        assert_eq!(list.status, 200, "{}", list.body);
        if let Some(d) = list.body["data"].as_array().unwrap().first() {
            return d.clone();
        }
    }
    panic!("payment {payment} was never disputed");
}

/// Runs due tasks (the clock moved on `step` seconds each time) until the dispute is `status`.
async fn dispute_reaches(app: &TestApp, id: &str, status: &str, step: i64) -> Value {
    for _ in 0..200 {
        app.clock.advance(step);
        app.run_due_tasks().await;
        let d = app.get(&format!("/v2/disputes/{id}"), app.sk()).await.body;
        if d["status"] == status {
            return d;
        }
    }
    panic!("dispute {id} never reached {status}");
}

async fn events_of(app: &TestApp, kind: &str) -> Vec<Value> {
    let ev = app
        .get(&format!("/v2/events?type={kind}&limit=100"), app.sk())
        .await;
    assert_eq!(ev.status, 200, "{}", ev.body);
    ev.body["data"].as_array().unwrap().clone()
}

#[tokio::test]
async fn the_disputed_card_is_disputed_and_winning_evidence_gives_the_amount_back() {
    let Some(app) = spawn_stepped_app().await else {
        return;
    };
    let p = app.pay(app.sk(), DISPUTED, 10_000).await;
    assert_eq!(p.status, 200, "{}", p.body);
    assert_eq!(p.body["status"], "succeeded");
    assert_eq!(p.body["disputed"], false);

    let d = dispute_of(&app, &p.id()).await;
    let id = d["id"].as_str().unwrap().to_string();
    assert!(id.starts_with("dp_"), "{d}");
    assert_eq!(d["object"], "dispute");
    assert_eq!(d["amount"], 10_000);
    assert_eq!(d["currency"], "usd");
    assert_eq!(d["payment"], p.id().as_str());
    assert_eq!(d["reason"], "fraudulent");
    assert_eq!(d["status"], "needs_response");
    assert_eq!(d["evidence_details"]["submission_count"], 0);
    assert!(d["evidence_details"]["due_by"].as_i64().unwrap() > app.services.now());
    assert_eq!(d["evidence"]["uncategorized_text"], Value::Null);
    // The amount and the dispute fee (1,500 by default) leave the balance at once.
    let w = &d["balance_transactions"][0];
    assert_eq!(w["type"], "adjustment");
    assert_eq!(w["amount"], -10_000);
    assert_eq!(w["fee"], 1500);
    assert_eq!(w["net"], -11_500);
    assert_eq!(w["status"], "available");
    assert_eq!(w["source"], id.as_str());
    assert_eq!(w["fee_details"][0]["type"], "dispute_fee");
    let t = app
        .get(
            &format!("/v2/balance_transactions/{}", w["id"].as_str().unwrap()),
            app.sk(),
        )
        .await;
    assert_eq!(&t.body, w);
    // The dispute takes 11,500 from the available balance at once, below zero if need be;
    // the charge (10,000 less 320) is still pending.
    assert_eq!(balance(&app).await, (-11_500, 9680));
    assert_ledger_holds(&app).await;

    let paid = app.get(&format!("/v2/payments/{}", p.id()), app.sk()).await;
    assert_eq!(paid.body["disputed"], true);
    let refund = app
        .post("/v2/refunds", app.sk(), json!({"payment": p.id()}))
        .await;
    assert_eq!(refund.status, 400, "{}", refund.body);
    assert_eq!(refund.body["error"]["code"], "charge_disputed");
    assert_eq!(events_of(&app, "dispute.created").await.len(), 1);

    // Evidence, field by field, then submitted.
    let u = app
        .post(
            &format!("/v2/disputes/{id}"),
            app.sk(),
            json!({"evidence": {"customer_name": "Ada Lovelace", "uncategorized_text": "draft"},
                   "metadata": {"case": "42"}}),
        )
        .await;
    assert_eq!(u.status, 200, "{}", u.body);
    assert_eq!(u.body["status"], "needs_response");
    assert_eq!(u.body["evidence"]["customer_name"], "Ada Lovelace");
    assert_eq!(u.body["metadata"]["case"], "42");
    let u = app
        .post(
            &format!("/v2/disputes/{id}"),
            app.sk(),
            json!({"evidence": {"uncategorized_text": "winning_evidence"}, "submit": true}),
        )
        .await;
    assert_eq!(u.status, 200, "{}", u.body);
    assert_eq!(u.body["status"], "under_review");
    assert_eq!(u.body["evidence"]["customer_name"], "Ada Lovelace");
    assert_eq!(u.body["evidence"]["uncategorized_text"], "winning_evidence");
    assert_eq!(u.body["evidence_details"]["submission_count"], 1);
    let updated = events_of(&app, "dispute.updated").await;
    assert_eq!(updated.len(), 2);
    assert_eq!(
        updated[0]["data"]["previous_attributes"]["status"],
        "needs_response"
    );
    // Under review, evidence is frozen and the loss can no longer be accepted.
    for (path, body) in [
        (
            format!("/v2/disputes/{id}"),
            json!({"evidence": {"product_description": "late"}}),
        ),
        (format!("/v2/disputes/{id}"), json!({"submit": true})),
        (format!("/v2/disputes/{id}/close"), json!({})),
    ] {
        let r = app.post(&path, app.sk(), body).await;
        assert_eq!(r.status, 400, "{path}: {}", r.body);
        assert_eq!(r.body["error"]["code"], "dispute_unexpected_state");
    }
    // Metadata still can change.
    let m = app
        .post(
            &format!("/v2/disputes/{id}"),
            app.sk(),
            json!({"metadata": {"case": "43"}}),
        )
        .await;
    assert_eq!(m.status, 200, "{}", m.body);

    let won = dispute_reaches(&app, &id, "won", 3).await;
    let back = &won["balance_transactions"][1];
    assert_eq!(
        (&back["type"], &back["amount"], &back["fee"], &back["net"]),
        (
            &json!("adjustment"),
            &json!(10_000),
            &json!(0),
            &json!(10_000)
        )
    );
    // The fee is kept.
    app.clock.advance(61);
    settle_tasks(&app).await;
    assert_eq!(balance(&app).await, (9680 - 1500, 0));
    let closed = events_of(&app, "dispute.closed").await;
    assert_eq!(closed.len(), 1);
    assert_eq!(closed[0]["data"]["object"]["status"], "won");
    // Still disputed: the won amount cannot be refunded either (it went through the dispute).
    let paid = app.get(&format!("/v2/payments/{}", p.id()), app.sk()).await;
    assert_eq!(paid.body["disputed"], true);
    assert_ledger_holds(&app).await;
}

#[tokio::test]
async fn a_dispute_is_lost_by_other_evidence_by_closing_it_or_by_not_answering() {
    let Some(app) = spawn_stepped_app().await else {
        return;
    };
    // A price of 2,000 per dispute for this account.
    let pricing = Pricing {
        dispute: 2000,
        ..Pricing::default()
    };
    app.services
        .balance()
        .set_pricing(&app.account.account, pricing)
        .await
        .unwrap();
    let mut disputes = Vec::new();
    for amount in [1000, 2000, 3000] {
        let p = app.pay(app.sk(), DISPUTED, amount).await;
        assert_eq!(p.status, 200, "{}", p.body);
        disputes.push(dispute_of(&app, &p.id()).await);
    }
    for d in &disputes {
        assert_eq!(d["balance_transactions"][0]["fee"], 2000);
    }
    let ids: Vec<String> = disputes
        .iter()
        .map(|d| d["id"].as_str().unwrap().to_string())
        .collect();

    // Evidence that does not convince.
    let u = app
        .post(
            &format!("/v2/disputes/{}", ids[0]),
            app.sk(),
            json!({"evidence": {"uncategorized_text": "please"}, "submit": true}),
        )
        .await;
    assert_eq!(u.status, 200, "{}", u.body);
    let lost = dispute_reaches(&app, &ids[0], "lost", 3).await;
    assert_eq!(lost["balance_transactions"].as_array().unwrap().len(), 1);

    // Accepting the loss.
    let c = app
        .post(
            &format!("/v2/disputes/{}/close", ids[1]),
            app.sk(),
            json!({}),
        )
        .await;
    assert_eq!(c.status, 200, "{}", c.body);
    assert_eq!(c.body["status"], "lost");
    let again = app
        .post(
            &format!("/v2/disputes/{}/close", ids[1]),
            app.sk(),
            json!({}),
        )
        .await;
    assert_eq!(again.status, 400, "{}", again.body);
    assert_eq!(again.body["error"]["code"], "dispute_unexpected_state");
    assert_ledger_holds(&app).await;

    // Nobody answers the third: lost at its due date, not before.
    let due_by = disputes[2]["evidence_details"]["due_by"].as_i64().unwrap();
    app.clock.advance(due_by - app.services.now() - 10);
    app.run_due_tasks().await;
    let d = app.get(&format!("/v2/disputes/{}", ids[2]), app.sk()).await;
    assert_eq!(d.body["status"], "needs_response");
    dispute_reaches(&app, &ids[2], "lost", 20).await;

    settle_tasks(&app).await;
    // 6,000 captured, fees 3 × 30 + 2.9% of each (29 + 58 + 87), three disputes lost: 6,000
    // withheld and 6,000 of dispute fees.
    assert_eq!(balance(&app).await, (6000 - 264 - 6000 - 6000, 0));
    assert_eq!(events_of(&app, "dispute.closed").await.len(), 3);
    let list = app.get("/v2/disputes?limit=2", app.sk()).await;
    assert_eq!(list.body["url"], "/v2/disputes");
    assert_eq!(list.body["data"].as_array().unwrap().len(), 2);
    assert_eq!(list.body["has_more"], true);
    assert_eq!(list.body["data"][0]["id"], ids[2].as_str());
    assert_ledger_holds(&app).await;
}

#[tokio::test]
async fn only_captured_payments_of_the_disputed_card_are_disputed() {
    let Some(app) = spawn_stepped_app().await else {
        return;
    };
    let plain = app.pay(app.sk(), "4242424242424242", 1000).await;
    // Authorised only: disputed once captured, for what was captured.
    let held = app
        .post(
            "/v2/payments",
            app.sk(),
            json!({"amount": 5000, "currency": "usd", "capture": false,
                   "payment_method": card(DISPUTED)}),
        )
        .await;
    assert_eq!(held.status, 200, "{}", held.body);
    assert_eq!(held.body["status"], "requires_capture");
    // Canceled before capture: never disputed.
    let canceled = app
        .post(
            "/v2/payments",
            app.sk(),
            json!({"amount": 700, "currency": "usd", "capture": false,
                   "payment_method": card(DISPUTED)}),
        )
        .await;
    let c = app
        .post(
            &format!("/v2/payments/{}/cancel", canceled.id()),
            app.sk(),
            json!({}),
        )
        .await;
    assert_eq!(c.status, 200, "{}", c.body);
    for _ in 0..5 {
        app.clock.advance(30);
        app.run_due_tasks().await;
    }
    let none = app.get("/v2/disputes", app.sk()).await;
    assert_eq!(none.body["data"], json!([]), "{}", none.body);

    let cap = app
        .post(
            &format!("/v2/payments/{}/capture", held.id()),
            app.sk(),
            json!({"amount": 4000}),
        )
        .await;
    assert_eq!(cap.status, 200, "{}", cap.body);
    let d = dispute_of(&app, &held.id()).await;
    assert_eq!(d["amount"], 4000);
    let all = app.get("/v2/disputes", app.sk()).await;
    assert_eq!(all.body["data"].as_array().unwrap().len(), 1);
    let other = app
        .get(&format!("/v2/disputes?payment={}", plain.id()), app.sk())
        .await;
    assert_eq!(other.body["data"], json!([]));
    // A live-mode payment of the test card is declined, so never disputed.
    let live = app.pay(app.sk_live(), DISPUTED, 1000).await;
    assert_eq!(live.status, 402, "{}", live.body);
    assert_ledger_holds(&app).await;
}

#[tokio::test]
async fn bad_dispute_requests_get_a_clear_4xx() {
    let Some(app) = spawn_stepped_app().await else {
        return;
    };
    let p = app.pay(app.sk(), DISPUTED, 1000).await;
    let d = dispute_of(&app, &p.id()).await;
    let id = d["id"].as_str().unwrap();
    let path = format!("/v2/disputes/{id}");
    for (body, param, code) in [
        (json!({"evidnce": {}}), "evidnce", "parameter_unknown"),
        (json!({"evidence": "x"}), "evidence", "parameter_invalid"),
        (
            json!({"evidence": {"notes": "x"}}),
            "evidence[notes]",
            "parameter_unknown",
        ),
        (
            json!({"evidence": {"customer_name": 5}}),
            "evidence[customer_name]",
            "parameter_invalid",
        ),
        (json!({"submit": "yes"}), "submit", "parameter_invalid"),
        (json!({"metadata": "x"}), "metadata", "parameter_invalid"),
    ] {
        let r = app.post(&path, app.sk(), body.clone()).await;
        assert_eq!(r.status, 400, "{body}: {}", r.body);
        assert_eq!(r.body["error"]["param"], param, "{body}: {}", r.body);
        assert_eq!(r.body["error"]["code"], code, "{body}: {}", r.body);
    }
    let c = app
        .post(&format!("{path}/close"), app.sk(), json!({"now": true}))
        .await;
    assert_eq!(c.status, 400, "{}", c.body);
    for missing in ["/v2/disputes/dp_nothere", "/v2/disputes/po_wrongkind"] {
        let r = app.get(missing, app.sk()).await;
        assert_eq!(r.status, 404, "{}", r.body);
        assert_eq!(r.body["error"]["code"], "resource_missing");
    }
    let r = app.get("/v2/disputes?status=lost", app.sk()).await;
    assert_eq!(r.status, 400, "{}", r.body);
    // Another account's dispute does not exist for this one; nor in live mode.
    let live = app.get(&path, app.sk_live()).await;
    assert_eq!(live.status, 404, "{}", live.body);
    let d = app.get(&path, app.sk()).await;
    assert_eq!(d.body["status"], "needs_response", "nothing changed it");
}
