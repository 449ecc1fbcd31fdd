//! Harness shared by the dashboard tests (`tests/dashboard.rs`, `tests/browser.rs`): a real
//! Tender on port 0 over a fresh SQLite data dir, and a small cookie-keeping HTTP client that
//! behaves like a browser without JavaScript (no redirects followed, so tests see them). The
//! server is started as the API suites start theirs (`tests/support/boot.rs`).

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::sync::Arc;

use reqwest::StatusCode;
use serde_json::{json, Value};
use tender_core::accounts::AccountCreated;
use tender_core::clock::OffsetClock;
use tender_core::services::Services;
use tender_server::ServerConfig;

#[path = "../support/boot.rs"]
mod boot;

/// A running server and its bootstrap account.
pub struct App {
    pub base: String,
    pub receipt_base: String,
    pub account: AccountCreated,
    pub services: Services,
    pub clock: Arc<OffsetClock>,
    _data_dir: tempfile::TempDir,
}

pub async fn spawn_app() -> App {
    spawn_app_with(|_| {}).await
}

/// Starts the application after `configure` adjusts its settings.
pub async fn spawn_app_with(configure: impl FnOnce(&mut ServerConfig)) -> App {
    let data_dir = tempfile::tempdir().expect("tempdir");
    let mut config = boot::test_config(data_dir.path());
    configure(&mut config);
    let app = boot::boot(config).await;
    App {
        base: app.base,
        receipt_base: app.receipt_base,
        account: app.account,
        services: app.services,
        clock: app.clock,
        _data_dir: data_dir,
    }
}

impl App {
    /// Another account in the same store, with a known password.
    pub async fn other_account(&self, password: &str) -> AccountCreated {
        let email = format!(
            "other-{}@example.com",
            tender_core::ids::random_base62(6).to_lowercase()
        );
        self.services
            .accounts()
            .create_account(&email, Some("Other Ltd".into()), Some(password.into()))
            .await
            .expect("account")
    }

    /// A JSON API call with a secret key.
    pub async fn api(
        &self,
        method: reqwest::Method,
        path: &str,
        key: &str,
        body: Option<Value>,
    ) -> Value {
        let mut req = reqwest::Client::new()
            .request(method, format!("{}/v2{path}", self.base))
            .bearer_auth(key);
        if let Some(b) = body {
            req = req.json(&b);
        }
        let resp = req.send().await.expect("api request");
        let status = resp.status();
        let body: Value = resp.json().await.expect("json");
        assert!(status.is_success(), "{path}: {status} {body}");
        body
    }

    /// A successful usd card payment.
    pub async fn pay(&self, key: &str, amount: i64, extra: Value) -> Value {
        let mut body = json!({
            "amount": amount,
            "currency": "usd",
            "payment_method": {"type": "card", "card": {
                "number": "4242424242424242", "exp_month": 12, "exp_year": 2034, "cvc": "123"}},
        });
        if let (Some(b), Some(e)) = (body.as_object_mut(), extra.as_object()) {
            for (k, v) in e {
                b.insert(k.clone(), v.clone());
            }
        }
        self.api(reqwest::Method::POST, "/payments", key, Some(body))
            .await
    }

    /// A browser-like client of this app's dashboard, logged out.
    pub fn browser(&self) -> Browser {
        Browser {
            base: self.base.clone(),
            client: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .expect("client"),
            cookies: BTreeMap::new(),
        }
    }
}

/// An HTTP answer from the dashboard.
#[derive(Debug)]
pub struct Page {
    pub status: StatusCode,
    pub headers: reqwest::header::HeaderMap,
    pub body: String,
}

impl Page {
    pub fn location(&self) -> &str {
        self.headers
            .get("location")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }

    pub fn set_cookies(&self) -> Vec<String> {
        self.headers
            .get_all("set-cookie")
            .iter()
            .filter_map(|v| v.to_str().ok().map(String::from))
            .collect()
    }

    /// The first CSRF token in the page's forms.
    pub fn csrf(&self) -> String {
        let marker = "name=\"csrf_token\" value=\"";
        let start = self.body.find(marker).expect("a form with a csrf token") + marker.len();
        let end = self.body[start..].find('"').expect("closing quote") + start;
        self.body[start..end].to_string()
    }

    pub fn content_type(&self) -> &str {
        self.headers
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }
}

/// A client that keeps cookies like a browser (by name; `Max-Age=0` deletes) and does not
/// follow redirects.
pub struct Browser {
    pub base: String,
    pub client: reqwest::Client,
    pub cookies: BTreeMap<String, String>,
}

impl Browser {
    fn cookie_header(&self) -> String {
        self.cookies
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("; ")
    }

    async fn finish(&mut self, resp: reqwest::Response) -> Page {
        let status = resp.status();
        let headers = resp.headers().clone();
        let body = resp.text().await.expect("body");
        let page = Page {
            status,
            headers,
            body,
        };
        for c in page.set_cookies() {
            let first = c.split(';').next().unwrap_or_default();
            let (name, value) = first.split_once('=').unwrap_or((first, ""));
            if c.contains("Max-Age=0") || value.is_empty() {
                self.cookies.remove(name);
            } else {
                self.cookies.insert(name.to_string(), value.to_string());
            }
        }
        page
    }

    pub async fn get(&mut self, path: &str) -> Page {
        let resp = self
            .client
            .get(format!("{}{path}", self.base))
            .header("cookie", self.cookie_header())
            .send()
            .await
            .expect("get");
        self.finish(resp).await
    }

    pub async fn post(&mut self, path: &str, form: &[(&str, &str)]) -> Page {
        let resp = self
            .client
            .post(format!("{}{path}", self.base))
            .header("cookie", self.cookie_header())
            .form(form)
            .send()
            .await
            .expect("post");
        self.finish(resp).await
    }

    /// Loads the login page and submits it.
    pub async fn login(&mut self, email: &str, password: &str) -> Page {
        let form = self.get("/dashboard/login").await;
        let token = form.csrf();
        self.post(
            "/dashboard/login",
            &[
                ("csrf_token", &token),
                ("email", email),
                ("password", password),
            ],
        )
        .await
    }

    /// Loads `page_path`, then posts `form` to `action` with the page's CSRF token.
    pub async fn submit(&mut self, page_path: &str, action: &str, form: &[(&str, &str)]) -> Page {
        let token = self.get(page_path).await.csrf();
        let mut fields = vec![("csrf_token", token.as_str())];
        fields.extend_from_slice(form);
        self.post(action, &fields).await
    }
}
