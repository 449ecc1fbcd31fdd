//! Payment Link use cases: create, update (`active`, `after_completion`, `metadata`), and the
//! visit of its `url`, which opens a fresh Checkout Session for its lines
//! ([`Checkout::open_payment_link`]). Events: `payment_link.created`, `payment_link.updated`.

use crate::auth::{KeyKind, Principal};
use crate::checkout::create::{CreateCheckoutSession, LineItemInput};
use crate::checkout::link::{mode_of, AfterCompletion, AfterCompletionType, PaymentLink};
use crate::checkout::session::{check_items, CheckoutSession};
use crate::checkout::Checkout;
use crate::documents::document::{from_body, to_value};
use crate::error::{CoreError, CoreResult};
use crate::ids::{self, IdKind, PaymentLinkId};
use crate::metadata;
use crate::payments::payment::CaptureMethod;
use crate::services::RequestContext;
use crate::store::Collection;
use crate::validate::{check_text, check_url};

/// `POST /payment_links`, parsed.
#[derive(Debug, Clone, Default)]
pub struct CreatePaymentLink {
    /// `(price, quantity)`.
    pub line_items: Vec<(String, Option<i64>)>,
    pub after_completion: Option<AfterCompletion>,
    pub allow_promotion_codes: bool,
    pub metadata: Vec<(String, String)>,
}

/// `POST /payment_links/{id}`: only these change.
#[derive(Debug, Clone, Default)]
pub struct UpdatePaymentLink {
    pub active: Option<bool>,
    pub after_completion: Option<AfterCompletion>,
    pub metadata: Option<Vec<(String, String)>>,
}

/// A link that opens no session: the page says so.
pub fn link_inactive() -> CoreError {
    CoreError::invalid(
        "payment_link",
        "payment_link_inactive",
        "This payment link is no longer available.",
    )
}

fn check_after_completion(a: &AfterCompletion) -> CoreResult<()> {
    match (a.kind, &a.redirect) {
        (AfterCompletionType::Redirect, Some(r)) => {
            check_url("after_completion[redirect][url]", &r.url)
        }
        (AfterCompletionType::Redirect, None) => Err(CoreError::invalid(
            "after_completion[redirect][url]",
            "parameter_missing",
            "after_completion[type]=redirect needs after_completion[redirect][url].",
        )),
        (AfterCompletionType::HostedConfirmation, _) => check_text(
            "after_completion[hosted_confirmation][custom_message]",
            a.hosted_confirmation
                .as_ref()
                .and_then(|h| h.custom_message.as_deref()),
            500,
        ),
    }
}

