//! The storage port: the traits every backend (SQLite, PostgreSQL) implements, and the data
//! they carry.
//!
//! The store keeps each resource as a JSON document beside the indexed columns that lists filter
//! on, in one table per [`Collection`]. Writes are whole [`WriteBatch`]es applied in ONE
//! transaction: the changed documents, their events, the webhook deliveries those events fan
//! out to (the outbox), and the idempotency record of the request. Updates carry the version they
//! were computed from; a batch whose precondition fails is refused with
//! [`StoreError::Conflict`] and nothing of it is applied, so read-modify-write races (two refunds
//! of one payment) are resolved by retrying the use case, never by a lock held across awaits.
//!
//! Every method takes the tenant [`Scope`] first where the data is tenant data.
//! Depends on the domain types only.
//!
//! # Layout
//! The data types are in `records.rs` (re-exported here: they are the port's vocabulary); this
//! file is the port: [`Store`] (the lifecycle) is made of four traits,
//! one per concern, each implemented by a backend in a file of the same concern.
//! - [`DocumentStore`]: documents, sealed values, [`WriteBatch`] commits (with the outbox).
//! - [`IdempotencyStore`]: finding, claiming, releasing and purging idempotency records.
//! - [`QueueStore`]: leasing and recording webhook deliveries and scheduled tasks.
//! - [`AccountStore`]: accounts, API keys, dashboard sessions and store-wide settings.
//! - [`LedgerStore`]: ledger balances and postings (written by [`WriteOp::Post`]).
//!
//! Callers hold `Arc<dyn Store>`, which reaches every concern's methods without importing its
//! trait; only code holding a concrete backend (`SqliteStore`, `PgStore`) imports the concern's
//! trait it calls (`use tender_core::store::DocumentStore`).

use async_trait::async_trait;

use crate::auth::{Mode, Scope};
use crate::error::StoreError;

pub type StoreResult<T> = Result<T, StoreError>;

pub use crate::collection::{prices_column, prices_filter, Collection, Field, IndexValues};

mod records;
pub use records::*;

/// The storage port: every concern below, plus the store's lifecycle.
#[async_trait]
pub trait Store:
    DocumentStore + IdempotencyStore + QueueStore + AccountStore + LedgerStore + Send + Sync + 'static
{
    /// Called once when a server starts: forget what only a process of this store that died
    /// could have held. SQLite is served by one process, so its in-progress idempotency claims
    /// and its leases on tasks and webhook deliveries all belong to the dead one and are
    /// released at once (clients retrying after a crash get an answer instead of 409 for a
    /// minute; an interrupted renewal or test-clock advance goes on at once). PostgreSQL has
    /// other live nodes: no-op. Returns how many claims and leases it released.
    async fn recover_after_restart(&self) -> StoreResult<u64> {
        Ok(0)
    }

    /// Whether the store answers and its schema is the one this build expects.
    async fn check_ready(&self) -> StoreResult<()>;

    /// Connections in use and idle (for the pool metrics); `(0, 0)` where not applicable.
    fn pool_status(&self) -> (usize, usize) {
        (0, 0)
    }
}

// ---- Documents and the outbox -----------------------------------------------------------------

/// Documents (one table per [`Collection`]) and the sealed values kept beside them. Every change
/// is a [`WriteBatch`] applied by [`DocumentStore::commit`] in one transaction, with the
/// deliveries its events fan out to (the outbox) and the request's idempotency record.
#[async_trait]
pub trait DocumentStore: Send + Sync {
    /// A document by id within the scope; `None` when missing (or in another scope).
    async fn find_record(
        &self,
        scope: &Scope,
        collection: Collection,
        id: &str,
    ) -> StoreResult<Option<Record>>;

    /// A page of documents, newest first (strict creation order, keyset-paginated).
    async fn list_records(
        &self,
        scope: &Scope,
        collection: Collection,
        query: &ListQuery,
    ) -> StoreResult<Page>;

    /// Applies a batch in one durable transaction. A failed precondition → `Conflict`; a
    /// duplicate id → `Duplicate`; an idempotency key another request wrote first →
    /// `IdempotencyKeyTaken`. Nothing is applied on error.
    async fn commit(&self, batch: WriteBatch) -> StoreResult<()>;

    /// The sealed value kept for `owner`, if any.
    async fn find_sealed(&self, scope: &Scope, owner: &str) -> StoreResult<Option<String>>;

    /// The sealed value kept for `owner` with its scope, by id alone: only the inbound webhooks
    /// of processors, which name their connector in the path and carry no key, use this (the
    /// caller proves itself with the signature the sealed settings verify).
    async fn find_sealed_unscoped(&self, owner: &str) -> StoreResult<Option<(Scope, String)>>;

    /// A document by id alone, with its scope: only the receipt host, which has no caller to
    /// scope by, uses this, for payments (receipts) and invoices (hosted invoice pages); their
    /// ids are unguessable.
    async fn find_unscoped(
        &self,
        collection: Collection,
        id: &str,
    ) -> StoreResult<Option<(Scope, Record)>>;

