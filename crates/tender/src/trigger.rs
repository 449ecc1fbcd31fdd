//! `tender trigger EVENT_TYPE`: makes, in test mode and through the API as a merchant's code
//! would, the objects whose change produces that event (CONTRACT §11), prints each call, and
//! waits until the event exists. One recipe per event type ([`recipes`]): the list of
//! what can be triggered is `tender_core::event::EVENT_TYPES`, and a test makes sure every type
//! has a recipe.
//!
//! Events that follow a delay on the server (a bank transfer's settlement, a payout's arrival,
//! a charge becoming available, a dispute) are waited for, with a line saying which server
//! setting the wait depends on; events of a subscription's later life use a test clock, so
//! nothing waits for days.
//!
//! Depends on: `tender-client` (its generic [`Client::send`], retries and idempotency keys).

use std::time::{Duration, Instant};

use anyhow::{anyhow, bail};
use reqwest::Method;
use serde_json::{json, Value};
use tender_client::{Client, Error, RequestOptions};
use tender_core::clock::Clock;

use crate::api::explain;

mod recipes;
use recipes::{id, merged, note, run, About};

/// How long an event may take to appear (the longest recipe waits for a charge to become
/// available, 60 s by default in test mode, then for a payout's arrival).
const EVENT_WAIT: Duration = Duration::from_secs(300);
/// How often a wait looks again.
const POLL: Duration = Duration::from_millis(250);

/// A working test card, and cards that make the payment fail, saved-then-decline, or get
/// disputed (CONTRACT §4.2, §9, §10).
const CARD_OK: &str = "4242424242424242";
const CARD_DECLINED: &str = "4000000000000002";
const CARD_SAVES_THEN_DECLINES: &str = "4000000000000341";
const CARD_DISPUTED: &str = "4000000000000259";
/// A card that asks for 3-D Secure.
const CARD_AUTHENTICATES: &str = "4000002500003155";
/// Test IBANs: one that settles, one whose payouts fail.
const IBAN_OK: &str = "DE89370400440532013000";
const IBAN_FAILS: &str = "DE62370400440532013001";

const DAY: i64 = 86_400;

