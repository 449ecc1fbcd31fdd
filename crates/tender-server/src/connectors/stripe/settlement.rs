//! Stripe's booking of a capture (CONTRACT §15): the PaymentIntent's charge
//! (`latest_charge`, an id, or the object as localstripe gives it), then that charge's
//! `balance_transaction` — the amount Stripe took in, its fee and the net it holds for the
//! merchant. A capture whose booking cannot be read yet is *unknown* (synced later), never
//! booked without the processor's fee. Reconciliation reads the same bookings back, a
//! refund's through the refund.

use serde_json::Value;
use tender_core::connectors::connector::{bounded, Answer, Booked, ProcessorSettlement, Upstream};

use super::{Reply, Stripe};

/// `field`'s id: the string itself, or the `id` of the object expanded in its place.
fn id_of(field: &Value) -> Option<&str> {
    field.as_str().or_else(|| field["id"].as_str())
}

impl Stripe {
    /// `answer` about the PaymentIntent `pi`, with Stripe's booking of its capture when it is
    /// one (a `Succeeded` told without it).
    pub(super) async fn with_settlement(&self, pi: &Value, answer: Answer) -> Answer {
        let Answer::Known {
            reference,
            state:
                Upstream::Succeeded {
                    captured,
                    currency,
                    settlement: None,
                },
        } = answer
        else {
            return answer;
        };
        match self.settlement(pi).await {
            Ok(settlement) => Answer::Known {
                reference,
                state: Upstream::Succeeded {
                    captured,
                    currency,
                    settlement: Some(settlement),
                },
            },
            Err(why) => Answer::Unknown {
                reference,
                reason: format!("the capture's balance transaction could not be read: {why}"),
            },
        }
    }

    /// The balance transaction of the charge of `pi`.
    async fn settlement(&self, pi: &Value) -> Result<ProcessorSettlement, String> {
        let charge = id_of(&pi["latest_charge"]).ok_or("the PaymentIntent names no charge")?;
        let charge = self.read(&format!("/v1/charges/{charge}")).await?;
        let txn = id_of(&charge["balance_transaction"])
            .ok_or("the charge has no balance transaction yet")?;
        self.balance_transaction(txn).await
    }

    /// Stripe's balance transaction of `booked` (reconciliation).
    pub(super) async fn booked(&self, booked: Booked<'_>) -> Result<ProcessorSettlement, String> {
        match booked {
            Booked::Transaction(txn) => self.balance_transaction(txn).await,
            Booked::Refund(refund) => {
                let refund = self.read(&format!("/v1/refunds/{refund}")).await?;
                let txn = id_of(&refund["balance_transaction"])
                    .ok_or("the refund has no balance transaction yet")?;
                self.balance_transaction(txn).await
            }
            Booked::Dispute { reference, index } => {
                let dispute = self.read(&format!("/v1/disputes/{reference}")).await?;
                let txn = &dispute["balance_transactions"][index];
                match id_of(txn) {
                    // Expanded in the dispute, as Stripe gives it.
                    Some(_) if txn.is_object() => settlement_of(txn),
                    Some(id) => self.balance_transaction(id).await,
                    None => Err(format!("the dispute has no balance transaction {index}")),
                }
            }
            Booked::Payout { reference, failure } => {
                let payout = self.read(&format!("/v1/payouts/{reference}")).await?;
                let key = match failure {
                    true => "failure_balance_transaction",
                    false => "balance_transaction",
                };
                let txn =
                    id_of(&payout[key]).ok_or("the payout has no such balance transaction")?;
                self.balance_transaction(txn).await
            }
        }
    }

    /// The balance transaction `txn`.
    async fn balance_transaction(&self, txn: &str) -> Result<ProcessorSettlement, String> {
        let txn = self
            .read(&format!("/v1/balance_transactions/{txn}"))
            .await?;
        settlement_of(&txn)
    }

    /// A read that must answer 200.
    pub(super) async fn read(&self, path: &str) -> Result<Value, String> {
        match self.get(path).await {
            Reply::Ok(v) => Ok(v),
            Reply::Refused(status, _) => Err(format!("{status} to a read")),
            Reply::Declined(_) => Err("402 to a read".into()),
            Reply::NotSent(why) | Reply::Unavailable(why) | Reply::Unknown(why) => Err(why),
        }
    }
}

/// A balance transaction of Stripe's as the port tells it.
pub(super) fn settlement_of(txn: &Value) -> Result<ProcessorSettlement, String> {
    let number = |key: &str| {
        txn[key]
            .as_i64()
            .ok_or_else(|| format!("its {key} is not a number"))
    };
    Ok(ProcessorSettlement {
        reference: bounded(txn["id"].as_str().unwrap_or_default()),
        amount: number("amount")?,
        fee: number("fee")?,
        net: number("net")?,
        currency: bounded(txn["currency"].as_str().unwrap_or_default()),
        description: bounded(
            txn["fee_details"][0]["description"]
                .as_str()
                .unwrap_or("Stripe processing fees"),
        ),
    })
}
