//! `GET /v2/events/stream`: the account's events as server-sent events, what `tender listen`
//! reads. Real HTTP, read chunk by chunk as a client would.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::helpers::*;

/// An open stream and what has arrived of it so far.
struct Stream {
    response: reqwest::Response,
    buffer: String,
}

impl Stream {
    async fn open(app: &TestApp, last_event_id: Option<&str>) -> Result<Self, reqwest::Response> {
        Self::open_with(app, app.sk(), last_event_id).await
    }

    async fn open_with(
        app: &TestApp,
        key: &str,
        last_event_id: Option<&str>,
    ) -> Result<Self, reqwest::Response> {
        let mut req = app
            .client
            .get(format!("{}/v2/events/stream", app.base))
            .bearer_auth(key);
        if let Some(id) = last_event_id {
            req = req.header("Last-Event-ID", id);
        }
        let response = req.send().await.expect("stream request");
        if response.status() != StatusCode::OK {
            return Err(response);
        }
        Ok(Self {
            response,
            buffer: String::new(),
        })
    }

    /// The next message's `(id, data)`, skipping keep-alive comments; fails after 10 s.
    async fn next(&mut self) -> (String, Value) {
        tokio::time::timeout(Duration::from_secs(10), async {
            loop {
                if let Some(end) = self.buffer.find("\n\n") {
                    let message: String = self.buffer.drain(..end + 2).collect();
                    let field = |name: &str| {
                        message
                            .lines()
                            .find_map(|l| l.strip_prefix(name))
                            .map(|v| v.trim_start().to_string())
                    };
                    if let (Some(id), Some(data)) = (field("id:"), field("data:")) {
                        return (id, serde_json::from_str(&data).expect("data is JSON"));
                    }
                    continue;
                }
                let chunk = self
                    .response
                    .chunk()
                    .await
                    .expect("chunk")
                    .expect("stream ended");
                self.buffer
                    .push_str(std::str::from_utf8(&chunk).expect("utf-8"));
            }
        })
        .await
        .expect("no event within 10 s")
    }
}

async fn open_ok(app: &TestApp, last_event_id: Option<&str>) -> Stream {
    match Stream::open(app, last_event_id).await {
        Ok(s) => s,
        Err(r) => panic!("the stream answered {}", r.status()),
    }
}

#[tokio::test]
async fn new_events_stream_as_they_happen_and_a_reconnect_resumes_after_the_last_id() {
    let Some(app) = spawn_app().await else { return };
    let before = app
        .post("/v2/customers", app.sk(), json!({"name": "Before"}))
        .await;
    let events = app.get("/v2/events?limit=1", app.sk()).await;
    let before_event = events.body["data"][0]["id"].as_str().unwrap().to_string();

    let mut stream = open_ok(&app, None).await;
    assert_eq!(
        stream.response.headers()["content-type"],
        "text/event-stream"
    );
    // Only what happens after connecting: the first message is the new customer's event.
    let after = app
        .post("/v2/customers", app.sk(), json!({"name": "After"}))
        .await;
    let (id, event) = stream.next().await;
    assert_eq!(event["type"], "customer.created");
    assert_eq!(event["data"]["object"]["id"], after.id());
    assert_eq!(event["id"], id);
    // Several at once arrive oldest first, each once.
    for i in 0..3 {
        app.post("/v2/customers", app.sk(), json!({"name": format!("N{i}")}))
            .await;
    }
    for i in 0..3 {
        let (_, e) = stream.next().await;
        assert_eq!(e["data"]["object"]["name"], format!("N{i}"));
    }
    drop(stream);

    // Reconnecting after the event before them replays everything since, in order.
    let mut resumed = open_ok(&app, Some(&before_event)).await;
    let (_, first) = resumed.next().await;
    assert_eq!(first["data"]["object"]["id"], after.id());
    assert_ne!(first["data"]["object"]["id"], before.id());
    let (_, second) = resumed.next().await;
    assert_eq!(second["data"]["object"]["name"], "N0");
}

