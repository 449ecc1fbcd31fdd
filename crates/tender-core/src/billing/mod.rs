//! Recurring billing's use cases (CONTRACT §10). The domain rules (periods, dunning, the
//! subscription's state machine) are in [`crate::billing::model`]; this module applies them.
//!
//! # Layout
//! - [`catalog`]: products and prices.
//! - [`subscribe`]: create (with its first invoice charged at once, or a trial);
//!   [`subscriptions`]: update, cancel, and the renewal, trial and expiry tasks.
//! - [`pause`]: a trial that ends without a card pauses (or cancels); resuming a paused one.
//! - [`numbering`]: invoice numbers, gap-free per account, taken when an invoice is finalized.
//! - [`upcoming`]: the next invoice before it exists (`create_preview`, `invoice.upcoming`).
//! - [`outcome`]: how one try went, read from its payment as stored.
//! - [`invoices`]: charging an invoice through the normal payment path (automatic tries with
//!   dunning, `POST /invoices/{id}/pay`), voiding it.
//! - [`clocks`]: test clocks and their advance.
//! - [`hosted`]: the hosted invoice page's reads and its pay button (the receipt host).
//! - [`settle`]: invoices their customer pays (an intent confirmed in the browser, 3-D Secure
//!   finished on the authentication page), and the intent canceled when its invoice is voided.
//!
//! # Invariants
//! - **Every step is a stored task** (renewal, trial end and its warning, incomplete expiry, each
//!   try of an invoice), scheduled in the batch that makes it due and deleted in the batch that
//!   does it: a restart or a second node never skips nor repeats one.
//! - **An invoice is charged once per try.** A try's payment is created under an idempotency
//!   key made of the invoice's id and the try's number; a try cut short (a crash after the
//!   payment, before the invoice was updated) runs again under the same key and gets the same
//!   payment back instead of charging again. One live try task per invoice: the one due at
//!   `next_payment_attempt` (any other is stale and dropped).
//! - **A test clock's customers live in its time.** Their subscriptions and invoices are
//!   changed by services whose clock is the test clock's ([`Services::at_clock`]), so they are
//!   dated in its time and what they schedule (renewals, tries, but also the availability of the
//!   money of their payments) waits for the clock's advance.
//!
//! Depends on the domain and the storage port, like every use case.

pub mod catalog;
pub mod clock;
pub mod clocks;
pub mod hosted;
pub mod invoice;
pub mod invoices;
pub mod model;
pub mod numbering;
pub mod outcome;
pub mod pause;
pub mod settle;
pub mod subscribe;
pub mod subscription;
pub mod subscriptions;
pub mod upcoming;

crate::services::resource_handle!(
    /// Products, prices, subscriptions, invoices and test clocks: `Services` seen as this resource.
    Billing,
    billing
);

use crate::auth::Scope;
use crate::billing::clock::TestClock;
use crate::customers::customer::Customer;
use crate::documents::document::from_body;
use crate::error::CoreResult;
use crate::ids::IdKind;
use crate::services::Services;
use crate::store::Collection;

impl Billing<'_> {
    /// A customer of the scope (400 `resource_missing` naming `param` when there is none).
    pub(crate) async fn billing_customer(
        &self,
        scope: &Scope,
        id: &str,
        param: &str,
    ) -> CoreResult<(Customer, i64)> {
        let record = self
            .referenced(
                scope,
                (Collection::Customers, IdKind::Customer, "customer"),
                id,
                param,
            )
            .await?;
        Ok((from_body(&record.id, &record.body)?, record.version))
    }

    /// These services in the time of the customer's test clock, or as they are.
    pub(crate) async fn for_clock(
        &self,
        scope: &Scope,
        clock: Option<&str>,
    ) -> CoreResult<Services> {
        let Some(clock) = clock else {
            return Ok(Services::clone(self));
        };
        match self
            .store
            .find_record(scope, Collection::TestClocks, clock)
            .await?
        {
            Some(r) => {
                let clock: TestClock = from_body(&r.id, &r.body)?;
                Ok(self.at_clock(&clock.id, clock.frozen_time))
            }
            // The clock was deleted (and its customers with it): wall time.
            None => Ok(Services::clone(self)),
        }
    }
}
