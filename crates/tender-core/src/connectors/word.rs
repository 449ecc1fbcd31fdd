//! What a processor's word may do (CONTRACT §15): an answer about a payment is believed only
//! when it is about that payment, within its bounds and in its currency, and its booking of a
//! capture adds up. An answer that is not is treated as no answer: nothing is booked, the
//! payment keeps syncing, it is logged; an answer to a refund, only for what was asked. Pure.

use super::connector::{bounded, ProcessorSettlement, RefundUpstream, Upstream};
use crate::money::Currency;
use crate::refunds::refund::Refund;

/// Why a processor's answer about payment `payment` cannot be believed (CONTRACT §15), or
/// `None`: a captured amount outside `0..=ceiling` (the authorised amount, or what a capture
/// asked for), another currency, or a reference other than the one Tender recorded. Such an
/// answer is treated as no answer: nothing is booked, the payment keeps syncing, it is logged.
pub fn disbelieve(
    payment: &crate::payments::payment::Payment,
    ceiling: i64,
    reference: Option<&str>,
    state: &Upstream,
) -> Option<String> {
    if let (Some(said), Some(ours)) = (reference, payment.connector_reference.as_deref()) {
        if said != ours {
            return Some(format!(
                "the answer is about {}, not this payment's {ours}",
                bounded(said)
            ));
        }
    }
    if let Upstream::Succeeded {
        captured,
        currency,
        settlement,
    } = state
    {
        if let Some(s) = settlement {
            if let Some(why) = settlement_doubt(s, *captured, payment.currency) {
                return Some(why);
            }
        }
        if !(0..=ceiling.min(payment.amount)).contains(captured) {
            return Some(format!(
                "it reports {captured} captured of {} authorised",
                ceiling.min(payment.amount)
            ));
        }
        if let Some(currency) = currency {
            if !currency.eq_ignore_ascii_case(payment.currency.code()) {
                return Some(format!(
                    "it reports the money in {}, the payment is in {}",
                    bounded(currency),
                    payment.currency.code()
                ));
            }
        }
    }
    None
}

/// Why a processor's booking `s` of a capture of `captured` in `currency` cannot be believed:
/// another amount, a fee outside `0..=amount`, a net that is not amount less fee, another
/// currency.
fn settlement_doubt(s: &ProcessorSettlement, captured: i64, currency: Currency) -> Option<String> {
    if s.amount != captured {
        return Some(format!(
            "its balance transaction books {} for a capture of {captured}",
            s.amount
        ));
    }
    if !(0..=s.amount).contains(&s.fee) || s.amount.checked_sub(s.fee) != Some(s.net) {
        return Some(format!(
            "its balance transaction's fee {} and net {} do not make its amount {}",
            s.fee, s.net, s.amount
        ));
    }
    if !s.currency.eq_ignore_ascii_case(currency.code()) {
        return Some(format!(
            "its balance transaction is in {}, the payment in {}",
            bounded(&s.currency),
            currency.code()
        ));
    }
    None
}

/// Why a processor's answer to `refund` cannot be believed: it says it refunded `said` (an
/// amount and a currency) other than asked. A refusal is believed whatever it says.
pub fn refund_doubt(
    refund: &Refund,
    state: &RefundUpstream,
    said: Option<&(i64, String)>,
) -> Option<String> {
    let (amount, currency) = said.filter(|_| *state != RefundUpstream::Failed)?;
    (*amount != refund.amount || !currency.eq_ignore_ascii_case(refund.currency.code())).then(
        || {
            format!(
                "it reports {amount} {} refunded, {} {} was asked",
                bounded(currency),
                refund.amount,
                refund.currency.code()
            )
        },
    )
}