    /// The scope's events after `after` in stream order, at most `limit`: only events that
    /// are final (no event can later become visible before the last one returned), so a
    /// stream that goes on from the last position returned never skips one and never shows
    /// one twice (CONTRACT §17). SQLite's single writer commits in `seq` order; PostgreSQL
    /// orders by writing transaction and holds back what running transactions may still
    /// precede.
    async fn stream_events(
        &self,
        scope: &Scope,
        after: StreamPosition,
        limit: u32,
    ) -> StoreResult<Vec<StreamedEvent>>;

    /// Where a stream starting now begins: after every event final now.
    async fn stream_head(&self, scope: &Scope) -> StoreResult<StreamPosition>;

    /// The position of event `id` of the scope (a stream resuming after it), if it exists.
    async fn stream_position(&self, scope: &Scope, id: &str)
        -> StoreResult<Option<StreamPosition>>;
}

/// A place in a scope's stream of events ([`DocumentStore::stream_events`]), ordered
/// lexicographically; [`StreamPosition::START`] is before every event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct StreamPosition(pub i64, pub i64);

impl StreamPosition {
    pub const START: StreamPosition = StreamPosition(i64::MIN, i64::MIN);
}

/// An event as a stream gives it: its position, id and stored JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamedEvent {
    pub position: StreamPosition,
    pub id: String,
    pub body: String,
}

// ---- The ledger ------------------------------------------------------------------------------

/// What the ledger holds: balances kept with every posting ([`WriteOp::Post`]), and the
/// postings themselves.
#[async_trait]
pub trait LedgerStore: Send + Sync {
    /// Every ledger account balance of the scope, per currency (accounts never posted to are
    /// absent).
    async fn ledger_balances(
        &self,
        scope: &Scope,
    ) -> StoreResult<Vec<crate::balance::ledger::LedgerBalance>>;

    /// The entries of the posting for `cause`, if it was posted.
    async fn posting_entries(
        &self,
        scope: &Scope,
        cause: &str,
    ) -> StoreResult<Option<Vec<crate::balance::ledger::Entry>>>;

    /// Every ledger account balance of the scope recomputed from the postings' entries (for
    /// `tender ledger verify`, which compares them with [`LedgerStore::ledger_balances`]).
    async fn recompute_balances(
        &self,
        scope: &Scope,
    ) -> StoreResult<Vec<crate::balance::ledger::LedgerBalance>>;

    /// The causes of the scope's postings whose entries do not sum to zero in some currency
    /// (none, unless a row was changed behind the store's back).
    async fn unbalanced_postings(&self, scope: &Scope) -> StoreResult<Vec<String>>;
}

// ---- Idempotency -----------------------------------------------------------------------------

/// Idempotency records: what is under a key, and the claims of requests that act before their
/// final batch. A batch writes its own record ([`WriteBatch::idempotency`]).
#[async_trait]
pub trait IdempotencyStore: Send + Sync {
    /// What is under an idempotency key for a request with `fingerprint` (a read: nothing is
    /// claimed). Records created before `now - IDEMPOTENCY_TTL_SECS` count as absent.
    async fn find_idempotency(
        &self,
        scope: &Scope,
        key: &str,
        fingerprint: &str,
        now: i64,
    ) -> StoreResult<KeyState>;

    /// Claims an idempotency key for a request with `fingerprint` before it runs (only
    /// requests that act before their final batch need this). An in-progress claim is
    /// never taken over while the process that made it lives, however long its request runs
    /// (so a request never runs twice); it is free once that process is gone: on PostgreSQL
    /// when its node's session lock is (within seconds of a crash), on SQLite at the next start
    /// ([`Store::recover_after_restart`]; one process per data dir).
    async fn claim_idempotency(
        &self,
        scope: &Scope,
        key: &str,
        fingerprint: &str,
        now: i64,
    ) -> StoreResult<KeyState>;

    /// Releases a claim whose request failed with a 5xx, so a retry runs again.
    async fn release_idempotency(&self, scope: &Scope, key: &str) -> StoreResult<()>;

    /// Deletes idempotency records created before `before`; returns how many.
    async fn purge_idempotency(&self, before: i64) -> StoreResult<u64>;
}

// ---- Queues: webhook deliveries and scheduled tasks ------------------------------------------

/// The background queues: webhook deliveries and scheduled tasks, each leased to one worker at a
/// time.
#[async_trait]
pub trait QueueStore: Send + Sync {
    /// Leases up to `limit` due tasks of no test clock (`due_at <= now`, no live lease) until
    /// `lease_until`.
    async fn claim_tasks(
        &self,
        now: i64,
        lease_until: i64,
        limit: usize,
    ) -> StoreResult<Vec<ClaimedTask>>;

    /// The earliest tasks of test clock `clock` due at or before `up_to`: every unleased one
    /// (up to `limit`) due at the earliest such time, leased until `lease_until` (wall-clock
    /// Unix seconds, as `now`). Tasks due at one instant are independent of each other; those of
    /// later instants wait until these are done, so an advance runs in time order.
    async fn claim_clock_tasks(
        &self,
        clock: &str,
        up_to: i64,
        now: i64,
        lease_until: i64,
        limit: usize,
    ) -> StoreResult<Vec<ClaimedTask>>;

