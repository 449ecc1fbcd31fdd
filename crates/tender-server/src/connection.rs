//! Bounds on what one client connection may hold (CONTRACT §12): how long a request body may
//! take to arrive, how many connections are open at once, and how many of one address may be
//! half-sent (accepted, no complete request head yet: [`HalfOpen`], CONTRACT §17). The header
//! read timeout and HTTP/1-only serving are set where the connections are served
//! (`startup.rs`).
//!
//! Depends on tokio and the HTTP body types only.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use http_body::{Frame, SizeHint};

/// A request body must have arrived whole within this time from the end of its head, whether
/// it stalls or trickles; after it, reading the body fails and the request is answered 408 with
/// `Connection: close`.
pub const BODY_DEADLINE: Duration = Duration::from_secs(30);

/// Open connections per listener at most (`--max-connections`); past it, new connections wait
/// in the kernel's accept queue until one closes.
pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;

/// Connections of one address that may wait for their first request head at once
/// (`--max-half-open-per-address`); past it, that address's new connections are closed at once.
pub const DEFAULT_MAX_HALF_OPEN_PER_ADDRESS: usize = 32;

/// The connections of each client address that have not sent a complete request head yet: one
/// client cannot hold the listener's connection slots with idle half-sent requests (T3-L5).
/// Loopback peers (a local TLS proxy, this machine's own tools) are not counted unless told.
pub struct HalfOpen {
    per_address: usize,
    count_loopback: bool,
    open: std::sync::Mutex<std::collections::HashMap<std::net::IpAddr, usize>>,
}

impl HalfOpen {
    /// `per_address` 0: no limit.
    pub fn new(per_address: usize, count_loopback: bool) -> std::sync::Arc<Self> {
        std::sync::Arc::new(Self {
            per_address,
            count_loopback,
            open: Default::default(),
        })
    }

    /// A new connection from `ip`: its mark (held until its first request head arrives or it
    /// closes), `Some(None)` when it is not counted, or `None` when the address already has
    /// its most half-sent connections.
    pub fn admit(self: &std::sync::Arc<Self>, ip: std::net::IpAddr) -> Option<Option<HalfSent>> {
        if self.per_address == 0 || (ip.is_loopback() && !self.count_loopback) {
            return Some(None);
        }
        let mut open = self.open.lock().ok()?;
        let n = open.entry(ip).or_insert(0);
        if *n >= self.per_address {
            return None;
        }
        *n += 1;
        Some(Some(HalfSent {
            of: std::sync::Arc::clone(self),
            ip,
        }))
    }
}

/// A connection counted as half-sent; dropping it (its first request head arrived, or it
/// closed) frees its place.
pub struct HalfSent {
    of: std::sync::Arc<HalfOpen>,
    ip: std::net::IpAddr,
}

impl Drop for HalfSent {
    fn drop(&mut self) {
        if let Ok(mut open) = self.of.open.lock() {
            if let Some(n) = open.get_mut(&self.ip) {
                *n -= 1;
                if *n == 0 {
                    open.remove(&self.ip);
                }
            }
        }
    }
}

/// The error a body past its deadline yields; readers recognise it with [`is_body_timeout`].
#[derive(Debug)]
pub struct BodyTimedOut;

impl std::fmt::Display for BodyTimedOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the request body did not arrive in time")
    }
}

impl std::error::Error for BodyTimedOut {}

/// Middleware: gives every request body `deadline` ([`BODY_DEADLINE`] unless a test shortens
/// it through `ServerConfig::body_timeout`).
pub async fn body_deadline(
    axum::extract::State(deadline): axum::extract::State<Duration>,
    req: Request,
    next: Next,
) -> Response {
    let (parts, body) = req.into_parts();
    let body = Body::new(DeadlineBody {
        inner: body,
        deadline: Box::pin(tokio::time::sleep(deadline)),
    });
    next.run(Request::from_parts(parts, body)).await
}

/// Whether reading a body failed because of its deadline (rather than its size or the client).
pub fn is_body_timeout(error: &axum::Error) -> bool {
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = cur {
        if e.is::<BodyTimedOut>() {
            return true;
        }
        cur = e.source();
    }
    false
}

struct DeadlineBody {
    inner: Body,
    deadline: Pin<Box<tokio::time::Sleep>>,
}

impl http_body::Body for DeadlineBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        if let Poll::Ready(frame) = Pin::new(&mut self.inner).poll_frame(cx) {
            return Poll::Ready(frame);
        }
        match self.deadline.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Some(Err(axum::Error::new(BodyTimedOut)))),
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
