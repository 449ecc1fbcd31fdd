//! localstripe 1.15.10 (a stateful fake of Stripe's API) started for one test on 127.0.0.1
//! (`scripts/localstripe-server.py`), and a fault-injecting HTTP proxy to put in front of it:
//! the real third-party processor the connector tests talk to. Shared by the API suite
//! (`tests/api/connectors.rs`) and the binary's crash test (`crates/tender/tests/connectors.rs`).
//!
//! Tests reach localstripe through [`Additions`], a thin proxy adding what localstripe 1.15.10
//! lacks, each as Stripe documents it (the `stripe/openapi` spec's `balance_transaction`):
//! - **Fees.** localstripe books every charge with `fee: 0`; a charge's balance transaction is
//!   answered with Stripe's standard card pricing, 2.9% + 30 (rounded half up), as one
//!   `stripe_fee` fee detail ("Stripe processing fees"), and `net = amount − fee`.
//! - **Partial captures.** localstripe books the whole authorised amount and refunds the rest;
//!   Stripe books only what was captured (`amount_to_capture`) and releases the rest, refunding
//!   nothing: the charge's balance transaction is answered with that amount, and the refund
//!   localstripe made for the rest is left out of refund lists.
//! - **Off-session confirmations.** Stripe takes `off_session=true` on a PaymentIntent's
//!   confirmation (the customer is not there: an invoice); localstripe refuses the parameter.
//!   It is taken out before localstripe sees it and recorded ([`LocalStripe::off_session`]).
//! - **Disputes and payouts**, the processor's own books: see [`books`].
//! - It records the `Stripe-Version` of every request ([`LocalStripe::versions`]).
//!
//! Without Python's `localstripe` installed, [`LocalStripe::start`] prints `skipped: …` and
//! gives `None`, unless `TENDER_REQUIRE_LOCALSTRIPE=1` (CI sets it and installs it).

#![allow(dead_code)]

use std::process::Stdio;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::Response;
use reqwest::Method;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};

/// A localstripe process of this test, killed when dropped, behind its [`Additions`].
pub struct LocalStripe {
    /// The additions' address: where Tender's connector is pointed.
    pub base: String,
    /// localstripe's own address.
    pub raw_base: String,
    pub http: reqwest::Client,
    additions: Arc<Added>,
    _child: tokio::process::Child,
}

impl LocalStripe {
    /// Starts one, or `None` (the test skips) when Python's localstripe is not installed.
    pub async fn start() -> Option<Self> {
        let script = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../scripts/localstripe-server.py"
        );
        let spawned = tokio::process::Command::new("python3")
            .arg(script)
            .arg("0")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn();
        let mut child = match spawned {
            Ok(c) => c,
            Err(e) => return skip(&format!("python3: {e}")),
        };
        let stdout = child.stdout.take().expect("stdout");
        let mut lines = BufReader::new(stdout).lines();
        let line = tokio::time::timeout(std::time::Duration::from_secs(30), lines.next_line())
            .await
            .ok()
            .and_then(|l| l.ok().flatten());
        let Some(base) = line.and_then(|l| l.strip_prefix("listening on ").map(str::to_string))
        else {
            return skip("localstripe did not start (pip install localstripe==1.15.10)");
        };
        let additions = Arc::new(Added::default());
        Some(Self {
            base: Additions::start(&base, additions.clone()).await,
            raw_base: base,
            http: reqwest::Client::new(),
            additions,
            _child: child,
        })
    }

    /// From now on, every charge's balance transaction shows `extra` more in fees (and less
    /// net) than Stripe's pricing: a processor whose books no longer match Tender's.
    pub fn bump_fees(&self, extra: i64) {
        self.additions
            .fee_bump
            .store(extra, std::sync::atomic::Ordering::SeqCst);
    }

    /// The `Stripe-Version` header of every request that came through, in order (`""` when a
    /// request had none).
    pub fn versions(&self) -> Vec<String> {
        self.additions.versions.lock().unwrap().clone()
    }

    /// A read of localstripe's own state (not through the additions).
    pub async fn get(&self, path: &str) -> Value {
        self.http
            .get(format!("{}{path}", self.raw_base))
            .bearer_auth(STRIPE_KEY)
            .send()
            .await
            .expect("localstripe")
            .json()
            .await
            .expect("json")
    }

    pub async fn post(&self, path: &str, form: &[(&str, &str)]) -> Value {
        self.http
            .post(format!("{}{path}", self.raw_base))
            .bearer_auth(STRIPE_KEY)
            .form(form)
            .send()
            .await
            .expect("localstripe")
            .json()
            .await
            .expect("json")
    }

    /// Every PaymentIntent localstripe holds.
    pub async fn payment_intents(&self) -> Vec<Value> {
        self.get("/v1/payment_intents?limit=100").await["data"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }
}

