//! The clients' workload: the operations they send (pay, capture, refund, each under its own
//! idempotency key), what the server acknowledged of them, and the retry of what it never answered.

use crate::{Client, Outcome};
use anyhow::bail;
use rand::Rng;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// What a client asked for, and what the server acknowledged.
#[derive(Clone, Debug)]
pub(crate) enum Op {
    Pay {
        key: String,
        amount: i64,
        capture: bool,
    },
    Capture {
        key: String,
        payment_key: String,
        amount: i64,
    },
    Refund {
        key: String,
        payment_key: String,
        amount: i64,
    },
}

impl Op {
    pub(crate) fn key(&self) -> &str {
        match self {
            Op::Pay { key, .. } | Op::Capture { key, .. } | Op::Refund { key, .. } => key,
        }
    }
}

#[derive(Default)]
pub(crate) struct Ledger {
    /// Payment id per payment key, once acknowledged.
    pub(crate) payments: HashMap<String, String>,
    /// Acknowledged response bodies per request key.
    pub(crate) acked: HashMap<String, Value>,
    /// Requests sent but not answered (the server died): retried after the restart.
    pub(crate) unanswered: Vec<Op>,
    /// Payments available for capture (manual, acknowledged, not captured yet).
    pub(crate) capturable: Vec<String>,
    /// Payments that can be refunded (captured) with what is left, as the client believes.
    pub(crate) refundable: Vec<(String, i64)>,
}

pub(crate) fn body_for(op: &Op, ledger: &Ledger) -> Option<(String, Value)> {
    match op {
        Op::Pay {
            key,
            amount,
            capture,
        } => Some((
            "/payments".into(),
            json!({"amount": amount, "currency": "usd", "capture": capture, "metadata": {"chaos_key": key},
                   "payment_method": {"type": "card", "card": {"number": "4242424242424242", "exp_month": 12, "exp_year": 2035, "cvc": "123"}}}),
        )),
        Op::Capture {
            payment_key,
            amount,
            ..
        } => {
            let id = ledger.payments.get(payment_key)?;
            Some((format!("/payments/{id}/capture"), json!({"amount": amount})))
        }
        Op::Refund {
            payment_key,
            amount,
            ..
        } => {
            let id = ledger.payments.get(payment_key)?;
            Some((
                "/refunds".into(),
                json!({"payment": id, "amount": amount, "metadata": {"chaos_key": op.key()}}),
            ))
        }
    }
}

/// Records an answer; returns false when the request must be retried (409 in flight, 5xx).
pub(crate) fn record(op: &Op, status: u16, body: Value, ledger: &mut Ledger) -> bool {
    if status == 409 || status >= 500 {
        return false;
    }
    match op {
        Op::Pay {
            key,
            capture,
            amount,
        } if status == 200 => {
            let id = body["id"].as_str().unwrap_or_default().to_string();
            ledger.payments.insert(key.clone(), id);
            if *capture {
                ledger.refundable.push((key.clone(), *amount));
            } else {
                ledger.capturable.push(key.clone());
            }
        }
        Op::Capture {
            payment_key,
            amount,
            ..
        } if status == 200 => ledger.refundable.push((payment_key.clone(), *amount)),
        _ => {}
    }
    ledger.acked.insert(
        op.key().to_string(),
        json!({"status": status, "body": body}),
    );
    true
}

/// The next operation a client does, chosen at random from what the ledger allows.
pub(crate) fn next_op(ledger: &mut Ledger, rng: &mut impl Rng, n: &mut u64, client: usize) -> Op {
    *n += 1;
    let key = format!("c{client}-{n}-{}", rng.gen::<u32>());
    let roll = rng.gen_range(0..10);
    if roll < 2 {
        if let Some(pk) = (!ledger.capturable.is_empty()).then(|| {
            ledger
                .capturable
                .swap_remove(rng.gen_range(0..ledger.capturable.len()))
        }) {
            return Op::Capture {
                key,
                payment_key: pk,
                amount: rng.gen_range(500..=1000),
            };
        }
    }
    if roll < 5 && !ledger.refundable.is_empty() {
        let i = rng.gen_range(0..ledger.refundable.len());
        let (pk, left) = ledger.refundable[i].clone();
        // Sometimes ask for more than is left: the server must refuse, never over-refund.
        let amount = rng.gen_range(1..=(left / 2).max(1) + 50);
        if amount >= left {
            ledger.refundable.swap_remove(i);
        } else {
            ledger.refundable[i].1 = left - amount;
        }
        return Op::Refund {
            key,
            payment_key: pk,
            amount,
        };
    }
    Op::Pay {
        key,
        amount: rng.gen_range(1000..5000),
        capture: rng.gen_bool(0.7),
    }
}

/// Retries every unanswered request with its key until the server answers it. A 409 means
/// the killed process's claim on the key is still held; it is retried until the claim expires.
pub(crate) async fn retry_unanswered(
    client: &Client,
    base: &str,
    ledger: &Mutex<Ledger>,
) -> anyhow::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(180);
    loop {
        let pending: Vec<Op> =
            std::mem::take(&mut ledger.lock().unwrap_or_else(|e| e.into_inner()).unanswered);
        if pending.is_empty() {
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!("{} requests never got an answer", pending.len());
        }
        let mut again = Vec::new();
        for op in pending {
            let req = body_for(&op, &ledger.lock().unwrap_or_else(|e| e.into_inner()));
            let Some((path, body)) = req else {
                again.push(op);
                continue;
            };
            match client.post(base, &path, op.key(), &body).await {
                Outcome::Answered(status, v) => {
                    let mut l = ledger.lock().unwrap_or_else(|e| e.into_inner());
                    l.acked
                        .entry(format!("retried:{}", op.key()))
                        .or_insert(json!(null));
                    if !record(&op, status, v, &mut l) {
                        again.push(op);
                    }
                }
                Outcome::Lost => again.push(op),
            }
        }
        if !again.is_empty() {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        ledger
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .unanswered
            .extend(again);
    }
}
