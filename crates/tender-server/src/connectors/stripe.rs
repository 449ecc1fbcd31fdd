//! The `stripe` connector: Stripe's v1 API (PaymentMethods, PaymentIntents, Refunds), form
//! encoded, an `Idempotency-Key` derived from Tender's object id on every call.
//!
//! - **Create** makes the card's PaymentMethod (only for `raw_card_data` connectors; a
//!   `connector_token` is used as it is), then the PaymentIntent with `confirm=false`, its
//!   `capture_method` and `metadata[tender_payment]`: nothing can be charged yet. **Confirm**
//!   confirms it. Only fields a payment actually has are sent (no description, no
//!   `return_url` unless the payment has one), in the forms both Stripe and localstripe accept.
//! - **Answers** are classified once ([`Reply`]): a connection that was never made, a 429, or a
//!   5xx to a call that makes nothing chargeable is *unavailable*; a time-out or a reset after
//!   sending, or a 5xx to a confirm or capture, is *unknown*; a 402 is a decline; another 4xx
//!   is the processor refusing the request (mapped to `processing_error`); a 401 means the
//!   connector's key is wrong (unavailable, so payments fail over, and logged).
//! - **Refunds** are looked up first among the PaymentIntent's refunds by
//!   `metadata[tender_refund]`, then made: sending a refund again (a sync, a retry) never makes
//!   a second one, even where the `Idempotency-Key` is ignored.
//!
//! - **Inbound webhooks** are verified with `Stripe-Signature` (`t=…,v1=…`: HMAC-SHA256 of
//!   `"{t}.{raw body}"` under the whole `whsec_…` secret, compared in constant time, at most
//!   five minutes from Tender's clock either way) and read for the PaymentIntent they carry.
//!
//! - **Every call** names the API version it is written for ([`STRIPE_VERSION`]).
//! - **A capture** is told with Stripe's booking of it: the charge's balance transaction (its
//!   amount, fee and net), read after the capture ([`settlement`]); Tender books that, not its
//!   own pricing (CONTRACT §15).
//!
//! The API key is sent only in the `Authorization` header and never logged.

use async_trait::async_trait;
use serde_json::Value;
use tender_core::connectors::connector::{
    upstream_key, Answer, AuthorizeRequest, Booked, Connector, Inbound, ProcessorSettlement,
    RefundAnswer, RefundUpstream, SavedCard, Source, Upstream, UpstreamDispute, UpstreamPayout,
    UpstreamRefund, WebhookRejected,
};
use tender_core::payments::acquirer::Decline;

/// The API version every call names (`Stripe-Version`), so that Stripe answers in the shapes
/// this connector reads whatever the account's default version is (CONTRACT §15).
pub const STRIPE_VERSION: &str = "2024-06-20";

/// How far a webhook's signed timestamp may be from now, either way (Stripe's libraries' default).
const WEBHOOK_TOLERANCE_SECS: i64 = 300;

/// The most of an answer Tender reads from a processor (CONTRACT §15): a longer one is an
/// answer cut, never held whole in memory.
pub const MAX_ANSWER_BYTES: usize = 1 << 20;

/// A Stripe account (or a server speaking its API) behind the port.
pub struct Stripe {
    client: reqwest::Client,
    /// The connector's id, for the log.
    id: String,
    /// The origin, without a trailing slash.
    base: String,
    key: String,
    webhook_secret: Option<String>,
}

/// One answer of the API, classified.
#[derive(Debug)]
enum Reply {
    /// 2xx, with its JSON body.
    Ok(Value),
    /// 402: the card was declined (the error object).
    Declined(Value),
    /// Another 4xx: the request was refused (status, the error object or the text).
    Refused(u16, Value),
    /// No connection was made: nothing was sent (why).
    NotSent(String),
    /// Nothing was made (why).
    Unavailable(String),
    /// Sent, no usable answer (why).
    Unknown(String),
}

/// Whether a 5xx to the call could have left something chargeable behind.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Effect {
    /// Makes nothing chargeable (a PaymentMethod, an unconfirmed PaymentIntent, a read).
    Harmless,
    /// Moves money (confirm, capture, cancel, refund).
    Moves,
}

