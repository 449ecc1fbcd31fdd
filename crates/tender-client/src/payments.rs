//! Payments (`/v2/payments`): create with a card, a saved or tokenised `pm_…`, or a bank
//! transfer; retrieve, update, capture, cancel, list.

use futures::stream::BoxStream;
use serde::{Deserialize, Serialize, Serializer};

use crate::client::{segment, Client, RequestOptions};
use crate::common::{Card, CardParams, Metadata};
use crate::error::Error;
use crate::list::{list_params, HasId, List};

/// Where a payment is in its life (CONTRACT §2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum PaymentStatus {
    /// Created through Stripe's `/v1` without a payment method, not tried yet.
    RequiresPaymentMethod,
    /// Created through Stripe's `/v1` with a payment method, not confirmed yet.
    RequiresConfirmation,
    /// The card needs 3-D Secure: send the customer to `next_action.redirect_to_url.url`.
    RequiresAction,
    /// Authorised with `capture: false`; capture or cancel it (released after 7 days).
    RequiresCapture,
    /// A bank transfer in flight.
    Processing,
    Succeeded,
    Failed,
    Canceled,
    /// A status newer than this client.
    #[serde(other)]
    Unknown,
}

impl PaymentStatus {
    /// The wire name (`requires_capture`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::RequiresPaymentMethod => "requires_payment_method",
            Self::RequiresConfirmation => "requires_confirmation",
            Self::RequiresAction => "requires_action",
            Self::RequiresCapture => "requires_capture",
            Self::Processing => "processing",
            Self::Succeeded => "succeeded",
            Self::Failed => "failed",
            Self::Canceled => "canceled",
            Self::Unknown => "unknown",
        }
    }
}

impl std::fmt::Display for PaymentStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `automatic` (charged at once) or `manual` (authorised, captured later).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum CaptureMethod {
    Automatic,
    Manual,
    #[serde(other)]
    Unknown,
}

/// Why a payment was canceled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum CancellationReason {
    Duplicate,
    Fraudulent,
    RequestedByCustomer,
    /// Also set by the server when 3-D Secure was not completed within an hour or an
    /// authorisation was not captured within 7 days.
    Abandoned,
    #[serde(other)]
    Unknown,
}

/// A bank account as shown on a payment: never the full IBAN.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct BankTransferDetails {
    pub last4: String,
    pub country: String,
    pub account_holder_name: String,
}

/// The payment method embedded in a payment.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct PaymentMethodDetails {
    /// The `pm_…` used or created for this payment.
    pub id: String,
    /// `card` or `bank_transfer`.
    #[serde(rename = "type")]
    pub kind: String,
    pub card: Option<Card>,
    pub bank_transfer: Option<BankTransferDetails>,
}

/// The redirect a `requires_action` payment waits on.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct RedirectToUrl {
    /// The 3-D Secure page (on the receipt host).
    pub url: String,
    /// Where the customer is sent afterwards (with `?payment=pay_…` appended).
    pub return_url: Option<String>,
}

/// What the customer must do next.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct NextAction {
    /// `redirect_to_url`.
    #[serde(rename = "type")]
    pub kind: String,
    pub redirect_to_url: Option<RedirectToUrl>,
}

/// A payment (`pay_…`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Payment {
    pub id: String,
    pub object: String,
    /// What was authorised, in the currency's minor unit.
    pub amount: i64,
    /// What was taken (≤ `amount`).
    pub amount_captured: i64,
    pub amount_refunded: i64,
    /// Fully refunded.
    pub refunded: bool,
    /// Lower-case ISO 4217 code.
    pub currency: String,
    pub status: PaymentStatus,
    pub capture_method: CaptureMethod,
    /// `None` only while a payment created through Stripe's `/v1` awaits a payment method.
    pub payment_method: Option<PaymentMethodDetails>,
    pub customer: Option<String>,
    pub description: Option<String>,
    #[serde(default)]
    pub metadata: Metadata,
    /// The public receipt page.
    pub receipt_url: String,
    pub failure_code: Option<String>,
    pub failure_message: Option<String>,
    pub decline_code: Option<String>,
    pub next_action: Option<NextAction>,
    #[serde(default)]
    pub return_url: Option<String>,
    pub canceled_at: Option<i64>,
    pub cancellation_reason: Option<CancellationReason>,
    pub livemode: bool,
    pub created: i64,
}

impl HasId for Payment {
    fn id(&self) -> &str {
        &self.id
    }
}

/// How a payment is paid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PaymentMethodParam {
    /// A card given in full (server-side integrations).
    Card(CardParams),
    /// A `pm_…`: tokenised with a publishable key (used once) or saved to the customer.
    Id(String),
    /// A SEPA-style bank transfer: the payment is `processing` until it settles.
    BankTransfer {
        iban: String,
        account_holder_name: String,
    },
}

impl PaymentMethodParam {
    pub fn card(card: CardParams) -> Self {
        Self::Card(card)
    }

    pub fn id(id: impl Into<String>) -> Self {
        Self::Id(id.into())
    }

    pub fn bank_transfer(iban: impl Into<String>, account_holder_name: impl Into<String>) -> Self {
        Self::BankTransfer {
            iban: iban.into(),
            account_holder_name: account_holder_name.into(),
        }
    }
}

impl From<CardParams> for PaymentMethodParam {
    fn from(card: CardParams) -> Self {
        Self::Card(card)
    }
}

