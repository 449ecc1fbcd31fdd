//! The hosted page's form: one try at paying a session with the card the customer typed,
//! which reached Tender's own origin and no one else's (CONTRACT §14).
//!
//! A try runs once per page token ([`crate::documents::page_token`]): a form sent twice
//! answers as the first. It takes the session's customer (made from the e-mail given when it
//! has none), then by mode:
//!
//! | mode | the try | done when |
//! |---|---|---|
//! | `payment` | the session's PaymentIntent (made on the first try) confirmed with the card | it succeeded (`paid`) or is authorised (`unpaid`, a manual capture); 3-D Secure first sends the customer to Tender's authentication page, which returns to the session's page |
//! | `subscription` | the card saved to the customer, the subscription created on it (`error_if_incomplete`) | it is active (`paid`) or trialing (`no_payment_required`) |
//! | `setup` | the session's SetupIntent (made on the first try) confirmed with the card | it succeeded (`no_payment_required`) |
//!
//! Before anything, the card-testing guard ([`crate::risk`]) refuses a client address or a
//! card that was declined too often in the last hour; each decline is counted for both.
//! A try holds its session while it runs (`trying_until`, a versioned write): a second form
//! sent meanwhile, from another tab, is refused as in progress, so one session never starts two
//! subscriptions or saves two cards at once. A decline is counted on the session; after the account's
//! `declines_per_session` (3 by default) it takes no more tries (the card-testing guard's
//! limit per session; the decline that reaches it is told as `risk.blocked`).
//!
//! Depends on the payments, payment methods, customers, billing and setup-intent use cases.

use serde_json::json;

use crate::auth::{KeyKind, Principal, Scope};
use crate::billing::subscriptions::{CreateSubscription, PaymentBehavior};
use crate::card::CardInput;
use crate::checkout::lifecycle::{paid_by, Made};
use crate::checkout::session::{
    CheckoutMode, CheckoutPaymentStatus, CheckoutSession, TRY_HOLD_SECS,
};
use crate::checkout::Checkout;
use crate::customers::service::CustomerFields;
use crate::documents::idempotency::{Internal, Settled};
use crate::error::{CoreError, CoreResult};
use crate::ids::{self, CustomerId, IdKind, PaymentId, PaymentMethodId, SetupIntentId};
use crate::money::Amount;
use crate::payments::create::{CreatePayment, PaymentMethodInput};
use crate::payments::intents::{ConfirmIntent, CreateIntent};
use crate::payments::payment::{CaptureMethod, PaymentStatus};
use crate::risk::{Attempt, BlockReason, Surface};
use crate::services::RequestContext;
use crate::setup_intents::service::{ConfirmSetupIntent, CreateSetupIntent};
use crate::store::Collection;

/// What the page's form sends.
#[derive(Debug)]
pub struct CheckoutForm {
    pub email: Option<String>,
    pub card: CardInput,
    /// The page's one-time token.
    pub token: Option<String>,
    /// The client's address, for the card-testing guard ([`crate::risk`]).
    pub client: Option<String>,
}

/// Where a try leaves the customer.
#[derive(Debug)]
pub enum Paid {
    /// The session is complete: on to its `success_url`.
    Complete(CheckoutSession),
    /// The bank asks the cardholder to authenticate: on to this page.
    Authenticate(String),
    /// Still open (a form sent again whose try did not finish it): the page again.
    Open(CheckoutSession),
}

/// How one mode's try ended, short of a decline.
enum Step {
    Done(Made, CheckoutPaymentStatus),
    Authenticate(String),
}

/// What the page says once the session took as many declines as it will.
pub fn too_many_declines_words() -> &'static str {
    "Too many declined cards for this checkout. Please start again from the shop."
}

/// 429 on the page: the session took as many declines as it will.
pub fn too_many_declines() -> CoreError {
    CoreError::Blocked {
        code: "checkout_attempts_exhausted",
        message: too_many_declines_words().into(),
    }
}

