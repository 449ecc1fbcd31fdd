//! [`Batch`]: the one way a use case says what it changes. Each method adds one kind of write
//! to the batch the store applies atomically ([`crate::store::WriteBatch`]): a document
//! inserted, updated at the version it was read at, deleted or checked unchanged; an event
//! (which the store fans out to the webhook outbox); a task scheduled or done; a ledger posting
//! or a balance booking; a limit or a balance the batch requires; a sealed value kept or
//! forgotten.
//!
//! How a resource is stored (collection, id, index values) comes from its [`Document`] impl;
//! who caused an event and when it happened come from the [`Services`] that opened the batch.
//!
//! ```ignore
//! let mut batch = self.background(&task.scope);
//! batch.update(&after, record.version)?;
//! batch.post(posting);
//! batch.event("payout.paid", &after)?;
//! batch.done(task);
//! self.commit_background(batch).await
//! ```
//!
//! Depends on [`Document`], the storage port and the domain's event, ledger and task values.

use std::sync::Arc;

use serde::Serialize;

use super::document::{to_body, to_value, Document};
use crate::auth::Scope;
use crate::balance::ledger::{LedgerAccount, Posting};
use crate::balance::transactions::Booking;
use crate::clock::Clock;
use crate::error::CoreResult;
use crate::event::{EventData, EventRequest, StoredEvent};
use crate::ids::{self, IdKind};
use crate::money::Currency;
use crate::services::{RequestContext, Services};
use crate::store::{ClaimedTask, Collection, Field, WriteOp};
use crate::task::TaskKind;

/// The writes of one use case (or one background step), in order.
#[derive(Clone)]
pub struct Batch {
    scope: Scope,
    ops: Vec<WriteOp>,
    /// The request that caused the batch's events, if any.
    request: EventRequest,
    /// Events are dated by the wall clock even in a test clock's time: an event is when it
    /// happened here, and its webhooks are due then.
    wall: Arc<dyn Clock>,
    /// The test clock whose time the batch's tasks are due in, if any.
    test_clock: Option<String>,
    /// Locks held until the batch is committed or dropped ([`Batch::hold`]).
    held: Vec<Arc<tokio::sync::OwnedMutexGuard<()>>>,
}

impl Services {
    /// A batch for a request: its events name the request and its idempotency key.
    pub(crate) fn batch(&self, ctx: &RequestContext) -> Batch {
        let mut batch = self.background(ctx.scope());
        batch.request = EventRequest {
            id: Some(ctx.request_id.clone()),
            idempotency_key: ctx.idempotency.as_ref().map(|h| h.key.clone()),
        };
        batch
    }

    /// [`Services::batch`] when a request is given, else [`Services::background`].
    pub(crate) fn batch_for(&self, ctx: Option<&RequestContext>, scope: &Scope) -> Batch {
        match ctx {
            Some(ctx) => self.batch(ctx),
            None => self.background(scope),
        }
    }

    /// A batch for background work of `scope` (a task, a processor's webhook): its events name
    /// no request.
    pub(crate) fn background(&self, scope: &Scope) -> Batch {
        Batch {
            scope: scope.clone(),
            ops: Vec::new(),
            request: EventRequest {
                id: None,
                idempotency_key: None,
            },
            wall: self.wall.clone(),
            test_clock: self.clock.test_clock().map(str::to_string),
            held: Vec::new(),
        }
    }
}

impl Batch {
    pub fn scope(&self) -> &Scope {
        &self.scope
    }

    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// Keeps `guard` (a lock of this node's) until the batch is committed or dropped: what the
    /// batch was decided on under it stays true until it is written.
    pub fn hold(&mut self, guard: tokio::sync::OwnedMutexGuard<()>) -> &mut Self {
        self.held.push(Arc::new(guard));
        self
    }

    /// A new document.
    pub fn insert<D: Document>(&mut self, doc: &D) -> CoreResult<&mut Self> {
        self.ops.push(WriteOp::Insert {
            collection: D::COLLECTION,
            id: doc.id().to_string(),
            created: doc.created(),
            index: doc.index(),
            body: to_body(doc)?,
        });
        Ok(self)
    }

