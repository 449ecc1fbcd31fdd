//! What is kept under an idempotency key, and how a replay opens it: the answer as sent
//! (sealed), or, for a payment, a marker that renders it again to the same bytes (its stored
//! form, or the event of its batch), or, for a checkpoint, a pointer to the object whose
//! current state answers ([`Kept`]). The rules about keys live in [`super::idempotency`]; this
//! file only says what a record holds. Depends on the store port, the vault and the renderer.

use crate::auth::Scope;
use crate::documents::hold::IdempotencyHold;
use crate::error::{CoreError, CoreResult, StoreError};
use crate::payments::payment::Payment;
use crate::services::Services;
use crate::store::{IdempotencyWrite, StoredResponse};

/// Seals the responses kept under idempotency keys.
pub fn response_sealer(vault_key: &[u8; 32]) -> crate::vault::Sealer {
    crate::vault::Sealer::new(vault_key, "idempotent response")
}

impl Services {
    /// The record a batch writes for `hold` to keep a payment: instead of the response, what
    /// renders it again to the same bytes: the id of the `event` the batch writes (its object
    /// is the payment as stored), or, for a change without an event, the payment's stored form
    /// (`stored`). Either way with the receipt base it was rendered with, so a replay on a node
    /// configured with another base answers the same bytes.
    pub(crate) fn kept_payment(&self, stored: &str, event: Option<&str>) -> StoredResponse {
        let (tag, rest) = match event {
            Some(id) => (KEPT_AS_EVENT, id),
            None => (KEPT_AS_PAYMENT, stored),
        };
        self.kept_marker(tag, &[rest])
    }

    /// The checkpoint record of `hold` (see the module doc): a pointer to the object `id` of
    /// `collection`, whose current state answers a retry.
    pub(crate) fn checkpoint_write(
        &self,
        hold: &IdempotencyHold,
        collection: crate::store::Collection,
        id: &str,
    ) -> IdempotencyWrite {
        let kept = self.kept_marker(KEPT_AS_CURRENT, &[collection.name(), ":", id]);
        let mut write = self.idempotency_write(hold, kept);
        write.checkpoint = true;
        write
    }

    fn kept_marker(&self, tag: &[u8], parts: &[&str]) -> StoredResponse {
        let base = &self.config.receipt_base;
        let len = parts.iter().map(|p| p.len()).sum::<usize>();
        let mut body = Vec::with_capacity(tag.len() + base.len() + 1 + len);
        body.extend_from_slice(tag);
        body.extend_from_slice(base.as_bytes());
        body.push(b'\n');
        for part in parts {
            body.extend_from_slice(part.as_bytes());
        }
        StoredResponse { status: 200, body }
    }

    /// A response as kept under an idempotency key: sealed under the vault key.
    pub(crate) fn seal_idempotent_response(&self, response: StoredResponse) -> StoredResponse {
        StoredResponse {
            status: response.status,
            body: response_sealer(&self.config.vault_key).seal_bytes(&response.body),
        }
    }

    /// The response kept under an idempotency key of `scope`, opened (and a kept payment
    /// rendered) for a replay.
    pub(crate) async fn open_idempotent_response(
        &self,
        scope: &Scope,
        stored: StoredResponse,
    ) -> CoreResult<StoredResponse> {
        self.open_kept(scope, stored).await?.render()
    }