#[tokio::test]
async fn an_unknown_last_event_id_or_parameter_is_a_400() {
    let Some(app) = spawn_app().await else { return };
    let Err(unknown) = Stream::open(&app, Some("evt_000000000000000000000000")).await else {
        panic!("an unknown Last-Event-ID opened a stream");
    };
    assert_eq!(unknown.status(), StatusCode::BAD_REQUEST);
    let body = answer(unknown).await;
    assert_eq!(body.error_code(), "resource_missing");
    assert_eq!(body.error_param(), "Last-Event-ID");
    let unknown = app
        .get(
            "/v2/events/stream?starting_after=evt_000000000000000000000000",
            app.sk(),
        )
        .await;
    assert_eq!(unknown.status, StatusCode::BAD_REQUEST);
    assert_eq!(unknown.error_code(), "resource_missing");
    assert_eq!(unknown.error_param(), "starting_after");
    let bad = app.get("/v2/events/stream?limit=5", app.sk()).await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    assert_eq!(bad.error_code(), "parameter_unknown");
    let anonymous = app
        .request(reqwest::Method::GET, "/v2/events/stream", None, None, &[])
        .await;
    assert_eq!(anonymous.status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn every_event_of_a_burst_streams_once_whether_the_stream_began_empty_or_resumed() {
    let Some(app) = spawn_app().await else { return };
    // T3-M6: opened on an account without any event, then 2,000 arrive at once.
    let mut fresh = open_ok(&app, None).await;
    // T3-M7: resumed after an event, with writers committing out of order around it.
    let first = app
        .post("/v2/customers", app.sk(), json!({"name": "First"}))
        .await;
    let (first_event, _) = fresh.next().await;
    let mut resumed = open_ok(&app, Some(&first_event)).await;
    const CLIENTS: usize = 16;
    const EACH: usize = 125;
    let mut writers = Vec::new();
    for _ in 0..CLIENTS {
        let (client, base, key) = (app.client.clone(), app.base.clone(), app.sk().to_string());
        writers.push(tokio::spawn(async move {
            let mut ids = Vec::new();
            for _ in 0..EACH {
                let paid = client
                    .post(format!("{base}/v2/payments"))
                    .bearer_auth(&key)
                    .json(&payment_body("4242424242424242", 1000))
                    .send()
                    .await
                    .unwrap();
                assert_eq!(paid.status(), 200);
                let body: Value = paid.json().await.unwrap();
                ids.push(body["id"].as_str().unwrap().to_string());
            }
            ids
        }));
    }
    let mut made = std::collections::BTreeSet::new();
    for w in writers {
        made.extend(w.await.unwrap());
    }
    assert_eq!(made.len(), CLIENTS * EACH);
    for (name, stream) in [("fresh", &mut fresh), ("resumed", &mut resumed)] {
        let mut seen = std::collections::BTreeSet::new();
        let mut ids = std::collections::BTreeSet::new();
        while seen.len() < made.len() {
            let (id, event) = stream.next().await;
            assert!(ids.insert(id), "{name}: an event streamed twice");
            assert_ne!(event["data"]["object"]["id"], first.id());
            if event["type"] == "payment.succeeded" {
                seen.insert(event["data"]["object"]["id"].as_str().unwrap().to_string());
            }
        }
        assert_eq!(seen, made, "{name}");
    }
}

#[tokio::test]
async fn streams_are_capped_per_account_and_end_when_their_key_is_revoked() {
    let Some(app) = spawn_app().await else { return };
    // T3-M2: five per account and mode; the sixth is refused, others' are not.
    let mut open = Vec::new();
    for _ in 0..5 {
        open.push(open_ok(&app, None).await);
    }
    let Err(sixth) = Stream::open(&app, None).await else {
        panic!("a sixth stream opened");
    };
    assert_eq!(sixth.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(sixth.headers().contains_key("retry-after"));
    let body = answer(sixth).await;
    assert_eq!(body.error_code(), "too_many_streams");
    assert_eq!(body.error_type(), "rate_limit_error");
    let other = app.other_account().await;
    let theirs = Stream::open_with(&app, &other.keys.test.secret, None).await;
    assert!(theirs.is_ok(), "another account's stream was refused");
    open.pop();
    drop(theirs);
    // A closed stream gives its slot back (the server notices the peer is gone).
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let again = loop {
        match Stream::open(&app, None).await {
            Ok(s) => break s,
            Err(r) => {
                assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS);
                assert!(
                    std::time::Instant::now() < deadline,
                    "the slot never came back"
                );
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    };
    drop(again);
    drop(open);

    // T3-M3: a stream ends within about a second of its key's revocation.
    let (key, record) = app
        .services
        .accounts()
        .create_api_key(
            &app.account.account,
            tender_core::auth::Mode::Test,
            tender_core::auth::KeyKind::Secret,
        )
        .await
        .unwrap();
    let mut stream = match Stream::open_with(&app, &key, None).await {
        Ok(s) => s,
        Err(r) => panic!("{}", r.status()),
    };
    app.post("/v2/customers", app.sk(), json!({"name": "Seen"}))
        .await;
    let (_, seen) = stream.next().await;
    assert_eq!(seen["data"]["object"]["name"], "Seen");
    app.services
        .accounts()
        .revoke_api_key(&app.account.account, &record.id)
        .await
        .unwrap();
    let revoked_at = std::time::Instant::now();
    app.post("/v2/customers", app.sk(), json!({"name": "Unseen"}))
        .await;
    let ended = tokio::time::timeout(Duration::from_secs(5), async {
        while let Ok(Some(chunk)) = stream.response.chunk().await {
            let text = String::from_utf8_lossy(&chunk).to_string();
            assert!(!text.contains("Unseen"), "a revoked key's stream went on");
        }
    })
    .await;
    assert!(ended.is_ok(), "the stream outlived its key");
    assert!(revoked_at.elapsed() < Duration::from_millis(2500));
}
