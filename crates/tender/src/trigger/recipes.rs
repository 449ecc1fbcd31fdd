//! The recipes of `tender trigger`: one per event type, grouped by resource, each making through the
//! API the objects whose change produces its event; [`run`] picks the recipe.

use super::{
    Calls, CARD_AUTHENTICATES, CARD_DECLINED, CARD_OK, CARD_SAVES_THEN_DECLINES, DAY, IBAN_FAILS,
    IBAN_OK,
};
use anyhow::{anyhow, bail};
use reqwest::Method;
use serde_json::{json, Value};
use tender_client::Error;

#[path = "checkout.rs"]
mod checkout;

/// Which event is the triggered one: the event of `event_type` whose `data.object[field]` is
/// `value`.
pub(crate) struct About {
    pub(crate) field: &'static str,
    pub(crate) value: String,
}

pub(crate) fn object(id: String) -> About {
    About {
        field: "id",
        value: id,
    }
}

/// Runs the recipe of `event_type`; what the awaited event is about.
pub(crate) async fn run(c: &Calls, event_type: &str) -> anyhow::Result<About> {
    match event_type {
        "payment.created"
        | "payment.succeeded"
        | "payment.failed"
        | "payment.canceled"
        | "payment.updated"
        | "payment.requires_action"
        | "payment.requires_capture"
        | "payment.processing"
        | "payment.captured"
        | "payment.refunded"
        | "refund.created"
        | "refund.updated" => payment_recipe(c, event_type).await,
        "payment_method.attached" | "payment_method.detached" => {
            payment_method_recipe(c, event_type).await
        }
        "customer.created" | "customer.updated" | "customer.deleted" => {
            customer_recipe(c, event_type).await
        }
        "payout.created" | "payout.updated" | "payout.paid" | "payout.failed"
        | "payout.canceled" => payout_recipe(c, event_type).await,
        "dispute.created" | "dispute.updated" | "dispute.closed" => {
            dispute_recipe(c, event_type).await
        }
        "product.created" | "product.updated" | "product.deleted" | "price.created"
        | "price.updated" => catalog_recipe(c, event_type).await,
        "customer.subscription.created"
        | "customer.subscription.updated"
        | "customer.subscription.deleted"
        | "customer.subscription.trial_will_end"
        | "customer.subscription.paused"
        | "customer.subscription.resumed" => subscription_recipe(c, event_type).await,
        "invoice.created"
        | "invoice.finalized"
        | "invoice.paid"
        | "invoice.payment_failed"
        | "invoice.voided"
        | "invoice.marked_uncollectible"
        | "invoice.upcoming" => invoice_recipe(c, event_type).await,
        "balance.available" => {
            c.pay(CARD_OK, json!({})).await?;
            note("the charge to become available (the server's --balance-available-delay, 60 s by default in test mode)");
            Ok(About {
                field: "object",
                value: "balance".into(),
            })
        }
        "test_helpers.test_clock.ready" => clock_recipe(c, event_type).await,
        "setup_intent.created"
        | "setup_intent.succeeded"
        | "setup_intent.setup_failed"
        | "setup_intent.canceled" => setup_intent_recipe(c, event_type).await,
        "checkout_session.completed" | "checkout_session.expired" => {
            checkout::checkout_recipe(c, event_type).await
        }
        "payment_link.created" | "payment_link.updated" => {
            checkout::payment_link_recipe(c, event_type).await
        }
        "risk.blocked" => checkout::blocked_recipe(c).await,
        other => no_recipe(other),
    }
}

/// The refusal of an event type with no recipe.
pub(crate) fn no_recipe(other: &str) -> anyhow::Result<About> {
    bail!(
        "tender trigger has no recipe for {other}; one of: {}",
        tender_core::event::EVENT_TYPES.join(", ")
    )
}

