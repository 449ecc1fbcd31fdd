//! `POST /connector_webhooks/{connector}` (CONTRACT §8): processors' webhooks, on the API
//! listener outside `/v2`, without an API key. The connector's `webhook_secret` verifies them
//! (the processor's own signature scheme); anything unverified is 400 and changes nothing. A
//! verified webhook is answered `{"received": true}`.

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::HeaderMap;
use axum::routing::post;
use axum::Router;
use serde_json::json;

use super::{ok, ApiResult};
use crate::state::AppState;

/// Processors' events are larger than API requests; Stripe's stay well under this.
const MAX_WEBHOOK_BODY: usize = 256 * 1024;

pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/connector_webhooks/{id}", post(receive))
        .layer(DefaultBodyLimit::max(MAX_WEBHOOK_BODY))
        .with_state(state)
}

async fn receive(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult {
    let signature = headers
        .get("stripe-signature")
        .and_then(|v| v.to_str().ok());
    state
        .services
        .receive_connector_webhook(&id, signature, &body)
        .await?;
    ok(&json!({"received": true}))
}