impl Stripe {
    pub fn new(
        client: reqwest::Client,
        id: &str,
        base: &str,
        key: String,
        webhook_secret: Option<String>,
    ) -> Self {
        Self {
            client,
            id: id.to_string(),
            base: base.trim_end_matches('/').to_string(),
            key,
            webhook_secret,
        }
    }

    async fn post(&self, path: &str, form: &[(&str, String)], key: &str, effect: Effect) -> Reply {
        let body = {
            let mut body = form_urlencoded::Serializer::new(String::new());
            for (name, value) in form {
                body.append_pair(name, value);
            }
            body.finish()
        };
        let request = self
            .client
            .post(format!("{}{path}", self.base))
            .bearer_auth(&self.key)
            .header("Stripe-Version", STRIPE_VERSION)
            .header("Idempotency-Key", key)
            .header("Content-Type", "application/x-www-form-urlencoded")
            .body(body);
        self.send(request, effect).await
    }

    async fn get(&self, path: &str) -> Reply {
        let request = self
            .client
            .get(format!("{}{path}", self.base))
            .bearer_auth(&self.key)
            .header("Stripe-Version", STRIPE_VERSION);
        self.send(request, Effect::Harmless).await
    }

    async fn send(&self, request: reqwest::RequestBuilder, effect: Effect) -> Reply {
        let response = match request.send().await {
            Ok(r) => r,
            // Never connected: nothing was sent.
            Err(e) if e.is_connect() => return Reply::NotSent(format!("connect: {e}")),
            Err(e) if effect == Effect::Harmless => {
                return Reply::Unavailable(format!("no answer: {e}"))
            }
            Err(e) => return Reply::Unknown(format!("no answer after sending: {e}")),
        };
        let status = response.status().as_u16();
        let text = match read_bounded(response).await {
            Ok(t) => t,
            Err(e) if effect == Effect::Harmless => {
                return Reply::Unavailable(format!("answer cut: {e}"))
            }
            Err(e) => return Reply::Unknown(format!("answer cut after sending: {e}")),
        };
        // localstripe answers some errors in plain text: keep (a bounded part of) the text as
        // the message.
        let body: Value = serde_json::from_slice(&text).unwrap_or_else(|_| {
            let text = String::from_utf8_lossy(&text);
            serde_json::json!({"error": {"message": tender_core::connectors::connector::bounded(text.trim())}})
        });
        match status {
            200..=299 => Reply::Ok(body),
            402 => Reply::Declined(body),
            401 | 403 => {
                tracing::error!(connector = %self.id, status, "the processor refused the connector's API key; check it");
                Reply::Unavailable(format!(
                    "the processor answered {status}: check the api_key"
                ))
            }
            429 => Reply::Unavailable("the processor answered 429".into()),
            // A request with this idempotency key is still running there (a retry met the
            // first): its outcome is not known yet.
            409 => Reply::Unknown(
                "the processor answered 409: the same request is still in flight".into(),
            ),
            500..=599 if effect == Effect::Harmless => {
                Reply::Unavailable(format!("the processor answered {status}"))
            }
            500..=599 => Reply::Unknown(format!("the processor answered {status}")),
            _ => Reply::Refused(status, body),
        }
    }

    /// A reply to a payment call as the port's answer.
    /// What `reply` says of the PaymentIntent `reference`; a capture comes with the
    /// processor's booking of it ([`Stripe::with_settlement`]).
    async fn answer(&self, reply: Reply, reference: Option<&str>) -> Answer {
        let reference = reference.map(str::to_string);
        match reply {
            Reply::Ok(pi) => {
                let answer = Answer::Known {
                    reference: pi["id"].as_str().map(str::to_string).or(reference),
                    state: state_of(&pi),
                };
                self.with_settlement(&pi, answer).await
            }
            Reply::Declined(body) => Answer::Known {
                reference,
                state: Upstream::Declined(decline_of(&body["error"])),
            },
            Reply::Refused(status, body) => {
                tracing::warn!(connector = %self.id, status, error = %message_of(&body["error"]), "the processor refused a request");
                Answer::Known {
                    reference,
                    state: Upstream::Declined(refusal(&body["error"])),
                }
            }
            Reply::NotSent(why) => Answer::NotSent(why),
            Reply::Unavailable(why) => Answer::Unavailable(why),
            Reply::Unknown(why) => Answer::Unknown {
                reference,
                reason: why,
            },
        }
    }
}

