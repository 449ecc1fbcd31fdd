//! Customer use cases: create, update, delete.

use crate::billing::subscriptions::Ended;
use crate::customers::customer::{Address, Customer};
use crate::customers::Customers;
use crate::documents::batch::Batch;
use crate::documents::document::to_value;
use crate::error::{CoreError, CoreResult};
use crate::event::previous_attributes;
use crate::ids::{self, IdKind};
use crate::metadata;
use crate::services::RequestContext;
use crate::store::{Collection, Field};
use crate::validate::check_text;
use crate::validate::{email_valid, normalize_country, phone_valid};

/// The writable fields of a customer; on update `None` leaves a field as it is and
/// `Some(None)` clears it.
#[derive(Debug, Default)]
pub struct CustomerFields {
    pub email: Option<Option<String>>,
    pub name: Option<Option<String>>,
    pub phone: Option<Option<String>>,
    pub address: Option<Option<Address>>,
    pub description: Option<Option<String>>,
    pub metadata: Option<Vec<(String, String)>>,
    /// On create only: the test clock (`clock_…`) the customer belongs to.
    pub test_clock: Option<String>,
    /// On update only: `invoice_settings[default_payment_method]`, a card attached to the
    /// customer (`Some(None)` clears it).
    pub default_payment_method: Option<Option<String>>,
}

/// An address update: given sub-fields replace, others stay; `None` clears the address.
fn merge_address(current: Option<&Address>, update: Option<&Address>) -> Option<Address> {
    let update = update?;
    let mut out = current.cloned().unwrap_or_default();
    let fields = [
        (&mut out.line1, &update.line1),
        (&mut out.line2, &update.line2),
        (&mut out.city, &update.city),
        (&mut out.state, &update.state),
        (&mut out.postal_code, &update.postal_code),
        (&mut out.country, &update.country),
    ];
    for (slot, given) in fields {
        if let Some(v) = given {
            *slot = (!v.is_empty()).then(|| v.clone());
        }
    }
    Some(out)
}

/// The list filter for customers with e-mail `email`, in any case (`GET /customers?email=`,
/// the dashboard's search).
pub fn email_filter(email: &str) -> (crate::store::Field, String) {
    (crate::store::Field::Email, email.trim().to_lowercase())
}

/// Validates the given fields (400 with `param` and the contract's code).
fn check(fields: &mut CustomerFields) -> CoreResult<()> {
    if let Some(Some(email)) = &fields.email {
        if !email_valid(email) {
            return Err(CoreError::invalid(
                "email",
                "email_invalid",
                "Invalid email address.",
            ));
        }
    }
    if let Some(Some(phone)) = &fields.phone {
        if !phone_valid(phone) {
            return Err(CoreError::invalid(
                "phone",
                "phone_invalid",
                "Phone numbers must be '+' followed by 8 to 15 digits.",
            ));
        }
    }
    if let Some(Some(address)) = &mut fields.address {
        if let Some(country) = &address.country {
            match normalize_country(country) {
                Some(code) => address.country = Some(code.to_string()),
                None => {
                    return Err(CoreError::invalid(
                        "address[country]",
                        "country_invalid",
                        "Country must be an ISO 3166-1 alpha-2 code.",
                    ))
                }
            }
        }
    }
    check_text(
        "name",
        fields.name.as_ref().and_then(|v| v.as_deref()),
        5000,
    )?;
    check_text(
        "description",
        fields.description.as_ref().and_then(|v| v.as_deref()),
        1000,
    )?;
    Ok(())
}

