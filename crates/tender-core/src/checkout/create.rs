//! `POST /checkout_sessions`: the items read (a stored price, or `price_data` made into a
//! product and price in the same batch), checked against the mode's rules
//! ([`super::session::check_items`]), and the session recorded with its hosted page's address
//! and the task that expires it.

use crate::billing::model::{EmbeddedList, Price, PriceType, Product};
use crate::checkout::session::{
    check_items, CheckoutMode, CheckoutPaymentStatus, CheckoutSession, CheckoutStatus, LineItem,
    SubscriptionData, MAX_OPEN_SECS, MIN_OPEN_SECS,
};
use crate::checkout::Checkout;
use crate::documents::batch::Batch;
use crate::documents::document::{from_body, to_value};
use crate::error::{CoreError, CoreResult};
use crate::ids::{self, CustomerId, IdKind};
use crate::metadata;
use crate::money::Currency;
use crate::payments::payment::CaptureMethod;
use crate::services::RequestContext;
use crate::store::Collection;
use crate::task::TaskKind;
use crate::validate::{check_text, check_url, email_valid};

/// A line as given: a stored price or one described inline, and how many.
#[derive(Debug, Clone)]
pub struct LineItemInput {
    pub price: Option<String>,
    pub price_data: Option<PriceData>,
    pub quantity: Option<i64>,
}

/// `line_items[n][price_data]`: a price made for this session.
#[derive(Debug, Clone)]
pub struct PriceData {
    pub currency: Currency,
    pub unit_amount: i64,
    /// An existing product, or `product_data[name]` for a new one.
    pub product: Option<String>,
    pub product_name: Option<String>,
    /// `(interval, interval_count)`.
    pub recurring: Option<(String, Option<i64>)>,
}

/// `POST /checkout_sessions`, parsed.
#[derive(Debug, Clone)]
pub struct CreateCheckoutSession {
    pub mode: CheckoutMode,
    pub line_items: Vec<LineItemInput>,
    pub success_url: String,
    pub cancel_url: Option<String>,
    pub customer: Option<CustomerId>,
    pub customer_email: Option<String>,
    pub client_reference_id: Option<String>,
    pub metadata: Vec<(String, String)>,
    pub allow_promotion_codes: bool,
    pub trial_period_days: Option<i64>,
    pub capture_method: CaptureMethod,
    pub expires_at: Option<i64>,
    /// The payment link that opens it (set by Tender, never by the API's caller).
    pub payment_link: Option<String>,
}

/// The lines' prices, and the writes that make the inline ones.
pub(crate) struct Lines {
    pub(crate) items: Vec<LineItem>,
    pub(crate) writes: Batch,
}

