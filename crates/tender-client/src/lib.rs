//! A typed async client for the Tender payments API (reference: `docs/api.md` in the
//! repository), and webhook signature verification.
//!
//! ```no_run
//! use tender_client::{CardParams, Client, CreatePayment};
//!
//! # async fn run() -> Result<(), tender_client::Error> {
//! let client = Client::new("http://127.0.0.1:4242/v2", "sk_test_…");
//! let card = CardParams::new("4242424242424242", 12, 2034, "123");
//! let payment = client
//!     .payments()
//!     .create(&CreatePayment::new(2000, "usd", card).description("Order #1001"))
//!     .await?;
//! println!("{} is {} — receipt at {}", payment.id, payment.status, payment.receipt_url);
//! # Ok(()) }
//! ```
//!
//! # Shape
//! Operations hang off resource handles — `client.payments()`, `customers()`, `refunds()`,
//! `payment_methods()`, `events()`, `webhook_endpoints()` — named after the API's verbs:
//! `create`, `retrieve`, `update`, `delete`, `list`, `list_stream`, plus `capture`, `cancel`,
//! `attach`, `detach`, `deliveries`, `resend`, `roll_secret`, and `events().stream` (new events
//! as they happen, over server-sent events). Parameters are plain structs
//! (`Default` where every field is optional, `new` plus chained setters where some are
//! required); answers are `serde` structs of the wire JSON that ignore fields they do not
//! know, and enums have an `Unknown` variant for values newer than this crate.
//!
//! # Errors
//! Every call returns `Result<T, `[`Error`]`>`. An answer from the API is [`Error::Api`] with
//! an [`ApiError`]: `status`, `kind` ([`ErrorType`]), `code`, `message`, `param`,
//! `decline_code`, `payment` (the failed payment of a decline) and `request_id`. No answer at
//! all is [`Error::Transport`].
//!
//! ```no_run
//! # use tender_client::{CardParams, Client, CreatePayment, Error, ErrorType};
//! # async fn run(client: Client) {
//! let card = CardParams::new("4000000000009995", 12, 2034, "123");
//! match client.payments().create(&CreatePayment::new(2000, "usd", card)).await {
//!     Err(Error::Api(e)) if e.kind == ErrorType::CardError => {
//!         // e.code == "card_declined", e.decline_code == Some("insufficient_funds"),
//!         // e.payment == Some("pay_…"), the failed payment.
//!     }
//!     other => { /* … */ }
//! }
//! # }
//! ```
//!
//! # Retries and idempotency
//! Every `POST` carries an `Idempotency-Key`: a random one per call (or yours, through
//! `create_with` and [`RequestOptions`]), repeated on each retry, so a retried payment is
//! charged once. Network errors, 409 `idempotency_error` (the first try is still running), 429
//! (after its `Retry-After`) and 5xx are retried with exponential backoff and jitter
//! ([`RetryPolicy`]: 3 retries from 0.5 s by default); other 4xx never are.
//!
//! # Pagination
//! `list` returns one [`List`] page; `list_stream` returns a [`futures::Stream`] of every
//! object from the newest (or `starting_after`) to the oldest, fetching pages of `limit` as
//! it is polled:
//!
//! ```no_run
//! # use futures::TryStreamExt;
//! # use tender_client::{Client, ListCustomers};
//! # async fn run(client: Client) -> Result<(), tender_client::Error> {
//! let all: Vec<_> = client
//!     .customers()
//!     .list_stream(ListCustomers { limit: Some(100), ..Default::default() })
//!     .try_collect()
//!     .await?;
//! # Ok(()) }
//! ```
//!
//! # Webhooks
//! [`webhook::verify`] checks a delivery's `Tender-Signature` against the raw body and the
//! endpoint's secret and returns the typed [`Event`].
//!
//! # Layout
//! - [`client`]: `Client`, its builder, retries and idempotency keys.
//! - [`error`]: `Error`, `ApiError`, `ErrorType`.
//! - [`list`]: `List`, `CreatedFilter`, the streams.
//! - one module per resource: [`payments`], [`customers`], [`refunds`], [`payment_methods`],
//!   [`events`], [`webhook_endpoints`]; shared shapes in [`common`].
//! - [`webhook`]: signature verification.

pub mod client;
pub mod common;
pub mod customers;
pub mod error;
pub mod events;
pub mod list;
pub mod payment_methods;
pub mod payments;
pub mod refunds;
pub mod webhook;
pub mod webhook_endpoints;

pub use client::{Client, ClientBuilder, RequestOptions, RetryPolicy, API_VERSION};
pub use common::{Address, Card, CardBrand, CardParams, Deleted, Metadata};
pub use customers::{
    CreateCustomer, Customer, CustomerParams, Customers, ListCustomers, UpdateCustomer,
};
pub use error::{ApiError, Error, ErrorType};
pub use events::{
    DeliveryAttempt, DeliveryStatus, Event, EventData, EventRequest, Events, ListEvents,
    ResendEvent, StreamedEvent, WebhookDelivery,
};
pub use list::{CreatedFilter, HasId, List, ListParams};
pub use payment_methods::{
    AttachPaymentMethod, CreatePaymentMethod, ListPaymentMethods, PaymentMethod, PaymentMethods,
};
pub use payments::{
    BankTransferDetails, CancelPayment, CancellationReason, CaptureMethod, CapturePayment,
    CreatePayment, ListPayments, NextAction, Payment, PaymentMethodDetails, PaymentMethodParam,
    PaymentStatus, Payments, RedirectToUrl, UpdatePayment,
};
pub use refunds::{
    CreateRefund, ListRefunds, Refund, RefundReason, RefundStatus, Refunds, UpdateRefund,
};
pub use webhook_endpoints::{
    CreateWebhookEndpoint, EndpointStatus, ListWebhookEndpoints, RollSecret, UpdateWebhookEndpoint,
    WebhookEndpoint, WebhookEndpoints,
};
