//! Payment use cases: create (validate → authorise → record), update, capture, cancel.

use crate::auth::hash_key;
use crate::card::{fingerprint, validate_card, CardInput, ValidatedCard};
use crate::clock::year_month;
use crate::documents::batch::Batch;
use crate::documents::document::{to_body, to_value};
use crate::error::{CoreError, CoreResult, StoreError};
use crate::ids::{self, CustomerId, IdKind, PaymentMethodId};
use crate::metadata;
use crate::money::{Amount, Currency};
use crate::payments::acquirer::Authorization;
use crate::payments::payment::{
    authorised, Authorised, BankTransferDetails, CaptureMethod, CardDetails, Payment,
    PaymentMethodSnapshot, PaymentStatus,
};
use crate::payments::payment::{AUTHENTICATION_TIMEOUT_SECS, AUTHORIZATION_TTL_SECS};
use crate::secret::Secret;
use crate::services::{RequestContext, Services};
use crate::store::Collection;
use crate::task::TaskKind;
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
        })
    }
}

impl Services {
    /// Per-account key for card fingerprints: equal cards match within an account only.
    fn fingerprint_key(&self, account: &str) -> [u8; 32] {
        crate::vault::derive_key(
            &self.config.vault_key,
            &format!("card fingerprint:{account}"),
        )
    }

    pub(crate) fn card_details(&self, account: &str, card: &ValidatedCard) -> CardDetails {
        CardDetails {
            brand: card.brand,
            last4: card.last4.clone(),
            exp_month: card.exp_month,
            exp_year: card.exp_year,
            fingerprint: fingerprint(card.pan.expose(), &self.fingerprint_key(account)),
            country: card.country.to_string(),
            funding: card.funding.to_string(),
        }
    }

    /// Validates a card as of the clock's current month (402 `card_error` naming the field).
    pub(crate) fn validate_card_now(&self, input: &CardInput) -> CoreResult<ValidatedCard> {
        let (year, month) = year_month(self.now());
        validate_card(input, year, month).map_err(|e| CoreError::Card {
            code: e.code().into(),
            decline_code: None,
            message: e.message().into(),
            param: Some(e.param()),
            payment: None,
        })
    }

    /// The customer's current version, or 400 `resource_missing` naming `customer`.
    pub(crate) async fn require_customer(
        &self,
        ctx: &RequestContext,
        id: &CustomerId,
    ) -> CoreResult<i64> {
        let record = self
            .store
            .find_record(ctx.scope(), Collection::Customers, id)
            .await?;
        match record {
            Some(r) => Ok(r.version),
            None => Err(CoreError::missing_reference("customer", "customer", id)),
        }
    }

    /// Takes a one-time `pm_…` for this payment before the card is authorised, in a commit of
    /// its own: its vaulted number is forgotten (so it is consumed) and its version moves on.
    /// Of several requests charging one token at once, one claims it; the others find it used
    /// (400 `payment_method_unusable`) and none of them is authorised.
    async fn claim_token(
        &self,
        ctx: &RequestContext,
        method: &crate::payment_methods::payment_method::PaymentMethod,
        version: i64,
    ) -> CoreResult<i64> {
        let mut claim = self.background(ctx.scope());
        claim.unseal(&method.id).update(method, version)?;
        match self.commit_background(claim).await {
            Ok(()) => Ok(version + 1),
            // Someone else moved it first: say what it is now (used, or attached meanwhile).
            Err(CoreError::Store(StoreError::Conflict(_))) => {
                let pm_id = PaymentMethodId::stored(method.id.as_str());
                let pm_id = &pm_id;
                self.load_chargeable(ctx, pm_id, "payment_method").await?;
                Err(CoreError::invalid(
                    "payment_method",
                    "payment_method_unusable",
                    "This payment method is being used by another payment; a one-time payment method can be charged once.",
                ))
            }
            Err(e) => Err(e),
        }
    }

