//! Products (`prod_`) and prices (`price_`): what a merchant sells and for how much. A price's
//! amount, currency and schedule never change (a new price replaces an old one; the old one is
//! made inactive); a product can be deleted only while it has no price.

use crate::auth::Scope;
use crate::billing::model::{Interval, Price, PriceType, Product, Recurring, NAME_MAX_CHARS};
use crate::billing::Billing;
use crate::documents::batch::Batch;
use crate::documents::document::{from_body, to_value};
use crate::error::{CoreError, CoreResult};
use crate::ids::{self, IdKind};
use crate::metadata;
use crate::money::{Currency, MAX_AMOUNT};
use crate::services::RequestContext;
use crate::store::{Collection, Field, ListQuery};
use crate::validate::check_text;

/// `POST /products`, parsed.
#[derive(Debug)]
pub struct CreateProduct {
    pub name: String,
    pub description: Option<String>,
    pub active: bool,
    pub metadata: Vec<(String, String)>,
}

/// `POST /products/{id}`: `None` leaves a field as it is; a description of `Some(None)` clears
/// it.
#[derive(Debug, Default)]
pub struct UpdateProduct {
    pub name: Option<String>,
    pub description: Option<Option<String>>,
    pub active: Option<bool>,
    pub metadata: Option<Vec<(String, String)>>,
}

/// `POST /prices`, parsed.
#[derive(Debug)]
pub struct CreatePrice {
    pub product: String,
    pub currency: Currency,
    pub unit_amount: i64,
    /// `(interval, interval_count)` as given; `None`: a one-time price.
    pub recurring: Option<(String, Option<i64>)>,
    pub active: bool,
    pub nickname: Option<String>,
    pub lookup_key: Option<String>,
    /// Take `lookup_key` from the price that has it (else a price that has it is a 400).
    pub transfer_lookup_key: bool,
    pub metadata: Vec<(String, String)>,
}

/// `POST /prices/{id}`: only these change.
#[derive(Debug, Default)]
pub struct UpdatePrice {
    pub active: Option<bool>,
    pub nickname: Option<Option<String>>,
    /// `Some(None)`: take the price's lookup key away.
    pub lookup_key: Option<Option<String>>,
    pub transfer_lookup_key: bool,
    pub metadata: Option<Vec<(String, String)>>,
}

pub(crate) fn check_name(param: &str, name: &str) -> CoreResult<()> {
    if name.trim().is_empty() {
        return Err(CoreError::invalid(
            param,
            "parameter_invalid",
            format!("{param} cannot be empty."),
        ));
    }
    check_text(param, Some(name), NAME_MAX_CHARS)
}

/// A recurring schedule as given → the schedule, or a 400 naming the sub-parameter.
pub(crate) fn check_recurring(interval: &str, count: Option<i64>) -> CoreResult<Recurring> {
    let interval = Interval::parse(interval).ok_or_else(|| {
        CoreError::invalid(
            "recurring[interval]",
            "parameter_invalid",
            "recurring[interval] must be one of day, week, month, year.",
        )
    })?;
    let count = count.unwrap_or(1);
    let max = interval.max_count();
    if count < 1 || count > i64::from(max) {
        return Err(CoreError::invalid(
            "recurring[interval_count]",
            "parameter_invalid",
            format!(
                "recurring[interval_count] must be 1 to {max} for interval {} (a period lasts at most a year).",
                interval.as_str()
            ),
        ));
    }
    Ok(Recurring {
        interval,
        interval_count: count as u32,
    })
}

/// A price's `unit_amount`, or the 400 naming `param`.
pub(crate) fn check_unit_amount(param: &str, amount: i64) -> CoreResult<i64> {
    if !(0..=MAX_AMOUNT).contains(&amount) {
        return Err(CoreError::invalid(
            param,
            "parameter_invalid",
            format!("{param} must be 0 to {MAX_AMOUNT}, in the currency's smallest unit."),
        ));
    }
    Ok(amount)
}

