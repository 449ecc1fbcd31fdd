//! The data the storage port carries: records read back, list queries and pages, the writes of
//! a batch ([`WriteOp`], [`WriteBatch`]), idempotency records, deliveries, tasks, accounts,
//! keys and sessions. Re-exported by [`super`]; plain data, no behaviour.

use crate::auth::{KeyKind, Mode, Scope};
use crate::collection::{Collection, Field, IndexValues};

/// A stored document and the version updates must name.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    pub id: String,
    pub version: i64,
    pub body: String,
}

/// Bounds on `created` (Unix seconds), all inclusive/exclusive as named.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CreatedRange {
    pub gt: Option<i64>,
    pub gte: Option<i64>,
    pub lt: Option<i64>,
    pub lte: Option<i64>,
}

/// Where a page starts.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Cursor {
    #[default]
    Newest,
    /// Objects created before this one (the next page).
    StartingAfter(String),
    /// Objects created after this one (the previous page).
    EndingBefore(String),
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListQuery {
    pub filters: Vec<(Field, String)>,
    pub created: CreatedRange,
    /// Bounds on `available_on` (balance transactions only; unbounded elsewhere).
    pub available_on: CreatedRange,
    pub cursor: Cursor,
    /// 1..=100, checked by the caller.
    pub limit: u32,
}

/// One page, newest first.
#[derive(Debug, Clone, PartialEq)]
pub struct Page {
    pub records: Vec<Record>,
    pub has_more: bool,
}

/// A response kept under an idempotency key, replayed byte for byte.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredResponse {
    pub status: u16,
    pub body: Vec<u8>,
}

/// What the store holds under an idempotency key, for a request with a given fingerprint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyState {
    /// Nothing (or only an expired record, or the claim of a node that is gone): the request
    /// may run. From [`super::IdempotencyStore::claim_idempotency`] it also means the key is now claimed by it.
    Free,
    /// The key finished earlier with the same fingerprint: replay this.
    Replay(StoredResponse),
    /// The key finished or is running with a different fingerprint.
    Mismatch,
    /// Another request with this key is still running.
    InProgress,
}

/// The record under an idempotency key as a store reads it; what it means for a request is
/// decided by the core's `documents::idempotency::key_state`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyRecord {
    pub fingerprint: String,
    /// `running` (claimed) or `done`.
    pub state: String,
    /// The kept answer, once `done`.
    pub response: Option<StoredResponse>,
    /// Unix seconds.
    pub created: i64,
    /// A running claim whose process is known to be gone (PostgreSQL: its node's lock is free).
    pub claimer_gone: bool,
}

/// The idempotency record a batch writes: the answer of the request that held `key`.
#[derive(Debug, Clone, PartialEq)]
pub struct IdempotencyWrite {
    pub key: String,
    pub fingerprint: String,
    /// Whether the request claimed the key before running
    /// ([`super::IdempotencyStore::claim_idempotency`]). A claimed key is completed (and the batch fails
    /// if the claim is no longer there); an unclaimed one is inserted, and the batch fails with
    /// [`crate::error::StoreError::IdempotencyKeyTaken`] if a live record is there by then.
    pub claimed: bool,
    /// A checkpoint of a claimed key: the claim stays running, and `response` becomes what a
    /// retry is answered should the claiming process die before completing it (a pointer to
    /// what the request already committed: a payment recorded before its processor was asked).
    /// A running claim with a checkpoint is never freed: it replays its checkpoint.
    pub checkpoint: bool,
    /// Unix seconds; the record expires [`IDEMPOTENCY_TTL_SECS`] later.
    pub created: i64,
    pub response: StoredResponse,
}

