//! How one try to collect an invoice went ([`Outcome`]): read from the try's payment as stored,
//! or from the error of a try that made none, and the error a try by hand answers with; and
//! what that does to the invoice and its subscription ([`tried`]). Pure; depends on the
//! invoice's and subscription's domain, the payment type and the error table.

use crate::billing::invoice::{
    invoice_after, invoice_state_error, is_hard_decline, Dunning, Invoice, InvoiceEvent,
};
use crate::billing::subscription::SubscriptionEvent;
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

/// What one try does to an invoice: the invoice after it, its events, when it is tried again,
/// and what it means for its subscription.
pub(crate) struct Tried {
    pub after: Invoice,
    pub events: Vec<&'static str>,
    pub retry: Option<i64>,
    pub sub_event: Option<SubscriptionEvent>,
}

/// The rules of a try (CONTRACT §10), at `now`: a paid try pays the invoice; a failed
/// automatic try is tried again on the dunning schedule (`dunning`) until a hard decline or the
/// schedule's end gives up — except a subscription's first invoice (`first_invoice`), tried
/// once; a try by hand (`automatic` false) changes no schedule. Pure.
pub(crate) fn tried(
    invoice: &Invoice,
    outcome: &Outcome,
    (automatic, first_invoice): (bool, bool),
    now: i64,
    dunning: &Dunning,
) -> CoreResult<Tried> {
    let mut after = invoice.clone();
    after.attempt_count += 1;
    let mut events = Vec::new();
    let mut retry = None;
    let mut sub_event = None;
    match outcome {
        Outcome::Paid { payment } => {
            if let Some(p) = payment {
                after.payment = Some(p.clone());
                if !after.payments.contains(p) {
                    after.payments.push(p.clone());
                }
            }
            after.status = invoice_after(invoice.status, InvoiceEvent::Paid)
                .ok_or_else(|| invoice_state_error(invoice, "it can be paid"))?;
            after.amount_paid = after.amount_due;
            after.next_payment_attempt = None;
            events.push("invoice.paid");
            sub_event = Some(SubscriptionEvent::InvoicePaid);
        }
        Outcome::Failed {
            payment,
            decline_code,
            ..
        } => {
            if let Some(p) = payment {
                after.payment = Some(p.clone());
                after.payments.push(p.clone());
            }
            events.push("invoice.payment_failed");
            if automatic && !first_invoice {
                let first = *after.first_failed_at.get_or_insert(now);
                after.dunning_step += 1;
                let next = match is_hard_decline(decline_code.as_deref()) {
                    true => None,
                    false => dunning.next_attempt(first, after.dunning_step),
                };
                after.next_payment_attempt = next;
                match next {
                    Some(t) => {
                        retry = Some(t);
                        sub_event = Some(SubscriptionEvent::PaymentFailed);
                    }
                    None => {
                        after.status = invoice_after(invoice.status, InvoiceEvent::GaveUp)
                            .ok_or_else(|| invoice_state_error(invoice, "it can be given up"))?;
                        events.push("invoice.marked_uncollectible");
                        sub_event = Some(SubscriptionEvent::GaveUp);
                    }
                }
            } else if automatic {
                // The first invoice of a subscription is tried once.
                after.next_payment_attempt = None;
            }
        }
    }
    Ok(Tried {
        after,
        events,
        retry,
        sub_event,
    })
}