impl Checkout<'_> {
    pub async fn create_payment_link(
        &self,
        ctx: &RequestContext,
        cmd: CreatePaymentLink,
    ) -> CoreResult<PaymentLink> {
        let after_completion = cmd.after_completion.unwrap_or_default();
        check_after_completion(&after_completion)?;
        let given: Vec<LineItemInput> = cmd
            .line_items
            .iter()
            .map(|(price, quantity)| LineItemInput {
                price: Some(price.clone()),
                price_data: None,
                quantity: *quantity,
            })
            .collect();
        let lines = self.lines(ctx, &given).await?;
        let prices: Vec<_> = lines.items.iter().map(|l| &l.price).collect();
        let mode = mode_of(&prices)?;
        let priced: Vec<_> = lines
            .items
            .iter()
            .map(|l| (l.price.clone(), l.quantity))
            .collect();
        let Some((currency, _)) = check_items(mode, &priced)? else {
            return Err(CoreError::invalid(
                "line_items",
                "parameter_missing",
                "A payment link needs line_items.",
            ));
        };
        let id = ids::generate(IdKind::PaymentLink);
        let link = PaymentLink {
            url: format!("{}/pay/{id}", self.config.receipt_base),
            id,
            object: "payment_link".into(),
            active: true,
            mode,
            currency,
            line_items: crate::billing::model::EmbeddedList::new(lines.items),
            after_completion,
            allow_promotion_codes: cmd.allow_promotion_codes,
            metadata: metadata::on_create(cmd.metadata)?,
            livemode: ctx.scope().livemode(),
            created: self.now(),
        };
        let mut batch = self.batch(ctx);
        batch.insert(&link)?.event("payment_link.created", &link)?;
        self.commit(ctx, batch, Ok(&to_value(&link)?)).await?;
        Ok(link)
    }

    pub async fn update_payment_link(
        &self,
        ctx: &RequestContext,
        id: &PaymentLinkId,
        cmd: UpdatePaymentLink,
    ) -> CoreResult<PaymentLink> {
        if let Some(a) = &cmd.after_completion {
            check_after_completion(a)?;
        }
        self.retry_on_conflict(|| async {
            let (before, version): (PaymentLink, i64) = self
                .load(ctx.scope(), Collection::PaymentLinks, "payment_link", id)
                .await?;
            let mut after = before.clone();
            if let Some(active) = cmd.active {
                after.active = active;
            }
            if let Some(a) = &cmd.after_completion {
                after.after_completion = a.clone();
            }
            if let Some(m) = &cmd.metadata {
                after.metadata = metadata::merge(&before.metadata, m.clone())?;
            }
            let mut batch = self.batch(ctx);
            let object = batch.change("payment_link.updated", (&before, &after), version)?;
            self.commit(ctx, batch, Ok(&object)).await?;
            Ok(after)
        })
        .await
    }

    /// A visit of link `id`'s `url`: a fresh Checkout Session for its lines, which sends the
    /// customer where the link says after paying. `None` when there is no such link; an
    /// inactive one is [`link_inactive`].
    pub async fn open_payment_link(
        &self,
        id: &str,
        request_id: String,
    ) -> CoreResult<Option<CheckoutSession>> {
        if !ids::looks_like(IdKind::PaymentLink, id) {
            return Ok(None);
        }
        let Some((scope, record)) = self
            .store
            .find_unscoped(Collection::PaymentLinks, id)
            .await?
        else {
            return Ok(None);
        };
        let link: PaymentLink = from_body(&record.id, &record.body)?;
        if !link.active {
            return Err(link_inactive());
        }
        let ctx = RequestContext {
            principal: Principal {
                scope,
                key_kind: KeyKind::Secret,
            },
            request_id,
            idempotency: None,
            client: None,
        };
        let success_url = match (&link.after_completion.kind, &link.after_completion.redirect) {
            (AfterCompletionType::Redirect, Some(r)) => r.url.clone(),
            _ => format!(
                "{}/checkout/{{CHECKOUT_SESSION_ID}}/done",
                self.config.receipt_base
            ),
        };
        let cmd = CreateCheckoutSession {
            mode: link.mode,
            line_items: link
                .line_items
                .data
                .iter()
                .map(|l| LineItemInput {
                    price: Some(l.price.id.clone()),
                    price_data: None,
                    quantity: Some(l.quantity),
                })
                .collect(),
            success_url,
            cancel_url: None,
            customer: None,
            customer_email: None,
            client_reference_id: None,
            metadata: Vec::new(),
            allow_promotion_codes: link.allow_promotion_codes,
            trial_period_days: None,
            capture_method: CaptureMethod::Automatic,
            expires_at: None,
            payment_link: Some(link.id),
        };
        // A price archived since the link was made: the link sells nothing now.
        match self.create_checkout_session(&ctx, cmd).await {
            Err(CoreError::InvalidParam { .. }) => Err(link_inactive()),
            other => other.map(Some),
        }
    }

    /// The confirmation message of the link that opened `session`, if it shows Tender's page.
    pub(crate) async fn confirmation_of(
        &self,
        scope: &crate::auth::Scope,
        session: &CheckoutSession,
    ) -> CoreResult<Option<String>> {
        let Some(id) = &session.payment_link else {
            return Ok(None);
        };
        let (link, _): (PaymentLink, i64) = self
            .load(scope, Collection::PaymentLinks, "payment_link", id)
            .await?;
        Ok(link
            .after_completion
            .hosted_confirmation
            .and_then(|h| h.custom_message))
    }
}
