//! The processor's own books that localstripe 1.15.10 lacks, added by [`super::Additions`] as
//! Stripe documents them (the `stripe/openapi` spec's `dispute`, `payout` and
//! `balance_transaction`):
//! - **Disputes.** [`super::LocalStripe::open_dispute`] opens one on a PaymentIntent's charge, as
//!   a cardholder's bank would (`needs_response`, evidence due in 7 days), withdrawing the
//!   amount and Stripe's 15.00 dispute fee in one `adjustment` balance transaction (reporting
//!   category `dispute`); [`super::LocalStripe::close_dispute`] decides it: won gives the amount
//!   and the fee back in a second transaction (`dispute_reversal`), lost adds none. Served as
//!   `GET /v1/disputes?payment_intent=` and `GET /v1/disputes/{id}`, the balance transactions
//!   expanded in the dispute.
//! - **Payouts.** [`super::LocalStripe::pay_out`] makes one from the Stripe balance, with its
//!   `payout` balance transaction; [`super::LocalStripe::set_payout`] moves it on (`in_transit`,
//!   `paid`, `failed` with a `payout_failure` transaction giving the money back). Served as
//!   `GET /v1/payouts?created[gte]=` (newest first) and `GET /v1/payouts/{id}`.
//! - `GET /v1/balance_transactions/{id}` of all of these.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use serde_json::{json, Value};

/// Stripe's dispute fee (US).
pub const DISPUTE_FEE: i64 = 1500;

/// What the additions keep of the processor's own books.
#[derive(Default)]
pub struct Books {
    disputes: Mutex<Vec<Value>>,
    payouts: Mutex<Vec<Value>>,
    transactions: Mutex<HashMap<String, Value>>,
    next: AtomicU64,
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

fn not_found(what: &str, id: &str) -> (u16, Value) {
    (
        404,
        json!({"error": {"type": "invalid_request_error", "code": "resource_missing",
                         "message": format!("No such {what}: '{id}'")}}),
    )
}

fn list(url: &str, data: Vec<Value>) -> Value {
    json!({"object": "list", "url": url, "has_more": false, "data": data})
}

impl Books {
    fn id(&self, prefix: &str) -> String {
        format!(
            "{prefix}_books{:016}",
            self.next.fetch_add(1, Ordering::SeqCst)
        )
    }

    /// A balance transaction of `amount` and `fee`, kept for `GET /v1/balance_transactions`.
    fn transaction(
        &self,
        kind: &str,
        category: &str,
        source: &str,
        amount: i64,
        fee: i64,
        fee_description: &str,
    ) -> Value {
        let id = self.id("txn");
        let fee_details = match fee {
            0 => json!([]),
            _ => json!([{"amount": fee, "application": null, "currency": "usd",
                         "description": fee_description, "type": "stripe_fee"}]),
        };
        let txn = json!({
            "id": id, "object": "balance_transaction", "amount": amount, "currency": "usd",
            "fee": fee, "fee_details": fee_details, "net": amount - fee, "type": kind,
            "reporting_category": category, "source": source, "status": "available",
            "available_on": now(), "created": now(), "description": null, "exchange_rate": null,
        });
        self.transactions.lock().unwrap().insert(id, txn.clone());
        txn
    }

    /// Opens a dispute of `amount` on `charge` of the PaymentIntent `pi`.
    pub fn open_dispute(&self, pi: &str, charge: &str, amount: i64) -> Value {
        let id = self.id("dp");
        let withdrawal = self.transaction(
            "adjustment",
            "dispute",
            &id,
            -amount,
            DISPUTE_FEE,
            "Dispute fee",
        );
        let dispute = json!({
            "id": id, "object": "dispute", "amount": amount, "currency": "usd",
            "charge": charge, "payment_intent": pi, "reason": "fraudulent",
            "status": "needs_response", "is_charge_refundable": false, "livemode": false,
            "created": now(), "metadata": {}, "evidence": {},
            "evidence_details": {"due_by": now() + 7 * 86_400, "has_evidence": false,
                                 "past_due": false, "submission_count": 0},
            "balance_transactions": [withdrawal],
        });
        self.disputes.lock().unwrap().push(dispute.clone());
        dispute
    }

