//! A payment with a card a connector's processor keeps for the customer (CONTRACT §15: a
//! card saved behind a connector that takes no card details is the processor's own reusable
//! payment method, `PaymentMethod.connector`). It goes to that connector only — the card
//! exists nowhere else, so it never fails over — as the processor's customer and payment
//! method, charged without the customer (`off_session`): an invoice, a saved card.

use crate::connectors::service::Routed;
use crate::error::{CoreError, CoreResult};
use crate::payment_methods::payment_method::{PaymentMethod, ProcessorCard};
use crate::payments::payment::Payment;
use crate::payments::upstream::{UpstreamPayment, UpstreamSource};
use crate::payments::Payments;
use crate::services::RequestContext;
use crate::store::Collection;

/// A payment with a processor-kept card, before it is sent.
pub(crate) struct KeptCharge {
    pub payment: Payment,
    pub at: ProcessorCard,
    /// What the payment was decided on (the customer, the method still attached).
    pub preconditions: Vec<(Collection, String, i64)>,
}

impl KeptCharge {
    /// `payment` with `method`, a card `at` a processor keeps (stored at `version`), for
    /// `customer`: only the customer it is kept for may be charged with it.
    pub(crate) fn new(
        method: &PaymentMethod,
        version: i64,
        at: ProcessorCard,
        mut payment: Payment,
        customer: Option<&str>,
        mut preconditions: Vec<(Collection, String, i64)>,
    ) -> CoreResult<Self> {
        if method.customer.is_none() || method.customer.as_deref() != customer {
            return Err(CoreError::invalid(
                "customer",
                "payment_method_unexpected_state",
                "A card a processor keeps can only be charged with the customer it is attached to.",
            ));
        }
        preconditions.push((Collection::PaymentMethods, method.id.clone(), version));
        payment.payment_method.id = method.id.clone();
        payment.payment_method.card = Some(method.card.clone());
        Ok(Self {
            payment,
            at,
            preconditions,
        })
    }
}

impl Payments<'_> {
    /// Sends `kept` to the connector that keeps its card, if the account still routes to it.
    pub(crate) async fn pay_with_kept(
        &self,
        ctx: &RequestContext,
        route: Vec<Routed>,
        kept: KeptCharge,
        capture: bool,
    ) -> CoreResult<Payment> {
        let route: Vec<Routed> = route
            .into_iter()
            .filter(|r| r.object.id == kept.at.connector)
            .collect();
        if route.is_empty() {
            return Err(CoreError::invalid(
                "payment_method",
                "payment_method_unusable",
                format!(
                    "This card is kept by the processor of connector {}, which is not enabled for this account: enable it to charge the card.",
                    kept.at.connector
                ),
            ));
        }
        self.create_upstream(
            ctx,
            route,
            UpstreamPayment {
                payment: kept.payment,
                source: UpstreamSource::Saved(kept.at),
                capture,
                approved_ops: self.batch(ctx),
                declined_ops: self.batch(ctx),
                preconditions: kept.preconditions,
            },
        )
        .await
    }
}
