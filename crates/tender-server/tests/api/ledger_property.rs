//! The ledger as a property (CONTRACT §9): random sequences of payments (captured at once or
//! later, some on the disputed card), refunds (some for more than is left), payouts (some for
//! more than is available, some to the failing IBAN, some canceled), dispute answers and the
//! passing of time, with every invariant checked after each step (`BalanceBook::verify_ledger`,
//! what `tender ledger verify` runs) and the API's own figures cross-checked: `GET /balance`
//! against the sum of every transaction's `net`, and the available balance never driven below
//! zero by a payout.
//!
//! Seeds are fixed, so a failure names a sequence that replays. `TENDER_LEDGER_CASES` sets how
//! many sequences run (default 6 of 30 steps; the long run in docs/reliability.md uses more).

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};

use crate::balance::assert_ledger_holds;
use crate::helpers::*;

const STEPS: usize = 30;
const IBAN: &str = "DE89370400440532013000";

fn cases() -> u64 {
    std::env::var("TENDER_LEDGER_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(6)
}

/// Every transaction of the test mode, newest first.
async fn all_transactions(app: &TestApp) -> Vec<Value> {
    let mut out = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let path = match &after {
            Some(id) => format!("/v2/balance_transactions?limit=100&starting_after={id}"),
            None => "/v2/balance_transactions?limit=100".to_string(),
        };
        let page = app.get(&path, app.sk()).await;
        assert_eq!(page.status, 200, "{}", page.body);
        let data = page.body["data"].as_array().unwrap().clone();
        after = data.last().map(|t| t["id"].as_str().unwrap().to_string());
        out.extend(data);
        if page.body["has_more"] != true {
            return out;
        }
    }
}

/// The usd figures of `GET /balance`: (available, pending).
async fn usd_balance(app: &TestApp) -> (i64, i64) {
    let b = app.get("/v2/balance", app.sk()).await;
    let pick = |k: &str| {
        b.body[k]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["currency"] == "usd")
            .map_or(0, |e| e["amount"].as_i64().unwrap())
    };
    (pick("available"), pick("pending"))
}

/// The API's figures agree with its transactions, and the ledger holds.
///
/// The app is stepped (no task runner of its own), so nothing commits while the figures are
/// read; still, two API reads are not one snapshot, so the balance is read between two reads of
/// the transactions and compared only when they did not change around it: each batch moves a
/// transaction and its posting together, so then the two must agree exactly.
async fn check(app: &TestApp, seed: u64, step: usize, what: &str) {
    let mut txns = all_transactions(app).await;
    let mut reads = 0;
    let (available, pending) = loop {
        let balance = usd_balance(app).await;
        let again = all_transactions(app).await;
        if again == txns {
            break balance;
        }
        reads += 1;
        assert!(
            reads < 100,
            "seed {seed} step {step}: transactions never settle"
        );
        txns = again;
    };
    let sum = |status: &str| -> i64 {
        txns.iter()
            .filter(|t| t["status"] == status)
            .map(|t| t["net"].as_i64().unwrap())
            .sum()
    };
    assert_eq!(
        (available, pending),
        (sum("available"), sum("pending")),
        "seed {seed} step {step} ({what})"
    );
    let scope = tender_core::auth::Scope {
        account: app.account.account.clone(),
        mode: tender_core::auth::Mode::Test,
    };
    let report = app.services.balance().verify_ledger(&scope).await.unwrap();
    assert!(
        report.differences.is_empty(),
        "seed {seed} step {step} ({what}): {:#?}",
        report.differences
    );
}

