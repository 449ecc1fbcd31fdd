//! localstripe 1.15.10 (a stateful fake of Stripe's API) started for one test on 127.0.0.1
//! (`scripts/localstripe-server.py`), and a fault-injecting HTTP proxy to put in front of it:
//! the real third-party processor the connector tests talk to. Shared by the API suite
//! (`tests/api/connectors.rs`) and the binary's crash test (`crates/tender/tests/connectors.rs`).
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

/// A localstripe process of this test, killed when dropped.
pub struct LocalStripe {
    pub base: String,
    pub http: reqwest::Client,
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
        Some(Self {
            base,
            http: reqwest::Client::new(),
            _child: child,
        })
    }

    pub async fn get(&self, path: &str) -> Value {
        self.http
            .get(format!("{}{path}", self.base))
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
            .post(format!("{}{path}", self.base))
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