    /// `POST /payments`: validate, authorise (or start a bank transfer), record the payment,
    /// its event, any saved card and any scheduled follow-up in one batch.
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
        let customer_version = match &cmd.customer {
            Some(customer) => Some(self.require_customer(ctx, customer).await?),
            None => None,
        };
        let scope = ctx.scope();
        // The account's connectors, first choice first; none: the built-in simulator.
        let route = self.route(scope).await?;
        let now = self.now();
        let id = ids::generate(IdKind::Payment);
        let mut payment = Payment {
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
            customer: cmd.customer.clone().map(String::from),
            description: cmd.description,
            metadata: cmd.metadata,
            failure_code: None,
            failure_message: None,
            decline_code: None,
            next_action: None,
            return_url: cmd.return_url.clone(),
            canceled_at: None,
            cancellation_reason: None,
            livemode: scope.livemode(),
            created: now,
            connector: None,
            connector_reference: None,
            balance_transaction: None,
            disputed: false,
            invoice: cmd.invoice,
        };
        let mut ops = self.batch(ctx);
        // Changes to a `pm_…` used here: applied only if the bank does not refuse the charge.
        let mut method_ops = self.batch(ctx);
        // What this payment was decided on and must still hold when it is recorded: the
        // customer, and a saved card still attached to it (not detached or deleted meanwhile).
        let mut preconditions: Vec<(Collection, String, i64)> = Vec::new();
        if let (Some(customer), Some(version)) = (&cmd.customer, customer_version) {
            preconditions.push((Collection::Customers, customer.to_string(), version));
        }
        // A one-time token claimed (consumed) before authorising.
        let mut claimed_token: Option<String> = None;
        let mut new_card_to_save = false;

