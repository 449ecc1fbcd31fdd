//! `tender listen`: the local development loop (CONTRACT §11). It reads the account's events
//! from the API's stream (`GET /v2/events/stream`), forwards each to a local URL signed exactly
//! as a webhook delivery is (`Tender-Signature` and the Standard Webhooks headers, with a
//! `whsec_` secret derived from the key and printed at start), and prints one line per event
//! with the receiver's answer.
//!
//! Invariants:
//! - Nothing created after "Ready!" is missed or forwarded twice: the stream starts after the
//!   newest event at start, and every reconnection (the server restarted, the network dropped)
//!   resumes after the last event received. A connection silent for 45 s (the server sends a
//!   keep-alive every 15) is given up as dead. Reconnection is tried at least every second,
//!   for ever; only a refusal (a 4xx: the key revoked, say) ends the command.
//! - Events are forwarded one at a time, in the order they were committed.
//! - A receiver that fails or cannot be reached gets a printed line, not a retry: the events
//!   stay in the API (`GET /v2/events`), and webhooks are the reliable path.
//!
//! Depends on: `tender-client` (the stream), `tender-core` (the signatures), `reqwest`.

use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use futures::stream::BoxStream;
use futures::StreamExt;
use tender_client::{Client, Error, StreamedEvent};
use tender_core::webhooks::webhook::{listen_secret, standard_signature, tender_signature};

use tender_core::clock::{Clock, SystemClock};
use tender_core::error::root_cause;

use crate::api::{explain, printable};

/// How long a receiver has to answer.
const FORWARD_TIMEOUT: Duration = Duration::from_secs(10);
/// The longest wait between two reconnection attempts.
const MAX_RECONNECT_DELAY: Duration = Duration::from_secs(1);

/// What `tender listen` was asked to do.
pub struct Listen {
    pub api: String,
    pub api_key: String,
    pub forward_to: url::Url,
    /// Only these event types (all when empty).
    pub events: Vec<String>,
}

/// `tender listen --print-secret`: the secret, alone on a line, for scripts.
pub fn print_secret(api_key: &str) {
    println!("{}", listen_secret(api_key));
}

pub async fn listen(args: Listen) -> anyhow::Result<()> {
    let client = Client::new(&args.api, &args.api_key);
    check_receiver(&args.forward_to).await?;
    // Where the stream starts: after the newest event now. Asking first (instead of letting
    // the stream start "after the newest at connection time") gives every reconnection a
    // cursor, even before the first event arrives.
    let mut last = newest_event(&client)
        .await
        .map_err(|e| anyhow::anyhow!(explain(&args.api, &e)))?;
    let mut stream = client
        .events()
        .stream(last.as_deref())
        .await
        .map_err(|e| anyhow::anyhow!(explain(&args.api, &e)))?;
    let secret = listen_secret(&args.api_key);
    let mode = if args.api_key.starts_with("sk_live_") {
        "live-mode"
    } else {
        "test-mode"
    };
    let only = if args.events.is_empty() {
        String::new()
    } else {
        format!(" ({})", args.events.join(", "))
    };
    println!(
        "Ready! Forwarding {mode} events{only} to {} (Ctrl-C to quit)",
        args.forward_to
    );
    println!("Your webhook signing secret is {secret}");
    let http = reqwest::Client::builder()
        .timeout(FORWARD_TIMEOUT)
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("tender-listen/", env!("CARGO_PKG_VERSION")))
        .build()
        .context("building the HTTP client")?;
    loop {
        let lost = match stream.next().await {
            Some(Ok(event)) => {
                last = Some(event.id.clone());
                let kind = event_type(&event);
                if args.events.is_empty() || args.events.contains(&kind) {
                    let answer = forward(&http, &args.forward_to, &secret, &event).await;
                    let now = tender_core::clock::format_local(SystemClock.now(), 0);
                    println!(
                        "{now}  {} [{}] -> {answer}",
                        printable(&kind),
                        printable(&event.id)
                    );
                }
                continue;
            }
            Some(Err(e)) => explain(&args.api, &e),
            None => "the server closed the stream".to_string(),
        };
        eprintln!(
            "lost the connection to {} ({}); reconnecting…",
            args.api,
            printable(&lost)
        );
        stream = reconnect(&client, &args.api, &mut last).await?;
        match &last {
            Some(id) => eprintln!("reconnected; resuming after {}", printable(id)),
            None => eprintln!("reconnected"),
        }
    }
}

