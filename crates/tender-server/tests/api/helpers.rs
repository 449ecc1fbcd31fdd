//! The test harness: a real Tender on port 0 over a fresh SQLite data dir, talked to over HTTP.

use std::sync::Arc;

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use tender_core::accounts::AccountCreated;
use tender_core::clock::OffsetClock;

/// A running server and the keys of one account.
pub struct TestApp {
    pub base: String,
    pub receipt_base: String,
    pub client: reqwest::Client,
    pub account: AccountCreated,
    pub clock: Arc<OffsetClock>,
    pub services: tender_core::services::Services,
    pub data_dir: tempfile::TempDir,
    /// The webhook worker a stepped app's test runs ([`TestApp::deliver_pending`]).
    pub worker: tender_server::worker::WebhookWorker,
    _schema: Option<crate::pg::SchemaGuard>,
}

/// An HTTP answer: status, headers and the parsed JSON body.
pub struct Answer {
    pub status: StatusCode,
    pub headers: reqwest::header::HeaderMap,
    pub body: Value,
    pub raw: Vec<u8>,
}

impl Answer {
    pub fn error_code(&self) -> &str {
        self.body["error"]["code"].as_str().unwrap_or("")
    }
    pub fn error_param(&self) -> &str {
        self.body["error"]["param"].as_str().unwrap_or("")
    }
    pub fn error_type(&self) -> &str {
        self.body["error"]["type"].as_str().unwrap_or("")
    }
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
    pub fn id(&self) -> String {
        self.body["id"].as_str().unwrap_or_default().to_string()
    }
}

pub struct Options {
    pub rate_limit: u32,
    pub webhook_retry_scale: f64,
    pub allow_private_webhook_targets: bool,
    /// `--allow-connector-settings-via-api`: the API may set `raw_card_data` and `api_base`.
    pub connector_settings_via_api: bool,
    /// False: the server runs no background tasks; the test steps them.
    pub run_tasks: bool,
    pub run_webhook_worker: bool,
    /// Count loopback peers against the half-sent connections per address.
    pub count_loopback_half_open: bool,
    pub max_connections: usize,
    pub body_timeout: std::time::Duration,
    /// PostgreSQL: reach the server through this `host:port` (a proxy) instead.
    pub database_via: Option<String>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            rate_limit: 0,
            webhook_retry_scale: 0.001,
            allow_private_webhook_targets: false,
            connector_settings_via_api: false,
            run_tasks: true,
            run_webhook_worker: true,
            count_loopback_half_open: false,
            max_connections: tender_server::connection::DEFAULT_MAX_CONNECTIONS,
            body_timeout: tender_server::connection::BODY_DEADLINE,
            database_via: None,
        }
    }
}

/// The storage backend a test binary runs the suite on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// Starts the application on the binary's backend; `None` only when the backend is
/// PostgreSQL and no server is reachable (and `TENDER_REQUIRE_POSTGRES` is not set).
pub async fn spawn_app() -> Option<TestApp> {
    spawn_app_with(Options::default()).await
}

/// A server that runs no background tasks and sends no webhooks by itself: the test steps them
/// ([`TestApp::run_due_tasks`], [`TestApp::deliver_pending`]), so what a task or a delivery
/// does happens when the test says, and no test waits for a worker.
pub async fn spawn_stepped_app() -> Option<TestApp> {
    spawn_app_with(Options {
        run_tasks: false,
        run_webhook_worker: false,
        ..Options::default()
    })
    .await
}

pub async fn spawn_app_with(options: Options) -> Option<TestApp> {
    let data_dir = tempfile::tempdir().expect("tempdir");
    let mut config = crate::boot::test_config(data_dir.path());
    config.rate_limit = options.rate_limit;
    config.webhook_retry_scale = options.webhook_retry_scale;
    config.allow_private_webhook_targets = options.allow_private_webhook_targets;
    config.allow_connector_settings_via_api = options.connector_settings_via_api;
    config.run_tasks = options.run_tasks;
    config.run_webhook_worker = options.run_webhook_worker;
    config.count_loopback_half_open = options.count_loopback_half_open;
    config.max_connections = options.max_connections;
    config.body_timeout = options.body_timeout;
    let mut schema = None;
    if crate::BACKEND == Backend::Postgres {
        let (url, name) = crate::pg::fresh_schema().await?;
        config.database_url = Some(match &options.database_via {
            Some(via) => crate::pg::with_host(&url, via),
            None => url,
        });
        config.vault_key = Some(hex_key());
        schema = Some(name);
    }
    let app = crate::boot::boot(config).await;
    Some(TestApp {
        base: app.base,
        receipt_base: app.receipt_base,
        client: reqwest::Client::builder()
            .pool_max_idle_per_host(64)
            .build()
            .unwrap(),
        account: app.account,
        clock: app.clock,
        services: app.services,
        data_dir,
        worker: app.worker,
        _schema: schema.map(crate::pg::SchemaGuard),
    })
}

