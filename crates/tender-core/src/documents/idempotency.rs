//! Idempotency keys (CONTRACT §4.9): every rule about them lives in this file; the HTTP layer
//! only reads the header and translates what [`Services::begin_idempotent`] answers.
//!
//! - **Keys** are 1–255 printable ASCII characters ([`check_key`]), read on `POST` and `PATCH`
//!   only ([`applies_to`]); records are scoped to account and mode, and publishable-key
//!   requests get their own namespace ([`stored_key`]): a public key can never claim the key the
//!   merchant's server uses. Tender's own work (an invoice's try) has a third
//!   ([`Services::begin_internal`]), so no key a client sends can stand in for it.
//! - **Kept 24 hours** ([`IDEMPOTENCY_TTL_SECS`]): an older record counts as absent
//!   ([`key_state`]) and is deleted in the background ([`Services::purge_expired_idempotency`]).
//! - **The fingerprint** is an HMAC-SHA256 under a key derived from the vault key, over the
//!   method, the path and the canonical body (object keys sorted, so key order does not count).
//!   Before hashing, a card's `cvc` is dropped (the CVC is never stored in any form, and a replay
//!   with another CVC is a replay, so it is no oracle), and card numbers, IBANs and a connector's
//!   `api_key` and `webhook_secret` are replaced by their keyed digests. Without the vault key
//!   nothing in a stored fingerprint can be guessed and checked offline, whatever else of the
//!   body the database holds.
//! - **Before the work** the key is looked up ([`Services::begin_idempotent`], a read): a new
//!   key runs, a finished one replays its stored answer byte for byte, one with another
//!   fingerprint is `400`, one still running is `409`.
//! - **The record is written with the change**: the use case's one batch inserts it
//!   ([`Services::commit`], in [`super::commit`]), so a create is one trip to the database. If another request with
//!   the key committed first, the batch applies nothing and this request answers what that one
//!   did ([`Claim::settle`]): of concurrent identical requests exactly one takes effect.
//! - **A claim first**, only for work that acts outside its final batch (commits a one-time card
//!   before authorising it, or calls a processor): [`Services::claim_key`] writes a running
//!   record before acting, so a concurrent request gets `409` instead of acting too; the batch
//!   then completes it. A running claim is never taken over while the process that made it
//!   lives (see `Store::claim_idempotency`).
//! - **A checkpoint** ([`Services::commit_checkpoint`]): a request that records an object and
//!   then calls a processor keeps its claim running with a pointer to that object, so a retry
//!   after a crash is answered with the object's current state and never runs again.
//! - **What is kept** ([`Claim::settle`]): 2xx and 4xx answers; 5xx (and 405s of the router)
//!   keep nothing and release a claim, and a request abandoned half-way (the client hung up)
//!   releases its claim when its [`Claim`] is dropped. Kept answers are sealed under the vault
//!   key ([`super::kept::response_sealer`]): some carry secrets shown once. A payment is kept in its stored
//!   form, or as the id of the event its batch wrote (whose object is that form), and rendered
//!   again on a replay ([`Services::commit_payment`]): the same bytes.
//!

use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::auth::{KeyKind, Principal, Scope};
pub use crate::documents::fingerprint::Fingerprinter;
pub use crate::documents::hold::IdempotencyHold;
use crate::documents::kept::Kept;
use crate::error::{CoreError, CoreResult, StoreError};
use crate::services::{RequestContext, Services};
pub use crate::store::IDEMPOTENCY_TTL_SECS;
use crate::store::{IdempotencyWrite, KeyRecord, KeyState, StoredResponse, WriteBatch};

/// Longest idempotency key.
pub const MAX_KEY_LEN: usize = 255;

/// Whether a request with `method` uses its `Idempotency-Key` header: the methods that change
/// something and may be retried (`POST`, `PATCH`). A `GET` or `DELETE` ignores it.
pub fn applies_to(method: &str) -> bool {
    matches!(method, "POST" | "PATCH")
}