impl LocalStripe {
    /// A cardholder's bank disputes `amount` of the PaymentIntent `pi` at Stripe: the dispute.
    pub async fn open_dispute(&self, pi: &str, amount: i64) -> Value {
        let intent = self.get(&format!("/v1/payment_intents/{pi}")).await;
        let charge = intent["latest_charge"]
            .as_str()
            .or_else(|| intent["charges"]["data"][0]["id"].as_str())
            .unwrap_or_default()
            .to_string();
        self.additions.books.open_dispute(pi, &charge, amount)
    }

    /// Whether the PaymentIntent `pi` was confirmed with `off_session=true`.
    pub fn off_session(&self, pi: &str) -> bool {
        self.additions
            .off_session
            .lock()
            .unwrap()
            .iter()
            .any(|p| p == pi)
    }

    /// Stripe decides dispute `id`.
    pub fn close_dispute(&self, id: &str, won: bool) -> Value {
        self.additions.books.close_dispute(id, won)
    }

    /// Stripe pays `amount` out of the merchant's balance there: the payout, `pending`.
    pub fn pay_out(&self, amount: i64) -> Value {
        self.additions.books.pay_out(amount)
    }

    /// Stripe's payout `id` moves to `status`.
    pub fn set_payout(&self, id: &str, status: &str) -> Value {
        self.additions.books.set_payout(id, status)
    }
}

#[path = "stripe_books.rs"]
pub mod books;

fn skip<T>(why: &str) -> Option<T> {
    if std::env::var("TENDER_REQUIRE_LOCALSTRIPE").as_deref() == Ok("1") {
        panic!("localstripe is required (TENDER_REQUIRE_LOCALSTRIPE=1): {why}");
    }
    eprintln!("skipped: {why}");
    None
}

pub const STRIPE_KEY: &str = "sk_test_tender_connector_tests";

/// What the fault proxy does to the requests it gets.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
pub enum Fault {
    /// Forward, answer.
    Pass = 0,
    /// Answer 503 without forwarding.
    ServerError = 1,
    /// Forward confirmations and lose their answer (the connection breaks after sending).
    LoseConfirmAnswers = 2,
    /// Forward confirmations and hold their answers until [`Proxy::release`].
    HoldConfirmAnswers = 3,
    /// Forward, but show every PaymentIntent read as still unconfirmed
    /// (`requires_confirmation`), as a read that raced its confirmation would.
    StaleReads = 4,
}

/// A fault-injecting HTTP proxy in front of a localstripe, on 127.0.0.1.
pub struct Proxy {
    pub base: String,
    fault: Arc<AtomicU8>,
    held: Arc<tokio::sync::Notify>,
}

/// What the proxy's handler shares.
type ProxyState = (
    String,
    Arc<AtomicU8>,
    reqwest::Client,
    Arc<tokio::sync::Notify>,
);

impl Proxy {
    pub async fn start(upstream: &str) -> Self {
        let fault = Arc::new(AtomicU8::new(Fault::Pass as u8));
        let held = Arc::new(tokio::sync::Notify::new());
        let state: ProxyState = (
            upstream.to_string(),
            fault.clone(),
            reqwest::Client::new(),
            held.clone(),
        );
        let app = axum::Router::new().fallback(forward).with_state(state);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        Self { base, fault, held }
    }

    pub fn set(&self, fault: Fault) {
        self.fault.store(fault as u8, Ordering::SeqCst);
    }

    /// Lets the answers held so far ([`Fault::HoldConfirmAnswers`]) go back.
    pub fn release(&self) {
        self.held.notify_waiters();
    }
}