    /// [`Batch::insert`] of `doc` already serialised to `body` ([`to_body`]), for a use case
    /// that keeps the same text as its answer.
    pub fn insert_stored<D: Document>(&mut self, doc: &D, body: String) -> &mut Self {
        self.ops.push(WriteOp::Insert {
            collection: D::COLLECTION,
            id: doc.id().to_string(),
            created: doc.created(),
            index: doc.index(),
            body,
        });
        self
    }

    /// [`Batch::update`] of `doc` already serialised to `body` ([`to_body`]).
    pub fn update_stored<D: Document>(&mut self, doc: &D, version: i64, body: String) -> &mut Self {
        self.ops.push(WriteOp::Update {
            collection: D::COLLECTION,
            id: doc.id().to_string(),
            expected_version: version,
            index: doc.index(),
            body,
        });
        self
    }

    /// `doc` in place of the stored one, if that is still at `version` (else the batch fails
    /// with a conflict and the use case runs again).
    pub fn update<D: Document>(&mut self, doc: &D, version: i64) -> CoreResult<&mut Self> {
        self.ops.push(WriteOp::Update {
            collection: D::COLLECTION,
            id: doc.id().to_string(),
            expected_version: version,
            index: doc.index(),
            body: to_body(doc)?,
        });
        Ok(self)
    }

    /// Deletes the `D` with `id`, if it is still at `version`.
    pub fn delete<D: Document>(&mut self, id: &str, version: i64) -> &mut Self {
        self.ops.push(WriteOp::Delete {
            collection: D::COLLECTION,
            id: id.to_string(),
            expected_version: version,
        });
        self
    }

    /// Changes nothing, but the batch applies only if the document `id` of `collection` is
    /// still at `version` (what the use case was decided on still holds).
    pub fn check(&mut self, collection: Collection, id: &str, version: i64) -> &mut Self {
        self.ops.push(WriteOp::Check {
            collection,
            id: id.to_string(),
            expected_version: version,
        });
        self
    }

    /// An event of `event_type` carrying `object` in its stored form.
    pub fn event<T: Serialize>(&mut self, event_type: &str, object: &T) -> CoreResult<&mut Self> {
        self.event_json(event_type, to_value(object)?, None)
    }

    /// An event carrying `object` (already a stored-form JSON value) and, for an update, the
    /// attributes it had before, as the API shows them.
    pub fn event_json(
        &mut self,
        event_type: &str,
        object: serde_json::Value,
        previous_attributes: Option<serde_json::Value>,
    ) -> CoreResult<&mut Self> {
        self.event_id(event_type, object, previous_attributes)?;
        Ok(self)
    }

    /// [`Batch::event_json`], returning the event's id.
    pub fn event_id(
        &mut self,
        event_type: &str,
        object: serde_json::Value,
        previous_attributes: Option<serde_json::Value>,
    ) -> CoreResult<String> {
        let event = StoredEvent {
            kind: event_type.into(),
            created: self.wall.now(),
            livemode: self.scope.livemode(),
            data: EventData {
                object,
                previous_attributes,
            },
            request: self.request.clone(),
        };
        let id = ids::generate(IdKind::Event);
        self.ops.push(WriteOp::Event {
            body: to_body(&event)?,
            id: id.clone(),
            event_type: event.kind,
            created: event.created,
        });
        Ok(id)
    }

    /// A change of a document: `after` stored at `version` and its `event_type` event naming
    /// what changed since `before`. Nothing when nothing changed. Returns `after` in its
    /// stored form (what the request answers).
    pub fn change<D: Document + PartialEq>(
        &mut self,
        event_type: &str,
        (before, after): (&D, &D),
        version: i64,
    ) -> CoreResult<serde_json::Value> {
        let object = to_value(after)?;
        if before != after {
            let previous = crate::event::previous_attributes(&to_value(before)?, &object);
            self.update(after, version)?;
            self.event_json(event_type, object.clone(), previous)?;
        }
        Ok(object)
    }

    /// Schedules `kind` on `object_id` at `due_at` (in the test clock's time, if the batch
    /// works for one).
    pub fn schedule(&mut self, kind: TaskKind, object_id: &str, due_at: i64) -> &mut Self {
        self.schedule_id(kind, object_id, due_at);
        self
    }