/// An `Idempotency-Key` as sent: 1–255 printable ASCII characters (else 400
/// `idempotency_key_invalid`). `None` means the header's bytes were not text.
pub fn check_key(raw: Option<&str>) -> CoreResult<String> {
    let invalid = |message: &'static str| CoreError::InvalidParam {
        param: Some("Idempotency-Key".into()),
        code: "idempotency_key_invalid",
        message: message.into(),
    };
    let key = raw.ok_or_else(|| invalid("Idempotency keys must be printable ASCII."))?;
    if key.is_empty() || key.len() > MAX_KEY_LEN {
        return Err(invalid("Idempotency keys must be 1 to 255 characters."));
    }
    Ok(key.to_string())
}

/// What a request that carries an `Idempotency-Key` does.
#[derive(Debug)]
pub enum Begun {
    /// Run it. Put [`Claim::hold`] in the request's context, then end with [`Claim::settle`].
    Run(Claim),
    /// Answer again what the first request answered (status and body as first sent).
    Replay(StoredResponse),
}

/// What Tender's own work under a key of its own does ([`Services::begin_internal`]).
#[derive(Debug)]
pub(crate) enum Internal {
    /// Run it, as [`Begun::Run`].
    Run(Claim),
    /// It ran before: what it left, unrendered.
    Done(Kept),
}

/// What the HTTP layer does with a handler's answer once the request ran ([`Claim::settle`]).
#[derive(Debug)]
pub enum Settled {
    /// Send the handler's answer as it is.
    Send,
    /// Send this instead: the answer of the request that wrote the key first.
    Replay(StoredResponse),
    /// Send this error instead (the key is held by another request, or by another body).
    Refuse(CoreError),
}

/// The key of one running request, held for its length. Dropped before [`Claim::settle`] and
/// not completed by a batch (the request was abandoned: its client hung up and its handler was
/// dropped), a key it claimed is released in the background, since nothing else would while
/// this process lives.
pub struct Claim {
    services: Services,
    scope: Scope,
    hold: Arc<IdempotencyHold>,
    settled: bool,
}

impl std::fmt::Debug for Claim {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Claim")
            .field("scope", &self.scope)
            .field("hold", &self.hold)
            .finish_non_exhaustive()
    }
}

impl Claim {
    pub fn hold(&self) -> Arc<IdempotencyHold> {
        Arc::clone(&self.hold)
    }

    /// The request ended with `status` and `body`.
    ///
    /// - A batch of the request stored the answer: send it.
    /// - Another request wrote the key first (this one's batch applied nothing): send what that
    ///   one answered, or 409/400 as a new request with the key would get.
    /// - A 5xx, or a 405 of the router (never handled): nothing is kept and a claimed key is
    ///   released, so a retry runs the request again.
    /// - Any other answer of a request that wrote nothing (a 4xx, say) is kept, sealed.
    pub async fn settle(mut self, status: u16, body: &[u8]) -> Settled {
        self.settled = true;
        let hold = Arc::clone(&self.hold);
        if hold.is_completed() {
            return Settled::Send;
        }
        if hold.lost.load(Ordering::SeqCst) {
            return self.look_again().await;
        }
        if status >= 500 || status == 405 {
            self.release().await;
            return Settled::Send;
        }
        let response = StoredResponse {
            status,
            body: body.to_vec(),
        };
        let batch = WriteBatch {
            scope: self.scope.clone(),
            ops: Vec::new(),
            idempotency: Some(self.services.idempotency_write(&hold, response)),
        };
        match self.services.store.commit(batch).await {
            Ok(()) => Settled::Send,
            Err(StoreError::IdempotencyKeyTaken(_)) => self.look_again().await,
            Err(e) => {
                tracing::warn!(error = %crate::error::error_chain(&e), "could not store an idempotent response");
                Settled::Send
            }
        }
    }