    /// The response kept under an idempotency key of `scope`, opened but not rendered: a
    /// kept payment is the payment as stored, a checkpoint the object as it is now.
    pub(crate) async fn open_kept(
        &self,
        scope: &Scope,
        stored: StoredResponse,
    ) -> CoreResult<Kept> {
        let body = response_sealer(&self.config.vault_key)
            .open_bytes(&stored.body)
            .map_err(|_| {
                StoreError::Corrupt(
                    "an idempotent response cannot be opened with this vault key".into(),
                )
            })?;
        let corrupt = |why: String| StoreError::Corrupt(format!("an idempotent payment: {why}"));
        let kept = |rest: &[u8]| -> Result<(String, Vec<u8>), StoreError> {
            let split = rest
                .iter()
                .position(|b| *b == b'\n')
                .ok_or_else(|| corrupt("no receipt base".into()))?;
            let base = std::str::from_utf8(&rest[..split]).map_err(|e| corrupt(e.to_string()))?;
            Ok((base.to_string(), rest[split + 1..].to_vec()))
        };
        if let Some(rest) = body.strip_prefix(KEPT_AS_CURRENT) {
            let (base, pointer) = kept(rest)?;
            let pointer = String::from_utf8(pointer).map_err(|e| corrupt(e.to_string()))?;
            let (collection, id) = pointer
                .split_once(':')
                .and_then(|(c, id)| Some((crate::store::Collection::named(c)?, id)))
                .ok_or_else(|| corrupt(format!("a bad pointer {pointer}")))?;
            let record = self
                .store
                .find_record(scope, collection, id)
                .await?
                .ok_or_else(|| corrupt(format!("{id} is gone")))?;
            return Ok(Kept::Current {
                base,
                collection,
                id: id.to_string(),
                body: record.body,
            });
        }
        if let Some(rest) = body.strip_prefix(KEPT_AS_PAYMENT) {
            let (base, document) = kept(rest)?;
            let payment = serde_json::from_slice(&document).map_err(|e| corrupt(e.to_string()))?;
            return Ok(Kept::Payment {
                base,
                payment: Box::new(payment),
            });
        }
        if let Some(rest) = body.strip_prefix(KEPT_AS_EVENT) {
            let (base, id) = kept(rest)?;
            let id = String::from_utf8(id).map_err(|e| corrupt(e.to_string()))?;
            let record = self
                .store
                .find_record(scope, crate::store::Collection::Events, &id)
                .await?
                .ok_or_else(|| corrupt(format!("its event {id} is gone")))?;
            let event: crate::event::StoredEvent =
                crate::documents::document::from_body(&record.id, &record.body)?;
            let payment =
                serde_json::from_value(event.data.object).map_err(|e| corrupt(e.to_string()))?;
            return Ok(Kept::Payment {
                base,
                payment: Box::new(payment),
            });
        }
        Ok(Kept::Sent(StoredResponse {
            status: stored.status,
            body,
        }))
    }
}

/// A kept answer, opened ([`Services::open_kept`]): what a replay answers, before rendering.
#[derive(Debug)]
pub(crate) enum Kept {
    /// A payment in its stored form, rendered with the receipt base of its first answer.
    Payment { base: String, payment: Box<Payment> },
    /// A checkpoint: the object's current state (`body` as stored) is the answer.
    Current {
        base: String,
        collection: crate::store::Collection,
        id: String,
        body: String,
    },
    /// An answer kept as it was sent (an error; any object but a payment).
    Sent(StoredResponse),
}

impl Kept {
    /// The bytes a replay sends.
    pub(crate) fn render(self) -> CoreResult<StoredResponse> {
        let body = match self {
            Kept::Sent(stored) => return Ok(stored),
            Kept::Payment { base, payment } => {
                serde_json::to_vec(&crate::documents::render::Renderer::new(base).payment(&payment))
                    .map_err(|e| CoreError::internal("render a payment", e))?
            }
            Kept::Current {
                base,
                collection,
                id,
                body,
            } => crate::documents::render::Renderer::new(base)
                .document(collection, &id, body)?
                .into_bytes(),
        };
        Ok(StoredResponse { status: 200, body })
    }
}

/// Marks a kept answer that is a payment's stored form, rendered on replay: the marker, the
/// receipt base it was rendered with, a newline, the document. A response body is JSON and
/// starts with `{`, so it never starts with a marker.
const KEPT_AS_PAYMENT: &[u8] = b"\x01payment\n";

/// Marks a kept answer that is the payment inside an event of the same batch: the marker, the
/// receipt base, a newline, the event's id.
const KEPT_AS_EVENT: &[u8] = b"\x01event\n";

/// Marks a checkpoint ([`Services::commit_checkpoint`]): the object's current state is the
/// answer. The marker, the receipt base, a newline, `collection:id`.
const KEPT_AS_CURRENT: &[u8] = b"\x01current\n";