/// The recipes of payments and refunds.
pub(crate) async fn payment_recipe(c: &Calls, event_type: &str) -> anyhow::Result<About> {
    Ok(match event_type {
        "payment.created" | "payment.succeeded" => object(c.pay(CARD_OK, json!({})).await?),
        "payment.captured" => {
            let pay = c.pay(CARD_OK, json!({"capture": false})).await?;
            c.post(&format!("/payments/{pay}/capture"), json!({}))
                .await?;
            object(pay)
        }
        "payment.refunded" => {
            let pay = c.pay(CARD_OK, json!({})).await?;
            c.post("/refunds", json!({"payment": pay})).await?;
            object(pay)
        }
        "payment.failed" => object(c.declined_payment().await?),
        "payment.requires_action" => object(
            c.pay(
                CARD_AUTHENTICATES,
                json!({"return_url": "https://shop.example/back"}),
            )
            .await?,
        ),
        "payment.requires_capture" => object(c.pay(CARD_OK, json!({"capture": false})).await?),
        "payment.processing" => object(c.bank_transfer().await?),
        "payment.canceled" => {
            let pay = c.pay(CARD_OK, json!({"capture": false})).await?;
            c.post(&format!("/payments/{pay}/cancel"), json!({}))
                .await?;
            object(pay)
        }
        "payment.updated" => {
            let pay = c.pay(CARD_OK, json!({})).await?;
            c.post(
                &format!("/payments/{pay}"),
                json!({"description": "Updated by tender trigger"}),
            )
            .await?;
            object(pay)
        }
        "refund.created" => {
            let pay = c.pay(CARD_OK, json!({})).await?;
            object(id(c.post("/refunds", json!({"payment": pay})).await?)?)
        }
        "refund.updated" => {
            // A bank transfer's refund is pending until the bank settles it.
            let pay = c.bank_transfer().await?;
            c.wait_until(
                &format!("/payments/{pay}"),
                "status",
                "succeeded",
                "the transfer to settle (the server's --bank-settlement-delay, 10 s by default)",
            )
            .await?;
            let refund = id(c.post("/refunds", json!({"payment": pay})).await?)?;
            note("the refund settles after the same delay");
            object(refund)
        }
        other => no_recipe(other)?,
    })
}

/// The recipes of saved cards: one attached to a new customer, then detached.
pub(crate) async fn payment_method_recipe(c: &Calls, event_type: &str) -> anyhow::Result<About> {
    let cus = c.customer(json!({})).await?;
    let pm = c.card(CARD_OK).await?;
    c.post(
        &format!("/payment_methods/{pm}/attach"),
        json!({"customer": cus}),
    )
    .await?;
    match event_type {
        "payment_method.attached" => {}
        "payment_method.detached" => {
            c.post(&format!("/payment_methods/{pm}/detach"), json!({}))
                .await?;
        }
        other => return no_recipe(other),
    }
    Ok(object(pm))
}

/// The recipes of customers.
pub(crate) async fn customer_recipe(c: &Calls, event_type: &str) -> anyhow::Result<About> {
    Ok(match event_type {
        "customer.created" => object(c.customer(json!({})).await?),
        "customer.updated" => {
            let cus = c.customer(json!({})).await?;
            c.post(&format!("/customers/{cus}"), json!({"name": "Jenny Rosen"}))
                .await?;
            object(cus)
        }
        "customer.deleted" => {
            let cus = c.customer(json!({})).await?;
            c.delete(&format!("/customers/{cus}")).await?;
            object(cus)
        }
        other => no_recipe(other)?,
    })
}

/// The recipes of payouts (the server's balance must cover them: a payment is made first).
pub(crate) async fn payout_recipe(c: &Calls, event_type: &str) -> anyhow::Result<About> {
    Ok(match event_type {
        "payout.created" | "payout.updated" | "payout.paid" | "payout.failed"
        | "payout.canceled" => {
            let iban = if event_type == "payout.failed" {
                IBAN_FAILS
            } else {
                IBAN_OK
            };
            let po = c.payout(iban).await?;
            match event_type {
                "payout.canceled" => {
                    c.post(&format!("/payouts/{po}/cancel"), json!({})).await?;
                }
                "payout.created" => {}
                _ => note("the payout moves on after the server's --bank-settlement-delay (10 s by default)"),
            }
            object(po)
        }
        other => no_recipe(other)?,
    })
}

