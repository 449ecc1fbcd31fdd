//! Payments: the resource, its status, and its state machine (CONTRACT §2). Pure.
//!
//! A payment's status changes in two ways, each one function here:
//! - [`authorised`]: what the card's authoriser answered at creation (or a processor later
//!   said), whichever authorised it, the built-in acquirer or a connector:
//!
//!   | [`Authorised`]        | status             | also                                        |
//!   |-----------------------|--------------------|---------------------------------------------|
//!   | `Captured(n)`         | `succeeded`        | `amount_captured` = n; no next action       |
//!   | `Held`                | `requires_capture` | no next action                              |
//!   | `Authenticate(next)`  | `requires_action`  | `next_action` = next                        |
//!   | `Pending`             | `processing`       | the next action stays (the processor may still be waiting for it) |
//!   | `Declined(d)`         | `failed`           | `failure_code`, `decline_code`, `failure_message` from d; no next action |
//!
//! - [`transition`]: what happens to an existing payment (authenticated, captured, canceled,
//!   settled), refused with 400 `payment_unexpected_state` when its status does not allow it.
//!
//! [`Payment`] serialises to its stored form: compact, without nulls or derivable fields. What
//! the API shows of it is rendered by [`crate::documents::render`].

use serde::{Deserialize, Serialize};

use crate::card::CardBrand;
use crate::error::CoreError;
use crate::metadata::Metadata;
use crate::money::Currency;
use crate::payments::acquirer::Decline;

/// Uncaptured authorisations are released after 7 days.
pub const AUTHORIZATION_TTL_SECS: i64 = 7 * 24 * 3600;
/// A 3-D Secure authentication not completed within an hour is abandoned.
pub const AUTHENTICATION_TIMEOUT_SECS: i64 = 3600;
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PaymentStatus {
    /// Created without a payment method (or after a decline, shown so through `/v1`):
    /// waiting for one to be confirmed with.
    RequiresPaymentMethod,
    /// Created with a payment method, not yet confirmed.
    RequiresConfirmation,
    RequiresAction,
    RequiresCapture,
    Processing,
    Succeeded,
    Failed,
    Canceled,
}

impl PaymentStatus {
    /// Whether a connector's payment in this status can still be moved by its processor
    /// (CONTRACT §15): it is synced and listens to the processor's webhooks. Processing,
    /// authenticating, or held for a capture the processor may make or release itself.
    pub fn awaits_processor(self) -> bool {
        matches!(
            self,
            PaymentStatus::Processing
                | PaymentStatus::RequiresAction
                | PaymentStatus::RequiresCapture
        )
    }

    pub const ALL: [PaymentStatus; 8] = [
        PaymentStatus::RequiresPaymentMethod,
        PaymentStatus::RequiresConfirmation,
        PaymentStatus::RequiresAction,
        PaymentStatus::RequiresCapture,
        PaymentStatus::Processing,
        PaymentStatus::Succeeded,
        PaymentStatus::Failed,
        PaymentStatus::Canceled,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            PaymentStatus::RequiresPaymentMethod => "requires_payment_method",
            PaymentStatus::RequiresConfirmation => "requires_confirmation",
            PaymentStatus::RequiresAction => "requires_action",
            PaymentStatus::RequiresCapture => "requires_capture",
            PaymentStatus::Processing => "processing",
            PaymentStatus::Succeeded => "succeeded",
            PaymentStatus::Failed => "failed",
            PaymentStatus::Canceled => "canceled",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|status| status.as_str() == s)
    }
}

/// What can happen to an existing payment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transition {
    /// The customer completed (or failed) 3-D Secure; `capture` is the payment's capture method.
    Authenticate { success: bool, capture: bool },
    /// `POST /payments/{id}/capture`.
    Capture,
    /// `POST /payments/{id}/cancel`, or expiry of an uncaptured authorisation.
    Cancel,
    /// A bank transfer settled (or bounced).
    Settle { success: bool },
}

impl Transition {
    /// The past participle, for "cannot be …" messages.
    fn done(self) -> &'static str {
        match self {
            Transition::Authenticate { .. } => "authenticated",
            Transition::Capture => "captured",
            Transition::Cancel => "canceled",
            Transition::Settle { .. } => "settled",
        }
    }
}