fn hex_key() -> String {
    tender_core::ids::random_base62(64)
        .bytes()
        .map(|b| format!("{:x}", b % 16))
        .collect()
}

impl TestApp {
    /// Runs every task due at the test clock's time, as the server's runner would, round after
    /// round while a round ran any (a task may schedule another that is due at once); returns how
    /// many ran. Only for a server that runs no tasks itself ([`spawn_stepped_app`]).
    pub async fn run_due_tasks(&self) -> usize {
        let mut ran = 0;
        for _ in 0..50 {
            match self.services.run_due_tasks(100).await.unwrap() {
                0 => break,
                n => ran += n,
            }
        }
        ran
    }

    /// Sends every webhook delivery due now, as the worker would, and says how many it sent.
    /// Only for a server that sends none itself ([`spawn_stepped_app`]); after it, nothing
    /// due is left unsent, so a test can assert what did not arrive without waiting.
    pub async fn deliver_pending(&self) -> usize {
        self.worker.deliver_due().await.unwrap()
    }

    pub fn sk(&self) -> &str {
        &self.account.keys.test.secret
    }
    pub fn pk(&self) -> &str {
        &self.account.keys.test.publishable
    }
    pub fn sk_live(&self) -> &str {
        &self.account.keys.live.secret
    }

    /// Another account in the same store.
    pub async fn other_account(&self) -> AccountCreated {
        let email = format!("other{}@example.com", rand_suffix());
        self.services
            .accounts()
            .create_account(&email, Some("Other".into()), None)
            .await
            .expect("account")
    }

    pub async fn request(
        &self,
        method: Method,
        path: &str,
        key: Option<&str>,
        body: Option<Value>,
        headers: &[(&str, &str)],
    ) -> Answer {
        let mut req = self
            .client
            .request(method, format!("{}{}", self.base, path));
        if let Some(k) = key {
            req = req.bearer_auth(k);
        }
        if let Some(b) = body {
            req = req.json(&b);
        }
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let resp = req.send().await.expect("request");
        answer(resp).await
    }

    pub async fn post(&self, path: &str, key: &str, body: Value) -> Answer {
        self.request(Method::POST, path, Some(key), Some(body), &[])
            .await
    }

    pub async fn get(&self, path: &str, key: &str) -> Answer {
        self.request(Method::GET, path, Some(key), None, &[]).await
    }

    pub async fn delete(&self, path: &str, key: &str) -> Answer {
        self.request(Method::DELETE, path, Some(key), None, &[])
            .await
    }

    /// `POST /payments` with a card number and amount in usd.
    pub async fn pay(&self, key: &str, number: &str, amount: i64) -> Answer {
        self.post("/v2/payments", key, payment_body(number, amount))
            .await
    }
}

/// Whether `needle` occurs in `haystack`.
pub fn contains(haystack: &[u8], needle: &str) -> bool {
    memchr::memmem::find(haystack, needle.as_bytes()).is_some()
}

impl TestApp {
    /// Everything the store holds, as bytes: the files of the data dir (database, WAL, keys) on
    /// SQLite; every row of every table as text on PostgreSQL.
    pub async fn stored_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(self.data_dir.path()).unwrap() {
            out.extend(std::fs::read(entry.unwrap().path()).unwrap());
        }
        if let Some(schema) = &self._schema {
            out.extend(crate::pg::dump_schema(&schema.0).await);
        }
        out
    }
}

pub async fn answer(resp: reqwest::Response) -> Answer {
    let status = resp.status();
    let headers = resp.headers().clone();
    let raw = resp.bytes().await.expect("body").to_vec();
    let body = serde_json::from_slice(&raw).unwrap_or_else(|_| {
        panic!(
            "response {status} is not JSON: {}",
            String::from_utf8_lossy(&raw)
        )
    });
    Answer {
        status,
        headers,
        body,
        raw,
    }
}

pub fn card(number: &str) -> Value {
    json!({"type": "card", "card": {"number": number, "exp_month": 12, "exp_year": 2034, "cvc": if number.starts_with("37") || number.starts_with("34") { "1234" } else { "123" }}})
}

pub fn payment_body(number: &str, amount: i64) -> Value {
    json!({"amount": amount, "currency": "usd", "payment_method": card(number)})
}

pub fn rand_suffix() -> String {
    tender_core::ids::random_base62(8)
}

impl TestApp {
    /// What `tender ledger verify` finds wrong with the test account's test-mode ledger.
    pub async fn ledger_problems(&self) -> Vec<String> {
        self.services
            .balance()
            .verify_ledger(&tender_core::auth::Scope {
                account: self.account.account.clone(),
                mode: tender_core::auth::Mode::Test,
            })
            .await
            .unwrap()
            .differences
    }
}
