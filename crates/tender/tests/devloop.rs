//! The local development loop as a developer runs it: `tender listen` forwarding a real
//! server's events to a local receiver (signed, within a second, across a server restart), and
//! `tender trigger` producing every event type; bad input refused with a clear message.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

mod support;
use support::{card_payment, serve, tender};

/// A `tender listen` process whose stdout and stderr lines arrive on channels.
struct Listener {
    child: Child,
    stdout: mpsc::Receiver<String>,
    stderr: mpsc::Receiver<String>,
}

impl Drop for Listener {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn lines_of(pipe: impl std::io::Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(pipe).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// The first line on `rx` that contains `needle`, within `within`.
fn line_with(rx: &mpsc::Receiver<String>, needle: &str, within: Duration) -> String {
    let deadline = Instant::now() + within;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) if line.contains(needle) => return line,
            Ok(_) => {}
            Err(_) => panic!("no line with {needle:?} within {within:?}"),
        }
    }
}

fn listen(api: &str, key: &str, forward_to: &str, extra: &[&str]) -> Listener {
    let mut child = tender()
        .args(["listen", "--api", api, "--forward-to", forward_to])
        .args(extra)
        .env("TENDER_API_KEY", key)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = lines_of(child.stdout.take().unwrap());
    let stderr = lines_of(child.stderr.take().unwrap());
    Listener {
        child,
        stdout,
        stderr,
    }
}

/// One request the receiver got: when, its headers, its body.
struct Received {
    at: Instant,
    headers: axum::http::HeaderMap,
    body: Vec<u8>,
}

/// A local webhook receiver answering 200; its URL and what it receives.
async fn receiver() -> (String, tokio::sync::mpsc::UnboundedReceiver<Received>) {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(
            move |headers: axum::http::HeaderMap, body: axum::body::Bytes| {
                let _ = tx.send(Received {
                    at: Instant::now(),
                    headers,
                    body: body.to_vec(),
                });
                async { "thanks" }
            },
        ),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, rx)
}

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// Creates `body` at `path`; the new object's id.
async fn create(base: &str, key: &str, path: &str, body: Value) -> String {
    let r = reqwest::Client::new()
        .post(format!("{base}/v2{path}"))
        .bearer_auth(key)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    r.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string()
}

/// The next forwarded event (within 5 s), checked to be signed both ways with `secret`.
async fn next_signed(
    rx: &mut tokio::sync::mpsc::UnboundedReceiver<Received>,
    secret: &str,
) -> (Instant, Value) {
    let got = tokio::time::timeout(Duration::from_secs(5), rx.recv())
        .await
        .expect("an event forwarded within 5 s")
        .unwrap();
    let header = |name: &str| got.headers.get(name).unwrap().to_str().unwrap().to_string();
    let tolerance = Duration::from_secs(300);
    let event =
        tender_client::webhook::verify(&header("tender-signature"), &got.body, secret, tolerance)
            .expect("Tender-Signature verifies with the printed secret");
    let standard = tender_client::webhook::verify_standard(
        &header("webhook-id"),
        &header("webhook-timestamp"),
        &header("webhook-signature"),
        &got.body,
        secret,
        tolerance,
    )
    .expect("the Standard Webhooks signature verifies with the printed secret");
    assert_eq!(event.id, standard.id);
    assert_eq!(header("webhook-id"), event.id);
    (got.at, serde_json::from_slice(&got.body).unwrap())
}

#[tokio::test]
async fn listen_forwards_signed_events_within_a_second_and_keeps_going_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let addr = format!("127.0.0.1:{}", free_port());
    let server = serve(dir.path(), &["--listen", &addr], &[]);
    let key = support::secret_from(&server.lines).unwrap();
    let base = server.base.clone();
    // An event from before listen starts is not forwarded.
    create(&base, &key, "/customers", json!({"name": "Before"})).await;

    let (url, mut received) = receiver().await;
    let listener = listen(
        &base,
        &key,
        &url,
        &["--events", "payment.succeeded,customer.created"],
    );
    line_with(&listener.stdout, "Ready!", Duration::from_secs(20));
    let secret_line = line_with(&listener.stdout, "signing secret", Duration::from_secs(1));
    let secret = secret_line.rsplit(' ').next().unwrap().to_string();
    let printed = tender()
        .args(["listen", "--print-secret", "--api-key", &key])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8(printed.stdout).unwrap().trim(), secret);

    // A payment: its event arrives signed, within a second of the payment's answer.
    let started = Instant::now();
    let pay = create(&base, &key, "/payments", card_payment(1500)).await;
    let answered = Instant::now();
    let (at, event) = next_signed(&mut received, &secret).await;
    assert_eq!(event["type"], "payment.succeeded");
    assert_eq!(event["data"]["object"]["id"], pay.as_str());
    let latency = at.duration_since(answered);
    println!(
        "payment answered in {:?}; its event forwarded {latency:?} later",
        answered - started
    );
    assert!(
        latency < Duration::from_secs(1),
        "forwarded after {latency:?}"
    );
    let line = line_with(
        &listener.stdout,
        event["id"].as_str().unwrap(),
        Duration::from_secs(1),
    );
    assert!(
        line.contains("payment.succeeded") && line.contains("200 OK"),
        "{line}"
    );

    // --events: a refund's event is not forwarded, the customer's is.
    create(&base, &key, "/refunds", json!({"payment": pay})).await;
    let cus = create(&base, &key, "/customers", json!({"name": "After"})).await;
    let (_, event) = next_signed(&mut received, &secret).await;
    assert_eq!(event["type"], "customer.created");
    assert_eq!(event["data"]["object"]["id"], cus.as_str());

    // The server stops and comes back on the same address: listen reconnects by itself and
    // the next event arrives within a second again, once, with nothing of before repeated.
    let mut server = server;
    server.signal("TERM");
    let _ = server.child.wait();
    line_with(
        &listener.stderr,
        "lost the connection",
        Duration::from_secs(10),
    );
    let restarted = serve(dir.path(), &["--listen", &addr], &[]);
    line_with(&listener.stderr, "reconnected", Duration::from_secs(10));
    let answered_at = {
        let pay = create(&restarted.base, &key, "/payments", card_payment(2500)).await;
        (Instant::now(), pay)
    };
    let (at, event) = next_signed(&mut received, &secret).await;
    assert_eq!(event["data"]["object"]["id"], answered_at.1.as_str());
    let latency = at.duration_since(answered_at.0);
    println!("after the restart: forwarded {latency:?} after the answer");
    assert!(
        latency < Duration::from_secs(1),
        "forwarded after {latency:?}"
    );
    // Events are forwarded in commit order: the next one is a new customer's, so nothing of
    // before the restart was forwarded again in between.
    let marker = create(
        &restarted.base,
        &key,
        "/customers",
        json!({"name": "Marker"}),
    )
    .await;
    let (_, event) = next_signed(&mut received, &secret).await;
    assert_eq!(
        event["data"]["object"]["id"],
        marker.as_str(),
        "nothing else is forwarded"
    );
}