    /// What a new request with this key would be told now that another one wrote it.
    async fn look_again(&self) -> Settled {
        let found = self
            .services
            .store
            .find_idempotency(
                &self.scope,
                &self.hold.stored,
                &self.hold.fingerprint,
                self.services.wall_now(),
            )
            .await;
        match found {
            Ok(KeyState::Replay(stored)) => match self
                .services
                .open_idempotent_response(&self.scope, stored)
                .await
            {
                Ok(replay) => Settled::Replay(replay),
                Err(e) => Settled::Refuse(e),
            },
            Ok(KeyState::Mismatch) => Settled::Refuse(CoreError::IdempotencyMismatch),
            Ok(KeyState::InProgress | KeyState::Free) => {
                Settled::Refuse(CoreError::IdempotencyInProgress)
            }
            Err(e) => Settled::Refuse(e.into()),
        }
    }

    /// Frees a key this request claimed, unless a batch completed it.
    async fn release(&self) {
        if !self.hold.is_claimed() || self.hold.is_completed() {
            return;
        }
        if let Err(e) = self
            .services
            .store
            .release_idempotency(&self.scope, &self.hold.stored)
            .await
        {
            tracing::warn!(error = %crate::error::error_chain(&e), "could not release an idempotency key");
        }
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        if self.settled || !self.hold.is_claimed() || self.hold.is_completed() {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let (services, scope, hold) = (
            self.services.clone(),
            self.scope.clone(),
            Arc::clone(&self.hold),
        );
        // Only a claim still running is released: a batch that committed first keeps it.
        runtime.spawn(async move {
            if let Err(e) = services
                .store
                .release_idempotency(&scope, &hold.stored)
                .await
            {
                tracing::warn!(error = %crate::error::error_chain(&e), "could not release an abandoned idempotency key");
            }
        });
    }
}

impl Services {
    /// Looks up `key` for a request of `principal` (`method`, `path`, parsed `body`): a new
    /// key runs, a finished one replays, one with another body is 400 and one still running
    /// 409 `idempotency_error`. Nothing is written here: a request whose work is all in its
    /// final batch needs no claim, because that batch inserts the record and fails as a whole
    /// if another request wrote the key first (see [`Claim::settle`]).
    pub async fn begin_idempotent(
        &self,
        principal: &Principal,
        key: String,
        method: &str,
        path: &str,
        body: &serde_json::Value,
    ) -> CoreResult<Begun> {
        let fingerprint = self.fingerprint(method, path, body);
        let now = self.wall_now();
        let stored = stored_key(&key, principal.key_kind);
        let hold = Arc::new(IdempotencyHold::new(key, stored, fingerprint, now));
        self.begin_hold(&principal.scope, hold, now).await
    }

    /// The keyed fingerprint of a request (see the module's doc).
    fn fingerprint(&self, method: &str, path: &str, body: &serde_json::Value) -> String {
        Fingerprinter::new(&self.config.vault_key).fingerprint(method, path, body)
    }

    async fn begin_hold(
        &self,
        scope: &Scope,
        hold: Arc<IdempotencyHold>,
        now: i64,
    ) -> CoreResult<Begun> {
        let state = self
            .store
            .find_idempotency(scope, &hold.stored, &hold.fingerprint, now)
            .await?;
        match state {
            KeyState::Free => Ok(Begun::Run(self.claim(scope, hold))),
            KeyState::Replay(stored) => Ok(Begun::Replay(
                self.open_idempotent_response(scope, stored).await?,
            )),
            KeyState::Mismatch => Err(CoreError::IdempotencyMismatch),
            KeyState::InProgress => Err(CoreError::IdempotencyInProgress),
        }
    }