impl Billing<'_> {
    pub async fn create_product(
        &self,
        ctx: &RequestContext,
        cmd: CreateProduct,
    ) -> CoreResult<Product> {
        check_name("name", &cmd.name)?;
        check_text("description", cmd.description.as_deref(), 5000)?;
        let scope = ctx.scope();
        let product = Product {
            id: ids::generate(IdKind::Product),
            object: "product".into(),
            name: cmd.name,
            description: cmd.description,
            active: cmd.active,
            metadata: metadata::on_create(cmd.metadata)?,
            created: self.now(),
            livemode: scope.livemode(),
        };
        let object = to_value(&product)?;
        let mut ops = self.batch(ctx);
        ops.insert(&product)?
            .event_json("product.created", object.clone(), None)?;
        self.commit(ctx, ops, Ok(&object)).await?;
        Ok(product)
    }

    pub async fn update_product(
        &self,
        ctx: &RequestContext,
        id: &str,
        cmd: UpdateProduct,
    ) -> CoreResult<Product> {
        if let Some(name) = &cmd.name {
            check_name("name", name)?;
        }
        if let Some(d) = &cmd.description {
            check_text("description", d.as_deref(), 5000)?;
        }
        self.retry_on_conflict(|| async {
            let scope = ctx.scope();
            let (before, version): (Product, i64) = self
                .load(scope, Collection::Products, "product", id)
                .await?;
            let mut after = before.clone();
            if let Some(name) = &cmd.name {
                after.name = name.clone();
            }
            if let Some(d) = &cmd.description {
                after.description = d.clone();
            }
            if let Some(a) = cmd.active {
                after.active = a;
            }
            if let Some(m) = &cmd.metadata {
                after.metadata = metadata::merge(&before.metadata, m.clone())?;
            }
            let mut ops = self.batch(ctx);
            let object = ops.change("product.updated", (&before, &after), version)?;
            self.commit(ctx, ops, Ok(&object)).await?;
            Ok(after)
        })
        .await
    }

    /// `DELETE /products/{id}`: only a product without prices (a price names its product for
    /// ever: subscriptions and invoices refer to it).
    pub async fn delete_product(
        &self,
        ctx: &RequestContext,
        id: &str,
    ) -> CoreResult<serde_json::Value> {
        self.retry_on_conflict(|| async {
            let scope = ctx.scope();
            let (product, version): (Product, i64) = self
                .load(scope, Collection::Products, "product", id)
                .await?;
            let prices = self
                .store
                .list_records(
                    scope,
                    Collection::Prices,
                    &ListQuery {
                        filters: vec![(Field::Product, product.id.clone())],
                        limit: 1,
                        ..ListQuery::default()
                    },
                )
                .await?;
            if !prices.records.is_empty() {
                return Err(CoreError::invalid(
                    "id",
                    "product_has_prices",
                    "This product has prices, so it cannot be deleted; make it inactive instead (active=false).",
                ));
            }
            let deleted =
                serde_json::json!({"id": product.id, "object": "product", "deleted": true});
            let mut ops = self.batch(ctx);
            ops.delete::<Product>(&product.id, version)
                .event("product.deleted", &product)?;
            self.commit(ctx, ops, Ok(&deleted)).await?;
            Ok(deleted)
        })
        .await
    }

    /// The writes that give `key` to the price `id`: taken from the price that has it with
    /// `transfer`, and a check, in the batch's own transaction, that no other price keeps it
    /// (two racing claims cannot both pass).
    async fn claim_lookup_key(
        &self,
        scope: &Scope,
        ops: &mut Batch,
        id: &str,
        key: &str,
        transfer: bool,
    ) -> CoreResult<()> {
        let holders = self
            .store
            .list_records(
                scope,
                Collection::Prices,
                &ListQuery {
                    filters: vec![(Field::LookupKey, key.to_string())],
                    limit: 2,
                    ..Default::default()
                },
            )
            .await?;
        for record in holders.records.iter().filter(|r| r.id != id) {
            if !transfer {
                return Err(lookup_key_in_use());
            }
            let before: Price = from_body(&record.id, &record.body)?;
            let mut after = before.clone();
            after.lookup_key = None;
            ops.change("price.updated", (&before, &after), record.version)?;
        }
        ops.require_at_most::<Price>(Some((Field::LookupKey, key.to_string())), 1, "lookup_key");
        Ok(())
    }

    pub async fn create_price(&self, ctx: &RequestContext, cmd: CreatePrice) -> CoreResult<Price> {
        check_unit_amount("unit_amount", cmd.unit_amount)?;
        let recurring = match &cmd.recurring {
            Some((interval, count)) => Some(check_recurring(interval, *count)?),
            None => None,
        };
        check_text("nickname", cmd.nickname.as_deref(), NAME_MAX_CHARS)?;
        check_text(
            "lookup_key",
            cmd.lookup_key.as_deref(),
            LOOKUP_KEY_MAX_CHARS,
        )?;
        let scope = ctx.scope();
        // The product must exist here (a price cannot be made for a deleted product); the
        // Check keeps it from being deleted before the price is recorded.
        let product = self
            .referenced(
                scope,
                (Collection::Products, IdKind::Product, "product"),
                &cmd.product,
                "product",
            )
            .await?;
        let price = Price {
            id: ids::generate(IdKind::Price),
            object: "price".into(),
            product: product.id.clone(),
            currency: cmd.currency,
            unit_amount: cmd.unit_amount,
            kind: if recurring.is_some() {
                PriceType::Recurring
            } else {
                PriceType::OneTime
            },
            recurring,
            active: cmd.active,
            nickname: cmd.nickname,
            lookup_key: cmd.lookup_key.clone(),
            metadata: metadata::on_create(cmd.metadata)?,
            created: self.now(),
            livemode: scope.livemode(),
        };
        let object = to_value(&price)?;
        let mut ops = self.batch(ctx);
        ops.check(Collection::Products, &product.id, product.version)
            .insert(&price)?
            .event_json("price.created", object.clone(), None)?;
        if let Some(key) = &price.lookup_key {
            self.claim_lookup_key(scope, &mut ops, &price.id, key, cmd.transfer_lookup_key)
                .await?;
        }
        match self.commit(ctx, ops, Ok(&object)).await {
            Err(CoreError::Store(crate::error::StoreError::Conflict(_))) => Err(
                CoreError::missing_reference("product", "product", &cmd.product),
            ),
            Err(CoreError::Store(crate::error::StoreError::LimitReached(_))) => {
                Err(lookup_key_in_use())
            }
            other => other,
        }?;
        Ok(price)
    }

    pub async fn update_price(
        &self,
        ctx: &RequestContext,
        id: &str,
        cmd: UpdatePrice,
    ) -> CoreResult<Price> {
        if let Some(n) = &cmd.nickname {
            check_text("nickname", n.as_deref(), NAME_MAX_CHARS)?;
        }
        self.retry_on_conflict(|| async {
            let scope = ctx.scope();
            let (before, version): (Price, i64) =
                self.load(scope, Collection::Prices, "price", id).await?;
            let mut after = before.clone();
            if let Some(a) = cmd.active {
                after.active = a;
            }
            if let Some(n) = &cmd.nickname {
                after.nickname = n.clone();
            }
            if let Some(k) = &cmd.lookup_key {
                check_text("lookup_key", k.as_deref(), LOOKUP_KEY_MAX_CHARS)?;
                after.lookup_key = k.clone();
            }
            if let Some(m) = &cmd.metadata {
                after.metadata = metadata::merge(&before.metadata, m.clone())?;
            }
            let mut ops = self.batch(ctx);
            let object = ops.change("price.updated", (&before, &after), version)?;
            if let Some(key) = after
                .lookup_key
                .as_ref()
                .filter(|k| before.lookup_key.as_ref() != Some(*k))
            {
                self.claim_lookup_key(scope, &mut ops, &after.id, key, cmd.transfer_lookup_key)
                    .await?;
            }
            match self.commit(ctx, ops, Ok(&object)).await {
                Err(CoreError::Store(crate::error::StoreError::LimitReached(_))) => {
                    Err(lookup_key_in_use())
                }
                other => other,
            }?;
            Ok(after)
        })
        .await
    }
}

/// Longest `lookup_key` (Stripe's limit).
pub const LOOKUP_KEY_MAX_CHARS: usize = 200;

fn lookup_key_in_use() -> CoreError {
    CoreError::invalid(
        "lookup_key",
        "lookup_key_in_use",
        "Another price has this lookup_key; give transfer_lookup_key=true to move it to this one.",
    )
}
