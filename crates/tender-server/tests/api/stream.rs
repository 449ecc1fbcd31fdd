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
        let mut req = app
            .client
            .get(format!("{}/v2/events/stream", app.base))
            .bearer_auth(app.sk());
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
