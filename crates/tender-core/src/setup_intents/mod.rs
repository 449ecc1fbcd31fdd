//! SetupIntents (`seti_…`, CONTRACT §13): a card saved for later without charging it, Stripe's
//! way of collecting a card for subscriptions and off-session payments. Confirming verifies the
//! card with its issuer (a zero-amount check, the same as attaching it) and attaches it to the
//! intent's customer.
//!
//! | created with | status | then |
//! |---|---|---|
//! | no payment method | `requires_payment_method` | confirm with one |
//! | a payment method | `requires_confirmation` | confirm |
//! | `confirm`, the card verified | `succeeded` (the card attached to the customer) | — |
//! | `confirm`, the card declined | `requires_payment_method` with `last_setup_error` (answered 402) | confirm with another |
//! | cancel, before it succeeded | `canceled` | — |
//!
//! Events: `setup_intent.created`, `setup_intent.succeeded`, `setup_intent.setup_failed`,
//! `setup_intent.canceled`. Tender's simulated issuer authenticates on payments, not on
//! setups: a card that asks for 3-D Secure (`…3155`) is saved without a challenge, and its
//! later on-session payments are challenged as before.
//!
//! Depends on `payment_methods` (the card, its verification, attaching it), `payments` (the
//! customer check) and the storage port.

pub mod service;
pub mod setup_intent;

crate::services::resource_handle!(
    /// SetupIntent use cases: `Services` seen as this resource.
    SetupIntents,
    setup_intents
);