    /// How many tasks of test clock `clock` are due at or before `up_to`, leased or not.
    async fn clock_tasks_due(&self, clock: &str, up_to: i64) -> StoreResult<u64>;

    /// Leases up to `claim.limit` due pending deliveries (`next_attempt_at <= now_ms`, no live
    /// lease) until `lease_until_ms`, so no other worker (on any node) takes them meanwhile.
    /// Fair: every account and mode's oldest due delivery comes before anyone's second, and an
    /// account and mode (an endpoint) never has more than `per_account` (`per_endpoint`)
    /// deliveries under a live lease, counting those leased before.
    async fn claim_deliveries(&self, claim: DeliveryClaim) -> StoreResult<Vec<ClaimedDelivery>>;

    /// Appends an attempt, sets the delivery's status and next time, releases the lease.
    async fn record_delivery_attempt(&self, record: DeliveryAttemptRecord) -> StoreResult<()>;

    /// The deliveries of one event, one per endpoint.
    async fn list_deliveries(
        &self,
        scope: &Scope,
        event_id: &str,
    ) -> StoreResult<Vec<DeliveryRecord>>;

    /// Makes the (event, endpoint) delivery pending and due at `now_ms`, creating it if needed.
    async fn schedule_delivery(
        &self,
        scope: &Scope,
        event_id: &str,
        endpoint_id: &str,
        now_ms: i64,
    ) -> StoreResult<DeliveryRecord>;

    /// Pending webhook deliveries across all accounts (the queue depth metric).
    async fn count_pending_deliveries(&self) -> StoreResult<u64>;
}

// ---- Accounts, API keys, dashboard sessions, settings -----------------------------------------

/// Merchant accounts, their API keys, dashboard sessions and store-wide settings.
#[async_trait]
pub trait AccountStore: Send + Sync {
    /// Creates an account with its keys in one transaction.
    async fn insert_account(
        &self,
        account: AccountRecord,
        keys: Vec<ApiKeyRecord>,
    ) -> StoreResult<()>;

    async fn find_account(&self, id: &str) -> StoreResult<Option<AccountRecord>>;

    /// Sets what customers see of the account: its business name and public e-mail.
    async fn update_account_profile(
        &self,
        account: &str,
        name: Option<&str>,
        public_email: Option<&str>,
    ) -> StoreResult<()>;

    /// The account whose dashboard login is `email` (case-insensitive).
    /// Sets one of the account's settings (`None`: back to the default): its prices, its
    /// default payout destination (sealed), its public pages' settings.
    async fn update_account_setting(
        &self,
        account: &str,
        setting: AccountSetting,
        value: Option<&str>,
    ) -> StoreResult<()>;

    async fn find_account_by_email(&self, email: &str) -> StoreResult<Option<AccountRecord>>;

    /// Every account, oldest first (for operators).
    async fn list_accounts(&self) -> StoreResult<Vec<AccountRecord>>;

    /// Sets the password and, in the same transaction, ends every dashboard session of the
    /// account except `keep_session` (a token hash): a changed password locks out whoever
    /// logged in with the old one.
    async fn update_account_password(
        &self,
        account: &str,
        password_hash: &str,
        keep_session: Option<&str>,
    ) -> StoreResult<()>;

    /// The keys of an account, newest first, revoked ones included.
    async fn list_api_keys(&self, account: &str) -> StoreResult<Vec<ApiKeyRecord>>;

    async fn insert_api_key(&self, key: ApiKeyRecord) -> StoreResult<()>;

    /// Sets a key's expiry (a roll's grace period) and revocation; scoped by account.
    async fn update_api_key(
        &self,
        account: &str,
        key_id: &str,
        expires_at: Option<i64>,
        revoked: bool,
    ) -> StoreResult<()>;

    async fn insert_session(&self, session: SessionRecord) -> StoreResult<()>;

    /// The session whose token hashes to `token_hash`, if it has not expired by `now`.
    async fn find_session(&self, token_hash: &str, now: i64) -> StoreResult<Option<SessionRecord>>;

    async fn update_session_mode(&self, token_hash: &str, mode: Mode) -> StoreResult<()>;

    async fn delete_session(&self, token_hash: &str) -> StoreResult<()>;

    async fn count_accounts(&self) -> StoreResult<u64>;

    /// A store-wide setting: stores `value` under `name` unless one is there, and returns what
    /// is there afterwards (the first writer's value when several race).
    async fn claim_setting(&self, name: &str, value: &str) -> StoreResult<String>;

    /// The key whose SHA-256 is `key_hash`, if any.
    async fn find_api_key(&self, key_hash: &str) -> StoreResult<Option<ApiKeyRecord>>;
}

/// How long an idempotency key is kept (CONTRACT §4.9): 24 hours. Both backends count an
/// older record as absent.
pub const IDEMPOTENCY_TTL_SECS: i64 = 24 * 60 * 60;
