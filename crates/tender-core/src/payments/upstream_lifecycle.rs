//! A connector's payment after its creation: the processor's word applied to it
//! ([`Payments::apply_upstream`], one `authorised` move per upstream state, with its event and
//! follow-up tasks), and the captures and voids sent to the processor.
//!
//! Depends on the connector port and the payment state machine.

use crate::auth::{hash_key, Scope};
use crate::connectors::connector::{Answer, ConnectorType, Upstream};
use crate::connectors::word::disbelieve;
use crate::documents::batch::Batch;
use crate::error::{CoreError, CoreResult};
use crate::ids;
use crate::payments::payment::ProcessorSettlement;
use crate::payments::payment::{
    authorised, Authorised, CancellationReason, Payment, PaymentStatus,
};
use crate::payments::payment::{AUTHENTICATION_TIMEOUT_SECS, AUTHORIZATION_TTL_SECS};
use crate::payments::upstream::Applied;
use crate::payments::Payments;
use crate::task::TaskKind;
use serde_json::json;

impl Payments<'_> {
    /// Moves `payment` to what the processor says (`state`), with the event, the follow-up
    /// tasks and, for a decline, the error the client gets.
    pub(crate) async fn apply_upstream(
        &self,
        scope: &Scope,
        payment: &mut Payment,
        state: Upstream,
        kind: ConnectorType,
    ) -> CoreResult<Applied> {
        let now = self.now();
        let mut applied = Applied {
            events: Vec::new(),
            decline: None,
            keep_syncing: false,
            ops: self.background(scope),
        };
        let answer = match state {
            Upstream::Created | Upstream::Processing => {
                applied.keep_syncing = true;
                Authorised::Pending
            }
            Upstream::Succeeded {
                captured,
                settlement,
                ..
            } => {
                applied.events.push("payment.succeeded");
                // Held until now: captured at the processor (CONTRACT §15).
                if payment.status == PaymentStatus::RequiresCapture {
                    applied.events.push("payment.captured");
                }
                payment.processor_settlement = settlement;
                Authorised::Captured(captured)
            }
            // Still held (a sync or a hint): the processor may capture or release it itself.
            Upstream::RequiresCapture if payment.status == PaymentStatus::RequiresCapture => {
                applied.keep_syncing = kind != ConnectorType::Simulator;
                Authorised::Held
            }
            Upstream::RequiresCapture => {
                applied.ops.schedule(
                    TaskKind::ExpireAuthorization,
                    &payment.id,
                    now + AUTHORIZATION_TTL_SECS,
                );
                applied.keep_syncing = kind != ConnectorType::Simulator;
                Authorised::Held
            }
            Upstream::RequiresAction { url } => {
                // Asked again until the processor says how it ended, except on Tender's own
                // page (the simulator), which ends it itself.
                applied.keep_syncing = url.is_some() || kind != ConnectorType::Simulator;
                applied.ops.schedule(
                    TaskKind::AbandonAuthentication,
                    &payment.id,
                    now + AUTHENTICATION_TIMEOUT_SECS,
                );
                Authorised::Authenticate(self.next_action(payment, url, kind, &mut applied.ops))
            }
            Upstream::Declined(d) => Authorised::Declined(d),
            // Released at the processor (by the merchant there, or its own expiry of the
            // authorisation): canceled here too, whatever Tender was waiting for.
            Upstream::Canceled => {
                applied.events.push("payment.canceled");
                applied.ops.unseal(&payment.id);
                Authorised::Canceled { at: now }
            }
        };
        if let Authorised::Declined(d) = &answer {
            applied.events.push("payment.failed");
            applied.decline = Some(d.error(&payment.id));
        }
        let captured = matches!(answer, Authorised::Captured(_));
        authorised(payment, answer);
        if captured {
            self.balance()
                .book_charge(&mut applied.ops, payment)
                .await?;
        }
        Ok(applied)
    }

    /// What a payment that must be authenticated asks of its customer: the processor's page,
    /// Tender's own page (the simulator; its token sealed in `ops`), or the processor's SDK.
    fn next_action(
        &self,
        payment: &Payment,
        url: Option<String>,
        kind: ConnectorType,
        ops: &mut Batch,
    ) -> serde_json::Value {
        match (url, kind) {
            (Some(url), _) => json!({
                "type": "redirect_to_url",
                "redirect_to_url": {"url": url, "return_url": payment.return_url},
            }),
            // The simulator authenticates on Tender's own page, as without connectors.
            (None, ConnectorType::Simulator) => {
                let token = ids::random_base62(32);
                ops.seal(&payment.id, hash_key(&token));
                json!({
                    "type": "redirect_to_url",
                    "redirect_to_url": {
                        "url": format!("{}/authenticate/{}/{}", self.config.receipt_base, payment.id, token),
                        "return_url": payment.return_url,
                    }
                })
            }
            // The processor authenticates in its own client SDK and gave no page.
            (None, other) => json!({
                "type": "use_processor_sdk",
                "use_processor_sdk": {
                    "processor": other.as_str(),
                    "reference": payment.connector_reference,
                },
            }),
        }
    }

    /// Captures `amount` of a connector's payment upstream; what was captured, and the
    /// processor's booking of it.
    pub(crate) async fn capture_upstream(
        &self,
        scope: &Scope,
        payment: &Payment,
        amount: i64,
    ) -> CoreResult<(i64, Option<ProcessorSettlement>)> {
        let (connector, reference) = self.upstream_of(scope, payment).await?;
        match connector.capture(&payment.id, &reference, amount).await {
            Answer::Known {
                state,
                reference: said,
            } if matches!(state, Upstream::Succeeded { .. }) => {
                match (disbelieve(payment, amount, said.as_deref(), &state), state) {
                    (
                        None,
                        Upstream::Succeeded {
                            captured,
                            settlement,
                            ..
                        },
                    ) => Ok((captured, settlement)),
                    (why, _) => {
                        let why = why.unwrap_or_default();
                        tracing::warn!(payment = %payment.id, %why, "the processor's answer to a capture was refused; nothing was booked");
                        Err(CoreError::UnexpectedState {
                            message: format!("The processor's answer to the capture cannot be accepted ({why}); nothing was booked."),
                        })
                    }
                }
            }
            Answer::Known { state, .. } => Err(CoreError::UnexpectedState {
                message: format!(
                    "The processor did not capture this payment; it reports it as {state:?}."
                ),
            }),
            Answer::Unavailable(why)
            | Answer::NotSent(why)
            | Answer::Unknown { reason: why, .. } => Err(CoreError::ProcessorUnavailable(
                crate::connectors::connector::bounded(&why),
            )),
        }
    }

    /// Releases a connector's authorised payment upstream.
    pub(crate) async fn void_upstream(&self, scope: &Scope, payment: &Payment) -> CoreResult<()> {
        let (connector, reference) = self.upstream_of(scope, payment).await?;
        match connector.void(&payment.id, &reference).await {
            Answer::Known {
                state: Upstream::Canceled,
                ..
            } => Ok(()),
            Answer::Known { state, .. } => Err(CoreError::UnexpectedState {
                message: format!(
                    "The processor did not cancel this payment; it reports it as {state:?}."
                ),
            }),
            Answer::Unavailable(why)
            | Answer::NotSent(why)
            | Answer::Unknown { reason: why, .. } => Err(CoreError::ProcessorUnavailable(
                crate::connectors::connector::bounded(&why),
            )),
        }
    }

    pub(crate) async fn upstream_of(
        &self,
        scope: &Scope,
        payment: &Payment,
    ) -> CoreResult<(
        std::sync::Arc<dyn crate::connectors::connector::Connector>,
        String,
    )> {
        let (Some(connector), Some(reference)) = (&payment.connector, &payment.connector_reference)
        else {
            return Err(CoreError::UnexpectedState {
                message: "This payment never reached its processor.".into(),
            });
        };
        Ok((
            self.connectors().connector(scope, connector).await?,
            reference.clone(),
        ))
    }

    /// Whether a payment that is about to be canceled by a task (expiry, abandoned
    /// authentication) must first be released at its processor; releases it.
    pub(crate) async fn release_before_cancel(
        &self,
        scope: &Scope,
        payment: &Payment,
        reason: Option<CancellationReason>,
    ) -> CoreResult<()> {
        if payment.connector.is_none() || payment.connector_reference.is_none() {
            return Ok(());
        }
        let _ = reason;
        self.void_upstream(scope, payment).await
    }
}
