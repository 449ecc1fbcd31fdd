//! The SetupIntent (`seti_…`): a card saved for later without being charged, and the states it
//! passes through (the table in [`super`]'s doc). Pure.

use serde::{Deserialize, Serialize};

use crate::error::CoreError;
use crate::metadata::Metadata;

/// Where a SetupIntent stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SetupIntentStatus {
    RequiresPaymentMethod,
    RequiresConfirmation,
    Succeeded,
    Canceled,
}

impl SetupIntentStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            SetupIntentStatus::RequiresPaymentMethod => "requires_payment_method",
            SetupIntentStatus::RequiresConfirmation => "requires_confirmation",
            SetupIntentStatus::Succeeded => "succeeded",
            SetupIntentStatus::Canceled => "canceled",
        }
    }
}

/// How the saved card will be used: by the shop without the customer (`off_session`, the
/// default, as Stripe's) or with the customer present.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Usage {
    #[default]
    OffSession,
    OnSession,
}

impl Usage {
    pub fn parse(s: &str) -> Result<Usage, CoreError> {
        match s {
            "off_session" => Ok(Usage::OffSession),
            "on_session" => Ok(Usage::OnSession),
            _ => Err(CoreError::invalid(
                "usage",
                "parameter_invalid",
                "usage must be off_session or on_session.",
            )),
        }
    }
}

/// Why a SetupIntent was canceled (Stripe's reasons).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SetupCancellationReason {
    Abandoned,
    Duplicate,
    RequestedByCustomer,
}

impl SetupCancellationReason {
    pub fn parse(s: &str) -> Result<Self, CoreError> {
        match s {
            "abandoned" => Ok(Self::Abandoned),
            "duplicate" => Ok(Self::Duplicate),
            "requested_by_customer" => Ok(Self::RequestedByCustomer),
            _ => Err(CoreError::invalid(
                "cancellation_reason",
                "parameter_invalid",
                "cancellation_reason must be abandoned, duplicate or requested_by_customer.",
            )),
        }
    }
}

/// The decline of the last confirmation, kept until the next one succeeds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SetupError {
    pub code: String,
    pub decline_code: Option<String>,
    pub message: String,
    /// The payment method that was declined.
    pub payment_method: Option<String>,
}

/// A SetupIntent as `/v2` shows it (and stores it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SetupIntent {
    pub id: String,
    pub object: String,
    pub status: SetupIntentStatus,
    pub customer: Option<String>,
    /// The method to confirm with (`requires_confirmation`) or the one saved (`succeeded`).
    pub payment_method: Option<String>,
    pub usage: Usage,
    pub description: Option<String>,
    pub metadata: Metadata,
    pub last_setup_error: Option<SetupError>,
    pub cancellation_reason: Option<SetupCancellationReason>,
    pub canceled_at: Option<i64>,
    pub livemode: bool,
    pub created: i64,
}

impl SetupIntent {
    /// Whether it may be confirmed: it has not succeeded and was not canceled.
    pub fn awaits_confirmation(&self) -> bool {
        matches!(
            self.status,
            SetupIntentStatus::RequiresPaymentMethod | SetupIntentStatus::RequiresConfirmation
        )
    }

    /// 400 `setup_intent_unexpected_state` unless it [awaits confirmation](Self::awaits_confirmation).
    pub fn require_open(&self, doing: &str) -> Result<(), CoreError> {
        if self.awaits_confirmation() {
            return Ok(());
        }
        Err(CoreError::invalid(
            "setup_intent",
            "setup_intent_unexpected_state",
            format!(
                "This SetupIntent's status is {}, so it cannot be {doing}.",
                self.status.as_str()
            ),
        ))
    }

    /// The card `payment_method` was verified: saved.
    pub fn succeed(&mut self, payment_method: String) {
        self.status = SetupIntentStatus::Succeeded;
        self.payment_method = Some(payment_method);
        self.last_setup_error = None;
    }

    /// The card was declined: back to `requires_payment_method`, the decline kept.
    pub fn fail(&mut self, error: SetupError) {
        self.status = SetupIntentStatus::RequiresPaymentMethod;
        self.payment_method = None;
        self.last_setup_error = Some(error);
    }

    pub fn cancel(&mut self, reason: Option<SetupCancellationReason>, at: i64) {
        self.status = SetupIntentStatus::Canceled;
        self.cancellation_reason = reason;
        self.canceled_at = Some(at);
    }
}

impl crate::documents::document::Document for SetupIntent {
    const COLLECTION: crate::store::Collection = crate::store::Collection::SetupIntents;

    fn id(&self) -> &str {
        &self.id
    }

    fn created(&self) -> i64 {
        self.created
    }

    fn index(&self) -> crate::store::IndexValues {
        crate::store::IndexValues {
            customer: self.customer.clone(),
            status: Some(self.status.as_str().to_string()),
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn intent() -> SetupIntent {
        SetupIntent {
            id: "seti_1".into(),
            object: "setup_intent".into(),
            status: SetupIntentStatus::RequiresConfirmation,
            customer: Some("cus_1".into()),
            payment_method: Some("pm_1".into()),
            usage: Usage::OffSession,
            description: None,
            metadata: Metadata::new(),
            last_setup_error: None,
            cancellation_reason: None,
            canceled_at: None,
            livemode: false,
            created: 1,
        }
    }

    #[test]
    fn a_decline_returns_it_to_requires_payment_method_and_a_success_clears_the_decline() {
        let mut i = intent();
        i.fail(SetupError {
            code: "card_declined".into(),
            decline_code: Some("generic_decline".into()),
            message: "Your card was declined.".into(),
            payment_method: Some("pm_1".into()),
        });
        assert_eq!(i.status, SetupIntentStatus::RequiresPaymentMethod);
        assert_eq!(i.payment_method, None);
        assert!(i.require_open("confirmed").is_ok());
        i.succeed("pm_2".into());
        assert_eq!(i.status, SetupIntentStatus::Succeeded);
        assert_eq!(i.last_setup_error, None);
        assert_eq!(i.payment_method.as_deref(), Some("pm_2"));
    }

    #[test]
    fn a_settled_intent_can_be_neither_confirmed_nor_canceled() {
        let mut i = intent();
        i.succeed("pm_1".into());
        let err = i.require_open("canceled").unwrap_err();
        assert!(err.to_string().contains("succeeded"), "{err}");
        let mut c = intent();
        c.cancel(Some(SetupCancellationReason::Abandoned), 5);
        assert!(c.require_open("confirmed").is_err());
        assert_eq!(c.canceled_at, Some(5));
    }
}