impl Checkout<'_> {
    pub async fn create_checkout_session(
        &self,
        ctx: &RequestContext,
        cmd: CreateCheckoutSession,
    ) -> CoreResult<CheckoutSession> {
        self.check_create(&cmd)?;
        let now = self.now();
        let expires_at = match cmd.expires_at {
            None => now + MAX_OPEN_SECS,
            Some(t) if (now + MIN_OPEN_SECS..=now + MAX_OPEN_SECS).contains(&t) => t,
            Some(_) => {
                return Err(CoreError::invalid(
                    "expires_at",
                    "parameter_invalid",
                    "expires_at must be 30 minutes to 24 hours from now.",
                ))
            }
        };
        let mut batch = self.batch(ctx);
        if let Some(customer) = &cmd.customer {
            let version = self.payments().require_customer(ctx, customer).await?;
            batch.check(Collection::Customers, customer, version);
        }
        let lines = self.lines(ctx, &cmd.line_items).await?;
        let priced: Vec<(Price, i64)> = lines
            .items
            .iter()
            .map(|l| (l.price.clone(), l.quantity))
            .collect();
        let totals = check_items(cmd.mode, &priced)?;
        let id = ids::generate(IdKind::CheckoutSession);
        let session = CheckoutSession {
            url: Some(format!("{}/checkout/{id}", self.config.receipt_base)),
            id,
            object: "checkout_session".into(),
            mode: cmd.mode,
            status: CheckoutStatus::Open,
            payment_status: match cmd.mode {
                CheckoutMode::Setup => CheckoutPaymentStatus::NoPaymentRequired,
                _ => CheckoutPaymentStatus::Unpaid,
            },
            currency: totals.map(|(c, _)| c),
            amount_subtotal: totals.map(|(_, t)| t),
            amount_total: totals.map(|(_, t)| t),
            line_items: EmbeddedList::new(lines.items),
            success_url: cmd.success_url,
            cancel_url: cmd.cancel_url,
            customer: cmd.customer.map(CustomerId::into_string),
            customer_email: cmd.customer_email,
            client_reference_id: cmd.client_reference_id,
            allow_promotion_codes: cmd.allow_promotion_codes,
            subscription_data: cmd.trial_period_days.map(|d| SubscriptionData {
                trial_period_days: Some(d),
            }),
            capture_method: cmd.capture_method,
            payment_intent: None,
            subscription: None,
            setup_intent: None,
            payment_link: cmd.payment_link,
            declined_attempts: 0,
            trying_until: None,
            metadata: metadata::on_create(cmd.metadata)?,
            expires_at,
            completed_at: None,
            livemode: ctx.scope().livemode(),
            created: now,
        };
        batch.extend(lines.writes).insert(&session)?.schedule(
            TaskKind::ExpireCheckoutSession,
            &session.id,
            expires_at,
        );
        self.commit(ctx, batch, Ok(&to_value(&session)?)).await?;
        Ok(session)
    }

    /// What can be checked without the store: the URLs, the e-mail, the texts, and which
    /// parameters the mode takes.
    fn check_create(&self, cmd: &CreateCheckoutSession) -> CoreResult<()> {
        check_url("success_url", &cmd.success_url)?;
        if let Some(url) = &cmd.cancel_url {
            check_url("cancel_url", url)?;
        }
        check_text(
            "client_reference_id",
            cmd.client_reference_id.as_deref(),
            200,
        )?;
        if let Some(email) = &cmd.customer_email {
            if cmd.customer.is_some() {
                return Err(CoreError::invalid(
                    "customer_email",
                    "parameter_invalid",
                    "Give customer or customer_email, not both.",
                ));
            }
            if !email_valid(email) {
                return Err(CoreError::invalid(
                    "customer_email",
                    "email_invalid",
                    "customer_email is not a valid e-mail address.",
                ));
            }
        }
        let only = |given: bool, param: &str, mode: &str| match given {
            true => Err(CoreError::invalid(
                param,
                "parameter_invalid",
                format!("{param} is only for mode={mode}."),
            )),
            false => Ok(()),
        };
        only(
            cmd.trial_period_days.is_some() && cmd.mode != CheckoutMode::Subscription,
            "subscription_data[trial_period_days]",
            "subscription",
        )?;
        only(
            cmd.capture_method == CaptureMethod::Manual && cmd.mode != CheckoutMode::Payment,
            "payment_intent_data[capture_method]",
            "payment",
        )?;
        if let Some(days) = cmd.trial_period_days {
            if !(1..=crate::billing::model::MAX_TRIAL_DAYS).contains(&days) {
                return Err(CoreError::invalid(
                    "subscription_data[trial_period_days]",
                    "parameter_invalid",
                    "trial_period_days must be 1 to 730.",
                ));
            }
        }
        Ok(())
    }

    /// Each line's price: the stored one it names, or one made from its `price_data` (with
    /// its product when it gives `product_data`).
    pub(crate) async fn lines(
        &self,
        ctx: &RequestContext,
        given: &[LineItemInput],
    ) -> CoreResult<Lines> {
        let scope = ctx.scope();
        let mut lines = Lines {
            items: Vec::with_capacity(given.len()),
            writes: self.batch(ctx),
        };
        for (i, line) in given.iter().enumerate() {
            let param = format!("line_items[{i}]");
            let (price, named) = match (&line.price, &line.price_data) {
                (Some(id), None) => {
                    let record = self
                        .referenced(
                            scope,
                            (Collection::Prices, IdKind::Price, "price"),
                            id,
                            &format!("{param}[price]"),
                        )
                        .await?;
                    (from_body::<Price>(&record.id, &record.body)?, None)
                }
                (None, Some(data)) => (
                    self.inline_price(ctx, &param, data, &mut lines.writes)
                        .await?,
                    data.product_name.clone(),
                ),
                _ => {
                    return Err(CoreError::invalid(
                        param.clone(),
                        "parameter_invalid",
                        format!("{param} needs price or price_data, not both."),
                    ))
                }
            };
            let description = match named {
                Some(name) => name,
                None => self.product_name(ctx, &price).await?,
            };
            let quantity = line.quantity.unwrap_or(1);
            lines.items.push(LineItem::new(
                ids::generate(IdKind::LineItem),
                description,
                price,
                quantity,
            ));
        }
        Ok(lines)
    }

    /// A price made from `price_data`, its writes (and its product's) added to `writes`.
    async fn inline_price(
        &self,
        ctx: &RequestContext,
        param: &str,
        data: &PriceData,
        writes: &mut Batch,
    ) -> CoreResult<Price> {
        let scope = ctx.scope();
        let product = match (&data.product, &data.product_name) {
            (Some(id), None) => {
                self.referenced(
                    scope,
                    (Collection::Products, IdKind::Product, "product"),
                    id,
                    &format!("{param}[price_data][product]"),
                )
                .await?
                .id
            }
            (None, Some(name)) => {
                let product = Product {
                    id: ids::generate(IdKind::Product),
                    object: "product".into(),
                    name: name.clone(),
                    description: None,
                    active: true,
                    metadata: Default::default(),
                    created: self.now(),
                    livemode: scope.livemode(),
                };
                crate::billing::catalog::check_name(
                    &format!("{param}[price_data][product_data][name]"),
                    name,
                )?;
                writes
                    .insert(&product)?
                    .event("product.created", &product)?;
                product.id
            }
            _ => {
                return Err(CoreError::invalid(
                    format!("{param}[price_data]"),
                    "parameter_invalid",
                    "price_data needs product or product_data[name], not both.",
                ))
            }
        };
        let recurring = match &data.recurring {
            Some((interval, count)) => {
                Some(crate::billing::catalog::check_recurring(interval, *count)?)
            }
            None => None,
        };
        let price = Price {
            id: ids::generate(IdKind::Price),
            object: "price".into(),
            product,
            currency: data.currency,
            unit_amount: crate::billing::catalog::check_unit_amount(
                &format!("{param}[price_data][unit_amount]"),
                data.unit_amount,
            )?,
            kind: match recurring {
                Some(_) => PriceType::Recurring,
                None => PriceType::OneTime,
            },
            recurring,
            active: true,
            nickname: None,
            lookup_key: None,
            metadata: Default::default(),
            created: self.now(),
            livemode: scope.livemode(),
        };
        writes.insert(&price)?.event("price.created", &price)?;
        Ok(price)
    }

    /// The name of `price`'s stored product, which the page shows for its line.
    async fn product_name(&self, ctx: &RequestContext, price: &Price) -> CoreResult<String> {
        let found = self
            .store
            .find_record(ctx.scope(), Collection::Products, &price.product)
            .await?;
        Ok(match found {
            Some(r) => from_body::<Product>(&r.id, &r.body)?.name,
            None => String::new(),
        })
    }
}