impl Serialize for PaymentMethodParam {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde_json::json;
        match self {
            Self::Id(id) => s.serialize_str(id),
            Self::Card(card) => json!({"type": "card", "card": card}).serialize(s),
            Self::BankTransfer {
                iban,
                account_holder_name,
            } => json!({
                "type": "bank_transfer",
                "bank_transfer": {"iban": iban, "account_holder_name": account_holder_name},
            })
            .serialize(s),
        }
    }
}

/// `POST /payments`. Build with [`CreatePayment::new`] and the chained setters, or as a
/// struct literal.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CreatePayment {
    /// In the currency's minor unit: 1…99,999,999 and at least the currency's minimum
    /// (50 for usd/eur, 30 for gbp, 50 for jpy, 500 for three-decimal currencies).
    pub amount: i64,
    /// ISO 4217 code, any case.
    pub currency: String,
    pub payment_method: PaymentMethodParam,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub customer: Option<String>,
    /// ≤ 1,000 characters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// `false`: authorise only (`requires_capture`). Default true.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capture: Option<bool>,
    /// Attach the card to `customer` for later charges (needs `customer`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub save_payment_method: Option<bool>,
    /// Where 3-D Secure sends the customer back (absolute http(s) URL).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub return_url: Option<String>,
}

impl CreatePayment {
    pub fn new(
        amount: i64,
        currency: impl Into<String>,
        payment_method: impl Into<PaymentMethodParam>,
    ) -> Self {
        Self {
            amount,
            currency: currency.into(),
            payment_method: payment_method.into(),
            customer: None,
            description: None,
            metadata: None,
            capture: None,
            save_payment_method: None,
            return_url: None,
        }
    }

    pub fn customer(mut self, customer: impl Into<String>) -> Self {
        self.customer = Some(customer.into());
        self
    }

    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Adds one metadata entry.
    pub fn metadata(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.metadata
            .get_or_insert_with(Metadata::new)
            .insert(key.into(), value.into());
        self
    }

    pub fn capture(mut self, capture: bool) -> Self {
        self.capture = Some(capture);
        self
    }

    pub fn save_payment_method(mut self, save: bool) -> Self {
        self.save_payment_method = Some(save);
        self
    }

    pub fn return_url(mut self, url: impl Into<String>) -> Self {
        self.return_url = Some(url.into());
        self
    }
}

/// `POST /payments/{id}`: only the fields given change.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct UpdatePayment {
    /// `""` clears it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Merged into the stored metadata; `""` removes a key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// Only while the payment has none (or the same one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub customer: Option<String>,
}

/// `POST /payments/{id}/capture`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CapturePayment {
    /// ≤ the authorised amount; default all of it. The rest is released.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub amount: Option<i64>,
}

/// `POST /payments/{id}/cancel`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CancelPayment {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cancellation_reason: Option<CancellationReason>,
}

list_params! {
    /// `GET /payments`.
    ListPayments {
        /// Only this customer's payments.
        customer: String => "customer",
        /// Only payments in this status.
        status: PaymentStatus => "status",
    }
}

/// The payment operations: `client.payments()`.
#[derive(Debug, Clone, Copy)]
pub struct Payments<'a> {
    pub(crate) client: &'a Client,
}

impl Payments<'_> {
    /// Creates a payment. A decline is an [`Error::Api`] with type `card_error`, its `code`,
    /// `decline_code` and `payment` (the `failed` payment's id).
    pub async fn create(&self, params: &CreatePayment) -> Result<Payment, Error> {
        self.create_with(params, &RequestOptions::default()).await
    }

    /// [`Self::create`] with your own idempotency key.
    pub async fn create_with(
        &self,
        params: &CreatePayment,
        options: &RequestOptions,
    ) -> Result<Payment, Error> {
        self.client.post("/payments", params, options).await
    }

    pub async fn retrieve(&self, id: &str) -> Result<Payment, Error> {
        self.client
            .get(&format!("/payments/{}", segment(id)), &[])
            .await
    }

    /// Changes description, metadata, or the customer while unset. A call that changes
    /// nothing emits no event.
    pub async fn update(&self, id: &str, params: &UpdatePayment) -> Result<Payment, Error> {
        self.client
            .post(
                &format!("/payments/{}", segment(id)),
                params,
                &RequestOptions::default(),
            )
            .await
    }

    /// `requires_capture` → `succeeded`.
    pub async fn capture(&self, id: &str, params: &CapturePayment) -> Result<Payment, Error> {
        self.client
            .post(
                &format!("/payments/{}/capture", segment(id)),
                params,
                &RequestOptions::default(),
            )
            .await
    }

    /// `requires_capture` or `requires_action` → `canceled`.
    pub async fn cancel(&self, id: &str, params: &CancelPayment) -> Result<Payment, Error> {
        self.client
            .post(
                &format!("/payments/{}/cancel", segment(id)),
                params,
                &RequestOptions::default(),
            )
            .await
    }

    /// One page, newest first.
    pub async fn list(&self, params: &ListPayments) -> Result<List<Payment>, Error> {
        self.client.list_page("/payments", params).await
    }

    /// Every matching payment, newest first, fetching pages as the stream is polled.
    pub fn list_stream(&self, params: ListPayments) -> BoxStream<'static, Result<Payment, Error>> {
        self.client.list_stream("/payments", params)
    }
}

impl Client {
    /// Payments: create, retrieve, update, capture, cancel, list.
    pub fn payments(&self) -> Payments<'_> {
        Payments { client: self }
    }
}
