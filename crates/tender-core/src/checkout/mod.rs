//! Checkout Sessions (`cs_…`, CONTRACT §14): a page on Tender's receipt host where a shop's
//! customer pays, subscribes or saves a card, so that the card number reaches Tender and never
//! the shop. The shop creates a session with what is bought and where to send the customer
//! after; the customer opens its `url`.
//!
//! | from | by | to | event |
//! |---|---|---|---|
//! | — | create | `open` | — |
//! | `open` | the page's form: paid, authorised, subscribed or the card saved ([`pay`]) | `complete` | `checkout_session.completed` (`checkout.session.completed`), once |
//! | `open` | a decline | `open` (`declined_attempts` + 1; at 3, no more tries) | — |
//! | `open` | the shop's expire, or `expires_at` (24 h by default) | `expired` | `checkout_session.expired` |
//!
//! - [`session`]: the session, its line items and the mode's rules for them (pure).
//! - [`create`]: create. [`pay`]: the page's form. [`lifecycle`]: complete, expire.
//! - [`hosted`]: what the page shows.
//! - [`link`], [`links`]: Payment Links (`plink_…`), lasting addresses each visit of which
//!   opens a fresh session for the same lines (`payment_link.created`, `payment_link.updated`).
//!
//! Depends on `billing` (prices, products, subscriptions), `payments`, `payment_methods`,
//! `customers`, `setup_intents` and the storage port; nothing depends on it but the tasks.

pub mod create;
pub mod hosted;
pub mod lifecycle;
pub mod link;
pub mod links;
pub mod pay;
pub mod session;

crate::services::resource_handle!(
    /// Checkout Session use cases: `Services` seen as this resource.
    Checkout,
    checkout
);