/// The state machine: the status a payment in `from` moves to under `t`, or 400
/// `payment_unexpected_state` naming the current status.
pub fn transition(from: PaymentStatus, t: Transition) -> Result<PaymentStatus, CoreError> {
    use PaymentStatus::*;
    let to = match (from, t) {
        (RequiresAction, Transition::Authenticate { success: false, .. }) => Some(Failed),
        (
            RequiresAction,
            Transition::Authenticate {
                success: true,
                capture: true,
            },
        ) => Some(Succeeded),
        (
            RequiresAction,
            Transition::Authenticate {
                success: true,
                capture: false,
            },
        ) => Some(RequiresCapture),
        (RequiresAction | RequiresCapture, Transition::Cancel) => Some(Canceled),
        // Nothing was authorised: an intent never confirmed, or one whose last try was declined.
        (RequiresPaymentMethod | RequiresConfirmation | Failed, Transition::Cancel) => {
            Some(Canceled)
        }
        (RequiresCapture, Transition::Capture) => Some(Succeeded),
        (Processing, Transition::Settle { success }) => {
            Some(if success { Succeeded } else { Failed })
        }
        _ => None,
    };
    to.ok_or_else(|| CoreError::UnexpectedState {
        message: format!(
            "This payment's status is {}, so it cannot be {}.",
            from.as_str(),
            t.done()
        ),
    })
}

/// What a card's authoriser answered, in Tender's terms ([`authorised`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Authorised {
    /// The money moved: this many minor units were captured.
    Captured(i64),
    /// Authorised, waiting for a capture.
    Held,
    /// The cardholder must authenticate; the payment's `next_action` says where.
    Authenticate(serde_json::Value),
    /// A processor is still working on it.
    Pending,
    /// Refused.
    Declined(Decline),
    /// Released at the processor at `at`, nothing captured (its reason is the processor's).
    Canceled { at: i64 },
}

/// `payment` as its authoriser's answer leaves it (the table in the module doc).
pub fn authorised(payment: &mut Payment, answer: Authorised) {
    if answer != Authorised::Pending {
        payment.next_action = None;
    }
    match answer {
        Authorised::Captured(captured) => {
            payment.status = PaymentStatus::Succeeded;
            payment.amount_captured = captured;
        }
        Authorised::Held => payment.status = PaymentStatus::RequiresCapture,
        Authorised::Authenticate(next_action) => {
            payment.status = PaymentStatus::RequiresAction;
            payment.next_action = Some(next_action);
        }
        Authorised::Pending => payment.status = PaymentStatus::Processing,
        Authorised::Canceled { at } => {
            payment.status = PaymentStatus::Canceled;
            payment.canceled_at = Some(at);
            payment.cancellation_reason = None;
        }
        Authorised::Declined(d) => {
            payment.status = PaymentStatus::Failed;
            payment.failure_code = Some(d.code.to_string());
            payment.decline_code = Some(d.decline_code.to_string());
            payment.failure_message = Some(d.message.to_string());
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CaptureMethod {
    Automatic,
    Manual,
}

/// The card as shown on a payment or payment method: never the full number.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CardDetails {
    pub brand: CardBrand,
    pub last4: String,
    pub exp_month: u8,
    pub exp_year: u16,
    pub fingerprint: String,
    pub country: String,
    pub funding: String,
}

/// The bank account as shown on a payment: never the full IBAN.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BankTransferDetails {
    pub last4: String,
    pub country: String,
    pub account_holder_name: String,
}

/// The payment method embedded in a payment (seed 2.2 response shape). Empty (`id` `""`)
/// while a payment created through `/v1` awaits one; shown then as `null`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PaymentMethodSnapshot {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub card: Option<CardDetails>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub bank_transfer: Option<BankTransferDetails>,
    /// `type: connector_token`: the processor's own payment method, passed through.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub connector_token: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CancellationReason {
    Duplicate,
    Fraudulent,
    RequestedByCustomer,
    Abandoned,
}

impl CancellationReason {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "duplicate" => Some(Self::Duplicate),
            "fraudulent" => Some(Self::Fraudulent),
            "requested_by_customer" => Some(Self::RequestedByCustomer),
            "abandoned" => Some(Self::Abandoned),
            _ => None,
        }
    }
}