/// Connects again, after `last`, trying at least every second until the server answers; a
/// refused key ends the command. Without a cursor (the account had no event at start, or the
/// server no longer has `last`: a new database) the stream starts with the account's events so
/// far (the newest 100), so none created while disconnected is missed.
async fn reconnect(
    client: &Client,
    api: &str,
    last: &mut Option<String>,
) -> anyhow::Result<BoxStream<'static, Result<StreamedEvent, Error>>> {
    let mut delay = Duration::from_millis(100);
    loop {
        let attempt = async {
            let backlog = match last {
                Some(_) => Vec::new(),
                None => events_so_far(client).await?,
            };
            let after = backlog.last().map(|e| e.id.clone()).or(last.clone());
            let stream = client.events().stream(after.as_deref()).await?;
            Ok::<_, Error>(futures::stream::iter(backlog.into_iter().map(Ok)).chain(stream))
        };
        match attempt.await {
            Ok(stream) => return Ok(stream.boxed()),
            Err(Error::Api(e)) if e.status == 400 && e.code == "resource_missing" => {
                eprintln!(
                    "the server no longer has {} (a new database?); forwarding its events from the start",
                    last.as_deref().unwrap_or("the last event")
                );
                *last = None;
            }
            Err(e) if is_final(&e) => bail!(explain(api, &e)),
            Err(_) => {
                tokio::time::sleep(delay).await;
                delay = (delay * 2).min(MAX_RECONNECT_DELAY);
            }
        }
    }
}

/// The account's newest 100 events, oldest first, as the stream would send them.
async fn events_so_far(client: &Client) -> Result<Vec<StreamedEvent>, Error> {
    let page: serde_json::Value = client
        .send(
            reqwest::Method::GET,
            "/events",
            &[("limit".into(), "100".into())],
            None::<&()>,
            &tender_client::RequestOptions::default(),
        )
        .await?;
    let mut events = Vec::new();
    for event in page["data"].as_array().into_iter().flatten().rev() {
        let id = event["id"].as_str().unwrap_or_default().to_string();
        let data = serde_json::to_string(event).map_err(tender_client::Error::Encode)?;
        events.push(StreamedEvent { id, data });
    }
    Ok(events)
}

/// An answer that another try will not change: a refused key, a bad request.
fn is_final(e: &Error) -> bool {
    e.status()
        .is_some_and(|s| (400..500).contains(&s) && s != 409 && s != 429)
}

/// The id of the account's newest event, if it has any.
async fn newest_event(client: &Client) -> Result<Option<String>, Error> {
    let page = client
        .events()
        .list(&tender_client::ListEvents {
            limit: Some(1),
            ..Default::default()
        })
        .await?;
    Ok(page.data.into_iter().next().map(|e| e.id))
}

/// Fails unless something accepts TCP connections at the receiver's address, so a mistyped
/// port is reported at once rather than as a failure on every event.
async fn check_receiver(url: &url::Url) -> anyhow::Result<()> {
    let addrs = url
        .socket_addrs(|| None)
        .with_context(|| format!("--forward-to {url}: cannot resolve its address"))?;
    let mut last_error = None;
    for addr in addrs {
        let connect = tokio::net::TcpStream::connect(addr);
        match tokio::time::timeout(Duration::from_secs(3), connect).await {
            Ok(Ok(_)) => return Ok(()),
            Ok(Err(e)) => last_error = Some(e.to_string()),
            Err(_) => last_error = Some("timed out after 3 s".into()),
        }
    }
    bail!(
        "cannot reach --forward-to {url}: {} (is your local server running on that port?)",
        last_error.unwrap_or_else(|| "no address".into())
    )
}

/// Posts `event` to the receiver as a webhook delivery is posted; the receiver's answer for
/// the printed line: `200 OK (3 ms)` or `failed: … (3 ms)`.
async fn forward(
    http: &reqwest::Client,
    url: &url::Url,
    secret: &str,
    event: &StreamedEvent,
) -> String {
    let now = SystemClock.now();
    let body = event.data.as_bytes();
    let started = Instant::now();
    let sent = http
        .post(url.clone())
        .header("content-type", "application/json")
        .header("tender-signature", tender_signature(&[secret], now, body))
        .header("webhook-id", &event.id)
        .header("webhook-timestamp", now.to_string())
        .header(
            "webhook-signature",
            standard_signature(&[secret], &event.id, now, body),
        )
        .body(event.data.clone())
        .send()
        .await;
    let ms = started.elapsed().as_millis();
    match sent {
        Ok(resp) => format!("{} ({ms} ms)", resp.status()),
        Err(e) if e.is_timeout() => format!("failed: no answer within 10 s ({ms} ms)"),
        Err(e) => format!("failed: {} ({ms} ms)", root_cause(&e)),
    }
}

/// The event's `type`, read from its JSON (`?` if it has none).
fn event_type(event: &StreamedEvent) -> String {
    #[derive(serde::Deserialize)]
    struct Type {
        #[serde(rename = "type")]
        kind: String,
    }
    serde_json::from_str::<Type>(&event.data)
        .map(|t| t.kind)
        .unwrap_or_else(|_| "?".into())
}