#[tokio::test]
async fn every_invariant_holds_after_every_step_of_random_sequences() {
    let mut steps_run = 0;
    let mut kinds: std::collections::BTreeMap<&str, usize> = Default::default();
    for seed in 0..cases() {
        // Stepped: no task runner of the server's own, so the tasks run only where a step runs
        // them, and no commit can land between the reads of a check.
        let Some(app) = spawn_stepped_app().await else {
            return;
        };
        let mut rng = StdRng::seed_from_u64(seed);
        let mut captured: Vec<(String, i64)> = Vec::new();
        let mut held: Vec<String> = Vec::new();
        let mut pending_payouts: Vec<String> = Vec::new();
        let failing_iban = tender_core::validate::iban::check_digits("DE", "370400440532013001")
            .map(|c| format!("DE{c}370400440532013001"))
            .unwrap();
        for step in 0..STEPS {
            let roll = rng.gen_range(0..100);
            let what;
            if roll < 30 || captured.is_empty() {
                let amount = rng.gen_range(100..20_000);
                let number = if rng.gen_bool(0.2) {
                    "4000000000000259"
                } else {
                    "4242424242424242"
                };
                let capture = rng.gen_bool(0.75);
                let p = app
                    .post(
                        "/v2/payments",
                        app.sk(),
                        json!({"amount": amount, "currency": "usd", "capture": capture,
                               "payment_method": card(number)}),
                    )
                    .await;
                assert_eq!(p.status, 200, "seed {seed} step {step}: {}", p.body);
                if capture {
                    captured.push((p.id(), amount));
                } else {
                    held.push(p.id());
                }
                what = "pay";
            } else if roll < 40 && !held.is_empty() {
                let id = held.swap_remove(rng.gen_range(0..held.len()));
                let p = app
                    .post(&format!("/v2/payments/{id}/capture"), app.sk(), json!({}))
                    .await;
                // The authorisation may have expired while time passed.
                assert!(
                    p.status == 200 || p.status == 400,
                    "seed {seed} step {step}: {}",
                    p.body
                );
                if p.status == 200 {
                    captured.push((id, p.body["amount_captured"].as_i64().unwrap()));
                }
                what = "capture";
            } else if roll < 60 {
                let (id, amount) = captured[rng.gen_range(0..captured.len())].clone();
                let ask = rng.gen_range(1..=amount * 2 / 3 + 100);
                let r = app
                    .post(
                        "/v2/refunds",
                        app.sk(),
                        json!({"payment": id, "amount": ask}),
                    )
                    .await;
                // Refused when more than is left, or the payment is disputed.
                if r.status == 400 {
                    let code = r.body["error"]["code"].as_str().unwrap();
                    assert!(
                        code == "amount_too_large" || code == "charge_disputed",
                        "seed {seed} step {step}: {}",
                        r.body
                    );
                } else {
                    assert_eq!(r.status, 200, "seed {seed} step {step}: {}", r.body);
                }
                what = "refund";
            } else if roll < 72 {
                let (available, _) = usd_balance(&app).await;
                let amount = rng.gen_range(50..=(available * 3 / 2).max(51));
                let iban = if rng.gen_bool(0.25) {
                    failing_iban.as_str()
                } else {
                    IBAN
                };
                let p = app
                    .post(
                        "/v2/payouts",
                        app.sk(),
                        json!({"amount": amount, "currency": "usd",
                               "destination": {"iban": iban, "account_holder_name": "Shop"}}),
                    )
                    .await;
                if amount > available {
                    assert_eq!(p.status, 400, "seed {seed} step {step}: {}", p.body);
                    assert_eq!(p.body["error"]["code"], "balance_insufficient");
                } else {
                    assert_eq!(p.status, 200, "seed {seed} step {step}: {}", p.body);
                    pending_payouts.push(p.id());
                }
                let (after, _) = usd_balance(&app).await;
                assert!(
                    after >= 0 || after >= available,
                    "seed {seed} step {step}: a payout took the balance from {available} to {after}"
                );
                what = "payout";
            } else if roll < 77 && !pending_payouts.is_empty() {
                let id = pending_payouts.swap_remove(rng.gen_range(0..pending_payouts.len()));
                let c = app
                    .post(&format!("/v2/payouts/{id}/cancel"), app.sk(), json!({}))
                    .await;
                // Only while pending: it may have moved on.
                assert!(
                    c.status == 200 || c.body["error"]["code"] == "payout_unexpected_state",
                    "seed {seed} step {step}: {}",
                    c.body
                );
                what = "cancel payout";
            } else if roll < 87 {
                let list = app.get("/v2/disputes?limit=100", app.sk()).await;
                let open: Vec<String> = list.body["data"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|d| d["status"] == "needs_response")
                    .map(|d| d["id"].as_str().unwrap().to_string())
                    .collect();
                if let Some(id) = open.first() {
                    let r = match rng.gen_range(0..3) {
                        0 => {
                            app.post(
                                &format!("/v2/disputes/{id}"),
                                app.sk(),
                                json!({"evidence": {"uncategorized_text": "winning_evidence"}, "submit": true}),
                            )
                            .await
                        }
                        1 => {
                            app.post(
                                &format!("/v2/disputes/{id}"),
                                app.sk(),
                                json!({"evidence": {"uncategorized_text": "sorry"}, "submit": true}),
                            )
                            .await
                        }
                        _ => {
                            app.post(&format!("/v2/disputes/{id}/close"), app.sk(), json!({}))
                                .await
                        }
                    };
                    assert_eq!(r.status, 200, "seed {seed} step {step}: {}", r.body);
                }
                what = "dispute";
            } else {
                app.clock.advance(rng.gen_range(1..5_000));
                for _ in 0..20 {
                    if app.services.run_due_tasks(100).await.unwrap() == 0 {
                        break;
                    }
                }
                what = "time passes";
            }
            check(&app, seed, step, what).await;
            steps_run += 1;
            *kinds.entry(what).or_default() += 1;
        }
        assert_ledger_holds(&app).await;
    }
    println!(
        "ledger property: {} sequences, {steps_run} steps ({kinds:?}), every invariant after each",
        cases()
    );
    // The sequences reached payouts and disputes, not only payments.
    assert!(
        kinds.contains_key("payout") && kinds.contains_key("dispute"),
        "{kinds:?}"
    );
}