    /// [`Services::begin_idempotent`] for work Tender does on its own (an invoice's `n`-th try,
    /// named `name`), as if `method path` had been called with `body` by the account's secret
    /// key. Its record lives in a namespace no `Idempotency-Key` header can reach
    /// ([`INTERNAL_NAMESPACE`]), so a client key that spells the same name is the client's own.
    ///
    /// Before that namespace, such records were stored under `legacy` in the secret key's
    /// namespace; a try that finished there (same fingerprint) is answered from it, and one
    /// still running there is in progress, so a try cut short across an upgrade never charges
    /// twice. A client's request under that key never has that fingerprint (the pipeline
    /// fingerprints the path inside `/v2`, `/payments`; Tender's tries, `/v2/payments`), so it
    /// is a mismatch here and passed over. Removable once no node runs a version older than the
    /// namespace, plus one TTL.
    pub(crate) async fn begin_internal(
        &self,
        scope: &Scope,
        name: &str,
        legacy: &str,
        method: &str,
        path: &str,
        body: &serde_json::Value,
    ) -> CoreResult<Internal> {
        let fingerprint = self.fingerprint(method, path, body);
        let now = self.wall_now();
        match self
            .store
            .find_idempotency(scope, legacy, &fingerprint, now)
            .await?
        {
            KeyState::Replay(stored) => {
                return Ok(Internal::Done(self.open_kept(scope, stored).await?))
            }
            KeyState::InProgress => return Err(CoreError::IdempotencyInProgress),
            // Nothing of Tender's there, or a client's own request under that key.
            KeyState::Free | KeyState::Mismatch => {}
        }
        let hold = Arc::new(IdempotencyHold::new(
            name.to_string(),
            format!("{INTERNAL_NAMESPACE}{name}"),
            fingerprint,
            now,
        ));
        match self
            .store
            .find_idempotency(scope, &hold.stored, &hold.fingerprint, now)
            .await?
        {
            KeyState::Free => Ok(Internal::Run(self.claim(scope, hold))),
            KeyState::Replay(stored) => Ok(Internal::Done(self.open_kept(scope, stored).await?)),
            KeyState::Mismatch => Err(CoreError::IdempotencyMismatch),
            KeyState::InProgress => Err(CoreError::IdempotencyInProgress),
        }
    }

    /// The claim on `hold`'s key of a request that runs.
    fn claim(&self, scope: &Scope, hold: Arc<IdempotencyHold>) -> Claim {
        Claim {
            services: self.clone(),
            scope: scope.clone(),
            hold,
            settled: false,
        }
    }

    /// Deletes the records that expired ([`IDEMPOTENCY_TTL_SECS`] in wall time, the time
    /// records are dated in and [`key_state`] expires them by) and says how many.
    pub async fn purge_expired_idempotency(&self) -> CoreResult<u64> {
        Ok(self
            .store
            .purge_idempotency(self.wall_now() - IDEMPOTENCY_TTL_SECS)
            .await?)
    }

    /// Claims the request's key before it acts outside its final batch: before it commits
    /// anything of its own (a one-time card taken) or calls another system (a processor). From
    /// then on a concurrent request with the key gets 409 instead of running too, and the final
    /// batch completes the claim. A no-op without a key or when already claimed.
    pub(crate) async fn claim_key(&self, ctx: &RequestContext) -> CoreResult<()> {
        let Some(hold) = &ctx.idempotency else {
            return Ok(());
        };
        if hold.is_claimed() {
            return Ok(());
        }
        let state = self
            .store
            .claim_idempotency(
                ctx.scope(),
                &hold.stored,
                &hold.fingerprint,
                self.wall_now(),
            )
            .await?;
        match state {
            KeyState::Free => {
                hold.claimed.store(true, Ordering::SeqCst);
                Ok(())
            }
            // Finished by another request since this one looked: answer as that one did.
            KeyState::Replay(_) => {
                hold.lost.store(true, Ordering::SeqCst);
                Err(CoreError::IdempotencyInProgress)
            }
            KeyState::Mismatch => Err(CoreError::IdempotencyMismatch),
            KeyState::InProgress => Err(CoreError::IdempotencyInProgress),
        }
    }

