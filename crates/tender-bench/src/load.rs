//! The load generator: N workers, each looping one request at a time on a keep-alive connection
//! from a shared hyper pool, for a fixed time. Latencies go into a vector per worker (sorted once
//! at the end: a few hundred thousand samples sort in milliseconds).

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use axum::body::Bytes;
use axum::http::{header, HeaderValue, Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;

pub type HttpClient = Client<HttpConnector, Full<Bytes>>;

/// One HTTP server under test: where it is and how to authenticate.
#[derive(Clone)]
pub struct Target {
    client: HttpClient,
    base: String,
    auth: Option<HeaderValue>,
}

/// What one worker sends next, given (worker index, iteration).
pub type MakeRequest = Arc<dyn Fn(usize, u64) -> Call + Send + Sync>;

/// A request, before the base URL and credentials are added.
pub struct Call {
    pub method: Method,
    pub path: String,
    pub body: Option<Body>,
    pub idempotency_key: Option<String>,
}

pub enum Body {
    Json(String),
    Form(String),
}

impl Call {
    pub fn get(path: impl Into<String>) -> Self {
        Self {
            method: Method::GET,
            path: path.into(),
            body: None,
            idempotency_key: None,
        }
    }
    pub fn post_json(path: impl Into<String>, body: String) -> Self {
        Self {
            method: Method::POST,
            path: path.into(),
            body: Some(Body::Json(body)),
            idempotency_key: None,
        }
    }
    pub fn post_form(path: impl Into<String>, body: String) -> Self {
        Self {
            method: Method::POST,
            path: path.into(),
            body: Some(Body::Form(body)),
            idempotency_key: None,
        }
    }
    pub fn idempotent(mut self, key: String) -> Self {
        self.idempotency_key = Some(key);
        self
    }
}

pub fn client() -> HttpClient {
    let mut connector = HttpConnector::new();
    connector.set_nodelay(true);
    Client::builder(TokioExecutor::new())
        .pool_max_idle_per_host(1024)
        .pool_idle_timeout(Duration::from_secs(60))
        .build(connector)
}

impl Target {
    /// `base` is `http://host:port`; `auth` a full `Authorization` header value.
    pub fn new(client: HttpClient, base: &str, auth: Option<&str>) -> anyhow::Result<Self> {
        Ok(Self {
            client,
            base: base.trim_end_matches('/').to_string(),
            auth: auth.map(HeaderValue::from_str).transpose()?,
        })
    }

    fn request(&self, call: Call) -> anyhow::Result<Request<Full<Bytes>>> {
        let mut b = Request::builder()
            .method(call.method)
            .uri(format!("{}{}", self.base, call.path));
        if let Some(auth) = &self.auth {
            b = b.header(header::AUTHORIZATION, auth.clone());
        }
        if let Some(key) = call.idempotency_key {
            b = b.header("idempotency-key", key);
        }
        let body = match call.body {
            None => Full::new(Bytes::new()),
            Some(Body::Json(s)) => {
                b = b.header(header::CONTENT_TYPE, "application/json");
                Full::new(Bytes::from(s))
            }
            Some(Body::Form(s)) => {
                b = b.header(header::CONTENT_TYPE, "application/x-www-form-urlencoded");
                Full::new(Bytes::from(s))
            }
        };
        Ok(b.body(body)?)
    }

    /// Sends one request and reads the whole answer.
    pub async fn send(&self, call: Call) -> anyhow::Result<(StatusCode, Bytes)> {
        let resp = self
            .client
            .request(self.request(call)?)
            .await
            .context("HTTP request")?;
        let status = resp.status();
        let body = resp.into_body().collect().await?.to_bytes();
        Ok((status, body))
    }

    /// Sends one request and parses a 2xx JSON answer; anything else is an error.
    pub async fn json(&self, call: Call) -> anyhow::Result<serde_json::Value> {
        let what = format!("{} {}", call.method, call.path);
        let (status, body) = self.send(call).await?;
        if !status.is_success() {
            anyhow::bail!("{what}: {status}: {}", String::from_utf8_lossy(&body));
        }
        serde_json::from_slice(&body).with_context(|| format!("{what}: response is not JSON"))
    }
}

/// The outcome of one (operation, concurrency) cell.
#[derive(Debug, Clone, Default)]
pub struct Stats {
    pub requests: u64,
    pub errors: u64,
    pub seconds: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub p999_ms: f64,
    /// One error answer, to show what went wrong.
    pub sample_error: Option<String>,
    /// CPU the server used per request (user + system), in microseconds; a figure that, unlike
    /// req/s, does not move when something else competes for the cores.
    pub server_cpu_us: Option<f64>,
}

impl Stats {
    pub fn rps(&self) -> f64 {
        if self.seconds > 0.0 {
            self.requests as f64 / self.seconds
        } else {
            0.0
        }
    }
}

struct WorkerResult {
    latencies_ns: Vec<u64>,
    errors: u64,
    sample_error: Option<String>,
}

/// Runs `concurrency` workers for `duration`, each sending `make(worker, i)` in a loop.
/// When `pid` is given, also measures the CPU that server process spends per request.
pub async fn drive_server(
    target: &Target,
    pid: Option<u32>,
    concurrency: usize,
    duration: Duration,
    make: MakeRequest,
) -> Stats {
    let cpu_before = pid.and_then(crate::process::cpu_seconds);
    let mut stats = drive_inner(target, concurrency, duration, make).await;
    let cpu_after = pid.and_then(crate::process::cpu_seconds);
    if let (Some(a), Some(b)) = (cpu_before, cpu_after) {
        if stats.requests > 0 {
            stats.server_cpu_us = Some((b - a) * 1e6 / stats.requests as f64);
        }
    }
    stats
}

async fn drive_inner(
    target: &Target,
    concurrency: usize,
    duration: Duration,
    make: MakeRequest,
) -> Stats {
    let start = Instant::now();
    let deadline = start + duration;
    let mut handles = Vec::with_capacity(concurrency);
    for worker in 0..concurrency {
        let target = target.clone();
        let make = Arc::clone(&make);
        handles.push(tokio::spawn(async move {
            let mut out = WorkerResult {
                latencies_ns: Vec::with_capacity(64 * 1024),
                errors: 0,
                sample_error: None,
            };
            let mut i = 0u64;
            while Instant::now() < deadline {
                let call = make(worker, i);
                i += 1;
                let t0 = Instant::now();
                let result = target.send(call).await;
                out.latencies_ns.push(t0.elapsed().as_nanos() as u64);
                let failure = match result {
                    Ok((status, _)) if status.is_success() => None,
                    Ok((status, body)) => Some(format!(
                        "{status}: {}",
                        String::from_utf8_lossy(&body[..body.len().min(300)])
                    )),
                    Err(e) => Some(format!("{e:#}")),
                };
                if let Some(f) = failure {
                    out.errors += 1;
                    out.sample_error.get_or_insert(f);
                }
            }
            out
        }));
    }
    let mut all = Vec::new();
    let mut errors = 0;
    let mut sample_error = None;
    for h in handles {
        match h.await {
            Ok(r) => {
                all.extend(r.latencies_ns);
                errors += r.errors;
                if sample_error.is_none() {
                    sample_error = r.sample_error;
                }
            }
            Err(e) => {
                errors += 1;
                sample_error.get_or_insert(format!("worker panicked: {e}"));
            }
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    all.sort_unstable();
    let pct = |p: f64| -> f64 {
        if all.is_empty() {
            return 0.0;
        }
        let idx = ((all.len() as f64 * p).ceil() as usize).clamp(1, all.len()) - 1;
        all[idx] as f64 / 1e6
    };
    Stats {
        requests: all.len() as u64,
        errors,
        seconds,
        p50_ms: pct(0.50),
        p99_ms: pct(0.99),
        p999_ms: pct(0.999),
        sample_error,
        server_cpu_us: None,
    }
}
