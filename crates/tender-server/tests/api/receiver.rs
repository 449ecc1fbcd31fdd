//! A webhook receiver the tests run on 127.0.0.1: records every request and answers from a
//! script (default `200 {"received": true}`), and verifies signatures with its own HMAC code,
//! independent of Tender's.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;
use base64::Engine;
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// One request as received.
#[derive(Debug, Clone)]
pub struct Received {
    pub headers: HeaderMap,
    pub body: Vec<u8>,
    pub at: std::time::Instant,
}

impl Received {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).expect("webhook body is JSON")
    }
    pub fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }
}

/// A planned answer.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub delay: Duration,
    pub headers: Vec<(&'static str, String)>,
}

impl Reply {
    pub fn status(status: u16) -> Self {
        Self {
            status,
            delay: Duration::ZERO,
            headers: Vec::new(),
        }
    }
}

#[derive(Default)]
struct Inner {
    received: Vec<Received>,
    script: VecDeque<Reply>,
}

#[derive(Clone, Default)]
pub struct Receiver {
    inner: Arc<Mutex<Inner>>,
    pub url: String,
}

impl Receiver {
    pub async fn start() -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        Self::start_on(listener).await
    }

    pub async fn start_on(listener: tokio::net::TcpListener) -> Self {
        let r = Receiver {
            url: format!("http://{}/hook", listener.local_addr().unwrap()),
            ..Receiver::default()
        };
        let app = Router::new()
            .route("/hook", post(handle))
            .with_state(r.clone());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        r
    }

    pub fn script(&self, replies: impl IntoIterator<Item = Reply>) {
        self.inner.lock().unwrap().script.extend(replies);
    }

    pub fn received(&self) -> Vec<Received> {
        self.inner.lock().unwrap().received.clone()
    }

    /// Waits (bounded) until at least `n` requests arrived.
    pub async fn wait_for(&self, n: usize, within: Duration) -> Vec<Received> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let got = self.received();
            if got.len() >= n || tokio::time::Instant::now() >= deadline {
                return got;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

async fn handle(State(r): State<Receiver>, headers: HeaderMap, body: Bytes) -> Response {
    let reply = {
        let mut inner = r.inner.lock().unwrap();
        inner.received.push(Received {
            headers,
            body: body.to_vec(),
            at: std::time::Instant::now(),
        });
        inner.script.pop_front()
    };
    let reply = reply.unwrap_or(Reply::status(200));
    tokio::time::sleep(reply.delay).await;
    let mut resp = (
        StatusCode::from_u16(reply.status).unwrap(),
        r#"{"received": true}"#,
    )
        .into_response();
    for (k, v) in reply.headers {
        resp.headers_mut().insert(k, v.parse().unwrap());
    }
    resp
}

/// Stripe-style verification: some `v1` in `t=…,v1=…` equals HMAC-SHA256(secret, "t.body").
pub fn verify_tender_signature(header: &str, body: &[u8], secret: &str) -> bool {
    let mut t = None;
    let mut sigs = Vec::new();
    for part in header.split(',') {
        match part.split_once('=') {
            Some(("t", v)) => t = Some(v.to_string()),
            Some(("v1", v)) => sigs.push(v.to_string()),
            _ => {}
        }
    }
    let Some(t) = t else { return false };
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(t.as_bytes());
    mac.update(b".");
    mac.update(body);
    let expected = hex::encode(mac.finalize().into_bytes());
    sigs.contains(&expected)
}

/// Standard Webhooks verification: key = base64-decode(secret without `whsec_`), message
/// `id.timestamp.body`, header `v1,<base64>` (space-separated list).
pub fn verify_standard_signature(
    id: &str,
    timestamp: &str,
    header: &str,
    body: &[u8],
    secret: &str,
) -> bool {
    let key = base64::engine::general_purpose::STANDARD
        .decode(secret.trim_start_matches("whsec_"))
        .unwrap();
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).unwrap();
    mac.update(id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.as_bytes());
    mac.update(b".");
    mac.update(body);
    let expected = base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes());
    header
        .split(' ')
        .any(|s| s.strip_prefix("v1,") == Some(expected.as_str()))
}