impl Customers<'_> {
    /// `POST /customers`.
    pub async fn create_customer(
        &self,
        ctx: &RequestContext,
        mut fields: CustomerFields,
    ) -> CoreResult<Customer> {
        check(&mut fields)?;
        let scope = ctx.scope();
        // A test clock's customer: the clock must be this scope's (test mode only).
        if let Some(clock) = &fields.test_clock {
            self.referenced(
                scope,
                (Collection::TestClocks, IdKind::TestClock, "test clock"),
                clock,
                "test_clock",
            )
            .await?;
        }
        let customer = Customer {
            id: ids::generate(IdKind::Customer),
            object: "customer".into(),
            email: fields.email.flatten(),
            name: fields.name.flatten(),
            phone: fields.phone.flatten(),
            address: fields.address.flatten(),
            description: fields.description.flatten(),
            metadata: metadata::on_create(fields.metadata.unwrap_or_default())?,
            invoice_settings: Default::default(),
            test_clock: fields.test_clock.clone(),
            livemode: scope.livemode(),
            created: self.now(),
        };
        let object = to_value(&customer)?;
        let mut ops = self.batch(ctx);
        ops.insert(&customer)?
            .event_json("customer.created", object.clone(), None)?;
        if let Some(clock) = &customer.test_clock {
            ops.require_at_most::<Customer>(
                Some((Field::TestClock, clock.clone())),
                crate::billing::model::MAX_CUSTOMERS_PER_CLOCK,
                "customers per test clock",
            );
        }
        match self.commit(ctx, ops, Ok(&object)).await {
            Err(CoreError::Store(crate::error::StoreError::LimitReached(_))) => {
                Err(CoreError::invalid(
                    "test_clock",
                    "test_clock_customers_limit",
                    format!(
                        "A test clock can have at most {} customers; use another clock.",
                        crate::billing::model::MAX_CUSTOMERS_PER_CLOCK
                    ),
                ))
            }
            other => other.map(|()| customer),
        }
    }

    /// `POST /customers/{id}`.
    pub async fn update_customer(
        &self,
        ctx: &RequestContext,
        id: &str,
        mut fields: CustomerFields,
    ) -> CoreResult<Customer> {
        check(&mut fields)?;
        if let Some(Some(pm)) = &fields.default_payment_method {
            self.require_attached(ctx, id, pm).await?;
        }
        self.retry_on_conflict(|| async {
            let (before, version): (Customer, i64) = self
                .load(ctx.scope(), Collection::Customers, "customer", id)
                .await?;
            let mut after = before.clone();
            if let Some(v) = &fields.email {
                after.email = v.clone();
            }
            if let Some(v) = &fields.name {
                after.name = v.clone();
            }
            if let Some(v) = &fields.phone {
                after.phone = v.clone();
            }
            if let Some(v) = &fields.address {
                after.address = merge_address(before.address.as_ref(), v.as_ref());
            }
            if let Some(v) = &fields.description {
                after.description = v.clone();
            }
            if let Some(input) = &fields.metadata {
                after.metadata = metadata::merge(&before.metadata, input.clone())?;
            }
            if let Some(pm) = &fields.default_payment_method {
                after.invoice_settings.default_payment_method = pm.clone();
            }
            let object = to_value(&after)?;
            let previous = previous_attributes(&to_value(&before)?, &object);
            if after == before {
                // Nothing changed: no write, no event (as a webhook consumer would expect).
                return Ok(after);
            }
            let mut ops = self.batch(ctx);
            ops.update(&after, version)?.event_json(
                "customer.updated",
                object.clone(),
                previous,
            )?;
            self.commit(ctx, ops, Ok(&object)).await?;
            Ok(after)
        })
        .await
    }

    /// `pm` is a card attached to the customer `id`, or 400 naming
    /// `invoice_settings[default_payment_method]`.
    async fn require_attached(&self, ctx: &RequestContext, id: &str, pm: &str) -> CoreResult<()> {
        const PARAM: &str = "invoice_settings[default_payment_method]";
        let record = self
            .store
            .find_record(ctx.scope(), Collection::PaymentMethods, pm)
            .await?
            .ok_or_else(|| CoreError::missing_reference(PARAM, "payment_method", pm))?;
        let method: crate::payment_methods::payment_method::PaymentMethod =
            crate::documents::document::from_body(&record.id, &record.body)?;
        if method.customer.as_deref() != Some(id) {
            return Err(CoreError::invalid(
                PARAM,
                "payment_method_unexpected_state",
                "The default payment method must be a card attached to this customer: attach it first.",
            ));
        }
        Ok(())
    }

    /// `DELETE /customers/{id}`: afterwards 404 everywhere; payments keep the id.
    pub async fn delete_customer(
        &self,
        ctx: &RequestContext,
        id: &str,
    ) -> CoreResult<serde_json::Value> {
        self.retry_on_conflict(|| async {
            let (customer, version): (Customer, i64) = self
                .load(ctx.scope(), Collection::Customers, "customer", id)
                .await?;
            let deleted =
                serde_json::json!({"id": customer.id, "object": "customer", "deleted": true});
            let ops = self
                .delete_customer_ops(ctx, &customer, version, Ended::Kept)
                .await?;
            self.commit(ctx, ops, Ok(&deleted)).await?;
            Ok(deleted)
        })
        .await
    }

    /// Deleting `customer` (at `version`), in one batch: the customer and `customer.deleted`,
    /// its saved cards detached (and forgotten), and its subscriptions that have not ended
    /// canceled now, in its test clock's time if it has one (`customer.subscription.deleted`);
    /// with `Ended::Deleted` (its test clock deleted) every subscription is then deleted too.
    pub(crate) async fn delete_customer_ops(
        &self,
        ctx: &RequestContext,
        customer: &Customer,
        version: i64,
        fate: Ended,
    ) -> CoreResult<Batch> {
        let scope = ctx.scope();
        let mut ops = self.batch(ctx);
        ops.delete::<Customer>(&customer.id, version)
            .event("customer.deleted", customer)?;
        for (pm, pm_version) in self
            .matching::<crate::payment_methods::payment_method::PaymentMethod>(
                scope,
                Collection::PaymentMethods,
                Field::Customer,
                &customer.id,
            )
            .await?
        {
            crate::payment_methods::PaymentMethods::detach(&mut ops, pm, pm_version)?;
        }
        let subscriptions: Vec<(crate::billing::subscription::Subscription, i64)> = self
            .matching(
                scope,
                Collection::Subscriptions,
                Field::Customer,
                &customer.id,
            )
            .await?;
        let svc = self
            .billing()
            .for_clock(scope, customer.test_clock.as_deref())
            .await?;
        for (sub, sub_version) in subscriptions {
            if !sub.status.is_ended() || fate == Ended::Deleted {
                let (_, ended) = svc
                    .billing()
                    .end_ops(scope, &sub, sub_version, Some(ctx), fate)
                    .await?;
                ops.extend(ended);
            }
        }
        Ok(ops)
    }
}