/// A payment (`pay_…`), as stored: absent options, zero amounts, `false` and empty metadata
/// are left out (`skip_serializing_if`, read back by `default`), and fields of older rows that
/// are rendered now (`object`, `receipt_url`) are ignored when read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Payment {
    pub id: String,
    pub amount: i64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub amount_captured: i64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub amount_refunded: i64,
    #[serde(default, skip_serializing_if = "is_false")]
    pub refunded: bool,
    pub currency: Currency,
    pub status: PaymentStatus,
    pub capture_method: CaptureMethod,
    /// Read back from the view too, where a payment awaiting one shows `null`.
    #[serde(deserialize_with = "null_as_default")]
    pub payment_method: PaymentMethodSnapshot,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub customer: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Metadata::is_empty")]
    pub metadata: Metadata,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_code: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decline_code: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_action: Option<serde_json::Value>,
    /// Where the 3-D Secure page sends the customer afterwards.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub return_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canceled_at: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancellation_reason: Option<CancellationReason>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub livemode: bool,
    pub created: i64,
    /// The connector (`conn_…`) that took the payment; `None` for the implicit simulator.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connector: Option<String>,
    /// The processor's id of the payment (a Stripe `pi_…`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connector_reference: Option<String>,
    /// The `charge` balance transaction (`txn_…`) of what it captured (CONTRACT §9).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub balance_transaction: Option<String>,
    /// Whether a dispute was opened against it.
    #[serde(default, skip_serializing_if = "is_false")]
    pub disputed: bool,
    /// The invoice (`in_…`) it tried to pay, for a subscription's payment (CONTRACT §10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invoice: Option<String>,
    /// Created through `/v1` to be confirmed later with `setup_future_usage`: the card it is
    /// confirmed with is saved to its customer then.
    #[serde(default, skip_serializing_if = "is_false")]
    pub save_payment_method: bool,
    /// What its processor booked for the capture (its balance transaction: amount, fee, net),
    /// read from the processor after the capture (CONTRACT §15); `None` for the simulator's
    /// payments, which Tender's own pricing books. Kept, not shown (the balance transaction
    /// shows the fee).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub processor_settlement: Option<ProcessorSettlement>,
    /// Not stored: the version of the row this payment replaces when it is the confirmation of
    /// one created earlier ([`crate::payments::intents`]); `None` for a new payment. Where a
    /// new payment is inserted, a confirmed one updates its row at this version.
    #[serde(skip)]
    pub stored_version: Option<i64>,
}

/// A processor's balance transaction for a capture (CONTRACT §15): what it took in, its fee
/// and what it keeps for the merchant, in the payment's currency.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessorSettlement {
    /// The processor's id of it (a Stripe `txn_…`).
    pub reference: String,
    pub amount: i64,
    pub fee: i64,
    pub net: i64,
    /// Lower-case ISO 4217, as the processor wrote it.
    pub currency: String,
    /// The processor's words for the fee ("Stripe processing fees"), bounded.
    pub description: String,
}

impl Payment {
    /// The connector whose processor holds what it captured (CONTRACT §15): one that booked
    /// it itself; `None` when Tender holds the money (the simulator, bank transfers).
    pub fn held_by(&self) -> Option<&str> {
        self.processor_settlement
            .as_ref()
            .and(self.connector.as_deref())
    }

    /// Whether it waits to be confirmed (no try made yet, or the last one declined).
    pub fn awaits_confirmation(&self) -> bool {
        matches!(
            self.status,
            PaymentStatus::RequiresPaymentMethod
                | PaymentStatus::RequiresConfirmation
                | PaymentStatus::Failed
        )
    }
}

impl crate::documents::document::Document for Payment {
    const COLLECTION: crate::store::Collection = crate::store::Collection::Payments;

    fn id(&self) -> &str {
        &self.id
    }

    fn created(&self) -> i64 {
        self.created
    }

    fn index(&self) -> crate::store::IndexValues {
        use crate::store::IndexValues;
        IndexValues {
            customer: self.customer.clone(),
            status: Some(self.status.as_str().to_string()),
            ..IndexValues::default()
        }
    }
}

fn null_as_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Option::unwrap_or_default)
}