/// The recipes of disputes (the disputed test card).
pub(crate) async fn dispute_recipe(c: &Calls, event_type: &str) -> anyhow::Result<About> {
    Ok(match event_type {
        "dispute.created" | "dispute.updated" | "dispute.closed" => {
            let dp = c.dispute().await?;
            match event_type {
                "dispute.updated" => {
                    c.post(
                        &format!("/disputes/{dp}"),
                        json!({"evidence": {"uncategorized_text": "Sent by tender trigger"}}),
                    )
                    .await?;
                }
                "dispute.closed" => {
                    c.post(&format!("/disputes/{dp}/close"), json!({})).await?;
                }
                _ => {}
            }
            object(dp)
        }
        other => no_recipe(other)?,
    })
}

/// The recipes of products and prices.
pub(crate) async fn catalog_recipe(c: &Calls, event_type: &str) -> anyhow::Result<About> {
    Ok(match event_type {
        "product.created" => object(c.product().await?),
        "product.updated" => {
            let prod = c.product().await?;
            c.post(
                &format!("/products/{prod}"),
                json!({"description": "Updated by tender trigger"}),
            )
            .await?;
            object(prod)
        }
        "product.deleted" => {
            let prod = c.product().await?;
            c.delete(&format!("/products/{prod}")).await?;
            object(prod)
        }
        "price.created" => object(c.price().await?),
        "price.updated" => {
            let price = c.price().await?;
            c.post(
                &format!("/prices/{price}"),
                json!({"nickname": "Updated by tender trigger"}),
            )
            .await?;
            object(price)
        }
        other => no_recipe(other)?,
    })
}

/// The recipes of subscriptions.
pub(crate) async fn subscription_recipe(c: &Calls, event_type: &str) -> anyhow::Result<About> {
    Ok(match event_type {
        "customer.subscription.created" => {
            let cus = c.customer_with_card(CARD_OK, None).await?;
            object(id(c.subscribe(&cus, json!({})).await?)?)
        }
        "customer.subscription.updated" => {
            let cus = c.customer_with_card(CARD_OK, None).await?;
            let sub = id(c.subscribe(&cus, json!({})).await?)?;
            c.post(
                &format!("/subscriptions/{sub}"),
                json!({"metadata": {"triggered_by": "tender trigger"}}),
            )
            .await?;
            object(sub)
        }
        "customer.subscription.deleted" => {
            let cus = c.customer_with_card(CARD_OK, None).await?;
            let sub = id(c.subscribe(&cus, json!({})).await?)?;
            c.delete(&format!("/subscriptions/{sub}")).await?;
            object(sub)
        }
        "customer.subscription.trial_will_end" => {
            // A week's trial on a test clock moved 5 days on: 3 days before the trial ends
            // has passed.
            let (clock, now) = c.clock().await?;
            let cus = c.customer_with_card(CARD_OK, Some(&clock)).await?;
            let sub = id(c.subscribe(&cus, json!({"trial_period_days": 7})).await?)?;
            c.advance(&clock, now + 5 * DAY).await?;
            object(sub)
        }
        "customer.subscription.paused" | "customer.subscription.resumed" => {
            // A day's trial, set to pause, for a customer with no card: on a test clock moved
            // past its end, it pauses; a card saved, it is resumed.
            let (clock, now) = c.clock().await?;
            let cus = c.customer(json!({"test_clock": clock})).await?;
            let pause = json!({"trial_period_days": 1,
                "trial_settings": {"end_behavior": {"missing_payment_method": "pause"}}});
            let sub = id(c.subscribe(&cus, pause).await?)?;
            c.advance(&clock, now + 2 * DAY).await?;
            if event_type == "customer.subscription.resumed" {
                c.wait_until(
                    &format!("/subscriptions/{sub}"),
                    "status",
                    "paused",
                    "the test clock to end the trial",
                )
                .await?;
                let pm = c.card(CARD_OK).await?;
                c.post(
                    &format!("/payment_methods/{pm}/attach"),
                    json!({"customer": cus}),
                )
                .await?;
                c.post(&format!("/subscriptions/{sub}/resume"), json!({}))
                    .await?;
            }
            object(sub)
        }
        other => no_recipe(other)?,
    })
}

