//! `/v2/events`: retrieve and list (filter `type`), and the live stream `tender listen` reads.

use axum::extract::{RawQuery, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::IntoResponse;
use tender_core::error::CoreError;
use tender_core::ids::EventId;
use tender_core::services::RequestContext;
use tender_core::store::{Collection, Field, StreamPosition};

use super::operation::Input;
use super::params::{Listing, Params, Query};
use super::pipeline::Ctx;
use super::{ok, ApiResult};
use crate::state::AppState;

/// `GET /events/{id}/deliveries`: the event's id. One delivery per endpoint: nothing to page
/// or filter, so any parameter is a mistake.
pub fn parse_deliveries(i: Input) -> Result<EventId, CoreError> {
    if let Some((k, _)) = form_urlencoded::parse(i.query().unwrap_or_default().as_bytes()).next() {
        return Err(CoreError::invalid(
            k.to_string(),
            "parameter_unknown",
            format!("Received unknown parameter: {k}"),
        ));
    }
    i.id()
}

pub(crate) async fn list_deliveries(
    state: AppState,
    ctx: RequestContext,
    id: EventId,
) -> ApiResult {
    let data = state
        .services
        .webhooks()
        .list_event_deliveries(ctx.scope(), &id)
        .await?;
    let url = format!("/v2/events/{id}/deliveries");
    ok(&serde_json::json!({"object": "list", "data": data, "has_more": false, "url": url}))
}

/// `POST /events/{id}/resend`: the body → the webhook endpoint id.
pub fn parse_resend(body: serde_json::Value) -> Result<String, CoreError> {
    let mut p = Params::body(body, &["webhook_endpoint"])?;
    let endpoint = p.string("webhook_endpoint")?;
    p.required("webhook_endpoint", endpoint)
}

pub(crate) async fn resend_event(
    state: AppState,
    ctx: RequestContext,
    (id, endpoint): (EventId, String),
) -> ApiResult {
    ok(&state
        .services
        .webhooks()
        .resend_event(&ctx, &id, &endpoint)
        .await?)
}

/// `GET /events`: the query string → page and filters.
pub fn parse_list(query: Option<&str>) -> Result<Listing, CoreError> {
    let q = Query::parse(query, &["type"])?;
    let params = q.list_params()?;
    let mut filters = Vec::new();
    if let Some(t) = q.get("type") {
        // Like `status` on payments: a value that can never match is a mistake worth naming.
        if !tender_core::event::EVENT_TYPES.contains(&t) {
            return Err(CoreError::invalid(
                "type",
                "parameter_invalid",
                format!("Unknown event type: {t}."),
            ));
        }
        filters.push((Field::Type, t.to_string()));
    }
    Ok((params, filters))
}

/// How often the stream looks for new events.
const STREAM_POLL: std::time::Duration = std::time::Duration::from_millis(250);

/// Where a stream starts: after the event the client names (`Last-Event-ID`, as an
/// `EventSource` sends it on reconnecting, over `starting_after`), with the parameter that named
/// it; else (`None`) after the newest event at connection time.
fn stream_start(
    headers: &HeaderMap,
    query: Option<&str>,
) -> Result<Option<(String, &'static str)>, CoreError> {
    if let Some(v) = headers.get("last-event-id") {
        let v = v.to_str().map_err(|_| {
            CoreError::invalid(
                "Last-Event-ID",
                "parameter_invalid",
                "Last-Event-ID must be an event id.",
            )
        })?;
        parse_stream(query)?;
        return Ok(Some((v.to_string(), "Last-Event-ID")));
    }
    Ok(parse_stream(query)?.map(|id| (id, "starting_after")))
}

/// `GET /events/stream`: the query string → the event to start after, if named.
pub fn parse_stream(query: Option<&str>) -> Result<Option<String>, CoreError> {
    let mut resume = None;
    for (k, v) in form_urlencoded::parse(query.unwrap_or_default().as_bytes()) {
        if k != "starting_after" {
            return Err(CoreError::invalid(
                k.to_string(),
                "parameter_unknown",
                format!("Received unknown parameter: {k}"),
            ));
        }
        resume = Some(v.into_owned());
    }
    Ok(resume)
}

/// How often a stream asks the database whether its key still holds (CONTRACT §17: a stream
/// ends within a second of its key's revocation).
const KEY_CHECK: std::time::Duration = std::time::Duration::from_secs(1);

/// Where the stream is: the last position queued, and events not sent yet.
struct Tail {
    services: tender_core::services::Services,
    principal: tender_core::auth::Principal,
    key: String,
    last: StreamPosition,
    queued: std::collections::VecDeque<(String, String)>,
    checked: std::time::Instant,
    _slot: crate::streams::StreamSlot,
}

impl Tail {
    /// The stream's next event and where it is then, or `None` when the stream ends (the key
    /// revoked or rolled past its grace, a store error).
    async fn next(mut self) -> Option<(Result<SseEvent, std::convert::Infallible>, Tail)> {
        loop {
            // This node's key cache forgets a key it revokes: a revocation here ends the stream
            // before its next event. Another node's is seen by the check each second.
            if self
                .services
                .accounts()
                .authenticate(&self.key)
                .await
                .ok()
                .as_ref()
                != Some(&self.principal)
            {
                return None;
            }
            if self.checked.elapsed() >= KEY_CHECK {
                // Revoked, expired, or not answerable: the stream ends (the client's reconnect
                // then gets its 401, or resumes once the database answers).
                if !self
                    .services
                    .accounts()
                    .key_still_valid(&self.key, &self.principal)
                    .await
                    .unwrap_or(false)
                {
                    return None;
                }
                self.checked = std::time::Instant::now();
            }
            if let Some((id, body)) = self.queued.pop_front() {
                let event = SseEvent::default().id(id).data(body);
                return Some((Ok::<_, std::convert::Infallible>(event), self));
            }
            let page = self
                .services
                .store
                .stream_events(&self.principal.scope, self.last, 100)
                .await
                .ok()?;
            if page.is_empty() {
                tokio::time::sleep(STREAM_POLL).await;
            }
            let renderer = self.services.renderer();
            for event in page {
                self.last = event.position;
                let body = renderer
                    .document(Collection::Events, &event.id, event.body)
                    .ok()?;
                self.queued.push_back((event.id, body));
            }
        }
    }
}

/// `GET /events/stream`: the account's events as server-sent events, oldest first, each with
/// `id:` its event id and `data:` the event; then every new event as it is committed (looked
/// for every 250 ms), with a comment every 15 s to keep proxies from closing the connection.
///
/// - The store gives events in stream order and only once they are final
///   ([`tender_core::store::DocumentStore::stream_events`]): a stream never skips an event that
///   committed behind it, and one opened before any event exists starts at the first.
/// - At most [`crate::streams::PER_SCOPE`] streams per account and mode, and a quarter of the
///   connection cap in all: past that, 429 `too_many_streams`.
/// - Before each event the key is authenticated again (this node's cache forgets a key it
///   revokes), and each second it is checked against the database itself (another node's
///   revocation): revoked, or rolled past its grace, ends the stream.
///
/// A store error or the server stopping ends the stream; the client reconnects with
/// `Last-Event-ID`.
pub(crate) async fn stream_events(
    State(state): State<AppState>,
    Ctx(ctx): Ctx,
    headers: HeaderMap,
    RawQuery(q): RawQuery,
) -> ApiResult {
    let scope = ctx.scope().clone();
    let services = state.services.clone();
    let key = super::pipeline::presented_key(&headers)?;
    let start = match stream_start(&headers, q.as_deref())? {
        // An unknown id is a 400 now, named as the client sent it, not a stream that ends.
        Some((id, param)) => services
            .store
            .stream_position(&scope, &id)
            .await
            .map_err(CoreError::from)?
            .ok_or_else(|| {
                CoreError::invalid(param, "resource_missing", format!("No such event: '{id}'"))
            })?,
        None => services
            .store
            .stream_head(&scope)
            .await
            .map_err(CoreError::from)?,
    };
    let Some(slot) = state.streams.open(&scope) else {
        let mut refused = super::error::HttpFailure::TooManyStreams.into_response();
        refused.headers_mut().insert(
            axum::http::header::RETRY_AFTER,
            axum::http::HeaderValue::from_static("5"),
        );
        return Ok(refused);
    };
    let tail = Tail {
        services,
        principal: ctx.principal.clone(),
        key,
        last: start,
        queued: Default::default(),
        checked: std::time::Instant::now(),
        _slot: slot,
    };
    let stream = futures::stream::unfold(tail, Tail::next);
    // A stopping server ends the stream (the client reconnects with `Last-Event-ID`) instead of
    // waiting out the shutdown grace period for a response that never ends.
    let mut stopping = state.stopping.clone();
    let stream = futures::StreamExt::take_until(stream, async move {
        let _ = stopping.wait_for(|stop| *stop).await;
    });
    Ok(Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(std::time::Duration::from_secs(15)))
        .into_response())
}