    /// Decides dispute `id`.
    pub fn close_dispute(&self, id: &str, won: bool) -> Value {
        let reversal = won.then(|| {
            let amount = self.find(&self.disputes, id)["amount"].as_i64().unwrap();
            self.transaction(
                "adjustment",
                "dispute_reversal",
                id,
                amount,
                -DISPUTE_FEE,
                "Dispute fee",
            )
        });
        let mut disputes = self.disputes.lock().unwrap();
        let d = disputes
            .iter_mut()
            .find(|d| d["id"] == id)
            .expect("dispute");
        d["status"] = Value::from(if won { "won" } else { "lost" });
        if let Some(r) = reversal {
            d["balance_transactions"].as_array_mut().unwrap().push(r);
        }
        d.clone()
    }

    /// Pays `amount` out of the Stripe balance.
    pub fn pay_out(&self, amount: i64) -> Value {
        let id = self.id("po");
        let txn = self.transaction("payout", "payout", &id, -amount, 0, "");
        let payout = json!({
            "id": id, "object": "payout", "amount": amount, "currency": "usd",
            "arrival_date": now() + 2 * 86_400, "automatic": true,
            "balance_transaction": txn["id"], "created": now(), "description": "STRIPE PAYOUT",
            "destination": "ba_books", "failure_balance_transaction": null,
            "failure_code": null, "failure_message": null, "livemode": false, "metadata": {},
            "method": "standard", "source_type": "card", "status": "pending",
            "type": "bank_account",
        });
        self.payouts.lock().unwrap().push(payout.clone());
        payout
    }

    /// Moves payout `id` to `status`; `failed` gives its money back.
    pub fn set_payout(&self, id: &str, status: &str) -> Value {
        let failure = (status == "failed").then(|| {
            let amount = self.find(&self.payouts, id)["amount"].as_i64().unwrap();
            self.transaction("payout_failure", "payout_reversal", id, amount, 0, "")
        });
        let mut payouts = self.payouts.lock().unwrap();
        let p = payouts.iter_mut().find(|p| p["id"] == id).expect("payout");
        p["status"] = Value::from(status);
        if let Some(f) = failure {
            p["failure_balance_transaction"] = f["id"].clone();
            p["failure_code"] = Value::from("account_closed");
            p["failure_message"] = Value::from("The bank account has been closed.");
        }
        p.clone()
    }

    fn find(&self, objects: &Mutex<Vec<Value>>, id: &str) -> Value {
        objects
            .lock()
            .unwrap()
            .iter()
            .find(|o| o["id"] == id)
            .cloned()
            .expect(id)
    }

    /// The answer to `GET path?query` when it is about these books.
    pub fn answer(&self, path: &str, query: &str) -> Option<(u16, Value)> {
        let param = |name: &str| {
            form_urlencoded::parse(query.as_bytes())
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.into_owned())
        };
        let one = |objects: &Mutex<Vec<Value>>, what: &str, id: &str| match objects
            .lock()
            .unwrap()
            .iter()
            .find(|o| o["id"] == id)
        {
            Some(o) => (200, o.clone()),
            None => not_found(what, id),
        };
        if path == "/v1/disputes" {
            let pi = param("payment_intent");
            let found = self
                .disputes
                .lock()
                .unwrap()
                .iter()
                .filter(|d| pi.as_deref().is_none_or(|pi| d["payment_intent"] == pi))
                .cloned()
                .collect();
            return Some((200, list(path, found)));
        }
        if path == "/v1/payouts" {
            let since = param("created[gte]")
                .and_then(|s| s.parse::<i64>().ok())
                .unwrap_or(0);
            let mut found: Vec<Value> = self
                .payouts
                .lock()
                .unwrap()
                .iter()
                .filter(|p| p["created"].as_i64().unwrap() >= since)
                .cloned()
                .collect();
            found.reverse();
            return Some((200, list(path, found)));
        }
        if let Some(id) = path.strip_prefix("/v1/disputes/") {
            return Some(one(&self.disputes, "dispute", id));
        }
        if let Some(id) = path.strip_prefix("/v1/payouts/") {
            return Some(one(&self.payouts, "payout", id));
        }
        let id = path.strip_prefix("/v1/balance_transactions/")?;
        let txn = self.transactions.lock().unwrap().get(id).cloned()?;
        Some((200, txn))
    }
}