/// One change inside a batch.
#[derive(Debug, Clone, PartialEq)]
pub enum WriteOp {
    Insert {
        collection: Collection,
        id: String,
        created: i64,
        index: IndexValues,
        body: String,
    },
    /// Replaces the document if its version is still `expected_version` (else Conflict).
    Update {
        collection: Collection,
        id: String,
        expected_version: i64,
        index: IndexValues,
        body: String,
    },
    Delete {
        collection: Collection,
        id: String,
        expected_version: i64,
    },
    /// Changes nothing; the batch applies only if the document still exists at
    /// `expected_version` (else Conflict). On PostgreSQL the row is share-locked until the
    /// commit, so a concurrent change or delete of it waits for this batch or makes it fail.
    Check {
        collection: Collection,
        id: String,
        expected_version: i64,
    },
    /// Keeps a value sealed under the vault key for the object `owner` (webhook signing secrets,
    /// a saved card's number), apart from the public document; replaces any earlier one.
    Seal { owner: String, sealed: String },
    /// Forgets `owner`'s sealed value (a consumed or detached card).
    Unseal { owner: String },
    /// Schedules background work on `object_id` at `due_at` (Unix seconds). A task of a test
    /// `clock` is due in that clock's time and runs only when the clock is advanced
    /// ([`super::QueueStore::claim_clock_tasks`]); the others run when the wall clock reaches `due_at`.
    ScheduleTask {
        id: String,
        kind: String,
        object_id: String,
        due_at: i64,
        clock: Option<String>,
    },
    /// Removes every task of a test clock (the clock is deleted).
    DeleteClockTasks { clock: String },
    /// Removes a task, in the batch that carries out its work.
    DeleteTask { id: String },
    /// A balanced ledger posting, written with the change that causes it. One posting per cause
    /// and scope: a posting whose cause is already posted writes nothing (and fails nothing), so
    /// a retry or a replayed webhook never posts twice. The store keeps each ledger account's
    /// balance in the same transaction, in the posting's shard ([`crate::balance::ledger::Posting::shard`]).
    Post(crate::balance::ledger::Posting),
    /// Fails the batch with [`crate::error::StoreError::BalanceInsufficient`] unless the scope's balance of
    /// `account` in `currency`, with this batch's postings (those before it in the batch), is at
    /// least `at_least`. Batches carrying this op for the same (scope, account, currency) are
    /// serialised with each other (on PostgreSQL by a transaction-scoped advisory lock taken
    /// before the balance is read), so two racing withdrawals cannot both see the money.
    RequireBalance {
        account: crate::balance::ledger::LedgerAccount,
        currency: crate::money::Currency,
        at_least: i64,
    },
    /// Fails the batch with [`crate::error::StoreError::LimitReached`] (naming `what`) unless the scope has at
    /// most `at_most` documents in `collection` (those whose `filter` column holds the value,
    /// when given), counting what the batch wrote before this operation. Batches of one scope
    /// and collection that carry it are serialised with each other (SQLite's one writer; on
    /// PostgreSQL a transaction-scoped advisory lock taken before counting), so racing
    /// creations cannot pass a limit together (CONTRACT §17).
    RequireAtMost {
        collection: Collection,
        filter: Option<(Field, String)>,
        at_most: i64,
        what: String,
    },
    /// An event. In the same transaction the store writes one pending delivery (the outbox) for
    /// every enabled endpoint of the scope whose `enabled_events` match, due at `created`.
    Event {
        id: String,
        event_type: String,
        created: i64,
        body: String,
    },
}

/// Everything one request (or one background step) changes, applied atomically and durably.
#[derive(Debug, Clone, PartialEq)]
pub struct WriteBatch {
    pub scope: Scope,
    pub ops: Vec<WriteOp>,
    /// The request's idempotency record, written with its change or not at all.
    pub idempotency: Option<IdempotencyWrite>,
}

/// A webhook delivery (one per event and endpoint) as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct DeliveryRecord {
    pub id: String,
    pub event_id: String,
    pub endpoint_id: String,
    /// `pending`, `succeeded` or `failed`.
    pub status: String,
    /// Unix milliseconds of the next attempt while pending.
    pub next_attempt_at_ms: Option<i64>,
    /// JSON array of attempt objects, oldest first.
    pub attempts: String,
    pub created: i64,
}