impl Checkout<'_> {
    /// The page's form for session `id`: `None` when there is no such session.
    pub async fn pay_checkout_session(
        &self,
        id: &str,
        form: CheckoutForm,
        request_id: String,
    ) -> CoreResult<Option<Paid>> {
        if !ids::looks_like(IdKind::CheckoutSession, id) {
            return Ok(None);
        }
        let Some((scope, _)) = self
            .store
            .find_unscoped(Collection::CheckoutSessions, id)
            .await?
        else {
            return Ok(None);
        };
        let nonce = self.check_page_token(id, form.token.as_deref())?;
        let name = format!("checkout:{id}:{nonce}");
        let claim = match self
            .begin_internal(
                &scope,
                &name,
                &name,
                "POST",
                "/checkout_sessions/pay",
                &json!({ "session": id }),
            )
            .await?
        {
            Internal::Done(_) => return self.where_it_stands(&scope, id).await.map(Some),
            Internal::Run(claim) => claim,
        };
        let ctx = RequestContext {
            principal: Principal {
                scope: scope.clone(),
                key_kind: KeyKind::Secret,
            },
            request_id,
            idempotency: None,
            client: None,
        };
        let fingerprint = self.card_fingerprint(&scope, &form.card);
        let result = match self
            .attempt(
                &scope,
                Surface::CheckoutPage,
                form.client.as_deref(),
                fingerprint,
                Some(id),
            )
            .await
        {
            Ok(attempt) => {
                self.guarded_try(&ctx, id, form.email, form.card, &attempt)
                    .await
            }
            Err(e) => Err(e),
        };
        let shown = json!({ "session": id });
        let answer = self.encoder.encode(
            match &result {
                Ok(_) => Ok(&shown),
                Err(e) => Err(e),
            },
            &ctx.request_id,
        );
        match claim.settle(answer.status, &answer.body).await {
            Settled::Send => result.map(Some),
            Settled::Replay(_) => self.where_it_stands(&scope, id).await.map(Some),
            Settled::Refuse(e) => Err(e),
        }
    }

    /// The session as a replayed form finds it.
    async fn where_it_stands(&self, scope: &Scope, id: &str) -> CoreResult<Paid> {
        let (session, _): (CheckoutSession, i64) = self
            .load(scope, Collection::CheckoutSessions, "checkout_session", id)
            .await?;
        let session = self.reconcile(scope, session).await?;
        Ok(match session.status {
            crate::checkout::session::CheckoutStatus::Complete => Paid::Complete(session),
            _ => Paid::Open(session),
        })
    }

    /// [`Self::try_pay`] under the card-testing guard: refused at the limits, a decline counted.
    async fn guarded_try(
        &self,
        ctx: &RequestContext,
        id: &str,
        email: Option<String>,
        card: CardInput,
        attempt: &Attempt,
    ) -> CoreResult<Paid> {
        self.check_attempt(attempt)?;
        let result = self.try_pay(ctx, id, email, card, attempt).await;
        if let Err(CoreError::Card { .. }) = &result {
            self.note_decline(attempt).await;
        }
        result
    }

    async fn try_pay(
        &self,
        ctx: &RequestContext,
        id: &str,
        email: Option<String>,
        card: CardInput,
        attempt: &Attempt,
    ) -> CoreResult<Paid> {
        let scope = ctx.scope();
        let (session, version): (CheckoutSession, i64) = self
            .load(scope, Collection::CheckoutSessions, "checkout_session", id)
            .await?;
        let session = self.reconcile(scope, session).await?;
        if session.status == crate::checkout::session::CheckoutStatus::Complete {
            return Ok(Paid::Complete(session));
        }
        session.require_open(self.now(), "paid")?;
        let limit = self
            .accounts()
            .checkout_settings(&scope.account)
            .await?
            .declines_per_session;
        if session.exhausted(limit) {
            return Err(too_many_declines());
        }
        let session = self.hold_for_try(scope, session, version).await?;
        let step = match self.customer_for(ctx, session, email).await {
            Ok(session) => match session.mode {
                CheckoutMode::Payment => self.pay_now(ctx, session.clone(), card).await,
                CheckoutMode::Subscription => self.subscribe(ctx, &session, card).await,
                CheckoutMode::Setup => self.save_card(ctx, session.clone(), card).await,
            },
            Err(e) => Err(e),
        };
        if let Ok(Step::Done(made, status)) = step {
            let done = self
                .complete_session(Some(ctx), scope, id, &made, status)
                .await?;
            return Ok(Paid::Complete(done));
        }
        // Any other end lets go of the session; a decline is counted.
        let declined = matches!(step, Err(CoreError::Card { .. }));
        let after = self
            .note(scope, id, |s| {
                s.trying_until = None;
                s.declined_attempts += u32::from(declined);
            })
            .await?;
        if declined && after.declined_attempts == limit {
            self.tell_block(attempt, BlockReason::DeclinesPerSession, limit)
                .await;
        }
        match step {
            Ok(Step::Authenticate(url)) => Ok(Paid::Authenticate(url)),
            Ok(Step::Done(..)) => unreachable!("completed above"),
            Err(e) => Err(e),
        }
    }

    /// Session `id` held by this try (a versioned write of its `trying_until`): another try
    /// that holds it, or took it first, is refused as in progress (the page's 409).
    async fn hold_for_try(
        &self,
        scope: &Scope,
        mut session: CheckoutSession,
        version: i64,
    ) -> CoreResult<CheckoutSession> {
        let now = self.now();
        if session.held(now) {
            return Err(CoreError::IdempotencyInProgress);
        }
        session.trying_until = Some(now + TRY_HOLD_SECS);
        let mut batch = self.background(scope);
        batch.update(&session, version)?;
        match self.commit_background(batch).await {
            Err(CoreError::Store(crate::error::StoreError::Conflict(_))) => {
                Err(CoreError::IdempotencyInProgress)
            }
            other => other.map(|()| session),
        }
    }

    /// Changes session `id` without an event (what a try has made so far).
    async fn note(
        &self,
        scope: &Scope,
        id: &str,
        change: impl Fn(&mut CheckoutSession),
    ) -> CoreResult<CheckoutSession> {
        self.retry_on_conflict(|| async {
            let (mut session, version): (CheckoutSession, i64) = self
                .load(scope, Collection::CheckoutSessions, "checkout_session", id)
                .await?;
            change(&mut session);
            let mut batch = self.background(scope);
            batch.update(&session, version)?;
            self.commit_background(batch).await?;
            Ok(session)
        })
        .await
    }

    /// The session with its customer: the one it was made for, else one made now with the
    /// e-mail the shop gave or the customer typed.
    async fn customer_for(
        &self,
        ctx: &RequestContext,
        session: CheckoutSession,
        typed: Option<String>,
    ) -> CoreResult<CheckoutSession> {
        if session.customer.is_some() {
            return Ok(session);
        }
        let email = session
            .customer_email
            .clone()
            .or(typed
                .map(|e| e.trim().to_string())
                .filter(|e| !e.is_empty()))
            .ok_or_else(|| {
                CoreError::invalid("email", "parameter_missing", "Enter your e-mail address.")
            })?;
        // The customer's own checks refuse an address that is not one.
        let customer = self
            .customers()
            .create_customer(
                ctx,
                CustomerFields {
                    email: Some(Some(email.clone())),
                    ..CustomerFields::default()
                },
            )
            .await?;
        self.note(ctx.scope(), &session.id, |s| {
            s.customer = Some(customer.id.clone());
            s.customer_email = Some(email.clone());
        })
        .await
    }

    /// Payment mode: the session's intent confirmed with the card.
    async fn pay_now(
        &self,
        ctx: &RequestContext,
        session: CheckoutSession,
        card: CardInput,
    ) -> CoreResult<Step> {
        let intent = match &session.payment_intent {
            Some(id) => id.clone(),
            None => self.intent_for(ctx, &session).await?,
        };
        let confirm = ConfirmIntent {
            payment_method: Some(PaymentMethodInput::Card(card)),
            return_url: None,
            save_payment_method: false,
        };
        let payment = self
            .payments()
            .confirm_payment(ctx, &PaymentId::stored(intent.clone()), confirm)
            .await?;
        if let Some(status) = paid_by(&payment) {
            let made = Made {
                payment_intent: Some(intent),
                ..Made::default()
            };
            return Ok(Step::Done(made, status));
        }
        let url = payment
            .next_action
            .as_ref()
            .and_then(|a| a.pointer("/redirect_to_url/url"))
            .and_then(|u| u.as_str());
        match (payment.status, url) {
            (PaymentStatus::RequiresAction, Some(url)) => Ok(Step::Authenticate(url.to_string())),
            _ => Err(CoreError::UnexpectedState {
                message: format!(
                    "The payment is {}; it cannot complete this checkout.",
                    payment.status.as_str()
                ),
            }),
        }
    }

    /// The PaymentIntent of a payment-mode session, made on its first try and noted on it.
    async fn intent_for(
        &self,
        ctx: &RequestContext,
        session: &CheckoutSession,
    ) -> CoreResult<String> {
        let (Some(currency), Some(total)) = (session.currency, session.amount_total) else {
            return Err(CoreError::UnexpectedState {
                message: "This Checkout Session has no total to pay.".into(),
            });
        };
        let amount = Amount::parse(total, currency).map_err(|e| {
            CoreError::invalid("amount", e.code(), "The session's total is out of bounds.")
        })?;
        let names: Vec<&str> = session
            .line_items
            .data
            .iter()
            .map(|l| l.description.as_str())
            .collect();
        let mut description = names.join(", ");
        if description.chars().count() > 500 {
            description = description.chars().take(499).collect::<String>() + "…";
        }
        let payment = CreatePayment {
            amount,
            currency,
            payment_method: PaymentMethodInput::ConnectorToken(String::new()),
            customer: session.customer.as_deref().map(CustomerId::stored),
            description: (!description.is_empty()).then_some(description),
            metadata: Default::default(),
            capture: session.capture_method == CaptureMethod::Automatic,
            save_payment_method: false,
            return_url: session.url.clone(),
            invoice: None,
            confirming: None,
        };
        let intent = self
            .payments()
            .create_intent(
                ctx,
                CreateIntent {
                    payment,
                    payment_method: None,
                },
            )
            .await?;
        let noted = self
            .note(ctx.scope(), &session.id, |s| {
                s.payment_intent.get_or_insert_with(|| intent.id.clone());
            })
            .await?;
        // Two tries at once each made one: the one noted first is the session's.
        Ok(noted.payment_intent.unwrap_or(intent.id))
    }

    /// Subscription mode: the card saved to the customer, the subscription started on it.
    async fn subscribe(
        &self,
        ctx: &RequestContext,
        session: &CheckoutSession,
        card: CardInput,
    ) -> CoreResult<Step> {
        let customer = session.customer.clone().unwrap_or_default();
        let pm = self.saved_card(ctx, &customer, card).await?;
        let sub = self
            .billing()
            .create_subscription(
                ctx,
                CreateSubscription {
                    customer: customer.clone(),
                    items: session
                        .line_items
                        .data
                        .iter()
                        .map(|l| (l.price.id.clone(), Some(l.quantity)))
                        .collect(),
                    default_payment_method: Some(pm),
                    trial_period_days: session
                        .subscription_data
                        .as_ref()
                        .and_then(|d| d.trial_period_days),
                    cancel_at_period_end: false,
                    metadata: Vec::new(),
                    payment_behavior: PaymentBehavior::ErrorIfIncomplete,
                    missing_payment_method: Default::default(),
                },
            )
            .await?;
        let status = match sub.status {
            crate::billing::subscription::SubscriptionStatus::Trialing => {
                CheckoutPaymentStatus::NoPaymentRequired
            }
            _ => CheckoutPaymentStatus::Paid,
        };
        let made = Made {
            subscription: Some(sub.id),
            ..Made::default()
        };
        Ok(Step::Done(made, status))
    }

    /// The card vaulted and attached to `customer` (which verifies it with the issuer).
    async fn saved_card(
        &self,
        ctx: &RequestContext,
        customer: &str,
        card: CardInput,
    ) -> CoreResult<String> {
        let pm = self
            .payment_methods()
            .create_payment_method(ctx, card, Vec::new())
            .await?;
        let id = PaymentMethodId::stored(pm.id.clone());
        self.payment_methods()
            .attach_payment_method(ctx, &id, &CustomerId::stored(customer))
            .await?;
        Ok(pm.id)
    }

    /// Setup mode: the session's SetupIntent (made on its first try) confirmed with the card.
    async fn save_card(
        &self,
        ctx: &RequestContext,
        session: CheckoutSession,
        card: CardInput,
    ) -> CoreResult<Step> {
        let pm = self
            .payment_methods()
            .create_payment_method(ctx, card, Vec::new())
            .await?;
        let method = Some(PaymentMethodId::stored(pm.id.clone()));
        let result = match &session.setup_intent {
            Some(seti) => {
                self.setup_intents()
                    .confirm_setup_intent(
                        ctx,
                        &SetupIntentId::stored(seti.clone()),
                        ConfirmSetupIntent {
                            payment_method: method,
                        },
                    )
                    .await
            }
            None => {
                let cmd = CreateSetupIntent {
                    customer: session.customer.as_deref().map(CustomerId::stored),
                    payment_method: method,
                    confirm: true,
                    ..CreateSetupIntent::default()
                };
                self.setup_intents().create_setup_intent(ctx, cmd).await
            }
        };
        match result {
            Ok(seti) => Ok(Step::Done(
                Made {
                    setup_intent: Some(seti.id),
                    ..Made::default()
                },
                CheckoutPaymentStatus::NoPaymentRequired,
            )),
            // The declined intent is the session's, confirmed again on the next try.
            Err(e @ CoreError::Card { .. }) => {
                if let (
                    None,
                    CoreError::Card {
                        payment: Some(seti),
                        ..
                    },
                ) = (&session.setup_intent, &e)
                {
                    let seti = seti.clone();
                    self.note(ctx.scope(), &session.id, |s| {
                        s.setup_intent.get_or_insert_with(|| seti.clone());
                    })
                    .await?;
                }
                Err(e)
            }
            Err(e) => Err(e),
        }
    }
}
