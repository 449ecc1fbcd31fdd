//! How one try to collect an invoice went ([`Outcome`]): read from the try's payment as stored,
//! or from the error of a try that made none, and the error a try by hand answers with. Pure;
//! depends on the payment type and the error table.

use crate::error::{CoreError, CoreResult};
use crate::payments::payment::{Payment, PaymentStatus};

/// How one try went.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Outcome {
    /// Paid (`payment` is `None` for an invoice of nothing).
    Paid { payment: Option<String> },
    /// Not paid: the payment that failed (if one was made) and why.
    Failed {
        payment: Option<String>,
        code: String,
        decline_code: Option<String>,
        message: String,
    },
}

impl Outcome {
    /// How a try went, from its payment as stored: succeeded is paid; failed is its decline;
    /// anything else (3-D Secure asked for) is a try that needs the customer.
    pub(crate) fn of(payment: &Payment) -> Outcome {
        let id = Some(payment.id.clone());
        match payment.status {
            PaymentStatus::Succeeded => Outcome::Paid { payment: id },
            PaymentStatus::Failed => Outcome::Failed {
                payment: id,
                code: (payment.failure_code.clone()).unwrap_or_else(|| "card_declined".into()),
                decline_code: payment.decline_code.clone(),
                message: payment.failure_message.clone().unwrap_or_default(),
            },
            _ => Outcome::Failed {
                payment: id,
                code: "authentication_required".into(),
                decline_code: None,
                message: "The card needs the customer to authenticate the payment.".into(),
            },
        }
    }

    /// How a try that just ran went: its payment's outcome, a decline named by the payment it
    /// made, or the outcome of a try that made no payment; any other error is the try's.
    pub(crate) fn of_result(result: CoreResult<Payment>) -> CoreResult<Outcome> {
        match result {
            Ok(p) => Ok(Outcome::of(&p)),
            Err(CoreError::Card {
                code,
                decline_code,
                message,
                payment: Some(payment),
                ..
            }) => Ok(Outcome::Failed {
                payment: Some(payment),
                code: code.into_owned(),
                decline_code: decline_code.map(|d| d.into_owned()),
                message: message.into_owned(),
            }),
            Err(e) => Outcome::without_payment(&e).ok_or(e),
        }
    }

    /// How a try that made no payment went, from the error it ended with (the card was
    /// detached meanwhile): `None` for an error that is not the try's outcome.
    pub(crate) fn without_payment(error: &CoreError) -> Option<Outcome> {
        match error {
            CoreError::Card {
                code,
                decline_code,
                message,
                payment: None,
                ..
            } => Some(Outcome::Failed {
                payment: None,
                code: code.to_string(),
                decline_code: decline_code.as_ref().map(|d| d.to_string()),
                message: message.to_string(),
            }),
            CoreError::InvalidParam { code, message, .. } => Some(Outcome::Failed {
                payment: None,
                code: code.to_string(),
                decline_code: None,
                message: message.to_string(),
            }),
            _ => None,
        }
    }

    /// The 402 (or 400) a request that tried by hand is answered with.
    pub(crate) fn error(&self) -> Option<CoreError> {
        match self {
            Outcome::Paid { .. } => None,
            Outcome::Failed {
                payment: None,
                code,
                message,
                ..
            } if code == "invoice_payment_method_missing" => Some(CoreError::invalid(
                "payment_method",
                "invoice_payment_method_missing",
                message.clone(),
            )),
            Outcome::Failed {
                payment,
                code,
                decline_code,
                message,
            } => Some(CoreError::Card {
                code: code.clone().into(),
                decline_code: decline_code.clone().map(Into::into),
                message: message.clone().into(),
                param: None,
                payment: payment.clone(),
            }),
        }
    }
}
