//! Ids across the two dialects (CONTRACT §13): one object, one id suffix. Tender's payment
//! `pay_X` is the PaymentIntent `pi_X` and its one charge `ch_X`; every other prefix is the
//! same in both. Pure.

/// The payment `pay_X` as its PaymentIntent `pi_X` (any other id unchanged).
pub fn intent(id: &str) -> String {
    swap(id, "pay_", "pi_")
}

/// The payment `pay_X` as its charge `ch_X` (any other id unchanged).
pub fn charge(id: &str) -> String {
    swap(id, "pay_", "ch_")
}

/// An id as a client of `/v1` sent it, as Tender stores it: `pi_X` and `ch_X` are `pay_X`;
/// the event `evt_X_k` (an event under its k-th Stripe name) is `evt_X`; every other id is
/// unchanged.
pub fn tender(id: &str) -> String {
    if let Some(rest) = id.strip_prefix("pi_").or_else(|| id.strip_prefix("ch_")) {
        return format!("pay_{rest}");
    }
    if id.starts_with("evt_") {
        return super::events::parse_stripe_id(id).0.to_string();
    }
    id.to_string()
}

/// Any Tender id in Stripe's spelling: a payment as its PaymentIntent.
pub fn stripe(id: &str) -> String {
    intent(id)
}

fn swap(id: &str, from: &str, to: &str) -> String {
    match id.strip_prefix(from) {
        Some(rest) => format!("{to}{rest}"),
        None => id.to_string(),
    }
}

/// Every `pay_…` id inside `text` (a message) in its PaymentIntent spelling.
pub fn in_text(text: &str) -> String {
    text.replace("pay_", "pi_")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_payment_is_its_intent_and_its_charge_and_both_lead_back() {
        assert_eq!(intent("pay_abc"), "pi_abc");
        assert_eq!(charge("pay_abc"), "ch_abc");
        assert_eq!(tender("pi_abc"), "pay_abc");
        assert_eq!(tender("ch_abc"), "pay_abc");
        assert_eq!(tender("cus_abc"), "cus_abc");
        assert_eq!(intent("cus_abc"), "cus_abc");
        assert_eq!(tender("evt_abc_1"), "evt_abc");
        assert_eq!(tender("evt_abc"), "evt_abc");
    }
}