        // The card to authorise, and what to do with the payment method once it is known.
        let card = match cmd.payment_method {
            PaymentMethodInput::BankTransfer {
                iban,
                account_holder_name,
            } => {
                if cmd.save_payment_method {
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
                // A processor's token goes to processors only (the simulator issues none).
                let route: Vec<_> = route
                    .into_iter()
                    .filter(|r| {
                        r.object.kind != crate::connectors::connector::ConnectorType::Simulator
                    })
                    .collect();
                if route.is_empty() {
                    return Err(CoreError::invalid(
                        "payment_method[connector_token]",
                        "parameter_invalid",
                        "connector_token pays with a processor's own payment method: this account has no enabled connector to a processor.",
                    ));
                }
                if cmd.save_payment_method {
                    return Err(CoreError::invalid(
                        "save_payment_method",
                        "parameter_invalid",
                        "A connector_token is the processor's; Tender cannot save it for later payments.",
                    ));
                }
                payment.payment_method.id = ids::generate(IdKind::PaymentMethod);
                payment.payment_method.kind = "connector_token".into();
                payment.payment_method.connector_token = Some(token.clone());
                return self
                    .create_upstream(
                        ctx,
                        route,
                        crate::payments::upstream::UpstreamPayment {
                            payment,
                            source: crate::payments::upstream::UpstreamSource::Token(token),
                            capture: cmd.capture,
                            approved_ops: self.batch(ctx),
                            declined_ops: self.batch(ctx),
                            preconditions,
                        },
                    )
                    .await;
            }
            PaymentMethodInput::Card(input) => {
                let card = self.validate_card_now(&input)?;
                payment.payment_method.id = ids::generate(IdKind::PaymentMethod);
                payment.payment_method.card = Some(self.card_details(&scope.account, &card));
                new_card_to_save = cmd.save_payment_method;
                card
            }
            PaymentMethodInput::Saved(pm_id) => {
                let chargeable = self.load_chargeable(ctx, &pm_id, "payment_method").await?;
                let mut method = chargeable.method;
                match (&method.customer, &cmd.customer) {
                    (Some(owner), Some(given)) if owner == given => {}
                    (Some(_), Some(_)) => {
                        return Err(CoreError::invalid(
                            "payment_method",
                            "payment_method_unexpected_state",
                            "This payment method is attached to another customer.",
                        ))
                    }
                    (Some(_), None) => {
                        return Err(CoreError::invalid(
                            "customer",
                            "parameter_missing",
                            "A saved payment method can only be charged with the customer it is attached to.",
                        ))
                    }
                    (None, _) => {
                        // A one-time token: claimed (consumed) now, before the card is
                        // authorised; given back if the bank refuses, attached if asked to save.
                        // That is a commit of its own, so the idempotency key is claimed first.
                        self.claim_key(ctx).await?;
                        let claimed = self
                            .claim_token(ctx, &method, chargeable.version)
                            .await?;
                        claimed_token = Some(method.id.clone());
                        if cmd.save_payment_method {
                            method.customer = cmd.customer.clone().map(String::from);
                            method_ops
                                .seal(&method.id, self.seal_card(&chargeable.card)?)
                                .update(&method, claimed)?;
                        }
                    }
                }
                if method.customer.is_some() && claimed_token.is_none() {
                    preconditions.push((
                        Collection::PaymentMethods,
                        method.id.clone(),
                        chargeable.version,
                    ));
                }
                payment.payment_method.id = method.id.clone();
                payment.payment_method.card = Some(method.card.clone());
                chargeable.card
            }
        };

        if !route.is_empty() {
            let mut approved_ops = method_ops;
            if new_card_to_save {
                self.save_card(
                    &mut approved_ops,
                    ctx,
                    &card,
                    &payment,
                    cmd.customer.clone().map(String::from),
                )?;
            }
            let mut declined_ops = self.background(scope);
            if let Some(pm) = &claimed_token {
                declined_ops.seal(pm, self.seal_card(&card)?);
            }
            return self
                .create_upstream(
                    ctx,
                    route,
                    crate::payments::upstream::UpstreamPayment {
                        payment,
                        source: crate::payments::upstream::UpstreamSource::Card(card),
                        capture: cmd.capture,
                        approved_ops,
                        declined_ops,
                        preconditions,
                    },
                )
                .await;
        }
        if self.acquirer.calls_out() {
            self.claim_key(ctx).await?;
        }
        let authorization = self.acquirer.authorize(&card, scope.livemode()).await;
        if authorization == Authorization::Approved
            && !scope.livemode()
            && card.pan.expose() == crate::payments::acquirer::DISPUTED_CARD
        {
            // The disputed test card: its bank disputes the payment a moment later.
            ops.schedule(
                TaskKind::OpenDispute,
                &payment.id,
                now + crate::balance::disputes::DISPUTE_DELAY_SECS,
            );
        }
        let answer = match authorization {
            Authorization::Approved if cmd.capture => Authorised::Captured(payment.amount),
            Authorization::Approved => {
                ops.schedule(
                    TaskKind::ExpireAuthorization,
                    &payment.id,
                    now + AUTHORIZATION_TTL_SECS,
                );
                Authorised::Held
            }
            Authorization::RequiresAction => {
                let token = ids::random_base62(32);
                ops.seal(&payment.id, hash_key(&token)).schedule(
                    TaskKind::AbandonAuthentication,
                    &payment.id,
                    now + AUTHENTICATION_TIMEOUT_SECS,
                );
                Authorised::Authenticate(serde_json::json!({
                    "type": "redirect_to_url",
                    "redirect_to_url": {
                        "url": format!("{}/authenticate/{}/{}", self.config.receipt_base, payment.id, token),
                        "return_url": cmd.return_url,
                    }
                }))
            }
            Authorization::Declined(d) => Authorised::Declined(d),
        };
        let decline = match &answer {
            Authorised::Declined(d) => Some(d.error(&payment.id)),
            _ => None,
        };
        authorised(&mut payment, answer);
        // A card is saved or consumed only when the bank did not refuse the charge: a claimed
        // token the bank refused is given back.
        if decline.is_none() {
            ops.extend(method_ops);
        } else if let Some(pm) = &claimed_token {
            ops.seal(pm, self.seal_card(&card)?);
        }
        if new_card_to_save && decline.is_none() {
            self.save_card(
                &mut ops,
                ctx,
                &card,
                &payment,
                cmd.customer.clone().map(String::from),
            )?;
        }
        self.record_authorised(
            ctx,
            payment,
            ops,
            decline,
            preconditions,
            &card,
            claimed_token,
        )
        .await
    }

