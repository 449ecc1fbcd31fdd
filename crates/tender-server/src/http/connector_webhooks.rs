//! `POST /connector_webhooks/{connector}` (CONTRACT §8): processors' webhooks, on the API
//! listener outside `/v2`, without an API key. The connector's `webhook_secret` verifies them
//! (the processor's own signature scheme); anything unverified is 400 and changes nothing, with
//! the same answer whether the connector exists or not. A verified webhook is answered
//! `{"received": true}`. A client address with more than [`MAX_REFUSALS`] refused webhooks in a
//! minute gets 429 until the minute is over (T3-I2): a processor's own traffic is verified and
//! never counted.

use axum::body::Bytes;
use axum::extract::{ConnectInfo, DefaultBodyLimit, Path, State};
use axum::http::HeaderMap;
use axum::response::IntoResponse;
use axum::routing::post;
use axum::Router;
use serde_json::json;
use tender_core::error::CoreError;

use super::{ok, ApiResult};
use crate::state::AppState;

/// Processors' events are larger than API requests; Stripe's stay well under this.
const MAX_WEBHOOK_BODY: usize = 256 * 1024;
/// Refused webhooks a client address may send in a minute.
pub const MAX_REFUSALS: u32 = 60;

pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/connector_webhooks/{id}", post(receive))
        .layer(DefaultBodyLimit::max(MAX_WEBHOOK_BODY))
        .with_state(state)
}

async fn receive(
    State(state): State<AppState>,
    Path(id): Path<String>,
    peer: Option<axum::Extension<ConnectInfo<std::net::SocketAddr>>>,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult {
    let address = peer
        .map(|axum::Extension(ConnectInfo(a))| a.ip().to_string())
        .unwrap_or_default();
    if let Some(wait) = state.webhook_refusals.over(&address, MAX_REFUSALS) {
        let mut refused = super::error::HttpFailure::RateLimited.into_response();
        if let Ok(v) = axum::http::HeaderValue::from_str(&wait.to_string()) {
            refused
                .headers_mut()
                .insert(axum::http::header::RETRY_AFTER, v);
        }
        return Ok(refused);
    }
    let signature = headers
        .get("stripe-signature")
        .and_then(|v| v.to_str().ok());
    let received = state
        .services
        .payments()
        .receive_connector_webhook(&id, signature, &body)
        .await;
    if let Err(CoreError::InvalidParam {
        code: "webhook_signature_invalid",
        ..
    }) = &received
    {
        let _ = state.webhook_refusals.hit(&address, u32::MAX);
    }
    received?;
    ok(&json!({"received": true}))
}
