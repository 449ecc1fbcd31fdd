//! Payment methods (`/v2/payment_methods`): tokenise a card (the one call a publishable key
//! may make), retrieve, attach to a customer, detach, list a customer's.

use futures::stream::BoxStream;
use serde::{Deserialize, Serialize};

use crate::client::{segment, Client, RequestOptions};
use crate::common::{Card, CardParams, Metadata};
use crate::error::Error;
use crate::list::{list_params, HasId, List};

/// A payment method (`pm_…`): a tokenised card.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct PaymentMethod {
    pub id: String,
    pub object: String,
    /// `card`.
    #[serde(rename = "type")]
    pub kind: String,
    pub card: Card,
    /// The customer it is saved to; `None` for a one-time token (usable for one payment).
    pub customer: Option<String>,
    #[serde(default)]
    pub metadata: Metadata,
    pub livemode: bool,
    pub created: i64,
}

impl HasId for PaymentMethod {
    fn id(&self) -> &str {
        &self.id
    }
}

/// `POST /payment_methods`: a card to tokenise.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CreatePaymentMethod {
    /// Always `card`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub card: CardParams,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

impl CreatePaymentMethod {
    pub fn card(card: CardParams) -> Self {
        Self {
            kind: "card",
            card,
            metadata: None,
        }
    }
}

/// `POST /payment_methods/{id}/attach`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct AttachPaymentMethod {
    pub customer: String,
}

list_params! {
    /// `GET /payment_methods`: `customer` is required.
    ListPaymentMethods {
        /// The customer whose saved methods to list (required by the server).
        customer: String => "customer",
        /// `card` (the only type).
        kind: String => "type",
    }
}

impl ListPaymentMethods {
    /// The first page of `customer`'s saved payment methods.
    pub fn for_customer(customer: impl Into<String>) -> Self {
        Self {
            customer: Some(customer.into()),
            ..Self::default()
        }
    }
}

/// The payment method operations: `client.payment_methods()`.
#[derive(Debug, Clone, Copy)]
pub struct PaymentMethods<'a> {
    pub(crate) client: &'a Client,
}

impl PaymentMethods<'_> {
    /// Tokenises a card (validated as for a payment; 402 `card_error` if invalid). Works with a
    /// publishable key.
    pub async fn create(&self, params: &CreatePaymentMethod) -> Result<PaymentMethod, Error> {
        self.client
            .post("/payment_methods", params, &RequestOptions::default())
            .await
    }

    pub async fn retrieve(&self, id: &str) -> Result<PaymentMethod, Error> {
        self.client
            .get(&format!("/payment_methods/{}", segment(id)), &[])
            .await
    }

    /// Saves the card to a customer for later charges (the card is verified first: a card
    /// that would decline is refused with a `card_error`).
    pub async fn attach(
        &self,
        id: &str,
        params: &AttachPaymentMethod,
    ) -> Result<PaymentMethod, Error> {
        self.client
            .post(
                &format!("/payment_methods/{}/attach", segment(id)),
                params,
                &RequestOptions::default(),
            )
            .await
    }

    /// Detaches it from its customer; the vaulted card is forgotten, so it can never be
    /// charged again.
    pub async fn detach(&self, id: &str) -> Result<PaymentMethod, Error> {
        self.client
            .post(
                &format!("/payment_methods/{}/detach", segment(id)),
                &serde_json::json!({}),
                &RequestOptions::default(),
            )
            .await
    }

    /// One page of a customer's saved methods, newest first.
    pub async fn list(&self, params: &ListPaymentMethods) -> Result<List<PaymentMethod>, Error> {
        self.client.list_page("/payment_methods", params).await
    }

    /// All of a customer's saved methods, newest first.
    pub fn list_stream(
        &self,
        params: ListPaymentMethods,
    ) -> BoxStream<'static, Result<PaymentMethod, Error>> {
        self.client.list_stream("/payment_methods", params)
    }
}

impl Client {
    /// Payment methods: create (tokenise), retrieve, attach, detach, list.
    pub fn payment_methods(&self) -> PaymentMethods<'_> {
        PaymentMethods { client: self }
    }
}
