//! What a connector's processor books of its own (CONTRACT §15) reaching Tender: disputes
//! opened at the processor, mirrored with their deadline and the processor's own transactions
//! (by the payment's watch, and at once by the processor's webhook), and the processor's
//! payouts, mirrored read-only. Against localstripe with the harness's additions
//! (`tests/support/stripe_books.rs`): Stripe's disputes and payouts, as Stripe documents them.

use serde_json::{json, Value};

use crate::connectors::{
    captured_in_part, events_about, post_webhook, reconcile_all, refund_at_processor, setup,
    stripe_connector, stripe_signature,
};
use crate::helpers::TestApp;
use crate::localstripe::books::DISPUTE_FEE;
use crate::localstripe::{stripe_fee, LocalStripe, STRIPE_KEY};

const SECRET: &str = "whsec_processor_books_connector_test";

/// The disputes of payment `id`, as Tender lists them.
async fn disputes_of(app: &TestApp, id: &str) -> Vec<Value> {
    app.get(&format!("/v2/disputes?payment={id}&limit=100"), app.sk())
        .await
        .body["data"]
        .as_array()
        .unwrap()
        .clone()
}

/// What the processor holds for the merchant, as Tender's balance says (pending + available).
async fn at_processor(app: &TestApp) -> i64 {
    let balance = app.get("/v2/balance", app.sk()).await;
    let sum = |k: &str| {
        balance.body["processors"][k]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["amount"].as_i64().unwrap())
            .sum::<i64>()
    };
    sum("available") + sum("pending")
}

/// Runs the payments' watches (and anything else due) a few hours on.
async fn watch(app: &TestApp) {
    app.clock.advance(4 * 3600);
    app.services.run_due_tasks(100).await.unwrap();
}

fn reference_of(payment: &crate::helpers::Answer) -> String {
    payment.body["connector_reference"]
        .as_str()
        .unwrap()
        .to_string()
}

