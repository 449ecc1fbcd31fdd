//! Tender's events under Stripe's names and in Stripe's event shape (CONTRACT §13), for the
//! endpoints created through `/v1` and for `/v1/events`. Stripe tells some changes in several
//! events (a payment's success is `payment_intent.succeeded` and `charge.succeeded`); Tender
//! records one event, which stands for each of its Stripe names ([`MAP`], in order: the
//! PaymentIntent's first). Under its k-th name it is the Stripe event `evt_X` (k = 0) or
//! `evt_X_k` ([`stripe_id`], [`parse_stripe_id`]), so that a shop that keeps the ids it handled
//! sees two events, as from Stripe. A `/v1` endpoint is sent one delivery per name it listens
//! to ([`delivery_variants`]), each in that name's shape; `/v1/events` lists each event under
//! its first name, or under the name asked for.
//!
//! Pure; depends on [`super::Shapes`].

use serde_json::{json, Value};

use super::{Shape, Shapes, API_VERSION};

/// Each Tender event type, a Stripe name for it and the shape of its object, in order of
/// preference per Tender type.
pub const MAP: &[(&str, &str, Shape)] = &[
    (
        "payment.created",
        "payment_intent.created",
        Shape::PaymentIntent,
    ),
    (
        "payment.succeeded",
        "payment_intent.succeeded",
        Shape::PaymentIntent,
    ),
    ("payment.succeeded", "charge.succeeded", Shape::Charge),
    (
        "payment.failed",
        "payment_intent.payment_failed",
        Shape::PaymentIntent,
    ),
    ("payment.failed", "charge.failed", Shape::Charge),
    (
        "payment.canceled",
        "payment_intent.canceled",
        Shape::PaymentIntent,
    ),
    ("payment.updated", "charge.updated", Shape::Charge),
    (
        "payment.requires_action",
        "payment_intent.requires_action",
        Shape::PaymentIntent,
    ),
    (
        "payment.requires_capture",
        "payment_intent.amount_capturable_updated",
        Shape::PaymentIntent,
    ),
    (
        "payment.processing",
        "payment_intent.processing",
        Shape::PaymentIntent,
    ),
    ("payment.captured", "charge.captured", Shape::Charge),
    ("payment.refunded", "charge.refunded", Shape::Charge),
    (
        "payment_method.attached",
        "payment_method.attached",
        Shape::PaymentMethod,
    ),
    (
        "payment_method.detached",
        "payment_method.detached",
        Shape::PaymentMethod,
    ),
    ("refund.created", "refund.created", Shape::Refund),
    ("refund.updated", "refund.updated", Shape::Refund),
    ("refund.updated", "charge.refund.updated", Shape::Refund),
    ("customer.created", "customer.created", Shape::Customer),
    ("customer.updated", "customer.updated", Shape::Customer),
    ("customer.deleted", "customer.deleted", Shape::Customer),
    ("payout.created", "payout.created", Shape::Payout),
    ("payout.updated", "payout.updated", Shape::Payout),
    ("payout.paid", "payout.paid", Shape::Payout),
    ("payout.failed", "payout.failed", Shape::Payout),
    ("payout.canceled", "payout.canceled", Shape::Payout),
    ("dispute.created", "charge.dispute.created", Shape::Dispute),
    ("dispute.updated", "charge.dispute.updated", Shape::Dispute),
    ("dispute.closed", "charge.dispute.closed", Shape::Dispute),
    ("product.created", "product.created", Shape::Product),
    ("product.updated", "product.updated", Shape::Product),
    ("product.deleted", "product.deleted", Shape::Product),
    ("price.created", "price.created", Shape::Price),
    ("price.updated", "price.updated", Shape::Price),
    (
        "customer.subscription.created",
        "customer.subscription.created",
        Shape::Subscription,
    ),
    (
        "customer.subscription.updated",
        "customer.subscription.updated",
        Shape::Subscription,
    ),
    (
        "customer.subscription.deleted",
        "customer.subscription.deleted",
        Shape::Subscription,
    ),
    (
        "customer.subscription.trial_will_end",
        "customer.subscription.trial_will_end",
        Shape::Subscription,
    ),
    (
        "customer.subscription.paused",
        "customer.subscription.paused",
        Shape::Subscription,
    ),
    (
        "customer.subscription.resumed",
        "customer.subscription.resumed",
        Shape::Subscription,
    ),
    ("invoice.created", "invoice.created", Shape::Invoice),
    ("invoice.finalized", "invoice.finalized", Shape::Invoice),
    ("invoice.paid", "invoice.paid", Shape::Invoice),
    ("invoice.paid", "invoice.payment_succeeded", Shape::Invoice),
    (
        "invoice.payment_failed",
        "invoice.payment_failed",
        Shape::Invoice,
    ),
    ("invoice.voided", "invoice.voided", Shape::Invoice),
    (
        "invoice.marked_uncollectible",
        "invoice.marked_uncollectible",
        Shape::Invoice,
    ),
    ("invoice.upcoming", "invoice.upcoming", Shape::Invoice),
    (
        "test_helpers.test_clock.ready",
        "test_helpers.test_clock.ready",
        Shape::TestClock,
    ),
    (
        "setup_intent.created",
        "setup_intent.created",
        Shape::SetupIntent,
    ),
    (
        "setup_intent.succeeded",
        "setup_intent.succeeded",
        Shape::SetupIntent,
    ),
    (
        "setup_intent.setup_failed",
        "setup_intent.setup_failed",
        Shape::SetupIntent,
    ),
    (
        "setup_intent.canceled",
        "setup_intent.canceled",
        Shape::SetupIntent,
    ),
    ("balance.available", "balance.available", Shape::Balance),
    (
        "checkout_session.completed",
        "checkout.session.completed",
        Shape::CheckoutSession,
    ),
    (
        "checkout_session.expired",
        "checkout.session.expired",
        Shape::CheckoutSession,
    ),
    (
        "payment_link.created",
        "payment_link.created",
        Shape::PaymentLink,
    ),
    (
        "payment_link.updated",
        "payment_link.updated",
        Shape::PaymentLink,
    ),
    (
        "risk.blocked",
        "radar.early_fraud_warning.created",
        Shape::EarlyFraudWarning,
    ),
];

