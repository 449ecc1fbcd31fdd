//! PostgreSQL only: the database goes away under a running server and comes back (CONTRACT
//! §12). Tender reaches the server through a TCP proxy the test can cut: every open connection
//! is dropped and new ones are refused, as when the primary dies. The real failover, with a
//! promoted standby, is `tender-chaos --scenario failover` (docs/reliability.md).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::json;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::AbortHandle;

use crate::helpers::*;

/// A TCP proxy to the test's PostgreSQL that can be cut and restored.
struct Proxy {
    addr: String,
    cut: Arc<AtomicBool>,
    links: Arc<Mutex<Vec<AbortHandle>>>,
}

impl Proxy {
    async fn start(upstream: String) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let cut = Arc::new(AtomicBool::new(false));
        let links: Arc<Mutex<Vec<AbortHandle>>> = Arc::default();
        let (c, l) = (cut.clone(), links.clone());
        tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                if c.load(Ordering::SeqCst) {
                    continue; // dropped: the connection is closed at once
                }
                let upstream = upstream.clone();
                let task = tokio::spawn(async move {
                    if let Ok(mut outbound) = TcpStream::connect(&upstream).await {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                    }
                });
                l.lock().unwrap().push(task.abort_handle());
            }
        });
        Self { addr, cut, links }
    }

    /// Closes every open connection and refuses new ones.
    fn cut(&self) {
        self.cut.store(true, Ordering::SeqCst);
        for link in self.links.lock().unwrap().drain(..) {
            link.abort();
        }
    }

    fn restore(&self) {
        self.cut.store(false, Ordering::SeqCst);
    }
}

#[tokio::test]
async fn a_lost_database_answers_503_at_once_and_service_resumes_without_a_restart() {
    let proxy = Proxy::start(crate::pg::server_address()).await;
    let Some(app) = spawn_app_with(Options {
        database_via: Some(proxy.addr.clone()),
        ..Options::default()
    })
    .await
    else {
        return;
    };
    let sk = app.sk().to_string();
    assert_eq!(
        app.pay(&sk, "4242424242424242", 1000).await.status,
        StatusCode::OK
    );

    proxy.cut();
    let body = payment_body("4242424242424242", 2500);
    let key = [("Idempotency-Key", "outage-1")];
    // The same request each time: one idempotency key, one body.
    let create = || {
        app.request(
            reqwest::Method::POST,
            "/v2/payments",
            Some(&sk),
            Some(body.clone()),
            &key,
        )
    };
    let started = Instant::now();
    let during = create().await;
    assert_eq!(
        during.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{}",
        during.body
    );
    assert_eq!(during.error_type(), "api_error");
    assert_eq!(during.error_code(), "service_unavailable");
    assert_eq!(during.header("retry-after"), Some("1"));
    assert!(during.body["error"]["request_id"].is_string());
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the request waited {:?} for a database that is gone",
        started.elapsed()
    );
    let list = app.get("/v2/payments", &sk).await;
    assert_eq!(
        list.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{}",
        list.body
    );
    assert_eq!(list.header("retry-after"), Some("1"));

    // The database is back: the same server serves again, and the retried request is done once.
    proxy.restore();
    let deadline = Instant::now() + Duration::from_secs(15);
    let first = loop {
        let a = create().await;
        if a.status != StatusCode::SERVICE_UNAVAILABLE || Instant::now() > deadline {
            break a;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(first.status, StatusCode::OK, "{}", first.body);
    assert_eq!(first.body["status"], "succeeded");
    let again = create().await;
    assert_eq!(again.raw, first.raw);
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
    let list = app.get("/v2/payments", &sk).await;
    assert_eq!(list.status, StatusCode::OK);
    let amounts: Vec<_> = list.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["amount"].clone())
        .collect();
    assert_eq!(amounts, vec![json!(2500), json!(1000)]);
}