fn is_zero(n: &i64) -> bool {
    *n == 0
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl Payment {
    /// What is left to refund.
    pub fn refundable(&self) -> i64 {
        self.amount_captured - self.amount_refunded
    }
}

#[cfg(test)]
mod tests {
    use super::PaymentStatus::*;
    use super::*;

    fn payment_in(status: PaymentStatus) -> Payment {
        serde_json::from_value(serde_json::json!({
            "id": "pay_1", "amount": 500, "currency": "eur", "status": status.as_str(),
            "capture_method": "automatic",
            "payment_method": {"id": "pm_1", "type": "card"},
            "next_action": {"type": "redirect_to_url"},
            "livemode": false, "created": 1
        }))
        .unwrap()
    }

    #[test]
    fn what_each_answer_of_an_authoriser_does_to_a_payment() {
        let d = Decline::AUTHENTICATION_FAILED;
        let rows: [(Authorised, PaymentStatus, i64, bool); 5] = [
            (Authorised::Captured(300), Succeeded, 300, false),
            (Authorised::Held, RequiresCapture, 0, false),
            (
                Authorised::Authenticate(serde_json::json!({"type": "x"})),
                RequiresAction,
                0,
                true,
            ),
            (Authorised::Pending, Processing, 0, true),
            (Authorised::Declined(d.clone()), Failed, 0, false),
        ];
        for (answer, status, captured, next_action) in rows {
            let mut p = payment_in(Processing);
            authorised(&mut p, answer.clone());
            assert_eq!(p.status, status, "{answer:?}");
            assert_eq!(p.amount_captured, captured, "{answer:?}");
            assert_eq!(p.next_action.is_some(), next_action, "{answer:?}");
            let declined = matches!(answer, Authorised::Declined(_));
            assert_eq!(
                p.decline_code.as_deref(),
                declined.then_some(&*d.decline_code),
                "{answer:?}"
            );
        }
    }

    #[test]
    fn every_allowed_transition_of_the_contract_table() {
        let t = |from, tr| transition(from, tr).expect("allowed");
        assert_eq!(
            t(
                RequiresAction,
                Transition::Authenticate {
                    success: true,
                    capture: true
                }
            ),
            Succeeded
        );
        assert_eq!(
            t(
                RequiresAction,
                Transition::Authenticate {
                    success: true,
                    capture: false
                }
            ),
            RequiresCapture
        );
        assert_eq!(
            t(
                RequiresAction,
                Transition::Authenticate {
                    success: false,
                    capture: true
                }
            ),
            Failed
        );
        assert_eq!(t(RequiresAction, Transition::Cancel), Canceled);
        assert_eq!(t(RequiresCapture, Transition::Capture), Succeeded);
        assert_eq!(t(RequiresCapture, Transition::Cancel), Canceled);
        assert_eq!(
            t(Processing, Transition::Settle { success: true }),
            Succeeded
        );
        assert_eq!(t(Processing, Transition::Settle { success: false }), Failed);
    }

    #[test]
    fn terminal_states_refuse_everything_and_name_the_state() {
        let all = [
            Transition::Authenticate {
                success: true,
                capture: true,
            },
            Transition::Capture,
            Transition::Cancel,
            Transition::Settle { success: true },
        ];
        for from in [Succeeded, Failed, Canceled] {
            // A declined payment may still be canceled (a PaymentIntent given up on).
            for tr in all
                .into_iter()
                .filter(|t| from != Failed || *t != Transition::Cancel)
            {
                match transition(from, tr) {
                    Err(CoreError::UnexpectedState { message }) => {
                        assert!(message.contains(from.as_str()), "{message}");
                        assert!(message.ends_with("ed."), "{message}");
                    }
                    other => panic!("{from:?} {tr:?} gave {other:?}"),
                }
            }
        }
        assert!(transition(Processing, Transition::Capture).is_err());
        assert!(transition(Processing, Transition::Cancel).is_err());
        assert!(transition(RequiresCapture, Transition::Settle { success: true }).is_err());
    }

    #[test]
    fn status_round_trips_through_its_name() {
        for s in PaymentStatus::ALL {
            assert_eq!(PaymentStatus::parse(s.as_str()), Some(s));
        }
        assert_eq!(PaymentStatus::parse("pending"), None);
    }
}