    /// Records a payment whose card was already authorised (or declined). Its batch holds
    /// only while what it was decided on still does (`preconditions`): a customer deleted or a
    /// saved card detached meanwhile makes it fail, and then the client is told why. A
    /// concurrent change that invalidates nothing (metadata, say) just means recording again
    /// with the new versions. Whenever the payment cannot be recorded, an approved authorisation
    /// is reversed (no hold outlives the request) and a claimed one-time token given back.
    #[allow(clippy::too_many_arguments)]
    async fn record_authorised(
        &self,
        ctx: &RequestContext,
        payment: Payment,
        ops: Batch,
        decline: Option<CoreError>,
        mut preconditions: Vec<(Collection, String, i64)>,
        card: &ValidatedCard,
        claimed_token: Option<String>,
    ) -> CoreResult<Payment> {
        let approved = decline.is_none();
        let result = match decline {
            // A declined payment is recorded whatever happened meanwhile.
            Some(decline) => {
                self.finish_create(ctx, payment.clone(), ops, Some(decline))
                    .await
            }
            None => {
                let mut attempts = 0;
                loop {
                    attempts += 1;
                    let mut batch = ops.clone();
                    for (collection, id, version) in &preconditions {
                        batch.check(*collection, id, *version);
                    }
                    match self.finish_create(ctx, payment.clone(), batch, None).await {
                        Err(CoreError::Store(StoreError::Conflict(_))) if attempts < 16 => {
                            match self
                                .refresh_preconditions(ctx, &payment, &preconditions)
                                .await
                            {
                                Ok(fresh) => preconditions = fresh,
                                Err(e) => break Err(e),
                            }
                        }
                        other => break other,
                    }
                }
            }
        };
        // A decline answers `Err(Card)` once it is recorded; any other error recorded nothing.
        let recorded = matches!(&result, Ok(_) | Err(CoreError::Card { .. }));
        if !recorded {
            if approved {
                tracing::warn!(payment = %payment.id, "an authorised payment could not be recorded; reversing the authorisation");
                self.acquirer.reverse(card, ctx.scope().livemode()).await;
            }
            if let Some(pm) = &claimed_token {
                let mut restore = self.background(ctx.scope());
                restore.seal(pm, self.seal_card(card)?);
                if let Err(e) = self.commit_background(restore).await {
                    tracing::warn!(error = %crate::error::error_chain(&e), payment_method = %pm, "could not give back a claimed payment method");
                }
            }
        }
        result
    }

    /// Saves a payment's new card for `customer` (`save_payment_method`), in `batch`.
    fn save_card(
        &self,
        batch: &mut Batch,
        ctx: &RequestContext,
        card: &ValidatedCard,
        payment: &Payment,
        customer: Option<String>,
    ) -> CoreResult<()> {
        let mut method = self.new_payment_method(ctx, card, customer, Default::default());
        method.id = payment.payment_method.id.clone();
        method.created = payment.created;
        batch
            .insert(&method)?
            .seal(&method.id, self.seal_card(card)?);
        Ok(())
    }