#[tokio::test]
async fn trigger_produces_every_event_type() {
    let dir = tempfile::tempdir().unwrap();
    // Seconds instead of the defaults, so that settlements, availability and disputes follow
    // at once.
    let server = serve(
        dir.path(),
        &[
            "--bank-settlement-delay",
            "1",
            "--balance-available-delay",
            "1",
        ],
        &[],
    );
    let key = support::secret_from(&server.lines).unwrap();
    let client = reqwest::Client::new();
    for event_type in tender_core::event::EVENT_TYPES {
        let out = tender()
            .args(["trigger", event_type, "--api", &server.base])
            .env("TENDER_API_KEY", &key)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "trigger {event_type} failed: {stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let done = stdout.lines().last().unwrap();
        assert!(
            done.starts_with(&format!("Trigger succeeded: {event_type} evt_")),
            "{done}"
        );
        // The event it names exists, of that type, in test mode.
        let id = done.split(' ').nth(3).unwrap();
        let event: Value = client
            .get(format!("{}/v2/events/{id}", server.base))
            .bearer_auth(&key)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(event["type"], *event_type);
        assert_eq!(event["livemode"], false);
    }
}

#[tokio::test]
async fn listen_and_trigger_refuse_bad_input_with_a_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    let server = serve(dir.path(), &[], &[]);
    let key = support::secret_from(&server.lines).unwrap();
    let (url, _received) = receiver().await;
    let down = format!("http://127.0.0.1:{}", free_port());
    let run = |args: &[&str], key: &str| {
        let out = tender()
            .args(args)
            .env("TENDER_API_KEY", key)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let cases: Vec<(Vec<&str>, &str, Option<i32>, &str)> = vec![
        // A wrong key.
        (
            vec!["listen", "--api", &server.base, "--forward-to", &url],
            "sk_test_notarealkeynotarealkey00",
            Some(1),
            "refused the key",
        ),
        (
            vec!["trigger", "payment.succeeded", "--api", &server.base],
            "sk_test_notarealkeynotarealkey00",
            Some(1),
            "refused the key",
        ),
        // Nothing listening at the forward URL.
        (
            vec!["listen", "--api", &server.base, "--forward-to", &down],
            &key,
            Some(1),
            "cannot reach --forward-to",
        ),
        // No server at --api.
        (
            vec!["listen", "--api", &down, "--forward-to", &url],
            &key,
            Some(1),
            "cannot reach the Tender API",
        ),
        // Not a URL to forward to.
        (
            vec![
                "listen",
                "--api",
                &server.base,
                "--forward-to",
                "localhost:3000",
            ],
            &key,
            Some(2),
            "expected an http:// or https:// URL",
        ),
        // Unknown event types.
        (
            vec!["trigger", "payment.exploded", "--api", &server.base],
            &key,
            Some(2),
            "invalid value 'payment.exploded'",
        ),
        (
            vec![
                "listen",
                "--api",
                &server.base,
                "--forward-to",
                &url,
                "--events",
                "payment.exploded",
            ],
            &key,
            Some(2),
            "invalid value 'payment.exploded'",
        ),
    ];
    for (args, key, code, message) in cases {
        let (got, stderr) = run(&args, key);
        assert_eq!(got, code, "{args:?}: {stderr}");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
    // trigger refuses a live key before making anything.
    let live = server
        .lines
        .iter()
        .find_map(|l| {
            l.trim()
                .strip_prefix("live secret key:")
                .map(|k| k.trim().to_string())
        })
        .unwrap();
    let (got, stderr) = run(
        &["trigger", "payment.succeeded", "--api", &server.base],
        &live,
    );
    assert_eq!(got, Some(1), "{stderr}");
    assert!(stderr.contains("test secret key (sk_test_"), "{stderr}");
    let payments: Value = reqwest::Client::new()
        .get(format!("{}/v2/payments", server.base))
        .bearer_auth(&live)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(payments["data"], json!([]), "nothing was made in live mode");
}
