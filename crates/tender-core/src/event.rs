//! Events: what happened in an account, written in the same transaction as the change. Pure.

use serde::{Deserialize, Serialize};

/// The API version events are rendered with.
pub const API_VERSION: &str = "2.1";

/// Every event type, as on the wire.
pub const EVENT_TYPES: &[&str] = &[
    "payment.created",
    "payment.succeeded",
    "payment.failed",
    "payment.canceled",
    "payment.updated",
    "payment.requires_action",
    "payment.requires_capture",
    "payment.processing",
    "payment.captured",
    "payment.refunded",
    "payment_method.attached",
    "payment_method.detached",
    "refund.created",
    "refund.updated",
    "customer.created",
    "customer.updated",
    "customer.deleted",
    "payout.created",
    "payout.updated",
    "payout.paid",
    "payout.failed",
    "payout.canceled",
    "dispute.created",
    "dispute.updated",
    "dispute.closed",
    "product.created",
    "product.updated",
    "product.deleted",
    "price.created",
    "price.updated",
    "customer.subscription.created",
    "customer.subscription.updated",
    "customer.subscription.deleted",
    "customer.subscription.trial_will_end",
    "customer.subscription.paused",
    "customer.subscription.resumed",
    "invoice.created",
    "invoice.finalized",
    "invoice.paid",
    "invoice.payment_failed",
    "invoice.voided",
    "invoice.marked_uncollectible",
    "invoice.upcoming",
    "test_helpers.test_clock.ready",
    "setup_intent.created",
    "setup_intent.succeeded",
    "setup_intent.setup_failed",
    "setup_intent.canceled",
    "checkout_session.completed",
    "checkout_session.expired",
    "payment_link.created",
    "payment_link.updated",
    "balance.available",
    "risk.blocked",
];

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventData {
    pub object: serde_json::Value,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub previous_attributes: Option<serde_json::Value>,
}

/// The API request that caused an event; null fields for background changes.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct EventRequest {
    pub id: Option<String>,
    pub idempotency_key: Option<String>,
}

/// An event (`evt_…`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    pub id: String,
    pub object: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub api_version: String,
    pub created: i64,
    pub livemode: bool,
    pub data: EventData,
    pub request: EventRequest,
}

/// An event as stored: what cannot be derived, with `data.object` in its collection's stored
/// form. Its id (the row's), `object` and `api_version` are added when it is rendered
/// ([`crate::documents::render::Renderer::event`]); rows stored whole before are read the same.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredEvent {
    #[serde(rename = "type")]
    pub kind: String,
    pub created: i64,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub livemode: bool,
    pub data: EventData,
    pub request: EventRequest,
}

/// The old values of the top-level fields that differ between `before` and `after`, for
/// `*.updated` events.
pub fn previous_attributes(
    before: &serde_json::Value,
    after: &serde_json::Value,
) -> Option<serde_json::Value> {
    let (before, after) = (before.as_object()?, after.as_object()?);
    let changed: serde_json::Map<_, _> = before
        .iter()
        .filter(|(k, v)| after.get(*k) != Some(v))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    Some(serde_json::Value::Object(changed))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn previous_attributes_holds_only_changed_fields_with_old_values() {
        let before = json!({"id": "x", "description": "a", "metadata": {"k": "1"}});
        let after = json!({"id": "x", "description": "b", "metadata": {"k": "1"}});
        assert_eq!(
            previous_attributes(&before, &after),
            Some(json!({"description": "a"}))
        );
    }
}
