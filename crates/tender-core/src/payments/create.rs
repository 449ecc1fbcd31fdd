//! Payment use cases: create (validate → authorise → record), update, capture, cancel.

use crate::card::{CardInput, ValidatedCard};
use crate::customers::customer::Customer;
use crate::documents::batch::Batch;
use crate::documents::document::from_body;
use crate::error::{CoreError, CoreResult};
use crate::ids::{self, CustomerId, IdKind, PaymentMethodId};
use crate::metadata;
use crate::money::{Amount, Currency};
use crate::payment_methods::service::Kept;
use crate::payments::kept::KeptCharge;
use crate::payments::payment::{CaptureMethod, Payment, PaymentMethodSnapshot, PaymentStatus};
use crate::payments::Payments;
use crate::secret::Secret;
use crate::services::RequestContext;
use crate::store::Collection;
use crate::validate::{check_amount, check_return_url, check_text};

/// The payment method given on create.
#[derive(Debug)]
pub enum PaymentMethodInput {
    Card(CardInput),
    /// A `pm_…` id of a tokenised or saved card.
    Saved(PaymentMethodId),
    /// `{type: "bank_transfer", bank_transfer: {iban, account_holder_name}}`.
    BankTransfer {
        iban: Secret,
        account_holder_name: String,
    },
    /// `{type: "connector_token", connector_token}`: a payment method the processor of the
    /// account's connector issued, passed through (CONTRACT §8).
    ConnectorToken(String),
}

/// `POST /payments` as read from the body, before its values are checked.
#[derive(Debug)]
pub struct CreatePaymentFields {
    pub amount: i64,
    pub currency: Currency,
    pub payment_method: PaymentMethodInput,
    pub customer: Option<String>,
    pub description: Option<String>,
    pub metadata: Vec<(String, String)>,
    pub capture: bool,
    pub save_payment_method: bool,
    pub return_url: Option<String>,
}

/// `POST /payments`, parsed and checked once ([`TryFrom<CreatePaymentFields>`]): the amount
/// against its currency, the description's length, the metadata's limits, the return URL. The
/// use case takes it as valid; what needs stored state (the customer, a saved card) it checks
/// itself.
#[derive(Debug)]
pub struct CreatePayment {
    pub amount: Amount,
    pub currency: Currency,
    pub payment_method: PaymentMethodInput,
    pub customer: Option<CustomerId>,
    pub description: Option<String>,
    pub metadata: crate::metadata::Metadata,
    pub capture: bool,
    pub save_payment_method: bool,
    /// Where the 3-D Secure page sends the customer afterwards.
    pub return_url: Option<String>,
    /// The invoice this payment pays (set by billing, never by the API's caller).
    pub invoice: Option<String>,
    /// The earlier-created payment this one confirms (set by
    /// [`crate::payments::intents`], never by the API's caller): its id, time and row.
    pub confirming: Option<Confirming>,
}

/// A payment created earlier and confirmed now: the attempt keeps its id and creation time
/// and replaces its row at `version`.
#[derive(Debug, Clone)]
pub struct Confirming {
    pub id: String,
    pub created: i64,
    pub version: i64,
}

impl TryFrom<CreatePaymentFields> for CreatePayment {
    type Error = CoreError;

    fn try_from(f: CreatePaymentFields) -> CoreResult<Self> {
        let amount = check_amount("amount", f.amount, f.currency)?;
        check_text("description", f.description.as_deref(), 1000)?;
        let metadata = metadata::on_create(f.metadata)?;
        if let Some(url) = &f.return_url {
            check_return_url(url)?;
        }
        let customer = f
            .customer
            .map(|c| CustomerId::referenced(c, "customer"))
            .transpose()?;
        Ok(CreatePayment {
            amount,
            currency: f.currency,
            payment_method: f.payment_method,
            customer,
            description: f.description,
            metadata,
            capture: f.capture,
            save_payment_method: f.save_payment_method,
            return_url: f.return_url,
            invoice: None,
            confirming: None,
        })
    }
}

