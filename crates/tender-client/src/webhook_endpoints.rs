//! Webhook endpoints (`/v2/webhook_endpoints`): create, retrieve, update, delete, list, and
//! roll the signing secret.

use futures::stream::BoxStream;
use serde::{Deserialize, Serialize};

use crate::client::{segment, Client, RequestOptions};
use crate::common::Deleted;
use crate::error::Error;
use crate::list::{list_params, HasId, List};

/// Whether an endpoint receives events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum EndpointStatus {
    Enabled,
    /// By the API, or by the server after a `410 Gone` or 5 days of failures.
    Disabled,
    #[serde(other)]
    Unknown,
}

/// A webhook endpoint (`we_…`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct WebhookEndpoint {
    pub id: String,
    pub object: String,
    pub url: String,
    /// Event types, or `["*"]`.
    pub enabled_events: Vec<String>,
    pub description: Option<String>,
    pub status: EndpointStatus,
    /// The signing secret (`whsec_…`): only in the answers to create and roll_secret.
    #[serde(default)]
    pub secret: Option<String>,
    pub livemode: bool,
    pub created: i64,
}

impl HasId for WebhookEndpoint {
    fn id(&self) -> &str {
        &self.id
    }
}

/// `POST /webhook_endpoints`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CreateWebhookEndpoint {
    /// http(s); live mode needs https and a public address.
    pub url: String,
    /// Event types or `"*"`; at least one.
    pub enabled_events: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// `POST /webhook_endpoints/{id}`: only the fields given change.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct UpdateWebhookEndpoint {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enabled_events: Option<Vec<String>>,
    /// `""` clears it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disabled: Option<bool>,
}

/// `POST /webhook_endpoints/{id}/roll_secret`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RollSecret {
    /// Seconds the old secret keeps signing (0–604,800; default 86,400).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_in: Option<i64>,
}

list_params! {
    /// `GET /webhook_endpoints`.
    ListWebhookEndpoints {}
}

/// The webhook endpoint operations: `client.webhook_endpoints()`.
#[derive(Debug, Clone, Copy)]
pub struct WebhookEndpoints<'a> {
    pub(crate) client: &'a Client,
}

impl WebhookEndpoints<'_> {
    /// The answer carries the `secret`: keep it, it is never shown again.
    pub async fn create(&self, params: &CreateWebhookEndpoint) -> Result<WebhookEndpoint, Error> {
        self.client
            .post("/webhook_endpoints", params, &RequestOptions::default())
            .await
    }

    pub async fn retrieve(&self, id: &str) -> Result<WebhookEndpoint, Error> {
        self.client
            .get(&format!("/webhook_endpoints/{}", segment(id)), &[])
            .await
    }

    pub async fn update(
        &self,
        id: &str,
        params: &UpdateWebhookEndpoint,
    ) -> Result<WebhookEndpoint, Error> {
        self.client
            .post(
                &format!("/webhook_endpoints/{}", segment(id)),
                params,
                &RequestOptions::default(),
            )
            .await
    }

    pub async fn delete(&self, id: &str) -> Result<Deleted, Error> {
        self.client
            .delete(&format!("/webhook_endpoints/{}", segment(id)))
            .await
    }

    /// One page, newest first.
    pub async fn list(
        &self,
        params: &ListWebhookEndpoints,
    ) -> Result<List<WebhookEndpoint>, Error> {
        self.client.list_page("/webhook_endpoints", params).await
    }

    /// Every endpoint, newest first.
    pub fn list_stream(
        &self,
        params: ListWebhookEndpoints,
    ) -> BoxStream<'static, Result<WebhookEndpoint, Error>> {
        self.client.list_stream("/webhook_endpoints", params)
    }

    /// A new secret (in the answer); the old one keeps signing for `expires_in` seconds, and
    /// meanwhile every delivery carries one signature per secret.
    pub async fn roll_secret(
        &self,
        id: &str,
        params: &RollSecret,
    ) -> Result<WebhookEndpoint, Error> {
        self.client
            .post(
                &format!("/webhook_endpoints/{}/roll_secret", segment(id)),
                params,
                &RequestOptions::default(),
            )
            .await
    }
}

impl Client {
    /// Webhook endpoints: create, retrieve, update, delete, list, roll_secret.
    pub fn webhook_endpoints(&self) -> WebhookEndpoints<'_> {
        WebhookEndpoints { client: self }
    }
}
