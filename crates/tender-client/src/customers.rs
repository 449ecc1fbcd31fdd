//! Customers (`/v2/customers`): create, retrieve, update, delete, list.

use futures::stream::BoxStream;
use serde::{Deserialize, Serialize};

use crate::client::{segment, Client, RequestOptions};
use crate::common::{Address, Deleted, Metadata};
use crate::error::Error;
use crate::list::{list_params, HasId, List};

/// A customer (`cus_…`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Customer {
    pub id: String,
    pub object: String,
    pub email: Option<String>,
    pub name: Option<String>,
    pub phone: Option<String>,
    pub address: Option<Address>,
    pub description: Option<String>,
    #[serde(default)]
    pub metadata: Metadata,
    pub livemode: bool,
    pub created: i64,
}

impl HasId for Customer {
    fn id(&self) -> &str {
        &self.id
    }
}

/// The writable fields of a customer, for create and update. All optional; on update omitted
/// fields stay, `""` clears a field, `address` merges sub-field by sub-field and `metadata`
/// merges key by key (`""` removes a key).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CustomerParams {
    /// A plausible address, ≤ 512 characters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `+` and 8–15 digits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phone: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub address: Option<Address>,
    /// ≤ 1,000 characters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// `POST /customers`.
pub type CreateCustomer = CustomerParams;
/// `POST /customers/{id}`.
pub type UpdateCustomer = CustomerParams;

list_params! {
    /// `GET /customers`.
    ListCustomers {
        /// Only customers with exactly this e-mail.
        email: String => "email",
    }
}

/// The customer operations: `client.customers()`.
#[derive(Debug, Clone, Copy)]
pub struct Customers<'a> {
    pub(crate) client: &'a Client,
}

impl Customers<'_> {
    pub async fn create(&self, params: &CreateCustomer) -> Result<Customer, Error> {
        self.client
            .post("/customers", params, &RequestOptions::default())
            .await
    }

    pub async fn retrieve(&self, id: &str) -> Result<Customer, Error> {
        self.client
            .get(&format!("/customers/{}", segment(id)), &[])
            .await
    }

    /// A call that changes nothing emits no `customer.updated` event.
    pub async fn update(&self, id: &str, params: &UpdateCustomer) -> Result<Customer, Error> {
        self.client
            .post(
                &format!("/customers/{}", segment(id)),
                params,
                &RequestOptions::default(),
            )
            .await
    }

    /// Deletes the customer (404 afterwards) and detaches its saved cards; its payments keep
    /// the id.
    pub async fn delete(&self, id: &str) -> Result<Deleted, Error> {
        self.client
            .delete(&format!("/customers/{}", segment(id)))
            .await
    }

    /// One page, newest first.
    pub async fn list(&self, params: &ListCustomers) -> Result<List<Customer>, Error> {
        self.client.list_page("/customers", params).await
    }

    /// Every matching customer, newest first.
    pub fn list_stream(
        &self,
        params: ListCustomers,
    ) -> BoxStream<'static, Result<Customer, Error>> {
        self.client.list_stream("/customers", params)
    }
}

impl Client {
    /// Customers: create, retrieve, update, delete, list.
    pub fn customers(&self) -> Customers<'_> {
        Customers { client: self }
    }
}
