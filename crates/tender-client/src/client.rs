//! The [`Client`]: authentication, the `Tender-Version` pin, idempotency keys, retries with
//! backoff, and turning answers into typed values or [`Error`]s. Resource modules build on
//! [`Client::send`].

use std::sync::Arc;
use std::time::Duration;

use rand::distributions::Alphanumeric;
use rand::Rng;
use reqwest::header::{HeaderMap, HeaderValue, AUTHORIZATION, CONTENT_TYPE, USER_AGENT};
use reqwest::Method;
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::error::{ApiError, Envelope, Error, ErrorType};

/// The API version this client speaks; sent as `Tender-Version` on every request so that a
/// server speaking another version refuses (400 `api_version_invalid`) instead of surprising.
pub const API_VERSION: &str = "2.1";

const USER_AGENT_VALUE: &str = concat!("tender-client/", env!("CARGO_PKG_VERSION"));

/// When and how often a call is retried.
///
/// Retried: network errors (no HTTP answer), 409 `idempotency_error` (the same key is still in
/// flight), 429 (after `Retry-After`), and 5xx. Never retried: any other 4xx. Every `POST`
/// carries an `Idempotency-Key` that is the same on every try, so a retried payment is never
/// charged twice: the server replays the first answer.
#[derive(Debug, Clone)]
pub struct RetryPolicy {
    /// Retries after the first try (0 disables retrying).
    pub max_retries: u32,
    /// The delay before the first retry; it doubles on each retry, with jitter (50–100 %).
    pub initial_backoff: Duration,
    /// The longest delay backoff grows to.
    pub max_backoff: Duration,
    /// The longest `Retry-After` honoured: a 429 asking to wait longer is returned as an error
    /// instead of being waited for.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 3,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(8),
            max_retry_after: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// No retries at all.
    pub fn none() -> Self {
        Self {
            max_retries: 0,
            ..Self::default()
        }
    }

    /// Exponential backoff with jitter before retry number `retry` (0-based).
    fn backoff(&self, retry: u32) -> Duration {
        let factor = 2u32.saturating_pow(retry.min(16));
        let base = self
            .initial_backoff
            .saturating_mul(factor)
            .min(self.max_backoff);
        base.mul_f64(rand::thread_rng().gen_range(0.5..=1.0))
    }
}

/// Per-call options for [`Client::send`] and the `*_with` methods.
#[derive(Debug, Clone, Default)]
pub struct RequestOptions {
    /// Your own `Idempotency-Key` (≤ 255 characters), e.g. derived from an order id so that
    /// even a restarted process cannot pay twice. Without it, a random key is generated per
    /// call and reused across that call's retries.
    pub idempotency_key: Option<String>,
}

/// Builds a [`Client`] with non-default settings.
pub struct ClientBuilder {
    base_url: String,
    api_key: String,
    retry: RetryPolicy,
    timeout: Duration,
    stream_idle: Duration,
    http: Option<reqwest::Client>,
}

impl std::fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("base_url", &self.base_url)
            .field("api_key", &redacted(&self.api_key))
            .field("retry", &self.retry)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// A key as `…abcd`: enough to tell keys apart in logs, never enough to use one.
fn redacted(key: &str) -> String {
    let tail = key.get(key.len().saturating_sub(4)..).unwrap_or("");
    format!("…{tail}")
}

