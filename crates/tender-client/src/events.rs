//! Events (`/v2/events`): retrieve, list, their webhook deliveries, resend, and the live
//! stream of new ones (`/v2/events/stream`, server-sent events).

use std::time::Duration;

use eventsource_stream::{EventStreamError, Eventsource};
use futures::stream::BoxStream;
use futures::StreamExt;
use reqwest::Method;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::client::{error_answer, segment, Client, RequestOptions};
use crate::customers::Customer;
use crate::error::Error;
use crate::list::{list_params, HasId, List};
use crate::payments::Payment;
use crate::refunds::Refund;

/// The event types (CONTRACT §5), as in [`Event::kind`] and `enabled_events`.
pub mod types {
    pub const PAYMENT_SUCCEEDED: &str = "payment.succeeded";
    pub const PAYMENT_FAILED: &str = "payment.failed";
    pub const PAYMENT_CANCELED: &str = "payment.canceled";
    pub const PAYMENT_UPDATED: &str = "payment.updated";
    pub const REFUND_CREATED: &str = "refund.created";
    pub const CUSTOMER_CREATED: &str = "customer.created";
    pub const CUSTOMER_UPDATED: &str = "customer.updated";
    pub const CUSTOMER_DELETED: &str = "customer.deleted";
    /// In `enabled_events`: every type.
    pub const ALL: &str = "*";
}

/// What an event is about.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct EventData {
    /// The resource right after the change.
    pub object: serde_json::Value,
    /// On `*.updated`: the changed top-level fields' old values.
    pub previous_attributes: Option<serde_json::Value>,
}

/// The API request that caused an event; both `None` for background changes (settlement,
/// expiry, the 3-D Secure page).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct EventRequest {
    pub id: Option<String>,
    pub idempotency_key: Option<String>,
}

/// An event (`evt_…`), also the body of every webhook.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Event {
    pub id: String,
    pub object: String,
    /// One of [`types`].
    #[serde(rename = "type")]
    pub kind: String,
    pub api_version: String,
    pub created: i64,
    pub livemode: bool,
    pub data: EventData,
    #[serde(default)]
    pub request: EventRequest,
}

impl HasId for Event {
    fn id(&self) -> &str {
        &self.id
    }
}

impl Event {
    /// `data.object` as a typed resource.
    pub fn object<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        T::deserialize(&self.data.object)
    }

    /// The payment of a `payment.*` event.
    pub fn payment(&self) -> Option<Payment> {
        self.kind
            .starts_with("payment.")
            .then(|| self.object().ok())
            .flatten()
    }

    /// The refund of a `refund.*` event.
    pub fn refund(&self) -> Option<Refund> {
        self.kind
            .starts_with("refund.")
            .then(|| self.object().ok())
            .flatten()
    }

    /// The customer of a `customer.*` event (as it was before deletion on `customer.deleted`).
    pub fn customer(&self) -> Option<Customer> {
        self.kind
            .starts_with("customer.")
            .then(|| self.object().ok())
            .flatten()
    }
}

/// A delivery's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum DeliveryStatus {
    Pending,
    Succeeded,
    Failed,
    #[serde(other)]
    Unknown,
}

/// One HTTP attempt at a webhook delivery.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct DeliveryAttempt {
    pub attempted_at: i64,
    /// `None` on a network error or timeout.
    pub response_status: Option<u16>,
    pub error: Option<String>,
    pub duration_ms: i64,
    /// The first KiB of the receiver's answer.
    #[serde(default)]
    pub response_body: String,
}

/// An event's delivery to one endpoint (`wd_…`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct WebhookDelivery {
    pub id: String,
    pub object: String,
    pub event: String,
    pub webhook_endpoint: String,
    pub status: DeliveryStatus,
    /// Unix seconds of the next try while `pending`.
    pub next_attempt_at: Option<i64>,
    #[serde(default)]
    pub attempts: Vec<DeliveryAttempt>,
}

list_params! {
    /// `GET /events`.
    ListEvents {
        /// Only events of this type (one of [`types`]).
        kind: String => "type",
    }
}

/// `POST /events/{id}/resend`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ResendEvent {
    pub webhook_endpoint: String,
}

/// The longest one stream connection is kept (then it ends; connect again with the last id).
const STREAM_MAX: Duration = Duration::from_secs(24 * 3600);
/// The longest line a stream may send (an event is one `data:` line): a server that sends a
/// longer one is not followed further, so it cannot fill the client's memory.
pub const MAX_STREAM_LINE: usize = 1 << 20;

/// Counts the bytes of the line a stream is in; `Err` once one passes [`MAX_STREAM_LINE`].
#[derive(Default)]
struct LineBound {
    current: usize,
}

impl LineBound {
    fn take(&mut self, chunk: &[u8]) -> Result<(), usize> {
        for &b in chunk {
            if b == b'\n' || b == b'\r' {
                self.current = 0;
            } else {
                self.current += 1;
                if self.current > MAX_STREAM_LINE {
                    return Err(self.current);
                }
            }
        }
        Ok(())
    }
}