    /// The preconditions of a payment again, with their current versions; the error the client
    /// gets when one no longer holds (customer deleted, card detached or moved to another).
    pub(crate) async fn refresh_preconditions(
        &self,
        ctx: &RequestContext,
        payment: &Payment,
        preconditions: &[(Collection, String, i64)],
    ) -> CoreResult<Vec<(Collection, String, i64)>> {
        let mut fresh = Vec::with_capacity(preconditions.len());
        for (collection, id, _) in preconditions {
            let version = match collection {
                Collection::Customers => {
                    self.require_customer(ctx, &CustomerId::stored(id.as_str()))
                        .await?
                }
                _ => {
                    let pm = PaymentMethodId::stored(id.as_str());
                    let chargeable = self.load_chargeable(ctx, &pm, "payment_method").await?;
                    if chargeable.method.customer != payment.customer {
                        return Err(CoreError::invalid(
                            "payment_method",
                            "payment_method_unexpected_state",
                            "This payment method is no longer attached to the customer.",
                        ));
                    }
                    chargeable.version
                }
            };
            fresh.push((*collection, id.clone(), version));
        }
        Ok(fresh)
    }

    /// Records a new payment with its event and answers with it (or with the decline).
    async fn finish_create(
        &self,
        ctx: &RequestContext,
        mut payment: Payment,
        mut ops: Batch,
        decline: Option<CoreError>,
    ) -> CoreResult<Payment> {
        // What it captured is booked on the balance in the same batch (CONTRACT §9).
        self.book_charge(&mut ops, &mut payment).await?;
        // Serialised once: the row, and the answer kept under the idempotency key (rendered on
        // a replay); the event carries the same stored form.
        let stored = to_body(&payment)?;
        let object = to_value(&payment)?;
        ops.insert_stored(&payment, stored.clone());
        let event_type = match payment.status {
            PaymentStatus::Succeeded => Some("payment.succeeded"),
            PaymentStatus::Failed => Some("payment.failed"),
            _ => None,
        };
        let mut event = None;
        if let Some(event_type) = event_type {
            event = Some(ops.event_id(event_type, object, None)?);
        }
        match decline {
            None => {
                self.commit_payment(ctx, ops, &stored, event.as_deref())
                    .await?;
                Ok(payment)
            }
            Some(err) => {
                self.commit(ctx, ops, Err(&err)).await?;
                Err(err)
            }
        }
    }

    /// A bank transfer: validated IBAN, created `processing`, settled later by a task.
    async fn start_bank_transfer(
        &self,
        ctx: &RequestContext,
        mut payment: Payment,
        iban: &Secret,
        account_holder_name: String,
    ) -> CoreResult<Payment> {
        let iban = crate::validate::iban::validate(iban.expose()).map_err(|_| {
            CoreError::invalid(
                "payment_method[bank_transfer][iban]",
                "parameter_invalid",
                "The IBAN is not valid (length for its country, or check digits).",
            )
        })?;
        if account_holder_name.trim().is_empty() {
            return Err(CoreError::invalid(
                "payment_method[bank_transfer][account_holder_name]",
                "parameter_missing",
                "Missing required param: payment_method[bank_transfer][account_holder_name].",
            ));
        }
        if !payment.capture_method.eq(&CaptureMethod::Automatic) {
            return Err(CoreError::invalid(
                "capture",
                "parameter_invalid",
                "Bank transfers cannot be authorised for later capture.",
            ));
        }
        payment.status = PaymentStatus::Processing;
        payment.payment_method = PaymentMethodSnapshot {
            id: ids::generate(IdKind::PaymentMethod),
            kind: "bank_transfer".into(),
            card: None,
            bank_transfer: Some(BankTransferDetails {
                last4: iban.last4.clone(),
                country: iban.country.to_string(),
                account_holder_name,
            }),
            connector_token: None,
        };
        // Whether the transfer will bounce is decided now (test IBANs ending in 3001) and
        // carried by the task, so the full IBAN never needs to be stored.
        let kind = if !payment.livemode && iban.normalized.expose().ends_with("3001") {
            TaskKind::BounceBankTransfer
        } else {
            TaskKind::SettleBankTransfer
        };
        let due = payment.created + self.config.bank_settlement_delay;
        let mut ops = self.batch(ctx);
        ops.schedule(kind, &payment.id, due);
        self.finish_create(ctx, payment, ops, None).await
    }
}
