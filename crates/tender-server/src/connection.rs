//! Bounds on what one client connection may hold (CONTRACT §12): how long a request body may
//! take to arrive, and how many connections are open at once. The header read timeout and
//! HTTP/1-only serving are set where the connections are served (`startup.rs`).
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