    /// The record a batch writes for `hold`: the response, sealed.
    pub(crate) fn idempotency_write(
        &self,
        hold: &IdempotencyHold,
        response: StoredResponse,
    ) -> IdempotencyWrite {
        IdempotencyWrite {
            key: hold.stored.clone(),
            fingerprint: hold.fingerprint.clone(),
            claimed: hold.is_claimed(),
            checkpoint: false,
            created: hold.began,
            response: self.seal_idempotent_response(response),
        }
    }
}

/// What the record under a key (if any) means for a request with `fingerprint` at `now`: none,
/// an expired one, or the claim of a process that is gone (same fingerprint) is free; another
/// fingerprint is a mismatch; a finished one replays; a live claim is in progress. Both stores
/// decide with this.
pub fn key_state(record: Option<KeyRecord>, fingerprint: &str, now: i64) -> KeyState {
    let Some(r) = record else {
        return KeyState::Free;
    };
    if r.created < now - IDEMPOTENCY_TTL_SECS
        || (r.fingerprint == fingerprint
            && r.state == "running"
            && r.claimer_gone
            && r.response.is_none())
    {
        return KeyState::Free;
    }
    if r.fingerprint != fingerprint {
        return KeyState::Mismatch;
    }
    match (r.state.as_str(), r.response, r.claimer_gone) {
        ("done", Some(response), _) => KeyState::Replay(response),
        // A claim checkpointed before its process died: what it had committed.
        ("running", Some(response), true) => KeyState::Replay(response),
        _ => KeyState::InProgress,
    }
}

/// Prefix of publishable-key records. DEL (0x7f) is no visible ASCII, so no `Idempotency-Key`
/// header can carry it: the two namespaces cannot meet.
const PUBLISHABLE_NAMESPACE: &str = "\u{7f}publishable:";

/// Prefix of the records of Tender's own work ([`Services::begin_internal`]); like
/// [`PUBLISHABLE_NAMESPACE`], out of reach of any header.
const INTERNAL_NAMESPACE: &str = "\u{7f}internal:";

/// The key under which a request's record is stored, given the key the client sent.
pub fn stored_key(key: &str, kind: KeyKind) -> String {
    match kind {
        KeyKind::Secret => key.to_string(),
        KeyKind::Publishable => format!("{PUBLISHABLE_NAMESPACE}{key}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_key_record_means_for_a_request() {
        let answer = StoredResponse {
            status: 200,
            body: b"{}".to_vec(),
        };
        let rec = |state: &str, created: i64, gone: bool| {
            Some(KeyRecord {
                fingerprint: "fp".into(),
                state: state.into(),
                response: (state == "done").then(|| answer.clone()),
                created,
                claimer_gone: gone,
            })
        };
        let now = 1_000_000;
        assert_eq!(key_state(None, "fp", now), KeyState::Free);
        assert_eq!(
            key_state(rec("done", now, false), "fp", now),
            KeyState::Replay(answer.clone())
        );
        assert_eq!(
            key_state(rec("done", now, false), "other", now),
            KeyState::Mismatch
        );
        assert_eq!(
            key_state(rec("running", now, false), "fp", now),
            KeyState::InProgress
        );
        assert_eq!(
            key_state(rec("running", now, true), "fp", now),
            KeyState::Free
        );
        // A gone claimer frees the key for the same request only.
        assert_eq!(
            key_state(rec("running", now, true), "other", now),
            KeyState::Mismatch
        );
        let old = now - IDEMPOTENCY_TTL_SECS - 1;
        assert_eq!(
            key_state(rec("done", old, false), "other", now),
            KeyState::Free
        );
        // A checkpointed claim: in progress while its process lives, its checkpoint after.
        let checkpointed = |gone: bool| {
            Some(KeyRecord {
                fingerprint: "fp".into(),
                state: "running".into(),
                response: Some(answer.clone()),
                created: now,
                claimer_gone: gone,
            })
        };
        assert_eq!(
            key_state(checkpointed(false), "fp", now),
            KeyState::InProgress
        );
        assert_eq!(
            key_state(checkpointed(true), "fp", now),
            KeyState::Replay(answer.clone())
        );
        assert_eq!(
            key_state(checkpointed(true), "other", now),
            KeyState::Mismatch
        );
    }

    #[test]
    fn publishable_keys_live_in_their_own_namespace() {
        assert_eq!(stored_key("order-1", KeyKind::Secret), "order-1");
        let pk = stored_key("order-1", KeyKind::Publishable);
        assert_ne!(pk, "order-1");
        assert!(pk.ends_with("order-1"));
        assert!(axum_header_cannot_carry(&pk));
    }

    /// What `HeaderValue::to_str` accepts: visible ASCII, space and tab.
    fn axum_header_cannot_carry(s: &str) -> bool {
        s.bytes().any(|b| !(b == b'\t' || (32..127).contains(&b)))
    }
}