/// What decides what happens to a payment besides its method.
pub(crate) struct ChargeOptions {
    pub(super) capture: bool,
    /// `save_payment_method`.
    pub(super) save: bool,
    pub(super) customer: Option<String>,
    pub(super) return_url: Option<String>,
}

/// A saved payment method's charge: a card from Tender's vault, or one a processor keeps.
enum SavedCharge {
    Card(Box<CardCharge>),
    Kept(Box<KeptCharge>),
}

/// A card payment once its card is known, before it is authorised.
pub(super) struct CardCharge {
    pub(super) payment: Payment,
    pub(super) card: ValidatedCard,
    /// Applied only when the charge is not refused (a card saved or attached).
    pub(super) approved: Batch,
    /// Applied only when it is (a claimed one-time card given back).
    pub(super) declined: Batch,
    /// What the payment was decided on and must still hold when it is recorded.
    pub(super) preconditions: Vec<(Collection, String, i64)>,
    /// A one-time `pm_…` claimed (consumed) before authorising.
    pub(super) claimed_token: Option<String>,
}

impl Payments<'_> {
    /// The customer's current version, or 400 `resource_missing` naming `customer`.
    pub(crate) async fn require_customer(
        &self,
        ctx: &RequestContext,
        id: &CustomerId,
    ) -> CoreResult<i64> {
        Ok(self.customer_and_clock(ctx, id).await?.0)
    }

    /// The customer's current version and test clock, or 400 `resource_missing` naming
    /// `customer`.
    async fn customer_and_clock(
        &self,
        ctx: &RequestContext,
        id: &CustomerId,
    ) -> CoreResult<(i64, Option<String>)> {
        let record = self
            .store
            .find_record(ctx.scope(), Collection::Customers, id)
            .await?;
        match record {
            Some(r) => {
                let customer: Customer = from_body(&r.id, &r.body)?;
                Ok((r.version, customer.test_clock))
            }
            None => Err(CoreError::missing_reference("customer", "customer", id)),
        }
    }

    /// `POST /payments`: validate, authorise (or start a bank transfer), record the payment,
    /// its event, any saved card and any scheduled follow-up in one batch. One branch per kind
    /// of payment method: a bank transfer, a processor's token, a new card, a saved card; both
    /// card branches end in [`Payments::charge_card`].
    pub async fn create_payment(
        &self,
        ctx: &RequestContext,
        cmd: CreatePayment,
    ) -> CoreResult<Payment> {
        if cmd.save_payment_method && cmd.customer.is_none() {
            return Err(CoreError::invalid(
                "customer",
                "parameter_missing",
                "save_payment_method requires a customer.",
            ));
        }
        // What this payment was decided on and must still hold when it is recorded: the
        // customer, and a saved card still attached to it (not detached or deleted meanwhile).
        let mut preconditions: Vec<(Collection, String, i64)> = Vec::new();
        // The account's connectors, first choice first; none: the built-in simulator.
        let route = self.connectors().route(ctx.scope()).await?;
        let Some(customer) = &cmd.customer else {
            return self.create_checked(ctx, cmd, route, preconditions).await;
        };
        let (version, clock) = self.customer_and_clock(ctx, customer).await?;
        preconditions.push((Collection::Customers, customer.to_string(), version));
        // A test clock's customer pays in the clock's time when Tender is the acquirer: the
        // hold expires, the authentication is abandoned and the money becomes available as the
        // clock advances. Not through a processor (its holds expire in its real time), and not
        // an invoice's payment: its tries are already in the clock's time, and the customer's
        // confirmation of its intent settles the invoice at once.
        let in_clock_time = clock.is_some()
            && clock.as_deref() != self.clock.test_clock()
            && route.is_empty()
            && cmd.invoice.is_none();
        if in_clock_time {
            let svc = self
                .billing()
                .for_clock(ctx.scope(), clock.as_deref())
                .await?;
            return svc
                .payments()
                .create_checked(ctx, cmd, route, preconditions)
                .await;
        }
        self.create_checked(ctx, cmd, route, preconditions).await
    }

    /// [`Self::create_payment`] once its customer is checked, in its customer's time.
    async fn create_checked(
        &self,
        ctx: &RequestContext,
        cmd: CreatePayment,
        route: Vec<crate::connectors::service::Routed>,
        preconditions: Vec<(Collection, String, i64)>,
    ) -> CoreResult<Payment> {
        let (payment, method, options) = self.new_payment(ctx, cmd);
        let charge = match method {
            PaymentMethodInput::BankTransfer {
                iban,
                account_holder_name,
            } => {
                if options.save {
                    return Err(CoreError::invalid(
                        "save_payment_method",
                        "parameter_invalid",
                        "Only cards can be saved for later payments.",
                    ));
                }
                return self
                    .start_bank_transfer(ctx, payment, &iban, account_holder_name)
                    .await;
            }
            PaymentMethodInput::ConnectorToken(token) => {
                return self
                    .pay_with_token(ctx, route, payment, token, &options, preconditions)
                    .await;
            }
            PaymentMethodInput::Card(input) => {
                self.new_card(ctx, &input, payment, &options, preconditions)?
            }
            PaymentMethodInput::Saved(pm_id) => {
                match self
                    .saved_card(ctx, &pm_id, payment, &options, preconditions)
                    .await?
                {
                    SavedCharge::Card(charge) => *charge,
                    SavedCharge::Kept(kept) => {
                        return self.pay_with_kept(ctx, route, *kept, options.capture).await
                    }
                }
            }
        };
        self.charge_card(ctx, route, charge, &options).await
    }

    /// The payment `cmd` asks for, before its method is known (`succeeded` until authorised),
    /// the method, and the options that decide what happens to it.
    pub(crate) fn new_payment(
        &self,
        ctx: &RequestContext,
        cmd: CreatePayment,
    ) -> (Payment, PaymentMethodInput, ChargeOptions) {
        let options = ChargeOptions {
            capture: cmd.capture,
            save: cmd.save_payment_method,
            customer: cmd.customer.map(String::from),
            return_url: cmd.return_url,
        };
        let (id, created, stored_version) = match cmd.confirming {
            Some(c) => (c.id, c.created, Some(c.version)),
            None => (ids::generate(IdKind::Payment), self.now(), None),
        };
        let payment = Payment {
            id,
            amount: cmd.amount.get(),
            amount_captured: 0,
            amount_refunded: 0,
            refunded: false,
            currency: cmd.currency,
            status: PaymentStatus::Succeeded,
            capture_method: if cmd.capture {
                CaptureMethod::Automatic
            } else {
                CaptureMethod::Manual
            },
            payment_method: PaymentMethodSnapshot {
                id: String::new(),
                kind: "card".into(),
                card: None,
                bank_transfer: None,
                connector_token: None,
            },
            customer: options.customer.clone(),
            description: cmd.description,
            metadata: cmd.metadata,
            failure_code: None,
            failure_message: None,
            decline_code: None,
            next_action: None,
            return_url: options.return_url.clone(),
            canceled_at: None,
            cancellation_reason: None,
            livemode: ctx.scope().livemode(),
            created,
            connector: None,
            connector_reference: None,
            balance_transaction: None,
            disputed: false,
            invoice: cmd.invoice,
            // Kept so that a declined try confirmed again still saves the card.
            save_payment_method: options.save,
            processor_settlement: None,
            stored_version,
        };
        (payment, cmd.payment_method, options)
    }

    /// A payment with a processor's own payment method: to the account's processors only (the
    /// simulator issues no tokens), never saved.
    async fn pay_with_token(
        &self,
        ctx: &RequestContext,
        route: Vec<crate::connectors::service::Routed>,
        mut payment: Payment,
        token: String,
        options: &ChargeOptions,
        preconditions: Vec<(Collection, String, i64)>,
    ) -> CoreResult<Payment> {
        let route: Vec<_> = route
            .into_iter()
            .filter(|r| r.object.kind != crate::connectors::connector::ConnectorType::Simulator)
            .collect();
        if route.is_empty() {
            return Err(CoreError::invalid(
                "payment_method[connector_token]",
                "parameter_invalid",
                "connector_token pays with a processor's own payment method: this account has no enabled connector to a processor.",
            ));
        }
        if options.save {
            return Err(CoreError::invalid(
                "save_payment_method",
                "parameter_invalid",
                "A connector_token is the processor's; Tender cannot save it for later payments.",
            ));
        }
        payment.payment_method.id = ids::generate(IdKind::PaymentMethod);
        payment.payment_method.kind = "connector_token".into();
        payment.payment_method.connector_token = Some(token.clone());
        self.create_upstream(
            ctx,
            route,
            crate::payments::upstream::UpstreamPayment {
                payment,
                source: crate::payments::upstream::UpstreamSource::Token(token),
                capture: options.capture,
                approved_ops: self.batch(ctx),
                declined_ops: self.batch(ctx),
                preconditions,
            },
        )
        .await
    }

    /// A payment with card details: validated now, saved for the customer (if asked) once the
    /// charge is not refused.
    fn new_card(
        &self,
        ctx: &RequestContext,
        input: &CardInput,
        mut payment: Payment,
        options: &ChargeOptions,
        preconditions: Vec<(Collection, String, i64)>,
    ) -> CoreResult<CardCharge> {
        let card = self.validate_card_now(input)?;
        payment.payment_method.id = ids::generate(IdKind::PaymentMethod);
        payment.payment_method.card = Some(self.card_details(&ctx.scope().account, &card));
        let mut approved = self.batch(ctx);
        if options.save {
            self.save_card(
                &mut approved,
                ctx,
                &card,
                &payment,
                options.customer.clone(),
            )?;
        }
        Ok(CardCharge {
            payment,
            declined: self.batch(ctx),
            card,
            approved,
            preconditions,
            claimed_token: None,
        })
    }

    /// A payment with a `pm_…`: a customer's saved card (which must still be attached to it when
    /// the payment is recorded), or a one-time token, claimed (consumed) before the card is
    /// authorised, given back if the charge is refused, attached if asked to save.
    async fn saved_card(
        &self,
        ctx: &RequestContext,
        pm_id: &PaymentMethodId,
        mut payment: Payment,
        options: &ChargeOptions,
        mut preconditions: Vec<(Collection, String, i64)>,
    ) -> CoreResult<SavedCharge> {
        let chargeable = self
            .payment_methods()
            .load_chargeable(ctx, pm_id, "payment_method")
            .await?;
        let mut method = chargeable.method;
        let card = match chargeable.kept {
            Kept::Card(card) => card,
            Kept::Processor(at) => {
                let kept = KeptCharge::new(
                    &method,
                    chargeable.version,
                    at,
                    payment,
                    options.customer.as_deref(),
                    preconditions,
                )?;
                return Ok(SavedCharge::Kept(Box::new(kept)));
            }
        };
        let mut approved = self.batch(ctx);
        let mut declined = self.batch(ctx);
        let mut claimed_token = None;
        match (&method.customer, &options.customer) {
            (Some(owner), Some(given)) if owner == given => {
                preconditions.push((
                    Collection::PaymentMethods,
                    method.id.clone(),
                    chargeable.version,
                ));
            }
            (Some(_), Some(_)) => {
                return Err(CoreError::invalid(
                    "payment_method",
                    "payment_method_unexpected_state",
                    "This payment method is attached to another customer.",
                ))
            }
            (Some(_), None) => return Err(CoreError::invalid(
                "customer",
                "parameter_missing",
                "A saved payment method can only be charged with the customer it is attached to.",
            )),
            (None, _) => {
                // Claiming is a commit of its own, so the idempotency key is claimed first.
                self.claim_key(ctx).await?;
                let claimed = self.claim_token(ctx, &method, chargeable.version).await?;
                claimed_token = Some(method.id.clone());
                declined.seal(&method.id, self.payment_methods().seal_card(&card)?);
                if options.save {
                    method.customer = options.customer.clone();
                    approved
                        .seal(&method.id, self.payment_methods().seal_card(&card)?)
                        .update(&method, claimed)?;
                }
            }
        }
        payment.payment_method.id = method.id.clone();
        payment.payment_method.card = Some(method.card.clone());
        Ok(SavedCharge::Card(Box::new(CardCharge {
            payment,
            card,
            approved,
            declined,
            preconditions,
            claimed_token,
        })))
    }
}
