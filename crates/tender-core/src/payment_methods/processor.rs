//! Cards saved behind a connector that takes no card details (CONTRACT §15): the customer's
//! browser tokenised the card at the processor (Stripe.js: a `pm_…`), and
//! `POST /payment_methods {type: "connector_token", connector_token, customer}` keeps it there
//! for later payments — attached to the processor's customer of Tender's customer (made on
//! the first card, found again from the customer's other kept cards) — as a Tender payment
//! method (`type: "card"`, `connector` set, the card's brand, last four and expiry as the
//! processor says) that can be a subscription's default and pays its invoices off-session
//! ([`crate::payments::kept`]). The vault keeps only the processor's references
//! ([`ProcessorCard`]); detaching forgets them (the processor keeps its copy).
//!
//! Depends on the connector port, the customers' payment methods and the vault.

use crate::card::{fingerprint, CardBrand};
use crate::connectors::connector::{bounded, ConnectorType, SavedCard};
use crate::documents::document::{from_body, to_value};
use crate::error::{CoreError, CoreResult};
use crate::ids::{self, CustomerId, IdKind};
use crate::metadata;
use crate::payment_methods::payment_method::{PaymentMethod, ProcessorCard};
use crate::payment_methods::service::Kept;
use crate::payment_methods::PaymentMethods;
use crate::payments::payment::CardDetails;
use crate::services::RequestContext;
use crate::store::{Collection, Field};

impl PaymentMethods<'_> {
    /// `POST /payment_methods` with a `connector_token`: the processor keeps it for `customer`.
    pub async fn save_at_processor(
        &self,
        ctx: &RequestContext,
        token: &str,
        customer: &CustomerId,
        metadata_input: Vec<(String, String)>,
    ) -> CoreResult<PaymentMethod> {
        let metadata = metadata::on_create(metadata_input)?;
        let customer_version = self.payments().require_customer(ctx, customer).await?;
        let route = self.connectors().route(ctx.scope()).await?;
        let Some(keeper) = route
            .into_iter()
            .find(|r| r.object.kind != ConnectorType::Simulator)
        else {
            return Err(CoreError::invalid(
                "connector_token",
                "parameter_invalid",
                "connector_token is a processor's own payment method: this account has no enabled connector to a processor.",
            ));
        };
        let connector = keeper.object.id.clone();
        let known = self.processor_customer(ctx, customer, &connector).await?;
        let id = ids::generate(IdKind::PaymentMethod);
        let saved = keeper
            .connector
            .save_card(token, customer, known.as_deref(), &id)
            .await
            .map_err(|why| {
                CoreError::invalid(
                    "connector_token",
                    "connector_token_unusable",
                    format!(
                        "The processor of connector {connector} did not keep this payment method: {}",
                        bounded(&why)
                    ),
                )
            })?;
        let at = ProcessorCard {
            connector: connector.clone(),
            customer: saved.customer.clone(),
            payment_method: saved.payment_method.clone(),
        };
        let pm = PaymentMethod {
            id,
            object: "payment_method".into(),
            kind: "card".into(),
            card: self.kept_card_details(ctx, &connector, &saved),
            customer: Some(customer.to_string()),
            connector: Some(connector),
            metadata,
            livemode: ctx.scope().livemode(),
            created: self.now(),
        };
        let mut batch = self.batch(ctx);
        batch
            .insert(&pm)?
            .seal(&pm.id, self.seal_processor_card(&at)?)
            .check(Collection::Customers, customer, customer_version)
            .event("payment_method.attached", &pm)?;
        self.commit(ctx, batch, Ok(&to_value(&pm)?)).await?;
        Ok(pm)
    }

    /// The card as the processor describes it; its fingerprint keyed like Tender's own, over
    /// the processor's fingerprint (or its payment method when it gives none).
    fn kept_card_details(
        &self,
        ctx: &RequestContext,
        connector: &str,
        saved: &SavedCard,
    ) -> CardDetails {
        let brand: CardBrand =
            serde_json::from_value(serde_json::Value::from(saved.brand.to_ascii_lowercase()))
                .unwrap_or(CardBrand::Unknown);
        let seen = saved
            .fingerprint
            .as_deref()
            .unwrap_or(&saved.payment_method);
        let key = self.payments().fingerprint_key(&ctx.scope().account);
        CardDetails {
            brand,
            last4: bounded(&saved.last4).chars().take(4).collect(),
            exp_month: saved.exp_month,
            exp_year: saved.exp_year,
            fingerprint: fingerprint(&format!("{connector}:{seen}"), &key),
            country: saved.country.clone().unwrap_or_default(),
            funding: saved.funding.clone().unwrap_or_else(|| "unknown".into()),
        }
    }

    /// The processor's customer of `customer` at `connector`, from a card it keeps already.
    async fn processor_customer(
        &self,
        ctx: &RequestContext,
        customer: &CustomerId,
        connector: &str,
    ) -> CoreResult<Option<String>> {
        let scope = ctx.scope();
        let records = self
            .every_record(
                scope,
                Collection::PaymentMethods,
                vec![(Field::Customer, customer.to_string())],
                Default::default(),
            )
            .await?;
        for record in records {
            let pm: PaymentMethod = from_body(&record.id, &record.body)?;
            if pm.connector.as_deref() != Some(connector) {
                continue;
            }
            if let Some(sealed) = self.store.find_sealed(scope, &pm.id).await? {
                if let Kept::Processor(at) = self.open_card(&sealed)? {
                    return Ok(Some(at.customer));
                }
            }
        }
        Ok(None)
    }
}
