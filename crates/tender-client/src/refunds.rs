//! Refunds (`/v2/refunds`): create, retrieve, update (metadata), list.

use futures::stream::BoxStream;
use serde::{Deserialize, Serialize};

use crate::client::{segment, Client, RequestOptions};
use crate::common::Metadata;
use crate::error::Error;
use crate::list::{list_params, HasId, List};

/// Where a refund is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RefundStatus {
    /// A bank-transfer refund waiting to settle.
    Pending,
    Succeeded,
    Failed,
    #[serde(other)]
    Unknown,
}

/// Why a refund was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RefundReason {
    Duplicate,
    Fraudulent,
    RequestedByCustomer,
    #[serde(other)]
    Unknown,
}

/// A refund (`re_…`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Refund {
    pub id: String,
    pub object: String,
    pub amount: i64,
    pub currency: String,
    /// The refunded payment's id.
    pub payment: String,
    pub status: RefundStatus,
    pub reason: Option<RefundReason>,
    #[serde(default)]
    pub metadata: Metadata,
    pub livemode: bool,
    pub created: i64,
}

impl HasId for Refund {
    fn id(&self) -> &str {
        &self.id
    }
}

/// `POST /refunds`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CreateRefund {
    /// A `succeeded` payment.
    pub payment: String,
    /// Default: what is left to refund.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub amount: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<RefundReason>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

impl CreateRefund {
    /// A refund of everything left on `payment`.
    pub fn new(payment: impl Into<String>) -> Self {
        Self {
            payment: payment.into(),
            ..Self::default()
        }
    }

    pub fn amount(mut self, amount: i64) -> Self {
        self.amount = Some(amount);
        self
    }

    pub fn reason(mut self, reason: RefundReason) -> Self {
        self.reason = Some(reason);
        self
    }
}

/// `POST /refunds/{id}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct UpdateRefund {
    /// Merged into the stored metadata; `""` removes a key.
    pub metadata: Metadata,
}

list_params! {
    /// `GET /refunds`.
    ListRefunds {
        /// Only this payment's refunds.
        payment: String => "payment",
    }
}

/// The refund operations: `client.refunds()`.
#[derive(Debug, Clone, Copy)]
pub struct Refunds<'a> {
    pub(crate) client: &'a Client,
}

impl Refunds<'_> {
    pub async fn create(&self, params: &CreateRefund) -> Result<Refund, Error> {
        self.create_with(params, &RequestOptions::default()).await
    }

    /// [`Self::create`] with your own idempotency key.
    pub async fn create_with(
        &self,
        params: &CreateRefund,
        options: &RequestOptions,
    ) -> Result<Refund, Error> {
        self.client.post("/refunds", params, options).await
    }

    pub async fn retrieve(&self, id: &str) -> Result<Refund, Error> {
        self.client
            .get(&format!("/refunds/{}", segment(id)), &[])
            .await
    }

    pub async fn update(&self, id: &str, params: &UpdateRefund) -> Result<Refund, Error> {
        self.client
            .post(
                &format!("/refunds/{}", segment(id)),
                params,
                &RequestOptions::default(),
            )
            .await
    }

    /// One page, newest first.
    pub async fn list(&self, params: &ListRefunds) -> Result<List<Refund>, Error> {
        self.client.list_page("/refunds", params).await
    }

    /// Every matching refund, newest first.
    pub fn list_stream(&self, params: ListRefunds) -> BoxStream<'static, Result<Refund, Error>> {
        self.client.list_stream("/refunds", params)
    }
}

impl Client {
    /// Refunds: create, retrieve, update, list.
    pub fn refunds(&self) -> Refunds<'_> {
        Refunds { client: self }
    }
}