impl ClientBuilder {
    /// How retries are made (default: [`RetryPolicy::default`]).
    pub fn retry_policy(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// Timeout of each try (default 60 s). Ignored when [`Self::http_client`] is given.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// How long an event stream ([`crate::Events::stream`]) may stay silent before it is given
    /// up as dead with [`Error::Stalled`] (default 45 s; the server sends a keep-alive every
    /// 15 s).
    pub fn stream_idle_timeout(mut self, idle: Duration) -> Self {
        self.stream_idle = idle;
        self
    }

    /// Use this `reqwest::Client` (proxies, custom roots, connection pool settings).
    pub fn http_client(mut self, http: reqwest::Client) -> Self {
        self.http = Some(http);
        self
    }

    /// The client. Panics only if the TLS backend cannot be initialised, like
    /// `reqwest::Client::new`.
    pub fn build(self) -> Client {
        let http = self.http.unwrap_or_else(|| {
            reqwest::Client::builder()
                .timeout(self.timeout)
                .build()
                .unwrap_or_else(|_| reqwest::Client::new())
        });
        Client {
            inner: Arc::new(Inner {
                http,
                base_url: normalize_base(&self.base_url),
                api_key: self.api_key,
                stream_idle: self.stream_idle,
                retry: self.retry,
            }),
        }
    }
}

/// `http://host:4242` and `http://host:4242/v2/` both become `http://host:4242/v2`.
fn normalize_base(raw: &str) -> String {
    let trimmed = raw.trim_end_matches('/');
    if trimmed.ends_with("/v2") {
        trimmed.to_string()
    } else {
        format!("{trimmed}/v2")
    }
}

struct Inner {
    http: reqwest::Client,
    base_url: String,
    api_key: String,
    retry: RetryPolicy,
    stream_idle: Duration,
}

/// A Tender API client. Cheap to clone (one connection pool behind an `Arc`); share it.
///
/// Operations are grouped by resource: [`Client::payments`], [`Client::customers`],
/// [`Client::refunds`], [`Client::payment_methods`], [`Client::events`],
/// [`Client::webhook_endpoints`].
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("base_url", &self.inner.base_url)
            .field("api_key", &redacted(&self.inner.api_key))
            .field("retry", &self.inner.retry)
            .finish()
    }
}

impl Client {
    /// A client for the API at `base_url` (`http://127.0.0.1:4242/v2`; a base without `/v2`
    /// gets it appended) authenticating with `api_key` (a secret key `sk_…`, or a publishable
    /// key `pk_…` for [`crate::PaymentMethods::create`] only), with default retries.
    pub fn new(base_url: impl Into<String>, api_key: impl Into<String>) -> Self {
        Self::builder(base_url, api_key).build()
    }

    /// A [`ClientBuilder`] to change retries, timeouts or the HTTP client.
    pub fn builder(base_url: impl Into<String>, api_key: impl Into<String>) -> ClientBuilder {
        ClientBuilder {
            base_url: base_url.into(),
            api_key: api_key.into(),
            retry: RetryPolicy::default(),
            timeout: Duration::from_secs(60),
            stream_idle: Duration::from_secs(45),
            http: None,
        }
    }

    /// The API base, ending in `/v2`.
    pub fn base_url(&self) -> &str {
        &self.inner.base_url
    }

    /// How long an event stream may stay silent ([`ClientBuilder::stream_idle_timeout`]).
    pub(crate) fn stream_idle(&self) -> Duration {
        self.inner.stream_idle
    }

    /// Any API call: `path` is relative to the base (`/payments`), `query` pairs are appended,
    /// `body` is sent as JSON (a `POST` without one sends `{}`). `POST`s get an idempotency key
    /// (yours from `options`, else a random one) that every retry repeats. For calls this crate
    /// has no method for; pass `None::<&()>` for no body.
    pub async fn send<T: DeserializeOwned, B: Serialize + ?Sized>(
        &self,
        method: Method,
        path: &str,
        query: &[(String, String)],
        body: Option<&B>,
        options: &RequestOptions,
    ) -> Result<T, Error> {
        let body = match body {
            Some(b) => Some(serde_json::to_vec(b).map_err(Error::Encode)?),
            None => None,
        };
        self.execute(method, path, query, body, options).await
    }

    pub(crate) async fn get<T: DeserializeOwned>(
        &self,
        path: &str,
        query: &[(String, String)],
    ) -> Result<T, Error> {
        self.execute(Method::GET, path, query, None, &RequestOptions::default())
            .await
    }

    pub(crate) async fn post<T: DeserializeOwned, B: Serialize + ?Sized>(
        &self,
        path: &str,
        body: &B,
        options: &RequestOptions,
    ) -> Result<T, Error> {
        self.send(Method::POST, path, &[], Some(body), options)
            .await
    }

    pub(crate) async fn delete<T: DeserializeOwned>(&self, path: &str) -> Result<T, Error> {
        self.execute(Method::DELETE, path, &[], None, &RequestOptions::default())
            .await
    }