/// `tender trigger EVENT_TYPE` against the API at `api`.
pub async fn trigger(api: &str, api_key: &str, event_type: &str) -> anyhow::Result<()> {
    if !api_key.starts_with("sk_test_") {
        bail!(
            "tender trigger makes test-mode objects: give it a test secret key (sk_test_…), \
             not {}",
            key_kind(api_key)
        );
    }
    let calls = Calls {
        client: Client::new(api, api_key),
        api: api.to_string(),
    };
    // The key and the address are checked before anything is made.
    calls.get("/balance", &[]).await?;
    let started = Instant::now();
    let about = run(&calls, event_type).await?;
    let event = calls.wait_for_event(event_type, &about).await?;
    println!(
        "Trigger succeeded: {event_type} {} ({}) in {:.1} s",
        event["id"].as_str().unwrap_or_default(),
        about.value,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn key_kind(key: &str) -> &'static str {
    if key.starts_with("sk_live_") {
        "a live key"
    } else if key.starts_with("pk_") {
        "a publishable key"
    } else {
        "this key"
    }
}

/// The API calls recipes make, each printed as it is made.
struct Calls {
    client: Client,
    api: String,
}

impl Calls {
    async fn call(&self, method: Method, path: &str, body: Option<Value>) -> Result<Value, Error> {
        let query: &[(String, String)] = &[];
        self.client
            .send(
                method,
                path,
                query,
                body.as_ref(),
                &RequestOptions::default(),
            )
            .await
    }

    /// A call whose failure ends the trigger, printed with the id it made.
    async fn made(&self, method: Method, path: &str, body: Option<Value>) -> anyhow::Result<Value> {
        let shown = format!("{method} /v2{path}");
        match self.call(method, path, body).await {
            Ok(v) => {
                println!("{shown} -> {}", v["id"].as_str().unwrap_or("ok"));
                Ok(v)
            }
            Err(e) => Err(anyhow!("{shown}: {}", explain(&self.api, &e))),
        }
    }

    async fn post(&self, path: &str, body: Value) -> anyhow::Result<Value> {
        self.made(Method::POST, path, Some(body)).await
    }

    async fn delete(&self, path: &str) -> anyhow::Result<Value> {
        self.made(Method::DELETE, path, None).await
    }

    async fn get(&self, path: &str, query: &[(&str, &str)]) -> anyhow::Result<Value> {
        let query: Vec<(String, String)> = query
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        self.client
            .send(
                Method::GET,
                path,
                &query,
                None::<&()>,
                &RequestOptions::default(),
            )
            .await
            .map_err(|e| anyhow!(explain(&self.api, &e)))
    }

    /// A 20.00 usd card payment (with `extra` parameters).
    async fn pay(&self, card: &str, extra: Value) -> anyhow::Result<String> {
        let body = merged(
            json!({
                "amount": 2000,
                "currency": "usd",
                "description": "Made by tender trigger",
                "payment_method": {"type": "card", "card": {
                    "number": card, "exp_month": 12, "exp_year": 2040, "cvc": "123"}},
            }),
            extra,
        );
        id(self.post("/payments", body).await?)
    }

    /// A declined payment: the decline's 402 names the failed payment.
    async fn declined_payment(&self) -> anyhow::Result<String> {
        let body = json!({
            "amount": 2000,
            "currency": "usd",
            "payment_method": {"type": "card", "card": {
                "number": CARD_DECLINED, "exp_month": 12, "exp_year": 2040, "cvc": "123"}},
        });
        match self.call(Method::POST, "/payments", Some(body)).await {
            Err(Error::Api(e)) if e.status == 402 => {
                let pay = e
                    .payment
                    .clone()
                    .ok_or_else(|| anyhow!("the decline named no payment"))?;
                println!("POST /v2/payments -> {pay} (402 {})", e.code);
                Ok(pay)
            }
            Ok(v) => bail!("the test card {CARD_DECLINED} was not declined: {v}"),
            Err(e) => bail!("POST /v2/payments: {}", explain(&self.api, &e)),
        }
    }

    async fn bank_transfer(&self) -> anyhow::Result<String> {
        let body = json!({
            "amount": 2000,
            "currency": "eur",
            "payment_method": {"type": "bank_transfer", "bank_transfer": {
                "iban": IBAN_OK, "account_holder_name": "Jenny Rosen"}},
        });
        id(self.post("/payments", body).await?)
    }

    async fn customer(&self, extra: Value) -> anyhow::Result<String> {
        let body = merged(
            json!({"name": "Made by tender trigger", "email": "trigger@example.com"}),
            extra,
        );
        id(self.post("/customers", body).await?)
    }

    /// A new payment method of the test card `number`, attached to no one.
    async fn card(&self, number: &str) -> anyhow::Result<String> {
        id(self
            .post(
                "/payment_methods",
                json!({"type": "card", "card": {
                        "number": number, "exp_month": 12, "exp_year": 2040, "cvc": "123"}}),
            )
            .await?)
    }

    /// A customer (on `clock`, if given) with `card` saved.
    async fn customer_with_card(&self, card: &str, clock: Option<&str>) -> anyhow::Result<String> {
        let cus = self
            .customer(match clock {
                Some(clock) => json!({"test_clock": clock}),
                None => json!({}),
            })
            .await?;
        let pm = self.card(card).await?;
        self.post(
            &format!("/payment_methods/{pm}/attach"),
            json!({"customer": cus}),
        )
        .await?;
        Ok(cus)
    }

    async fn product(&self) -> anyhow::Result<String> {
        id(self
            .post("/products", json!({"name": "Made by tender trigger"}))
            .await?)
    }

    /// A monthly 10.00 usd price of a new product.
    async fn price(&self) -> anyhow::Result<String> {
        let product = self.product().await?;
        id(self
            .post(
                "/prices",
                json!({"product": product, "currency": "usd", "unit_amount": 1000,
                       "recurring": {"interval": "month"}}),
            )
            .await?)
    }

    /// A subscription of `customer` to a new monthly price.
    async fn subscribe(&self, customer: &str, extra: Value) -> anyhow::Result<Value> {
        let price = self.price().await?;
        let body = merged(
            json!({"customer": customer, "items": [{"price": price}]}),
            extra,
        );
        self.post("/subscriptions", body).await
    }

    /// A test clock frozen at the present; its id and time.
    async fn clock(&self) -> anyhow::Result<(String, i64)> {
        let now = tender_core::clock::SystemClock.now();
        let clock = self
            .post(
                "/test_helpers/test_clocks",
                json!({"frozen_time": now, "name": "tender trigger"}),
            )
            .await?;
        Ok((id(clock)?, now))
    }

    async fn advance(&self, clock: &str, to: i64) -> anyhow::Result<()> {
        self.post(
            &format!("/test_helpers/test_clocks/{clock}/advance"),
            json!({"frozen_time": to}),
        )
        .await?;
        Ok(())
    }

    /// A pending payout of 10.00 usd to `iban`, after making sure the balance can pay it.
    async fn payout(&self, iban: &str) -> anyhow::Result<String> {
        const AMOUNT: i64 = 1000;
        if self.available_usd().await? < AMOUNT {
            self.pay(CARD_OK, json!({})).await?;
            note("the charge to become available (the server's --balance-available-delay, 60 s by default in test mode)");
            let deadline = Instant::now() + EVENT_WAIT;
            while self.available_usd().await? < AMOUNT {
                if Instant::now() > deadline {
                    bail!(
                        "the balance did not become available within {} s",
                        EVENT_WAIT.as_secs()
                    );
                }
                tokio::time::sleep(POLL).await;
            }
        }
        id(self
            .post(
                "/payouts",
                json!({"amount": AMOUNT, "currency": "usd", "description": "Made by tender trigger",
                       "destination": {"iban": iban, "account_holder_name": "Jenny Rosen"}}),
            )
            .await?)
    }

    async fn available_usd(&self) -> anyhow::Result<i64> {
        let balance = self.get("/balance", &[]).await?;
        Ok(balance["available"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|b| b["currency"] == "usd")
            .and_then(|b| b["amount"].as_i64())
            .unwrap_or(0))
    }

    /// A payment on the card that is disputed a moment after it succeeds; the dispute's id.
    async fn dispute(&self) -> anyhow::Result<String> {
        let pay = self.pay(CARD_DISPUTED, json!({})).await?;
        note("the cardholder's bank to dispute the payment");
        let deadline = Instant::now() + EVENT_WAIT;
        loop {
            let page = self.get("/disputes", &[("payment", &pay)]).await?;
            if let Some(id) = page["data"][0]["id"].as_str() {
                println!("dispute -> {id}");
                return Ok(id.to_string());
            }
            if Instant::now() > deadline {
                bail!("{pay} was not disputed within {} s", EVENT_WAIT.as_secs());
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// Waits until the object at `path` has `field` = `value`.
    async fn wait_until(
        &self,
        path: &str,
        field: &str,
        value: &str,
        what: &str,
    ) -> anyhow::Result<()> {
        note(what);
        let deadline = Instant::now() + EVENT_WAIT;
        while self.get(path, &[]).await?[field] != value {
            if Instant::now() > deadline {
                bail!(
                    "{path} did not become {field} = {value} within {} s",
                    EVENT_WAIT.as_secs()
                );
            }
            tokio::time::sleep(POLL).await;
        }
        Ok(())
    }

    /// The event of `event_type` about `about`, once it exists.
    async fn wait_for_event(&self, event_type: &str, about: &About) -> anyhow::Result<Value> {
        let deadline = Instant::now() + EVENT_WAIT;
        loop {
            let page = self
                .get("/events", &[("type", event_type), ("limit", "100")])
                .await?;
            let found = page["data"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|e| e["data"]["object"][about.field] == about.value.as_str());
            if let Some(event) = found {
                return Ok(event.clone());
            }
            if Instant::now() > deadline {
                bail!(
                    "no {event_type} event about {} within {} s",
                    about.value,
                    EVENT_WAIT.as_secs()
                );
            }
            tokio::time::sleep(POLL).await;
        }
    }
}