/// Whether `name` is a Stripe event name Tender sends.
pub fn is_stripe_type(name: &str) -> bool {
    MAP.iter().any(|(_, s, _)| *s == name)
}

/// The Tender event types a Stripe name stands for.
pub fn tender_types(stripe: &str) -> impl Iterator<Item = &'static str> + '_ {
    MAP.iter()
        .filter(move |(_, s, _)| *s == stripe)
        .map(|(t, _, _)| *t)
}

/// The Stripe name (and shape) a `/v1` endpoint listening to `enabled` gets the Tender event
/// `tender_type` under: the first of [`MAP`]'s names for it that it listens to.
pub fn name_for(tender_type: &str, enabled: &[String]) -> Option<(&'static str, Shape)> {
    let all = enabled.iter().any(|e| e == "*");
    MAP.iter()
        .filter(|(t, _, _)| *t == tender_type)
        .find(|(_, s, _)| all || enabled.iter().any(|e| e == s))
        .map(|(_, s, shape)| (*s, *shape))
}

/// The Stripe names of the Tender event type `kind`, with their shapes, in [`MAP`]'s order.
pub fn names_of(kind: &str) -> impl Iterator<Item = (&'static str, Shape)> + '_ {
    MAP.iter()
        .filter(move |(t, _, _)| *t == kind)
        .map(|(_, s, shape)| (*s, *shape))
}

/// The id the Tender event `id` (of type `kind`) has as the Stripe event `name`: `id` under its
/// first name, `{id}_{k}` under its k-th.
pub fn stripe_id(id: &str, kind: &str, name: &str) -> String {
    match names_of(kind).position(|(n, _)| n == name) {
        Some(k) if k > 0 => format!("{id}_{k}"),
        _ => id.to_string(),
    }
}

/// The Tender event and the position of the name a Stripe event id stands for
/// (`evt_X_1` → `("evt_X", 1)`; `evt_X` → `("evt_X", 0)`).
pub fn parse_stripe_id(id: &str) -> (&str, usize) {
    match id.rsplit_once('_') {
        Some((event, k)) if event.contains('_') && !k.is_empty() && k.len() <= 2 => {
            match k.parse::<usize>() {
                Ok(k) if k > 0 => (event, k),
                _ => (id, 0),
            }
        }
        _ => (id, 0),
    }
}

/// The `k`-th Stripe name of the Tender event type `kind`.
pub fn name_at(kind: &str, k: usize) -> Option<(&'static str, Shape)> {
    names_of(kind).nth(k)
}

/// The indexed form of a `/v1` endpoint's `enabled_events` (the Tender types they stand for,
/// then, after `|`, the Stripe names themselves): `*|*`, or `,t1,t2,|,n1,n2,`.
pub fn endpoint_index(enabled: &[String]) -> String {
    if enabled.iter().any(|e| e == "*") {
        return "*|*".into();
    }
    let mut types: Vec<&str> = enabled.iter().flat_map(|e| tender_types(e)).collect();
    types.dedup();
    format!(",{},|,{},", types.join(","), enabled.join(","))
}

/// The deliveries an event of type `kind` makes to an endpoint indexed as `index` (one that
/// wants it): one per Stripe name it listens to (in [`MAP`]'s order), or `[""]` — a single
/// delivery — for an endpoint of Tender's dialect or a `/v1` one indexed before names were
/// (it hears each event under the first name it listens to).
pub fn delivery_variants(index: &str, kind: &str) -> Vec<&'static str> {
    let Some((_, names)) = index.split_once('|') else {
        return vec![""];
    };
    names_of(kind)
        .map(|(n, _)| n)
        .filter(|n| names == "*" || names.contains(&format!(",{n},")))
        .collect()
}