/// Reads at most [`MAX_ANSWER_BYTES`] of an answer's body; a longer one is an error, read no
/// further.
async fn read_bounded(mut response: reqwest::Response) -> Result<Vec<u8>, String> {
    if response
        .content_length()
        .is_some_and(|n| n > MAX_ANSWER_BYTES as u64)
    {
        return Err(format!("the answer is over {MAX_ANSWER_BYTES} bytes"));
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| e.to_string())? {
        if body.len() + chunk.len() > MAX_ANSWER_BYTES {
            return Err(format!("the answer is over {MAX_ANSWER_BYTES} bytes"));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// A Stripe error's message, as much of it as may be stored or logged.
fn message_of(error: &Value) -> String {
    tender_core::connectors::connector::bounded(error["message"].as_str().unwrap_or_default())
}

/// A PaymentIntent's state. A `succeeded` one that does not say how much it took is not an
/// answer Tender can book: it stays processing (asked again), never booked as 0.
fn state_of(pi: &Value) -> Upstream {
    match pi["status"].as_str().unwrap_or_default() {
        "requires_confirmation" => Upstream::Created,
        "requires_payment_method" => match pi.get("last_payment_error") {
            Some(e) if e.is_object() => Upstream::Declined(decline_of(e)),
            _ => Upstream::Created,
        },
        "requires_action" => Upstream::RequiresAction {
            url: pi["next_action"]["redirect_to_url"]["url"]
                .as_str()
                .map(str::to_string),
        },
        "processing" => Upstream::Processing,
        "requires_capture" => Upstream::RequiresCapture,
        "succeeded" => match pi["amount_received"]
            .as_i64()
            .or_else(|| pi["amount"].as_i64())
        {
            Some(captured) => Upstream::Succeeded {
                captured,
                currency: Some(pi["currency"].as_str().unwrap_or_default().to_string()),
                settlement: None,
            },
            None => {
                tracing::warn!("a succeeded PaymentIntent without an amount; asking again later");
                Upstream::Processing
            }
        },
        "canceled" => Upstream::Canceled,
        other => {
            tracing::warn!(
                status = %tender_core::connectors::connector::bounded(other),
                "a PaymentIntent status Tender does not know"
            );
            Upstream::Processing
        }
    }
}

/// A Stripe error (or `last_payment_error`) as a decline of CONTRACT §4.2.
fn decline_of(error: &Value) -> Decline {
    // Codes are short words; anything else in their place is not a code.
    let text = |k: &str| {
        error[k]
            .as_str()
            .filter(|s| !s.is_empty() && s.len() <= 100)
    };
    let message = match message_of(error) {
        m if m.is_empty() => "Your card was declined.".to_string(),
        m => m,
    };
    let (code, decline_code) = match text("code") {
        Some("card_declined") | None => (
            "card_declined".to_string(),
            text("decline_code")
                .unwrap_or("generic_decline")
                .to_string(),
        ),
        Some("payment_intent_authentication_failure") => (
            "authentication_failed".to_string(),
            "authentication_failed".to_string(),
        ),
        Some(code) => (
            code.to_string(),
            text("decline_code").unwrap_or(code).to_string(),
        ),
    };
    Decline {
        code: code.into(),
        decline_code: decline_code.into(),
        message: message.into(),
    }
}

/// A request the processor refused (not a decline): the payment fails with
/// `processing_error`, carrying the processor's message.
fn refusal(error: &Value) -> Decline {
    let message = message_of(error);
    let message = if message.is_empty() {
        "refused".into()
    } else {
        message
    };
    Decline {
        code: "processing_error".into(),
        decline_code: error["code"]
            .as_str()
            .filter(|c| c.len() <= 100)
            .unwrap_or("processor_refused_request")
            .to_string()
            .into(),
        message: tender_core::connectors::connector::bounded(&format!(
            "The payment processor refused the payment: {message}"
        ))
        .into(),
    }
}

#[async_trait]
impl Connector for Stripe {
    async fn create(&self, req: &AuthorizeRequest<'_>) -> Answer {
        let mut form = vec![
            ("amount", req.amount.to_string()),
            ("currency", req.currency.code().to_string()),
            ("confirm", "false".to_string()),
            (
                "capture_method",
                if req.capture { "automatic" } else { "manual" }.to_string(),
            ),
            ("metadata[tender_payment]", req.payment.to_string()),
        ];
        let method = match req.source {
            Source::Token(token) => token.to_string(),
            Source::Saved {
                customer,
                payment_method,
            } => {
                form.push(("customer", customer.to_string()));
                payment_method.to_string()
            }
            Source::Card(card) => match self.card_method(req.payment, card).await {
                Ok(id) => id,
                Err(answer) => return answer,
            },
        };
        form.push(("payment_method", method));
        let key = upstream_key(req.payment, "create");
        let reply = self
            .post("/v1/payment_intents", &form, &key, Effect::Harmless)
            .await;
        self.answer(reply, None).await
    }

    async fn confirm(&self, reference: &str, req: &AuthorizeRequest<'_>) -> Answer {
        let mut form = Vec::new();
        if matches!(req.source, Source::Saved { .. }) {
            // A kept card is charged without its customer (an invoice, a saved card).
            form.push(("off_session", "true".to_string()));
        }
        if let Some(url) = req.return_url {
            form.push(("return_url", url.to_string()));
        }
        let key = upstream_key(req.payment, "confirm");
        let reply = self
            .post(
                &format!("/v1/payment_intents/{reference}/confirm"),
                &form,
                &key,
                Effect::Moves,
            )
            .await;
        // A decline's error does not always carry the PaymentIntent: it is `reference`.
        self.answer(reply, Some(reference)).await
    }

    async fn capture(&self, payment: &str, reference: &str, amount: i64) -> Answer {
        let form = [("amount_to_capture", amount.to_string())];
        let key = upstream_key(payment, "capture");
        match self
            .post(
                &format!("/v1/payment_intents/{reference}/capture"),
                &form,
                &key,
                Effect::Moves,
            )
            .await
        {
            // What was captured: `amount_received` where the processor says it, else the
            // amount asked for (localstripe has no such field).
            Reply::Ok(mut pi) => {
                if pi["amount_received"].as_i64().is_none() && pi["status"] == "succeeded" {
                    pi["amount_received"] = Value::from(amount);
                }
                self.answer(Reply::Ok(pi), Some(reference)).await
            }
            other => self.answer(other, Some(reference)).await,
        }
    }

    async fn void(&self, payment: &str, reference: &str) -> Answer {
        let key = upstream_key(payment, "cancel");
        let reply = self
            .post(
                &format!("/v1/payment_intents/{reference}/cancel"),
                &[],
                &key,
                Effect::Moves,
            )
            .await;
        match reply {
            // Already canceled (a retry), or no longer cancelable: say where it is.
            Reply::Refused(..) => self.sync(reference).await,
            other => self.answer(other, Some(reference)).await,
        }
    }

    async fn sync(&self, reference: &str) -> Answer {
        let reply = self.get(&format!("/v1/payment_intents/{reference}")).await;
        match reply {
            Reply::Refused(status, _) => Answer::Unknown {
                reference: Some(reference.to_string()),
                reason: format!("the processor answered {status} to a status check"),
            },
            other => self.answer(other, Some(reference)).await,
        }
    }

    async fn refund(&self, refund: &str, reference: &str, amount: i64) -> RefundAnswer {
        // Made already (a retry or a sync)? Then that one is the answer.
        match self
            .get(&format!("/v1/refunds?payment_intent={reference}&limit=100"))
            .await
        {
            Reply::Ok(list) => {
                let found = list["data"].as_array().and_then(|data| {
                    data.iter()
                        .find(|r| r["metadata"]["tender_refund"].as_str() == Some(refund))
                });
                if let Some(found) = found {
                    return refund_answer(found);
                }
            }
            Reply::NotSent(why) | Reply::Unavailable(why) | Reply::Unknown(why) => {
                return RefundAnswer::Unavailable(why)
            }
            Reply::Declined(_) | Reply::Refused(..) => {}
        }
        let form = [
            ("payment_intent", reference.to_string()),
            ("amount", amount.to_string()),
            ("metadata[tender_refund]", refund.to_string()),
        ];
        let key = upstream_key(refund, "refund");
        match self.post("/v1/refunds", &form, &key, Effect::Moves).await {
            Reply::Ok(r) => refund_answer(&r),
            Reply::Declined(body) | Reply::Refused(_, body) => {
                tracing::warn!(connector = %self.id, error = %message_of(&body["error"]), "the processor refused a refund");
                RefundAnswer::Known {
                    reference: None,
                    state: RefundUpstream::Failed,
                    amount: None,
                }
            }
            Reply::NotSent(why) | Reply::Unavailable(why) => RefundAnswer::Unavailable(why),
            Reply::Unknown(why) => RefundAnswer::Unknown(why),
        }
    }

    async fn booking(&self, booked: Booked<'_>) -> Result<ProcessorSettlement, String> {
        self.booked(booked).await
    }

    async fn save_card(
        &self,
        token: &str,
        tender_customer: &str,
        customer: Option<&str>,
        key_id: &str,
    ) -> Result<SavedCard, String> {
        self.keep_card(token, tender_customer, customer, key_id)
            .await
    }

    async fn payment_of(&self, reference: &str) -> Result<Option<String>, String> {
        self.tender_payment(reference).await
    }

    async fn disputes_of(&self, reference: &str) -> Result<Vec<UpstreamDispute>, String> {
        self.disputes(reference).await
    }

    async fn payouts_since(&self, since: i64, limit: usize) -> Result<Vec<UpstreamPayout>, String> {
        self.payouts(since, limit).await
    }

    async fn refunds_of(&self, reference: &str) -> Result<Vec<UpstreamRefund>, String> {
        let list = self
            .read(&format!("/v1/refunds?payment_intent={reference}&limit=100"))
            .await?;
        Ok(list["data"]
            .as_array()
            .map(|data| data.iter().filter_map(upstream_refund).collect())
            .unwrap_or_default())
    }

    fn read_webhook(
        &self,
        signature: Option<&str>,
        body: &[u8],
        now: i64,
    ) -> Result<Option<Inbound>, WebhookRejected> {
        inbound::read(self.webhook_secret.as_deref(), signature, body, now)
    }
}

/// A refund of Stripe's list as the port tells it; `None` for one without an id or amount.
fn upstream_refund(r: &Value) -> Option<UpstreamRefund> {
    let state = match refund_answer(r) {
        RefundAnswer::Known { state, .. } => state,
        _ => return None,
    };
    Some(UpstreamRefund {
        reference: tender_core::connectors::connector::bounded(r["id"].as_str()?),
        amount: r["amount"].as_i64()?,
        currency: tender_core::connectors::connector::bounded(
            r["currency"].as_str().unwrap_or_default(),
        ),
        state,
        tender_refund: r["metadata"]["tender_refund"].as_str().map(str::to_string),
    })
}

fn refund_answer(r: &Value) -> RefundAnswer {
    RefundAnswer::Known {
        reference: r["id"].as_str().map(str::to_string),
        state: match r["status"].as_str().unwrap_or_default() {
            "succeeded" => RefundUpstream::Succeeded,
            "failed" | "canceled" => RefundUpstream::Failed,
            _ => RefundUpstream::Pending,
        },
        amount: r["amount"].as_i64().map(|a| {
            (
                a,
                tender_core::connectors::connector::bounded(
                    r["currency"].as_str().unwrap_or_default(),
                ),
            )
        }),
    }
}

mod books;
mod inbound;
mod methods;
mod settlement;
mod signature;
#[cfg(test)]
mod tests;