/// The recipes of invoices of a new subscription.
pub(crate) async fn invoice_recipe(c: &Calls, event_type: &str) -> anyhow::Result<About> {
    Ok(match event_type {
        "invoice.created" | "invoice.finalized" | "invoice.paid" => {
            let cus = c.customer_with_card(CARD_OK, None).await?;
            object(latest_invoice(c.subscribe(&cus, json!({})).await?)?)
        }
        "invoice.payment_failed" | "invoice.voided" => {
            // The card saves, then declines the first invoice: the subscription is incomplete
            // and its invoice open.
            let cus = c.customer_with_card(CARD_SAVES_THEN_DECLINES, None).await?;
            let invoice = latest_invoice(c.subscribe(&cus, json!({})).await?)?;
            if event_type == "invoice.voided" {
                c.post(&format!("/invoices/{invoice}/void"), json!({}))
                    .await?;
            }
            object(invoice)
        }
        "invoice.upcoming" => {
            // A monthly subscription on a test clock moved 28 days on: 3 days before its
            // renewal has passed.
            let (clock, now) = c.clock().await?;
            let cus = c.customer_with_card(CARD_OK, Some(&clock)).await?;
            let sub = id(c.subscribe(&cus, json!({})).await?)?;
            c.advance(&clock, now + 28 * DAY).await?;
            About {
                field: "subscription",
                value: sub,
            }
        }
        "invoice.marked_uncollectible" => {
            // A day's trial, then a card that declines every retry: on a test clock moved past
            // the last retry (the server's --dunning-days, 1,3,5,7 by default).
            let (clock, now) = c.clock().await?;
            let cus = c
                .customer_with_card(CARD_SAVES_THEN_DECLINES, Some(&clock))
                .await?;
            let sub = id(c.subscribe(&cus, json!({"trial_period_days": 1})).await?)?;
            c.advance(&clock, now + 10 * DAY).await?;
            About {
                field: "subscription",
                value: sub,
            }
        }
        other => no_recipe(other)?,
    })
}

/// The recipes of test clocks.
pub(crate) async fn clock_recipe(c: &Calls, event_type: &str) -> anyhow::Result<About> {
    Ok(match event_type {
        "test_helpers.test_clock.ready" => {
            let (clock, now) = c.clock().await?;
            c.advance(&clock, now + DAY).await?;
            object(clock)
        }
        other => no_recipe(other)?,
    })
}

/// The recipes of setup intents: one made for a new customer, then confirmed with a card
/// that saves or one that is declined, or canceled.
pub(crate) async fn setup_intent_recipe(c: &Calls, event_type: &str) -> anyhow::Result<About> {
    let cus = c.customer(json!({})).await?;
    let seti = id(c.post("/setup_intents", json!({"customer": cus})).await?)?;
    let confirm = format!("/setup_intents/{seti}/confirm");
    match event_type {
        "setup_intent.created" => {}
        "setup_intent.succeeded" => {
            let pm = c.card(CARD_OK).await?;
            c.post(&confirm, json!({"payment_method": pm})).await?;
        }
        "setup_intent.setup_failed" => {
            let pm = c.card(CARD_DECLINED).await?;
            match c
                .call(Method::POST, &confirm, Some(json!({"payment_method": pm})))
                .await
            {
                Err(Error::Api(e)) if e.status == 402 => {
                    println!("POST /v2{confirm} -> {seti} (402 {})", e.code);
                }
                Ok(v) => bail!("the test card {CARD_DECLINED} was not declined: {v}"),
                Err(e) => bail!("POST /v2{confirm}: {e}"),
            }
        }
        "setup_intent.canceled" => {
            c.post(&format!("/setup_intents/{seti}/cancel"), json!({}))
                .await?;
        }
        other => return no_recipe(other),
    }
    Ok(object(seti))
}

/// A line about a wait that follows.
pub(crate) fn note(what: &str) {
    println!("  (waiting: {what})");
}

/// The `id` of an object the API answered.
pub(crate) fn id(object: Value) -> anyhow::Result<String> {
    object["id"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| anyhow!("the API answered an object without an id: {object}"))
}

/// A subscription's first invoice.
pub(crate) fn latest_invoice(subscription: Value) -> anyhow::Result<String> {
    subscription["latest_invoice"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| anyhow!("the subscription has no invoice: {subscription}"))
}

/// `base` with the fields of `extra` added (both JSON objects).
pub(crate) fn merged(mut base: Value, extra: Value) -> Value {
    if let (Some(base), Value::Object(extra)) = (base.as_object_mut(), extra) {
        base.extend(extra);
    }
    base
}