/// One event from [`Events::stream`]: its id and its JSON exactly as the server sent it (the
/// bytes a webhook delivery of it carries).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamedEvent {
    pub id: String,
    pub data: String,
}

impl StreamedEvent {
    /// The typed event.
    pub fn event(&self) -> Result<Event, serde_json::Error> {
        serde_json::from_str(&self.data)
    }
}

/// The event operations: `client.events()`.
#[derive(Debug, Clone, Copy)]
pub struct Events<'a> {
    pub(crate) client: &'a Client,
}

impl Events<'_> {
    pub async fn retrieve(&self, id: &str) -> Result<Event, Error> {
        self.client
            .get(&format!("/events/{}", segment(id)), &[])
            .await
    }

    /// One page, newest first.
    pub async fn list(&self, params: &ListEvents) -> Result<List<Event>, Error> {
        self.client.list_page("/events", params).await
    }

    /// Every matching event, newest first.
    pub fn list_stream(&self, params: ListEvents) -> BoxStream<'static, Result<Event, Error>> {
        self.client.list_stream("/events", params)
    }

    /// The event's deliveries, one per endpoint, with every attempt.
    pub async fn deliveries(&self, id: &str) -> Result<Vec<WebhookDelivery>, Error> {
        let list: List<WebhookDelivery> = self
            .client
            .get(&format!("/events/{}/deliveries", segment(id)), &[])
            .await?;
        Ok(list.data)
    }

    /// The account's new events as they are committed, oldest first, over one connection:
    /// those after the event `after` names (the last one you saw), else those after the newest
    /// at connection time. An unknown `after` or a refused key is an [`Error::Api`] here,
    /// before any event. The stream ends (or yields an error) when the connection drops, or
    /// with [`Error::Stalled`] after [`crate::ClientBuilder::stream_idle_timeout`] (45 s)
    /// without a byte (the server's keep-alive comes every 15 s); it is not retried: connect again with the last id you saw, and
    /// nothing is missed.
    pub async fn stream(
        &self,
        after: Option<&str>,
    ) -> Result<BoxStream<'static, Result<StreamedEvent, Error>>, Error> {
        let url = format!("{}/events/stream", self.client.base_url());
        let mut req = self
            .client
            .request(Method::GET, &url)
            .header("accept", "text/event-stream")
            // Not the client's per-call timeout: the stream is meant to stay open (its
            // liveness is checked by the idle timeout instead).
            .timeout(STREAM_MAX);
        if let Some(after) = after {
            req = req.header("last-event-id", after);
        }
        let resp = req.send().await.map_err(Error::Transport)?;
        if !resp.status().is_success() {
            return Err(error_answer(resp).await);
        }
        let status = resp.status().as_u16();
        // The server sends a keep-alive comment every 15 s: a longer silence means the
        // connection is dead (a peer gone without closing it).
        let idle = self.client.stream_idle();
        let start = (resp.bytes_stream(), LineBound::default());
        let bytes = futures::stream::unfold(Some(start), move |state| async move {
            let (mut bytes, mut line) = state?;
            match tokio::time::timeout(idle, bytes.next()).await {
                Ok(Some(Ok(chunk))) => match line.take(&chunk) {
                    Ok(()) => Some((Ok(chunk), Some((bytes, line)))),
                    // Longer than any event: the stream is given up, nothing more is read.
                    Err(_) => Some((
                        Err(Error::UnexpectedResponse {
                            status,
                            body: format!("a stream line longer than {MAX_STREAM_LINE} bytes"),
                            request_id: None,
                        }),
                        None,
                    )),
                },
                Ok(Some(Err(e))) => Some((Err(Error::Transport(e)), Some((bytes, line)))),
                Ok(None) => None,
                Err(_) => Some((Err(Error::Stalled { idle }), None)),
            }
        });
        let events = bytes.eventsource().filter_map(move |e| {
            std::future::ready(match e {
                // A message without an id is not an event of this API: skip it.
                Ok(e) if e.id.is_empty() => None,
                Ok(e) => Some(Ok(StreamedEvent {
                    id: e.id,
                    data: e.data,
                })),
                Err(EventStreamError::Transport(e)) => Some(Err(e)),
                Err(e) => Some(Err(Error::UnexpectedResponse {
                    status,
                    body: e.to_string(),
                    request_id: None,
                })),
            })
        });
        Ok(events.boxed())
    }

    /// Schedules the event's delivery to `webhook_endpoint` now.
    pub async fn resend(&self, id: &str, params: &ResendEvent) -> Result<WebhookDelivery, Error> {
        self.client
            .post(
                &format!("/events/{}/resend", segment(id)),
                params,
                &RequestOptions::default(),
            )
            .await
    }
}

impl Client {
    /// Events: retrieve, list, deliveries, resend.
    pub fn events(&self) -> Events<'_> {
        Events { client: self }
    }
}