    async fn execute<T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        query: &[(String, String)],
        body: Option<Vec<u8>>,
        options: &RequestOptions,
    ) -> Result<T, Error> {
        let body = match body {
            None if method == Method::POST => Some(b"{}".to_vec()),
            other => other,
        };
        let idempotency_key = (method == Method::POST || method == Method::PATCH).then(|| {
            options
                .idempotency_key
                .clone()
                .unwrap_or_else(new_idempotency_key)
        });
        let url = format!("{}{}", self.inner.base_url, path);
        let retry = &self.inner.retry;
        let mut tries = 0u32;
        loop {
            let outcome = self
                .try_once(
                    &method,
                    &url,
                    query,
                    body.as_deref(),
                    idempotency_key.as_deref(),
                )
                .await;
            let err = match outcome {
                Ok(bytes_and_status) => return decode(bytes_and_status),
                Err(e) => e,
            };
            if tries >= retry.max_retries {
                return Err(err);
            }
            let Some(delay) = retry_delay(&err, retry, tries) else {
                return Err(err);
            };
            tries += 1;
            tokio::time::sleep(delay).await;
        }
    }

    /// One try: the status and body of a 2xx, or the error.
    async fn try_once(
        &self,
        method: &Method,
        url: &str,
        query: &[(String, String)],
        body: Option<&[u8]>,
        idempotency_key: Option<&str>,
    ) -> Result<(u16, Vec<u8>), Error> {
        let mut req = self.request(method.clone(), url);
        if let Some(key) = idempotency_key.and_then(|k| HeaderValue::from_str(k).ok()) {
            req = req.header("idempotency-key", key);
        }
        if !query.is_empty() {
            req = req.query(query);
        }
        if let Some(body) = body {
            req = req
                .header(CONTENT_TYPE, "application/json")
                .body(body.to_vec());
        }
        let resp = req.send().await.map_err(Error::Transport)?;
        let status = resp.status().as_u16();
        if (200..300).contains(&status) {
            let bytes = resp.bytes().await.map_err(Error::Transport)?;
            return Ok((status, bytes.to_vec()));
        }
        Err(error_answer(resp).await)
    }

    /// A request to `url` with the headers every call carries: the key, the version pin and
    /// the user agent.
    pub(crate) fn request(&self, method: Method, url: &str) -> reqwest::RequestBuilder {
        let mut headers = HeaderMap::new();
        let auth = HeaderValue::from_str(&format!("Bearer {}", self.inner.api_key));
        if let Ok(mut auth) = auth {
            auth.set_sensitive(true);
            headers.insert(AUTHORIZATION, auth);
        }
        headers.insert("tender-version", HeaderValue::from_static(API_VERSION));
        headers.insert(USER_AGENT, HeaderValue::from_static(USER_AGENT_VALUE));
        self.inner.http.request(method, url).headers(headers)
    }
}