/// A due delivery leased to one worker, with what it needs to send it.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimedDelivery {
    pub id: String,
    pub scope: Scope,
    pub event_id: String,
    pub event_body: String,
    pub endpoint_id: String,
    /// `None` when the endpoint was deleted since.
    pub endpoint_body: Option<String>,
    pub endpoint_secrets: Option<String>,
    pub endpoint_failing_since: Option<i64>,
    /// Attempts made before this one.
    pub attempts_made: usize,
    /// The Stripe name the event is sent under (`""`: the endpoint's dialect decides,
    /// [`crate::stripe::events::delivery_variants`]).
    pub variant: String,
}

/// The result of one attempt, recorded by the worker that held the lease.
#[derive(Debug, Clone, PartialEq)]
pub struct DeliveryAttemptRecord {
    pub delivery_id: String,
    pub endpoint_id: String,
    /// One JSON attempt object to append.
    pub attempt: String,
    /// `pending` (retry at `next_attempt_at_ms`), `succeeded` or `failed`.
    pub status: String,
    pub next_attempt_at_ms: Option<i64>,
    /// The endpoint's new "failing since" time (`None` after a success).
    pub endpoint_failing_since: Option<i64>,
}

/// A dashboard session: the cookie's token is stored only as its SHA-256.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionRecord {
    pub token_hash: String,
    pub account: String,
    /// The CSRF token every form of this session must carry.
    pub csrf_token: String,
    /// The mode the dashboard shows.
    pub mode: Mode,
    pub created: i64,
    pub expires_at: i64,
}

/// A due background task leased to one runner.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimedTask {
    pub id: String,
    pub scope: Scope,
    pub kind: String,
    pub object_id: String,
    /// When it was due (in its test clock's time, for a clock's task).
    pub due_at: i64,
    /// The test clock whose time it runs in, if any.
    pub clock: Option<String>,
}

/// A merchant account.
#[derive(Debug, Clone, PartialEq)]
pub struct AccountRecord {
    pub id: String,
    /// The dashboard login (never shown to customers).
    pub email: String,
    /// The business name customers see on receipts.
    pub name: Option<String>,
    /// The e-mail customers see on receipts, to reach the business.
    pub public_email: Option<String>,
    /// Argon2id PHC string of the dashboard password.
    pub password_hash: String,
    pub created: i64,
    /// The account's prices as [`crate::balance::fees::Pricing::encode`] writes them; `None`: the
    /// defaults.
    pub pricing: Option<String>,
    /// The default payout destination, sealed (`balance::payouts::DefaultDestination`).
    pub payout_destination: Option<String>,
    /// The settings of its public payment surfaces as
    /// [`crate::accounts::checkout_settings::CheckoutSettings::encode`] writes them; `None`: the
    /// defaults.
    pub checkout_settings: Option<String>,
}

/// An account's settings kept as one text column each, written by
/// [`super::AccountStore::update_account_setting`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccountSetting {
    /// [`AccountRecord::pricing`].
    Pricing,
    /// [`AccountRecord::payout_destination`].
    PayoutDestination,
    /// [`AccountRecord::checkout_settings`].
    Checkout,
}

impl AccountSetting {
    /// Its column in the `accounts` table (both backends).
    pub fn column(self) -> &'static str {
        match self {
            AccountSetting::Pricing => "pricing",
            AccountSetting::PayoutDestination => "payout_destination",
            AccountSetting::Checkout => "checkout_settings",
        }
    }
}

/// An API key as stored: the secret key's SHA-256 only, the publishable key in full.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiKeyRecord {
    pub id: String,
    pub account: String,
    pub mode: Mode,
    pub kind: KeyKind,
    pub key_hash: String,
    /// The full key for publishable keys; `None` for secret keys.
    pub public_value: Option<String>,
    pub last4: String,
    pub created: i64,
    /// Set when rolled: the key stops working at this time.
    pub expires_at: Option<i64>,
    pub revoked: bool,
}

/// What a worker asks of [`super::QueueStore::claim_deliveries`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeliveryClaim {
    pub now_ms: i64,
    pub lease_until_ms: i64,
    pub limit: usize,
    pub per_account: usize,
    pub per_endpoint: usize,
}

// ---------------------------------------------------------------------------------------------
// The port: `Store` (the lifecycle) and the four concerns it is made of, one trait each.
// ---------------------------------------------------------------------------------------------
