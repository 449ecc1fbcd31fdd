//! Stripe's PaymentMethods made or kept for Tender: a card's, made from its details for one
//! payment (only with `raw_card_data`), and a card the customer's browser tokenised at Stripe
//! (Stripe.js), kept for later payments (CONTRACT §15): attached to a Stripe Customer of
//! Tender's customer (made with `metadata[tender_customer]` on the first card). Each call
//! carries an idempotency key derived from Tender's id, so a retry makes nothing twice.

use serde_json::Value;
use tender_core::card::ValidatedCard;
use tender_core::connectors::connector::{bounded, upstream_key, Answer, SavedCard};

use super::{message_of, Effect, Reply, Stripe};

/// Whether `id` can be a Stripe object id in a path (letters, digits, `_`): a token from a
/// client never steers a request to another of Stripe's endpoints.
fn is_stripe_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 255 && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

impl Stripe {
    /// A Stripe PaymentMethod of `card` for payment `payment`: its id, or the answer to give.
    pub(super) async fn card_method(
        &self,
        payment: &str,
        card: &ValidatedCard,
    ) -> Result<String, Answer> {
        let mut form = vec![
            ("type", "card".to_string()),
            ("card[number]", card.pan.expose().to_string()),
            ("card[exp_month]", card.exp_month.to_string()),
            ("card[exp_year]", card.exp_year.to_string()),
        ];
        if let Some(cvc) = &card.cvc {
            form.push(("card[cvc]", cvc.expose().to_string()));
        }
        let key = upstream_key(payment, "payment_method");
        match self
            .post("/v1/payment_methods", &form, &key, Effect::Harmless)
            .await
        {
            Reply::Ok(pm) => match pm["id"].as_str() {
                Some(id) => Ok(id.to_string()),
                None => Err(Answer::Unavailable("a PaymentMethod without an id".into())),
            },
            other => Err(self.answer(other, None).await),
        }
    }

    /// Keeps the PaymentMethod `token` for later: attached to `customer`, or to a new Stripe
    /// Customer of `tender_customer`; `key_id` is Tender's id of the kept card.
    pub(super) async fn keep_card(
        &self,
        token: &str,
        tender_customer: &str,
        customer: Option<&str>,
        key_id: &str,
    ) -> Result<SavedCard, String> {
        if !is_stripe_id(token) {
            return Err("the connector_token is not a Stripe PaymentMethod id".into());
        }
        let customer = match customer {
            Some(c) => c.to_string(),
            None => {
                let form = [("metadata[tender_customer]", tender_customer.to_string())];
                let made = self
                    .write("/v1/customers", &form, &upstream_key(key_id, "customer"))
                    .await?;
                made["id"]
                    .as_str()
                    .filter(|id| is_stripe_id(id))
                    .ok_or("a Customer without an id")?
                    .to_string()
            }
        };
        let form = [("customer", customer.clone())];
        let pm = self
            .write(
                &format!("/v1/payment_methods/{token}/attach"),
                &form,
                &upstream_key(key_id, "attach"),
            )
            .await?;
        saved_card(&pm, customer).ok_or_else(|| "the attached PaymentMethod is not a card".into())
    }

    /// A write that must answer 2xx: its body, or why not.
    async fn write(&self, path: &str, form: &[(&str, String)], key: &str) -> Result<Value, String> {
        match self.post(path, form, key, Effect::Harmless).await {
            Reply::Ok(v) => Ok(v),
            Reply::Refused(status, error) => Err(format!("{status}: {}", message_of(&error))),
            Reply::Declined(error) => Err(format!("declined: {}", message_of(&error))),
            Reply::NotSent(why) | Reply::Unavailable(why) | Reply::Unknown(why) => Err(why),
        }
    }
}

/// The card a kept PaymentMethod `pm` of `customer` describes.
fn saved_card(pm: &Value, customer: String) -> Option<SavedCard> {
    let card = &pm["card"];
    let text = |v: &Value| v.as_str().map(bounded);
    Some(SavedCard {
        customer,
        payment_method: pm["id"].as_str().filter(|id| is_stripe_id(id))?.to_string(),
        brand: text(&card["brand"])?,
        last4: text(&card["last4"])?,
        exp_month: u8::try_from(card["exp_month"].as_u64()?).ok()?,
        exp_year: u16::try_from(card["exp_year"].as_u64()?).ok()?,
        country: text(&card["country"]),
        funding: text(&card["funding"]),
        fingerprint: text(&card["fingerprint"]),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_a_stripe_id_goes_into_a_path_and_a_kept_card_is_read_from_stripe() {
        assert!(is_stripe_id("pm_1PqRstUv"));
        for bad in ["", "pm_x/../customers", "pm_x?expand=1", "pm x", "pm_%2F"] {
            assert!(!is_stripe_id(bad), "{bad}");
        }
        let pm = json!({"id": "pm_1", "card": {"brand": "visa", "last4": "4242", "exp_month": 12,
                        "exp_year": 2034, "country": "US", "funding": "credit", "fingerprint": "Xyz"}});
        let card = saved_card(&pm, "cus_1".into()).unwrap();
        assert_eq!(
            (card.customer.as_str(), card.payment_method.as_str()),
            ("cus_1", "pm_1")
        );
        assert_eq!(
            (card.last4.as_str(), card.exp_month, card.exp_year),
            ("4242", 12, 2034)
        );
        assert_eq!(card.fingerprint.as_deref(), Some("Xyz"));
        // Not a card, or an expiry that is no month: not kept.
        assert_eq!(
            saved_card(&json!({"id": "pm_2", "type": "sepa_debit"}), "cus_1".into()),
            None
        );
        let odd = json!({"id": "pm_3", "card": {"brand": "visa", "last4": "1", "exp_month": 300, "exp_year": 2034}});
        assert_eq!(saved_card(&odd, "cus_1".into()), None);
    }
}
