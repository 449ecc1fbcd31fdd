//! The connectors of a build without processor clients: the contract's test-card table as a
//! connector ([`SimulatedConnector`], with faults to make it fail in tests), and one that is
//! never reachable ([`Unreachable`]), which [`BuiltInConnectors`] builds for every other kind.

use crate::payments::acquirer::{Authorization, Decline, SimulatedAcquirer};
use async_trait::async_trait;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::connectors::connector::{
    Answer, AuthorizeRequest, Connector, ConnectorFactory, ConnectorSettings, ConnectorType,
    RefundAnswer, RefundUpstream, Source, Upstream,
};

/// A way the simulator can be made to fail (tests of routing, failover and sync).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// The connection is refused: nothing is sent.
    Unavailable,
    /// The processor answers 5xx before making anything.
    ServerError,
    /// The request is carried out but its answer is lost (a time-out after sending).
    TimeoutAfterSend,
}

/// The contract's test-card table as a connector. Its references are `sim_` + the payment id;
/// what it decided is remembered for [`Connector::sync`] (in memory: a test seam, like its
/// faults).
#[derive(Debug, Default)]
pub struct SimulatedConnector {
    fault: Mutex<Option<Fault>>,
    decided: Mutex<HashMap<String, Upstream>>,
}

impl SimulatedConnector {
    pub fn new() -> Self {
        Self::default()
    }

    /// Makes every following call fail this way (`None`: work again).
    pub fn set_fault(&self, fault: Option<Fault>) {
        if let Ok(mut f) = self.fault.lock() {
            *f = fault;
        }
    }

    fn fault(&self) -> Option<Fault> {
        self.fault.lock().ok().and_then(|f| *f)
    }

    fn remember(&self, reference: &str, state: &Upstream) {
        if let Ok(mut d) = self.decided.lock() {
            d.insert(reference.to_string(), state.clone());
        }
    }

    /// Runs `act` under the current fault: refused before it, or its answer lost after it.
    fn answer(&self, reference: String, act: impl FnOnce() -> Upstream) -> Answer {
        match self.fault() {
            Some(Fault::Unavailable) => Answer::NotSent("connection refused".into()),
            Some(Fault::ServerError) => Answer::Unavailable("the processor answered 500".into()),
            Some(Fault::TimeoutAfterSend) => {
                let state = act();
                self.remember(&reference, &state);
                Answer::Unknown {
                    reference: Some(reference),
                    reason: "timed out after sending".into(),
                }
            }
            None => {
                let state = act();
                self.remember(&reference, &state);
                Answer::Known {
                    reference: Some(reference),
                    state,
                }
            }
        }
    }

    fn state_of(&self, reference: &str) -> Option<Upstream> {
        self.decided.lock().ok()?.get(reference).cloned()
    }
}

#[async_trait]
impl Connector for SimulatedConnector {
    async fn create(&self, req: &AuthorizeRequest<'_>) -> Answer {
        let reference = format!("sim_{}", req.payment);
        self.answer(reference, || Upstream::Created)
    }

    async fn confirm(&self, reference: &str, req: &AuthorizeRequest<'_>) -> Answer {
        self.answer(reference.to_string(), || match req.source {
            Source::Card(card) => {
                match SimulatedAcquirer::decide(card.pan.expose(), req.livemode) {
                    Authorization::Approved if req.capture => Upstream::Succeeded {
                        captured: req.amount,
                        currency: Some(req.currency.code().to_string()),
                        settlement: None,
                    },
                    Authorization::Approved => Upstream::RequiresCapture,
                    Authorization::RequiresAction => Upstream::RequiresAction { url: None },
                    Authorization::Declined(d) => Upstream::Declined(d),
                }
            }
            // The simulator issues no tokens of its own and keeps no cards.
            Source::Token(_) | Source::Saved { .. } => Upstream::Declined(Decline {
                code: "card_declined".into(),
                decline_code: "generic_decline".into(),
                message: "The simulator does not know this connector_token.".into(),
            }),
        })
    }

    async fn capture(&self, _payment: &str, reference: &str, amount: i64) -> Answer {
        self.answer(reference.to_string(), || Upstream::Succeeded {
            captured: amount,
            currency: None,
            settlement: None,
        })
    }

    async fn void(&self, _payment: &str, reference: &str) -> Answer {
        self.answer(reference.to_string(), || Upstream::Canceled)
    }

    async fn sync(&self, reference: &str) -> Answer {
        if self.fault() == Some(Fault::Unavailable) {
            return Answer::NotSent("connection refused".into());
        }
        match self.state_of(reference) {
            Some(state) => Answer::Known {
                reference: Some(reference.to_string()),
                state,
            },
            None => Answer::Unavailable(format!("no such payment: {reference}")),
        }
    }

    async fn refund(&self, refund: &str, _reference: &str, _amount: i64) -> RefundAnswer {
        match self.fault() {
            Some(Fault::Unavailable | Fault::ServerError) => {
                RefundAnswer::Unavailable("connection refused".into())
            }
            Some(Fault::TimeoutAfterSend) => RefundAnswer::Unknown("timed out".into()),
            None => RefundAnswer::Known {
                reference: Some(format!("sim_{refund}")),
                state: RefundUpstream::Succeeded,
                amount: None,
            },
        }
    }
}

/// The factory of a build without processor clients: simulator connectors only. Other kinds
/// are built as connectors that are always unavailable.
#[derive(Debug, Default)]
pub struct BuiltInConnectors;

/// A connector that cannot be reached (why): every call is unavailable, so payments fail
/// over and other operations answer `processor_unavailable`.
pub struct Unreachable(pub String);

#[async_trait]
impl Connector for Unreachable {
    async fn create(&self, _req: &AuthorizeRequest<'_>) -> Answer {
        Answer::NotSent(self.0.clone())
    }
    async fn confirm(&self, _reference: &str, _req: &AuthorizeRequest<'_>) -> Answer {
        Answer::NotSent(self.0.clone())
    }
    async fn capture(&self, _payment: &str, _reference: &str, _amount: i64) -> Answer {
        Answer::NotSent(self.0.clone())
    }
    async fn void(&self, _payment: &str, _reference: &str) -> Answer {
        Answer::NotSent(self.0.clone())
    }
    async fn sync(&self, _reference: &str) -> Answer {
        Answer::NotSent(self.0.clone())
    }
    async fn refund(&self, _refund: &str, _reference: &str, _amount: i64) -> RefundAnswer {
        RefundAnswer::Unavailable(self.0.clone())
    }
}

impl ConnectorFactory for BuiltInConnectors {
    fn build(
        &self,
        _id: &str,
        settings: &ConnectorSettings,
        _livemode: bool,
    ) -> Arc<dyn Connector> {
        match settings.kind {
            ConnectorType::Simulator => Arc::new(SimulatedConnector::new()),
            other => Arc::new(Unreachable(format!(
                "no {} client in this build",
                other.as_str()
            ))),
        }
    }
}