async fn forward(
    State((upstream, fault, client, held)): State<ProxyState>,
    request: Request,
) -> Response {
    let fault = fault.load(Ordering::SeqCst);
    if fault == Fault::ServerError as u8 {
        return Response::builder()
            .status(503)
            .body(Body::from("{\"error\": {\"message\": \"injected\"}}"))
            .unwrap();
    }
    let confirm = request.uri().path().ends_with("/confirm");
    let stale_read = request.method() == axum::http::Method::GET
        && request.uri().path().starts_with("/v1/payment_intents/");
    let lose = fault == Fault::LoseConfirmAnswers as u8 && confirm;
    let hold = fault == Fault::HoldConfirmAnswers as u8 && confirm;
    let url = format!(
        "{upstream}{}",
        request
            .uri()
            .path_and_query()
            .map(|p| p.as_str())
            .unwrap_or("/")
    );
    let method = Method::from_bytes(request.method().as_str().as_bytes()).unwrap();
    let mut outgoing = client.request(method, url);
    for name in ["authorization", "content-type", "idempotency-key"] {
        if let Some(v) = request.headers().get(name) {
            outgoing = outgoing.header(name, v.as_bytes());
        }
    }
    let body = axum::body::to_bytes(request.into_body(), 1 << 20)
        .await
        .unwrap_or_default();
    let answer = outgoing.body(body.to_vec()).send().await.unwrap();
    let status = answer.status().as_u16();
    let mut bytes = answer.bytes().await.unwrap_or_default();
    if fault == Fault::StaleReads as u8 && stale_read {
        if let Ok(mut pi) = serde_json::from_slice::<Value>(&bytes) {
            pi["status"] = Value::from("requires_confirmation");
            bytes = serde_json::to_vec(&pi).unwrap().into();
        }
    }
    if hold {
        held.notified().await;
    }
    if lose {
        // The request was carried out; its answer breaks off after the status line.
        let broken = futures::stream::iter(vec![
            Ok::<_, std::io::Error>(axum::body::Bytes::from_static(b"{")),
            Err(std::io::Error::other("connection lost")),
        ]);
        return Response::builder()
            .status(200)
            .body(Body::from_stream(broken))
            .unwrap();
    }
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(Body::from(bytes))
        .unwrap()
}

/// An address nothing listens on: connections are refused.
pub async fn refused_base() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    format!("http://{addr}")
}

/// What [`Additions`] remembers: the versions requests named, and what each PaymentIntent's
/// capture asked for.
#[derive(Default)]
pub struct Added {
    versions: std::sync::Mutex<Vec<String>>,
    captured: std::sync::Mutex<std::collections::HashMap<String, i64>>,
    /// The refunds localstripe made for the uncaptured rest of a partial capture.
    released: std::sync::Mutex<std::collections::HashSet<String>>,
    /// Added to every charge's fee from now on (a test's processor changing its mind).
    fee_bump: std::sync::atomic::AtomicI64,
    /// Disputes and payouts.
    books: books::Books,
    /// The PaymentIntents confirmed with `off_session=true`.
    off_session: std::sync::Mutex<Vec<String>>,
}

/// The proxy adding to localstripe what it lacks (see the module's doc).
pub struct Additions;

type AdditionsState = (String, Arc<Added>, reqwest::Client);

impl Additions {
    /// Starts one in front of `upstream`; its address.
    async fn start(upstream: &str, added: Arc<Added>) -> String {
        let state: AdditionsState = (upstream.to_string(), added, reqwest::Client::new());
        let app = axum::Router::new().fallback(add).with_state(state);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        base
    }
}

/// Stripe's standard card fee on `amount`: 2.9% (rounded half up) + 30, at most the amount.
pub fn stripe_fee(amount: i64) -> i64 {
    ((amount * 29 + 500) / 1000 + 30).min(amount)
}