#[tokio::test]
async fn a_dispute_opened_at_the_processor_is_mirrored_once_with_the_processors_money() {
    let Some((app, stripe)) = setup().await else {
        return;
    };
    let conn = stripe_connector(&app, &stripe.base, 0, true).await;
    let paid = app.pay(app.sk(), "4242424242424242", 3000).await;
    let id = paid.id();
    let opened = stripe.open_dispute(&reference_of(&paid), 3000).await;
    watch(&app).await;
    let disputes = disputes_of(&app, &id).await;
    assert_eq!(disputes.len(), 1, "{disputes:?}");
    let dispute = &disputes[0];
    let dp = dispute["id"].as_str().unwrap().to_string();
    assert_eq!(dispute["connector_reference"], opened["id"]);
    assert_eq!(dispute["status"], "needs_response");
    assert_eq!(dispute["amount"], 3000);
    assert_eq!(dispute["reason"], "fraudulent");
    assert_eq!(
        dispute["evidence_details"]["due_by"],
        opened["evidence_details"]["due_by"]
    );
    let withdrawal = &dispute["balance_transactions"][0];
    assert_eq!(withdrawal["amount"], -3000);
    assert_eq!(withdrawal["fee"], DISPUTE_FEE);
    assert_eq!(withdrawal["net"], -3000 - DISPUTE_FEE);
    assert_eq!(withdrawal["connector"], conn.as_str());
    let payment = app.get(&format!("/v2/payments/{id}"), app.sk()).await;
    assert_eq!(payment.body["disputed"], true);
    assert_eq!(
        at_processor(&app).await,
        3000 - stripe_fee(3000) - 3000 - DISPUTE_FEE
    );
    // It is answered at the processor, not here.
    for (path, body) in [
        (
            format!("/v2/disputes/{dp}"),
            json!({"evidence": {"uncategorized_text": "winning_evidence"}}),
        ),
        (format!("/v2/disputes/{dp}"), json!({"submit": true})),
        (format!("/v2/disputes/{dp}/close"), json!({})),
    ] {
        let refused = app.post(&path, app.sk(), body).await;
        assert_eq!(refused.status, 400, "{}", refused.body);
        assert_eq!(refused.body["error"]["code"], "dispute_at_processor");
    }
    // The processor decides for the merchant: the amount and its fee come back.
    stripe.close_dispute(opened["id"].as_str().unwrap(), true);
    for _ in 0..3 {
        watch(&app).await;
    }
    let disputes = disputes_of(&app, &id).await;
    assert_eq!(disputes.len(), 1);
    assert_eq!(disputes[0]["status"], "won");
    assert_eq!(
        disputes[0]["balance_transactions"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert_eq!(at_processor(&app).await, 3000 - stripe_fee(3000));
    assert_eq!(events_about(&app, "dispute.created", &dp).await, 1);
    assert_eq!(events_about(&app, "dispute.closed", &dp).await, 1);
    assert!(app.ledger_problems().await.is_empty());
}

#[tokio::test]
async fn the_processors_dispute_webhook_brings_it_at_once_and_a_lost_one_leaves_the_ledger() {
    let Some((app, stripe)) = setup().await else {
        return;
    };
    let conn = app
        .post(
            "/v2/connectors",
            app.sk(),
            json!({"type": "stripe", "api_key": STRIPE_KEY, "api_base": stripe.base,
                   "raw_card_data": true, "webhook_secret": SECRET}),
        )
        .await
        .id();
    let paid = app.pay(app.sk(), "4242424242424242", 2000).await;
    assert_eq!(paid.body["connector"], conn.as_str(), "{}", paid.body);
    let id = paid.id();
    let opened = stripe.open_dispute(&reference_of(&paid), 1200).await;
    // Stripe's `charge.dispute.created` names the PaymentIntent, not Tender's payment: Tender
    // reads the payment from the processor, then the processor's disputes of it.
    let hint = |object: &Value, kind: &str| {
        serde_json::to_vec(&json!({"id": "evt_books", "object": "event", "type": kind,
                                   "data": {"object": object}}))
        .unwrap()
    };
    let body = hint(&opened, "charge.dispute.created");
    let now = app.services.now();
    let sent = post_webhook(
        &app,
        &conn,
        &body,
        Some(&stripe_signature(SECRET, now, &body)),
    )
    .await;
    assert_eq!(sent.status, 200, "{}", sent.body);
    let disputes = disputes_of(&app, &id).await;
    assert_eq!(disputes.len(), 1, "at once, without a watch: {disputes:?}");
    assert_eq!(disputes[0]["amount"], 1200);
    // A forged one about a dispute changes nothing.
    let forged = hint(
        &json!({"object": "dispute", "payment_intent": reference_of(&paid)}),
        "charge.dispute.created",
    );
    let refused = post_webhook(
        &app,
        &conn,
        &forged,
        Some(&stripe_signature("whsec_other", now, &forged)),
    )
    .await;
    assert_eq!(refused.status, 400);
    // Lost at the processor: Tender follows, and the withheld amount leaves for good.
    let lost = stripe.close_dispute(opened["id"].as_str().unwrap(), false);
    let body = hint(&lost, "charge.dispute.closed");
    post_webhook(
        &app,
        &conn,
        &body,
        Some(&stripe_signature(SECRET, now, &body)),
    )
    .await;
    let disputes = disputes_of(&app, &id).await;
    assert_eq!(disputes[0]["status"], "lost");
    assert_eq!(
        at_processor(&app).await,
        2000 - stripe_fee(2000) - 1200 - DISPUTE_FEE
    );
    // The same webhook again, and the watch: nothing more.
    let closed = body.clone();
    refunded_at_once(&app, &stripe, &conn).await;
    let body = closed;
    post_webhook(
        &app,
        &conn,
        &body,
        Some(&stripe_signature(SECRET, now, &body)),
    )
    .await;
    watch(&app).await;
    let dp = disputes[0]["id"].as_str().unwrap();
    assert_eq!(events_about(&app, "dispute.closed", dp).await, 1);
    assert_eq!(disputes_of(&app, &id).await.len(), 1);
    assert!(app.ledger_problems().await.is_empty());
}

/// A refund made in the processor's dashboard and told by `charge.refunded` (which names the
/// PaymentIntent) is recorded at once.
async fn refunded_at_once(app: &TestApp, stripe: &LocalStripe, conn: &str) {
    let paid = app.pay(app.sk(), "4242424242424242", 1500).await;
    let refund = refund_at_processor(stripe, &paid, 300).await;
    let charge = json!({"object": "charge", "id": "ch_1", "payment_intent": reference_of(&paid)});
    let body = serde_json::to_vec(&json!({"id": "evt_refunded", "object": "event",
        "type": "charge.refunded", "data": {"object": charge}}))
    .unwrap();
    let signature = stripe_signature(SECRET, app.services.now(), &body);
    let sent = post_webhook(app, conn, &body, Some(&signature)).await;
    assert_eq!(sent.status, 200, "{}", sent.body);
    let refunds = crate::connectors::refunds_of(app, &paid.id()).await;
    assert_eq!(refunds.len(), 1, "{refunds:?}");
    assert_eq!(refunds[0]["connector_reference"], refund["id"]);
    assert_eq!(refunds[0]["amount"], 300);
}

/// Tender's payout mirroring the processor's `reference`, when there is one.
async fn mirrored(app: &TestApp, reference: &Value) -> Option<Value> {
    let list = app.get("/v2/payouts?limit=100", app.sk()).await;
    list.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["connector_reference"] == *reference)
        .cloned()
}

/// Runs the connectors' payout mirrors (each hour).
async fn mirror(app: &TestApp) {
    app.clock.advance(3600);
    app.services.run_due_tasks(100).await.unwrap();
}

#[tokio::test]
async fn the_processors_payouts_are_mirrored_read_only_and_tender_pays_out_only_its_own_money() {
    let Some((app, stripe)) = setup().await else {
        return;
    };
    let conn = stripe_connector(&app, &stripe.base, 0, true).await;
    app.pay(app.sk(), "4242424242424242", 5000).await;
    mirror(&app).await;
    let held = 5000 - stripe_fee(5000);
    assert_eq!(at_processor(&app).await, held);
    // Tender holds none of it: its own payouts cannot spend the processor's money.
    let own = app
        .post(
            "/v2/payouts",
            app.sk(),
            json!({"amount": 1000, "currency": "usd",
                   "destination": {"iban": "DE89370400440532013000", "account_holder_name": "Shop"}}),
        )
        .await;
    assert_eq!(own.status, 400, "{}", own.body);
    assert_eq!(own.body["error"]["code"], "balance_insufficient");
    // Stripe pays out on its own schedule; Tender mirrors it.
    let paid_out = stripe.pay_out(2000);
    let failing = stripe.pay_out(1000);
    let too_much = stripe.pay_out(held + 1);
    mirror(&app).await;
    let p = mirrored(&app, &paid_out["id"]).await.expect("mirrored");
    assert_eq!(p["status"], "pending");
    assert_eq!(p["connector"], conn.as_str());
    assert_eq!(p["destination"], Value::Null);
    assert_eq!(p["amount"], 2000);
    assert!(mirrored(&app, &failing["id"]).await.is_some());
    assert!(
        mirrored(&app, &too_much["id"]).await.is_none(),
        "more than Tender booked at the processor is not booked"
    );
    assert_eq!(at_processor(&app).await, held - 3000);
    let id = p["id"].as_str().unwrap().to_string();
    let cancel = app
        .post(&format!("/v2/payouts/{id}/cancel"), app.sk(), json!({}))
        .await;
    assert_eq!(cancel.status, 400, "{}", cancel.body);
    assert_eq!(cancel.body["error"]["code"], "payout_at_processor");
    // It moves as Stripe's does: paid; the other fails and its money comes back.
    stripe.set_payout(paid_out["id"].as_str().unwrap(), "in_transit");
    stripe.set_payout(failing["id"].as_str().unwrap(), "in_transit");
    mirror(&app).await;
    stripe.set_payout(paid_out["id"].as_str().unwrap(), "paid");
    stripe.set_payout(failing["id"].as_str().unwrap(), "failed");
    mirror(&app).await;
    mirror(&app).await;
    let p = mirrored(&app, &paid_out["id"]).await.unwrap();
    assert_eq!(p["status"], "paid");
    let f = mirrored(&app, &failing["id"]).await.unwrap();
    assert_eq!(f["status"], "failed");
    assert_eq!(f["failure_code"], "account_closed");
    assert_eq!(at_processor(&app).await, held - 2000);
    for (kind, payout) in [
        ("payout.created", &p),
        ("payout.updated", &p),
        ("payout.paid", &p),
        ("payout.failed", &f),
    ] {
        assert_eq!(
            events_about(&app, kind, payout["id"].as_str().unwrap()).await,
            1,
            "{kind}"
        );
    }
    // Stripe's own API shows the mirror as Stripe's automatic payout.
    let v1 = app.get(&format!("/v1/payouts/{id}"), app.sk()).await;
    assert_eq!(v1.body["automatic"], true, "{}", v1.body);
    assert!(app.ledger_problems().await.is_empty());
    let rows = reconcile_all(&app, &conn).await;
    let kinds: Vec<&str> = rows.iter().map(|r| r.kind.as_str()).collect();
    assert_eq!(
        kinds,
        ["charge", "payout", "payout", "payout_failure"],
        "{rows:?}"
    );
    for r in &rows {
        assert_eq!(r.problem, None, "{r:?}");
    }
}

#[tokio::test]
async fn over_a_run_with_a_dispute_and_changes_at_the_processor_tenders_books_agree_to_the_cent() {
    let Some((app, stripe)) = setup().await else {
        return;
    };
    let conn = stripe_connector(&app, &stripe.base, 0, true).await;
    // Captures (one partial), refunds through Tender and at the processor, two disputes (one
    // won, one lost), a payout.
    let paid = app.pay(app.sk(), "4242424242424242", 4000).await;
    let other = app.pay(app.sk(), "4242424242424242", 2500).await;
    captured_in_part(&app, 1000, 700).await;
    app.post(
        "/v2/refunds",
        app.sk(),
        json!({"payment": paid.id(), "amount": 500}),
    )
    .await;
    refund_at_processor(&stripe, &paid, 300).await;
    let won = stripe.open_dispute(&reference_of(&paid), 1000).await;
    let lost = stripe.open_dispute(&reference_of(&other), 2500).await;
    watch(&app).await;
    stripe.close_dispute(won["id"].as_str().unwrap(), true);
    stripe.close_dispute(lost["id"].as_str().unwrap(), false);
    let payout = stripe.pay_out(1500);
    for _ in 0..3 {
        watch(&app).await;
    }
    stripe.set_payout(payout["id"].as_str().unwrap(), "paid");
    watch(&app).await;
    assert!(app.ledger_problems().await.is_empty());
    let rows = reconcile_all(&app, &conn).await;
    let mut kinds: Vec<&str> = rows.iter().map(|r| r.kind.as_str()).collect();
    kinds.sort();
    assert_eq!(
        kinds,
        [
            "adjustment",
            "adjustment",
            "adjustment",
            "charge",
            "charge",
            "charge",
            "payout",
            "refund",
            "refund"
        ],
        "{rows:?}"
    );
    for r in &rows {
        assert_eq!(r.problem, None, "{r:?}");
        assert_eq!(
            r.processor.as_ref().map(|(_, f)| *f),
            Some(r.tender),
            "{r:?}"
        );
    }
    // What Tender says the processor holds is the sum of the processor's own transactions.
    let theirs: i64 = rows
        .iter()
        .map(|r| r.processor.as_ref().unwrap().1[2])
        .sum();
    assert_eq!(at_processor(&app).await, theirs);
    assert_eq!(
        theirs,
        4000 + 2500 + 700
            - stripe_fee(4000)
            - stripe_fee(2500)
            - stripe_fee(700)
            - 800
            - 2500
            - DISPUTE_FEE
            - 1500
    );
}