    /// [`Batch::schedule`], returning the task's id (to find the task again).
    pub fn schedule_id(&mut self, kind: TaskKind, object_id: &str, due_at: i64) -> String {
        let id = format!("task_{}", ids::random_base62(24));
        self.ops.push(WriteOp::ScheduleTask {
            id: id.clone(),
            kind: kind.as_str().into(),
            object_id: object_id.into(),
            due_at,
            clock: self.test_clock.clone(),
        });
        id
    }

    /// Removes `task`, in the batch that carries out its work.
    pub fn done(&mut self, task: &ClaimedTask) -> &mut Self {
        self.ops.push(WriteOp::DeleteTask {
            id: task.id.clone(),
        });
        self
    }

    /// Removes the task `id` (one this batch's use case scheduled earlier).
    pub fn done_id(&mut self, id: &str) -> &mut Self {
        self.ops.push(WriteOp::DeleteTask { id: id.to_string() });
        self
    }

    /// Removes every task of test clock `clock` (the clock is deleted).
    pub fn drop_clock_tasks(&mut self, clock: &str) -> &mut Self {
        self.ops.push(WriteOp::DeleteClockTasks {
            clock: clock.to_string(),
        });
        self
    }

    /// A balanced ledger posting.
    pub fn post(&mut self, posting: Posting) -> &mut Self {
        self.ops.push(WriteOp::Post(posting));
        self
    }

    /// A booking: its balance transaction (if any) and its posting (if any).
    pub fn book(&mut self, booking: Booking) -> CoreResult<&mut Self> {
        if let Some(txn) = booking.transaction {
            self.insert(&txn)?;
        }
        if let Some(posting) = booking.posting {
            self.post(posting);
        }
        Ok(self)
    }

    /// The batch fails with `BalanceInsufficient` unless the scope's `account` holds at least
    /// `at_least` in `currency`, counting the postings before this one.
    pub fn require_balance(
        &mut self,
        account: LedgerAccount,
        currency: Currency,
        at_least: i64,
    ) -> &mut Self {
        self.ops.push(WriteOp::RequireBalance {
            account,
            currency,
            at_least,
        });
        self
    }

    /// The batch fails with `LimitReached` (naming `what`) unless the scope has at most
    /// `at_most` `D`s (those whose `filter` column holds the value, when given).
    pub fn require_at_most<D: Document>(
        &mut self,
        filter: Option<(Field, String)>,
        at_most: i64,
        what: &str,
    ) -> &mut Self {
        self.ops.push(WriteOp::RequireAtMost {
            collection: D::COLLECTION,
            filter,
            at_most,
            what: what.to_string(),
        });
        self
    }

    /// Keeps `sealed` (already sealed under the vault key) for `owner`, in place of any earlier.
    pub fn seal(&mut self, owner: &str, sealed: String) -> &mut Self {
        self.ops.push(WriteOp::Seal {
            owner: owner.to_string(),
            sealed,
        });
        self
    }

    /// Forgets `owner`'s sealed value.
    pub fn unseal(&mut self, owner: &str) -> &mut Self {
        self.ops.push(WriteOp::Unseal {
            owner: owner.to_string(),
        });
        self
    }

    /// Adds what another batch of the same scope says (a helper's writes).
    pub fn extend(&mut self, other: Batch) -> &mut Self {
        self.ops.extend(other.ops);
        self.held.extend(other.held);
        self
    }

    /// The writes, for the store.
    pub fn into_ops(self) -> Vec<WriteOp> {
        self.ops
    }

    /// The writes, for the store, and the locks the batch holds ([`Batch::hold`]): keep them
    /// until the store has answered.
    pub fn into_parts(self) -> (Vec<WriteOp>, Held) {
        (self.ops, Held(self.held))
    }
}

/// Locks a batch held, released when this is dropped (after its commit).
#[must_use = "dropping it releases the batch's locks before its commit"]
pub struct Held(#[allow(dead_code)] Vec<Arc<tokio::sync::OwnedMutexGuard<()>>>);

impl From<Batch> for Vec<WriteOp> {
    fn from(batch: Batch) -> Self {
        batch.ops
    }
}