async fn add(
    State((upstream, added, client)): State<AdditionsState>,
    request: Request,
) -> Response {
    let version = request
        .headers()
        .get("stripe-version")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    added.versions.lock().unwrap().push(version);
    let path = request.uri().path().to_string();
    let method = request.method().clone();
    if method == axum::http::Method::GET {
        if let Some((status, body)) = added
            .books
            .answer(&path, request.uri().query().unwrap_or(""))
        {
            return Response::builder()
                .status(status)
                .header("content-type", "application/json")
                .body(Body::from(serde_json::to_vec(&body).unwrap()))
                .unwrap();
        }
    }
    let url = format!(
        "{upstream}{}",
        request
            .uri()
            .path_and_query()
            .map(|p| p.as_str())
            .unwrap_or("/")
    );
    let mut outgoing = client.request(Method::from_bytes(method.as_str().as_bytes()).unwrap(), url);
    for name in ["authorization", "content-type", "idempotency-key"] {
        if let Some(v) = request.headers().get(name) {
            outgoing = outgoing.header(name, v.as_bytes());
        }
    }
    let mut body = axum::body::to_bytes(request.into_body(), 1 << 20)
        .await
        .unwrap_or_default();
    if method == axum::http::Method::POST && path.ends_with("/confirm") {
        let form: Vec<(String, String)> = form_urlencoded::parse(&body).into_owned().collect();
        if form.iter().any(|(k, v)| k == "off_session" && v == "true") {
            let pi = path
                .trim_start_matches("/v1/payment_intents/")
                .trim_end_matches("/confirm");
            added.off_session.lock().unwrap().push(pi.to_string());
            let rest: Vec<&(String, String)> =
                form.iter().filter(|(k, _)| k != "off_session").collect();
            body = form_urlencoded::Serializer::new(String::new())
                .extend_pairs(rest)
                .finish()
                .into();
        }
    }
    if method == axum::http::Method::POST && path.ends_with("/capture") {
        let pi = path
            .trim_start_matches("/v1/payment_intents/")
            .trim_end_matches("/capture");
        let asked = form_urlencoded::parse(&body)
            .find(|(k, _)| k == "amount_to_capture")
            .and_then(|(_, v)| v.parse::<i64>().ok());
        if let Some(asked) = asked {
            added.captured.lock().unwrap().insert(pi.to_string(), asked);
        }
    }
    let answer = outgoing.body(body.to_vec()).send().await.unwrap();
    let status = answer.status().as_u16();
    let mut bytes = answer.bytes().await.unwrap_or_default().to_vec();
    if method == axum::http::Method::POST && path.ends_with("/capture") && status == 200 {
        // The rest of a partial capture, which localstripe "refunded" just now.
        let pi = path
            .trim_start_matches("/v1/payment_intents/")
            .trim_end_matches("/capture");
        let refunds: Value = client
            .get(format!(
                "{upstream}/v1/refunds?payment_intent={pi}&limit=100"
            ))
            .bearer_auth(STRIPE_KEY)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        for r in refunds["data"].as_array().into_iter().flatten() {
            if let Some(id) = r["id"].as_str() {
                added.released.lock().unwrap().insert(id.to_string());
            }
        }
    }
    if method == axum::http::Method::GET && path == "/v1/refunds" && status == 200 {
        let mut list: Value = serde_json::from_slice(&bytes).unwrap();
        let released = added.released.lock().unwrap().clone();
        if let Some(data) = list["data"].as_array_mut() {
            data.retain(|r| !r["id"].as_str().is_some_and(|id| released.contains(id)));
        }
        bytes = serde_json::to_vec(&list).unwrap();
    }
    if method == axum::http::Method::GET
        && path.starts_with("/v1/balance_transactions/")
        && status == 200
    {
        let mut txn: Value = serde_json::from_slice(&bytes).unwrap();
        if txn["type"] == "charge" {
            let charge: Value = client
                .get(format!(
                    "{upstream}/v1/charges/{}",
                    txn["source"].as_str().unwrap_or_default()
                ))
                .bearer_auth(STRIPE_KEY)
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            let pi = charge["payment_intent"].as_str().unwrap_or_default();
            let captured = added.captured.lock().unwrap().get(pi).copied();
            let amount = captured.unwrap_or_else(|| txn["amount"].as_i64().unwrap_or(0));
            let fee = stripe_fee(amount) + added.fee_bump.load(std::sync::atomic::Ordering::SeqCst);
            txn["amount"] = amount.into();
            txn["fee"] = fee.into();
            txn["net"] = (amount - fee).into();
            txn["fee_details"] = serde_json::json!([{
                "amount": fee, "application": null, "currency": txn["currency"],
                "description": "Stripe processing fees", "type": "stripe_fee",
            }]);
            bytes = serde_json::to_vec(&txn).unwrap();
        }
    }
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(Body::from(bytes))
        .unwrap()
}