/// The event `v2` (its `/v2` JSON) in Stripe's shape under `name`, its object shown as `shape`.
pub fn event(shapes: &Shapes, v2: &Value, name: &str, shape: Shape) -> Value {
    let kind = v2["type"].as_str().unwrap_or_default();
    let id = stripe_id(v2["id"].as_str().unwrap_or_default(), kind, name);
    let object = shapes.show(shape, &v2["data"]["object"]);
    let mut data = json!({ "object": object });
    if let Some(previous) = v2["data"]
        .get("previous_attributes")
        .filter(|p| p.is_object())
    {
        data["previous_attributes"] = previous.clone();
    }
    json!({
        "id": id,
        "object": "event",
        "api_version": API_VERSION,
        "created": v2["created"],
        "data": data,
        "livemode": v2["livemode"],
        "pending_webhooks": 0,
        "request": {
            "id": v2.pointer("/request/id").cloned().unwrap_or(Value::Null),
            "idempotency_key": v2.pointer("/request/idempotency_key").cloned().unwrap_or(Value::Null),
        },
        "type": name,
    })
}

/// The event `v2` as `/v1/events` shows it: under its first Stripe name (`None`: Stripe has no
/// name for it).
pub fn listed(shapes: &Shapes, v2: &Value) -> Option<Value> {
    let kind = v2["type"].as_str()?;
    let (name, shape) = name_for(kind, &["*".to_string()])?;
    Some(event(shapes, v2, name, shape))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tender_event_has_a_stripe_name_and_each_name_is_chosen_as_listened_to() {
        for t in crate::event::EVENT_TYPES {
            assert!(
                name_for(t, &["*".into()]).is_some(),
                "{t} has no Stripe name"
            );
        }
        assert_eq!(
            name_for("payment.succeeded", &["*".into()]).map(|n| n.0),
            Some("payment_intent.succeeded")
        );
        assert_eq!(
            name_for("payment.succeeded", &["charge.succeeded".into()]).map(|n| n.0),
            Some("charge.succeeded")
        );
        assert_eq!(
            name_for("payment.succeeded", &["charge.failed".into()]),
            None
        );
        assert_eq!(
            tender_types("invoice.payment_succeeded").collect::<Vec<_>>(),
            ["invoice.paid"]
        );
    }

    #[test]
    fn each_stripe_name_of_an_event_is_an_event_of_its_own_id() {
        let kind = "payment.succeeded";
        assert_eq!(
            stripe_id("evt_abc", kind, "payment_intent.succeeded"),
            "evt_abc"
        );
        assert_eq!(stripe_id("evt_abc", kind, "charge.succeeded"), "evt_abc_1");
        assert_eq!(parse_stripe_id("evt_abc_1"), ("evt_abc", 1));
        assert_eq!(parse_stripe_id("evt_abc"), ("evt_abc", 0));
        assert_eq!(parse_stripe_id("evt_abc_x"), ("evt_abc_x", 0));
        assert_eq!(parse_stripe_id("evt_abc_0"), ("evt_abc_0", 0));
        assert_eq!(name_at(kind, 1).map(|n| n.0), Some("charge.succeeded"));
        assert_eq!(name_at(kind, 2), None);
    }

    #[test]
    fn an_endpoint_gets_one_delivery_per_name_it_listens_to() {
        let both = endpoint_index(&["charge.succeeded".into(), "payment_intent.succeeded".into()]);
        assert_eq!(
            delivery_variants(&both, "payment.succeeded"),
            ["payment_intent.succeeded", "charge.succeeded"]
        );
        let charge = endpoint_index(&["charge.succeeded".into()]);
        assert_eq!(
            delivery_variants(&charge, "payment.succeeded"),
            ["charge.succeeded"]
        );
        // A Tender type that is also a Stripe name is not taken for one the endpoint listens
        // to: listening to invoice.payment_succeeded is not listening to invoice.paid.
        let paid = endpoint_index(&["invoice.payment_succeeded".into()]);
        assert_eq!(
            delivery_variants(&paid, "invoice.paid"),
            ["invoice.payment_succeeded"]
        );
        assert_eq!(
            delivery_variants(&endpoint_index(&["*".into()]), "refund.updated"),
            ["refund.updated", "charge.refund.updated"]
        );
        // Tender's dialect, and an index made before names were in it: one delivery.
        assert_eq!(delivery_variants("*", "payment.succeeded"), [""]);
        assert_eq!(
            delivery_variants(",payment.succeeded,", "payment.succeeded"),
            [""]
        );
    }
}