/// The [`Error`] of a non-2xx answer: the API's envelope when it sent one.
pub(crate) async fn error_answer(resp: reqwest::Response) -> Error {
    let status = resp.status().as_u16();
    let header = |name: &str| {
        resp.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    let request_id = header("request-id");
    let retry_after = header("retry-after")
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(Duration::from_secs);
    let bytes = match resp.bytes().await {
        Ok(bytes) => bytes,
        Err(e) => return Error::Transport(e),
    };
    match serde_json::from_slice::<Envelope>(&bytes) {
        Ok(Envelope { error: e }) => Error::from(ApiError {
            status,
            kind: e.kind,
            code: e.code,
            message: e.message,
            param: e.param,
            decline_code: e.decline_code,
            payment: e.payment,
            request_id: e.request_id.or(request_id),
            retry_after,
        }),
        Err(_) => Error::UnexpectedResponse {
            status,
            body: String::from_utf8_lossy(&bytes[..bytes.len().min(1024)]).into_owned(),
            request_id,
        },
    }
}

fn decode<T: DeserializeOwned>((status, bytes): (u16, Vec<u8>)) -> Result<T, Error> {
    serde_json::from_slice(&bytes).map_err(|source| Error::Decode { status, source })
}

/// Whether `err` is worth another try, and after how long.
fn retry_delay(err: &Error, policy: &RetryPolicy, retry: u32) -> Option<Duration> {
    let backoff = policy.backoff(retry);
    match err {
        // No answer: the request may or may not have arrived; the idempotency key makes a
        // repeat safe.
        Error::Transport(e) if !e.is_builder() => Some(backoff),
        Error::Api(e) if e.status == 429 => match e.retry_after {
            Some(wait) if wait > policy.max_retry_after => None,
            Some(wait) => Some(wait),
            None => Some(backoff),
        },
        Error::Api(e) if e.status == 409 && e.kind == ErrorType::IdempotencyError => Some(backoff),
        Error::Api(e) if e.status >= 500 => Some(backoff),
        Error::UnexpectedResponse { status, .. } if *status >= 500 => Some(backoff),
        _ => None,
    }
}

/// A random key: 32 alphanumerics (190 bits), unique per logical call.
fn new_idempotency_key() -> String {
    let random: String = rand::thread_rng()
        .sample_iter(&Alphanumeric)
        .take(32)
        .map(char::from)
        .collect();
    format!("tc_{random}")
}

/// Percent-encodes an id for use as one path segment.
pub(crate) fn segment(id: &str) -> String {
    let mut out = String::with_capacity(id.len());
    for b in id.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_url_gets_v2_once() {
        assert_eq!(
            normalize_base("http://127.0.0.1:4242"),
            "http://127.0.0.1:4242/v2"
        );
        assert_eq!(
            normalize_base("http://127.0.0.1:4242/v2/"),
            "http://127.0.0.1:4242/v2"
        );
    }

    #[test]
    fn backoff_doubles_with_jitter_and_is_capped() {
        let p = RetryPolicy {
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_millis(350),
            ..RetryPolicy::default()
        };
        for (retry, full) in [(0, 100), (1, 200), (2, 350), (10, 350)] {
            let d = p.backoff(retry).as_millis() as u64;
            assert!(d >= full / 2 && d <= full, "retry {retry}: {d}");
        }
    }

    #[test]
    fn debug_output_never_shows_the_key() {
        let builder = Client::builder("http://x", "sk_test_supersecretvalue1234");
        assert!(!format!("{builder:?}").contains("supersecret"));
        let client = builder.build();
        let shown = format!("{client:?}");
        assert!(
            !shown.contains("supersecret") && shown.contains("1234"),
            "{shown}"
        );
    }

    #[test]
    fn segments_are_escaped() {
        assert_eq!(segment("pay_AbC123"), "pay_AbC123");
        assert_eq!(segment("a/b?c"), "a%2Fb%3Fc");
    }

    #[test]
    fn keys_are_unique() {
        let a = new_idempotency_key();
        assert_eq!(a.len(), 35);
        assert_ne!(a, new_idempotency_key());
    }

    fn api(status: u16, kind: ErrorType, retry_after: Option<u64>) -> Error {
        Error::from(ApiError {
            status,
            kind,
            code: String::new(),
            message: String::new(),
            param: None,
            decline_code: None,
            payment: None,
            request_id: None,
            retry_after: retry_after.map(Duration::from_secs),
        })
    }

    #[test]
    fn only_transient_errors_are_retried() {
        let p = RetryPolicy::default();
        assert!(retry_delay(&api(503, ErrorType::ApiError, None), &p, 0).is_some());
        assert!(retry_delay(&api(409, ErrorType::IdempotencyError, None), &p, 0).is_some());
        assert_eq!(
            retry_delay(&api(429, ErrorType::RateLimitError, Some(2)), &p, 0),
            Some(Duration::from_secs(2))
        );
        assert!(retry_delay(&api(429, ErrorType::RateLimitError, Some(3600)), &p, 0).is_none());
        for (status, kind) in [
            (400, ErrorType::InvalidRequestError),
            (400, ErrorType::IdempotencyError),
            (401, ErrorType::AuthenticationError),
            (402, ErrorType::CardError),
            (403, ErrorType::PermissionError),
            (404, ErrorType::InvalidRequestError),
        ] {
            assert!(retry_delay(&api(status, kind, None), &p, 0).is_none());
        }
    }
}
