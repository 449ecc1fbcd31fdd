//! The PostgreSQL store: several stateless Tender nodes on one database.
//!
//! Every batch is one transaction on a pooled connection. Optimistic version checks make
//! concurrent read-modify-writes on different nodes conflict (and retry in the use case);
//! leases on deliveries and tasks are taken with `FOR UPDATE SKIP LOCKED`, so each due item goes
//! to exactly one node; idempotency claims lock the key's row. The server must keep `fsync` and
//! `synchronous_commit` on: [`PgStore::open`] refuses otherwise.

mod migrate;
mod node;

use async_trait::async_trait;
use deadpool_postgres::{GenericClient, Manager, ManagerConfig, Pool, RecyclingMethod};
use tender_core::auth::{KeyKind, Mode, Scope};
use tender_core::error::StoreError;
use tender_core::ids::{self, IdKind};
use tender_core::store::{
    AccountRecord, ApiKeyRecord, ClaimedDelivery, ClaimedTask, Collection, Cursor,
    DeliveryAttemptRecord, DeliveryClaim, DeliveryRecord, IdempotencyWrite, KeyState, ListQuery,
    Page, Record, SessionRecord, Store, StoreResult, StoredResponse, WriteBatch, WriteOp,
    IDEMPOTENCY_TTL_SECS,
};
use tokio_postgres::types::ToSql;
use tokio_postgres::Row;

use crate::key_cache::KeyCache;
use crate::schema::{column, index_columns, table};

/// Default pool size per node (see docs/operations.md for sizing).
pub const DEFAULT_POOL_SIZE: usize = 16;

/// Turns a driver error into a `StoreError`, keeping the cause.
fn classify(what: &str, e: tokio_postgres::Error) -> StoreError {
    if let Some(db) = e.as_db_error() {
        let code = db.code().code();
        if code == "23505" {
            return StoreError::Duplicate(db.constraint().unwrap_or(what).to_string());
        }
        // Serialization failure / deadlock: the batch lost a race; the use case retries.
        if code == "40001" || code == "40P01" {
            return StoreError::Conflict(what.to_string());
        }
    }
    StoreError::unavailable(format!("postgres {what}"), e)
}

fn pool_error(e: deadpool_postgres::PoolError) -> StoreError {
    StoreError::unavailable("postgres connection pool", e)
}

/// Tender's PostgreSQL store.
pub struct PgStore {
    pool: Pool,
    keys: KeyCache,
    /// This node's liveness lock; idempotency claims carry its key ([`node`]).
    node: node::NodeLock,
}

type Param<'a> = &'a (dyn ToSql + Sync);

impl PgStore {
    /// Connects, refuses an unsafe server configuration, and applies migrations.
    pub async fn open(url: &str, pool_size: usize) -> Result<Self, StoreError> {
        let config: tokio_postgres::Config = url
            .parse()
            .map_err(|e| StoreError::unavailable("invalid PostgreSQL URL", e))?;
        let manager = Manager::from_config(
            config,
            tokio_postgres::NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(pool_size)
            .build()
            .map_err(|e| StoreError::unavailable("building the PostgreSQL pool", e))?;
        let node = node::NodeLock::acquire(&pool)
            .await
            .map_err(|e| StoreError::Unavailable {
                message: format!("taking the node lock: {e}"),
                source: None,
            })?;
        let store = Self {
            pool,
            keys: KeyCache::default(),
            node,
        };
        store.check_durability().await?;
        let mut client = store.pool.get().await.map_err(pool_error)?;
        migrate::migrate(&mut client).await?;
        Ok(store)
    }

    /// An acknowledged payment must survive a crash: `fsync` and `synchronous_commit` on.
    async fn check_durability(&self) -> StoreResult<()> {
        let client = self.pool.get().await.map_err(pool_error)?;
        for setting in ["fsync", "synchronous_commit"] {
            let row = client
                .query_one(&format!("SHOW {setting}"), &[])
                .await
                .map_err(|e| classify("show settings", e))?;
            let value: String = row.get(0);
            if value == "off" {
                return Err(StoreError::Unavailable {
                    message: format!(
                        "PostgreSQL has {setting}=off: acknowledged payments could be lost in a crash; turn it on"
                    ),
                    source: None,
                });
            }
        }
        Ok(())
    }

    /// The migration version this build applies.
    pub fn schema_version() -> i64 {
        migrate::latest_version()
    }
}

fn mode_from(s: &str) -> Mode {
    if s == "live" {
        Mode::Live
    } else {
        Mode::Test
    }
}

fn scope_from(account: String, live: bool) -> Scope {
    Scope {
        account,
        mode: if live { Mode::Live } else { Mode::Test },
    }
}

fn record(r: &Row) -> Record {
    Record {
        id: r.get(0),
        version: r.get(1),
        body: r.get(2),
    }
}

/// Runs `sql` as a prepared statement cached on the connection: parsed and planned once per
/// connection, then one round trip per call (`execute(&str, …)` costs an extra prepare round
/// trip and a parse on the server every time).
async fn exec<C: GenericClient>(
    c: &C,
    sql: &str,
    params: &[Param<'_>],
) -> Result<u64, tokio_postgres::Error> {
    let stmt = c.prepare_cached(sql).await?;
    c.execute(&stmt, params).await
}

/// [`exec`] for statements returning rows.
async fn query<C: GenericClient>(
    c: &C,
    sql: &str,
    params: &[Param<'_>],
) -> Result<Vec<Row>, tokio_postgres::Error> {
    let stmt = c.prepare_cached(sql).await?;
    c.query(&stmt, params).await
}

async fn find_record<C: GenericClient>(
    c: &C,
    scope: &Scope,
    col: Collection,
    id: &str,
) -> StoreResult<Option<Record>> {
    let sql = format!(
        "SELECT id, version, body FROM {} WHERE id = $1 AND account_id = $2 AND livemode = $3",
        table(col)
    );
    let stmt = c
        .prepare_cached(&sql)
        .await
        .map_err(|e| classify("find", e))?;
    let live = scope.livemode();
    let row = c
        .query_opt(&stmt, &[&id, &scope.account, &live])
        .await
        .map_err(|e| classify("find", e))?;
    Ok(row.as_ref().map(record))
}

async fn apply_batch(
    tx: &deadpool_postgres::Transaction<'_>,
    batch: &WriteBatch,
    node: i64,
) -> StoreResult<()> {
    let scope = &batch.scope;
    let live = scope.livemode();
    for op in &batch.ops {
        match op {
            WriteOp::Insert {
                collection,
                id,
                created,
                index,
                body,
            } => {
                let cols = index_columns(*collection, index);
                let names: String = cols.iter().map(|(n, _)| format!(", {n}")).collect();
                let marks: String = (0..cols.len()).map(|i| format!(", ${}", i + 6)).collect();
                let sql = format!(
                    "INSERT INTO {} (id, account_id, livemode, created, version, body{names}) VALUES ($1, $2, $3, $4, 1, $5{marks})",
                    table(*collection)
                );
                let values: Vec<Option<String>> = cols.into_iter().map(|(_, v)| v).collect();
                let mut params: Vec<Param> = vec![id, &scope.account, &live, created, body];
                params.extend(values.iter().map(|v| v as Param));
                exec(tx, &sql, &params)
                    .await
                    .map_err(|e| classify("insert", e))?;
            }
            WriteOp::Update {
                collection,
                id,
                expected_version,
                index,
                body,
            } => {
                let cols = index_columns(*collection, index);
                let sets: String = cols
                    .iter()
                    .enumerate()
                    .map(|(i, (n, _))| format!(", {n} = ${}", i + 6))
                    .collect();
                let sql = format!(
                    "UPDATE {} SET body = $1, version = version + 1{sets} WHERE id = $2 AND account_id = $3 AND livemode = $4 AND version = $5",
                    table(*collection)
                );
                let values: Vec<Option<String>> = cols.into_iter().map(|(_, v)| v).collect();
                let mut params: Vec<Param> =
                    vec![body, id, &scope.account, &live, expected_version];
                params.extend(values.iter().map(|v| v as Param));
                let n = exec(tx, &sql, &params)
                    .await
                    .map_err(|e| classify("update", e))?;
                if n != 1 {
                    return Err(StoreError::Conflict(id.clone()));
                }
            }
            WriteOp::Delete {
                collection,
                id,
                expected_version,
            } => {
                let sql = format!(
                    "DELETE FROM {} WHERE id = $1 AND account_id = $2 AND livemode = $3 AND version = $4",
                    table(*collection)
                );
                let n = exec(tx, &sql, &[id, &scope.account, &live, expected_version])
                    .await
                    .map_err(|e| classify("delete", e))?;
                if n != 1 {
                    return Err(StoreError::Conflict(id.clone()));
                }
                // Whatever was sealed for the object (secrets, a card) goes with it.
                exec(tx, "DELETE FROM sealed_values WHERE owner_id = $1", &[id])
                    .await
                    .map_err(|e| classify("delete sealed", e))?;
            }
            WriteOp::Check {
                collection,
                id,
                expected_version,
            } => {
                // FOR SHARE: a concurrent change or delete of the row waits for this commit (or
                // made this batch see the row gone).
                let sql = format!(
                    "SELECT 1 FROM {} WHERE id = $1 AND account_id = $2 AND livemode = $3 AND version = $4 FOR SHARE",
                    table(*collection)
                );
                let rows = tx
                    .query(&sql, &[id, &scope.account, &live, expected_version])
                    .await
                    .map_err(|e| classify("check", e))?;
                if rows.len() != 1 {
                    return Err(StoreError::Conflict(id.clone()));
                }
            }
            WriteOp::Seal { owner, sealed } => {
                exec(tx,
                    "INSERT INTO sealed_values (owner_id, account_id, livemode, sealed) VALUES ($1, $2, $3, $4)
                     ON CONFLICT (owner_id) DO UPDATE SET sealed = excluded.sealed",
                    &[owner, &scope.account, &live, sealed],
                )
                .await
                .map_err(|e| classify("seal", e))?;
            }
            WriteOp::Unseal { owner } => {
                exec(tx,
                    "DELETE FROM sealed_values WHERE owner_id = $1 AND account_id = $2 AND livemode = $3",
                    &[owner, &scope.account, &live],
                )
                .await
                .map_err(|e| classify("unseal", e))?;
            }
            WriteOp::ScheduleTask {
                id,
                kind,
                object_id,
                due_at,
            } => {
                exec(tx,
                    "INSERT INTO scheduled_tasks (id, kind, account_id, livemode, object_id, due_at) VALUES ($1, $2, $3, $4, $5, $6)",
                    &[id, kind, &scope.account, &live, object_id, due_at],
                )
                .await
                .map_err(|e| classify("schedule task", e))?;
            }
            WriteOp::DeleteTask { id } => {
                let n = exec(tx,
                        "DELETE FROM scheduled_tasks WHERE id = $1 AND account_id = $2 AND livemode = $3",
                        &[id, &scope.account, &live],
                    )
                    .await
                    .map_err(|e| classify("delete task", e))?;
                if n != 1 {
                    // Another runner finished it first: this batch must not apply twice.
                    return Err(StoreError::Conflict(id.clone()));
                }
            }
            WriteOp::Event {
                id,
                event_type,
                created,
                body,
            } => {
                exec(tx,
                    "INSERT INTO events (id, account_id, livemode, created, version, type, body) VALUES ($1, $2, $3, $4, 1, $5, $6)",
                    &[id, &scope.account, &live, created, event_type, body],
                )
                .await
                .map_err(|e| classify("insert event", e))?;
                fan_out(tx, scope, id, event_type, *created).await?;
            }
        }
    }
    if let Some(record) = &batch.idempotency {
        write_idempotency(tx, scope, record, node).await?;
    }
    Ok(())
}

/// The idempotency record of a batch: completes this node's claim, or inserts the record
/// unless a live one is there (another request with the key got there first; a concurrent
/// insert of the key waits for that transaction, then sees its row).
async fn write_idempotency(
    tx: &deadpool_postgres::Transaction<'_>,
    scope: &Scope,
    w: &IdempotencyWrite,
    node: i64,
) -> StoreResult<()> {
    let live = scope.livemode();
    let status = w.response.status as i64;
    if w.claimed {
        let n = exec(tx,
            "UPDATE idempotency_keys SET state = 'done', status = $1, body = $2, node = NULL
             WHERE account_id = $3 AND livemode = $4 AND key = $5 AND state = 'running' AND node = $6",
            &[&status, &w.response.body, &scope.account, &live, &w.key, &node],
        )
        .await
        .map_err(|e| classify("complete idempotency", e))?;
        if n != 1 {
            // Another node took the claim over (this one was taken for dead): apply nothing.
            return Err(StoreError::Unavailable {
                message: format!("the claim of idempotency key {} was lost", w.key),
                source: None,
            });
        }
        return Ok(());
    }
    let sql = format!(
        "INSERT INTO idempotency_keys (account_id, livemode, key, fingerprint, state, status, body, created, locked_at)
         VALUES ($1, $2, $3, $4, 'done', $5, $6, $7, $7)
         ON CONFLICT (account_id, livemode, key) DO UPDATE SET
           fingerprint = excluded.fingerprint, state = 'done', status = excluded.status,
           body = excluded.body, created = excluded.created, locked_at = excluded.locked_at, node = NULL
         WHERE idempotency_keys.created < $8
            OR (idempotency_keys.state = 'running' AND idempotency_keys.fingerprint = excluded.fingerprint
                AND idempotency_keys.node IS NOT NULL AND {})",
        node::NODE_GONE
    );
    let expired = w.created - IDEMPOTENCY_TTL_SECS;
    let n = exec(
        tx,
        &sql,
        &[
            &scope.account,
            &live,
            &w.key,
            &w.fingerprint,
            &status,
            &w.response.body,
            &w.created,
            &expired,
        ],
    )
    .await
    .map_err(|e| classify("insert idempotency", e))?;
    if n != 1 {
        return Err(StoreError::IdempotencyKeyTaken(w.key.clone()));
    }
    Ok(())
}

/// A key's record as (fingerprint, state, status, body, created, its node is gone).
type KeyRow = (String, String, Option<i64>, Option<Vec<u8>>, i64, bool);

/// What `row` (the record under a key, if any) means for a request with `fingerprint`: a
/// running claim whose node is gone counts as free (see [`node`]).
fn key_state(row: Option<KeyRow>, fingerprint: &str, now: i64) -> KeyState {
    let Some((stored_fp, state, status, body, created, node_gone)) = row else {
        return KeyState::Free;
    };
    if created < now - IDEMPOTENCY_TTL_SECS
        || (stored_fp == fingerprint && state == "running" && node_gone)
    {
        return KeyState::Free;
    }
    if stored_fp != fingerprint {
        return KeyState::Mismatch;
    }
    match (state.as_str(), status, body) {
        ("done", Some(status), Some(body)) => KeyState::Replay(StoredResponse {
            status: status as u16,
            body,
        }),
        _ => KeyState::InProgress,
    }
}

/// Reads the record under a key; `lock` takes its row lock until the transaction ends.
async fn idempotency_row<C: GenericClient>(
    c: &C,
    scope: &Scope,
    key: &str,
    lock: bool,
) -> StoreResult<Option<KeyRow>> {
    let sql = format!(
        "SELECT fingerprint, state, status, body, created, node IS NOT NULL AND {} FROM idempotency_keys
         WHERE account_id = $1 AND livemode = $2 AND key = $3{}",
        node::NODE_GONE,
        if lock { " FOR UPDATE" } else { "" }
    );
    let rows = query(c, &sql, &[&scope.account, &scope.livemode(), &key])
        .await
        .map_err(|e| classify("find idempotency", e))?;
    Ok(rows
        .first()
        .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3), r.get(4), r.get(5))))
}

/// The outbox: a pending delivery for every enabled endpoint of the scope that wants the event.
async fn fan_out(
    tx: &deadpool_postgres::Transaction<'_>,
    scope: &Scope,
    event: &str,
    event_type: &str,
    created: i64,
) -> StoreResult<()> {
    let live = scope.livemode();
    let pattern = format!(",{event_type},");
    let rows = query(tx,
            "SELECT id FROM webhook_endpoints WHERE account_id = $1 AND livemode = $2 AND status = 'enabled'
             AND (enabled_events = '*' OR strpos(enabled_events, $3) > 0)",
            &[&scope.account, &live, &pattern],
        )
        .await
        .map_err(|e| classify("fan out", e))?;
    let due = created * 1000;
    for row in rows {
        let endpoint: String = row.get(0);
        exec(tx,
            "INSERT INTO webhook_deliveries (id, account_id, livemode, event_id, endpoint_id, status, next_attempt_at, created)
             VALUES ($1, $2, $3, $4, $5, 'pending', $6, $7)",
            &[&ids::generate(IdKind::WebhookDelivery), &scope.account, &live, &event, &endpoint, &due, &created],
        )
        .await
        .map_err(|e| classify("insert delivery", e))?;
    }
    Ok(())
}

const ACCOUNT_COLUMNS: &str = "id, email, name, password_hash, created, public_email";

fn account_row(r: &Row) -> AccountRecord {
    AccountRecord {
        id: r.get(0),
        email: r.get(1),
        name: r.get(2),
        password_hash: r.get(3),
        created: r.get(4),
        public_email: r.get(5),
    }
}

const KEY_COLUMNS: &str =
    "id, account_id, mode, kind, key_hash, public_value, last4, created, expires_at, revoked";

fn key_row(r: &Row) -> ApiKeyRecord {
    ApiKeyRecord {
        id: r.get(0),
        account: r.get(1),
        mode: mode_from(r.get(2)),
        kind: if r.get::<_, &str>(3) == "secret" {
            KeyKind::Secret
        } else {
            KeyKind::Publishable
        },
        key_hash: r.get(4),
        public_value: r.get(5),
        last4: r.get(6),
        created: r.get(7),
        expires_at: r.get(8),
        revoked: r.get(9),
    }
}

async fn insert_key<C: GenericClient>(c: &C, k: &ApiKeyRecord) -> StoreResult<()> {
    c.execute(
        &format!(
            "INSERT INTO api_keys ({KEY_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"
        ),
        &[
            &k.id,
            &k.account,
            &k.mode.as_str(),
            &k.kind.as_str(),
            &k.key_hash,
            &k.public_value,
            &k.last4,
            &k.created,
            &k.expires_at,
            &k.revoked,
        ],
    )
    .await
    .map(|_| ())
    .map_err(|e| classify("insert key", e))
}

const DELIVERY_COLUMNS: &str =
    "id, event_id, endpoint_id, status, next_attempt_at, attempts::text, created";

fn delivery_row(r: &Row) -> DeliveryRecord {
    DeliveryRecord {
        id: r.get(0),
        event_id: r.get(1),
        endpoint_id: r.get(2),
        status: r.get(3),
        next_attempt_at_ms: r.get(4),
        attempts: r.get(5),
        created: r.get(6),
    }
}

fn session_row(r: &Row) -> SessionRecord {
    SessionRecord {
        token_hash: r.get(0),
        account: r.get(1),
        csrf_token: r.get(2),
        mode: mode_from(r.get(3)),
        created: r.get(4),
        expires_at: r.get(5),
    }
}

impl PgStore {
    async fn client(&self) -> StoreResult<deadpool_postgres::Object> {
        self.pool.get().await.map_err(pool_error)
    }

    /// Runs `f` in a transaction and commits it (durably: synchronous_commit is on).
    async fn in_transaction<R, F>(&self, f: F) -> StoreResult<R>
    where
        F: for<'a> FnOnce(
            &'a deadpool_postgres::Transaction<'a>,
        ) -> std::pin::Pin<
            Box<dyn std::future::Future<Output = StoreResult<R>> + Send + 'a>,
        >,
    {
        let mut client = self.client().await?;
        let tx = client
            .transaction()
            .await
            .map_err(|e| classify("begin", e))?;
        let out = f(&tx).await?;
        tx.commit().await.map_err(|e| classify("commit", e))?;
        Ok(out)
    }
}

#[async_trait]
impl Store for PgStore {
    async fn find_record(
        &self,
        scope: &Scope,
        collection: Collection,
        id: &str,
    ) -> StoreResult<Option<Record>> {
        let client = self.client().await?;
        find_record(&client, scope, collection, id).await
    }

    async fn list_records(
        &self,
        scope: &Scope,
        collection: Collection,
        q: &ListQuery,
    ) -> StoreResult<Page> {
        let client = self.client().await?;
        let t = table(collection);
        let live = scope.livemode();
        let mut sql =
            format!("SELECT id, version, body FROM {t} WHERE account_id = $1 AND livemode = $2");
        let mut strings: Vec<String> = Vec::new();
        let mut ints: Vec<i64> = Vec::new();
        // Placeholders are numbered in the order values are pushed below.
        enum V {
            S(usize),
            I(usize),
        }
        let mut order: Vec<V> = Vec::new();
        for (field, value) in &q.filters {
            strings.push(value.clone());
            order.push(V::S(strings.len() - 1));
            sql.push_str(&format!(" AND {} = ${}", column(*field), order.len() + 2));
        }
        for (op, bound) in [
            (">", q.created.gt),
            (">=", q.created.gte),
            ("<", q.created.lt),
            ("<=", q.created.lte),
        ] {
            if let Some(b) = bound {
                ints.push(b);
                order.push(V::I(ints.len() - 1));
                sql.push_str(&format!(" AND created {op} ${}", order.len() + 2));
            }
        }
        let cursor_seq = |id: String| {
            let client = &client;
            async move {
                let row = client
                    .query_opt(
                        &format!("SELECT seq FROM {t} WHERE id = $1 AND account_id = $2 AND livemode = $3"),
                        &[&id, &scope.account, &live],
                    )
                    .await
                    .map_err(|e| classify("cursor", e))?;
                row.map(|r| r.get::<_, i64>(0))
                    .ok_or(StoreError::CursorNotFound(id))
            }
        };
        let ascending = match &q.cursor {
            Cursor::Newest => false,
            Cursor::StartingAfter(id) => {
                ints.push(cursor_seq(id.clone()).await?);
                order.push(V::I(ints.len() - 1));
                sql.push_str(&format!(" AND seq < ${}", order.len() + 2));
                false
            }
            Cursor::EndingBefore(id) => {
                ints.push(cursor_seq(id.clone()).await?);
                order.push(V::I(ints.len() - 1));
                sql.push_str(&format!(" AND seq > ${}", order.len() + 2));
                true
            }
        };
        ints.push(q.limit as i64 + 1);
        order.push(V::I(ints.len() - 1));
        sql.push_str(&format!(
            " ORDER BY seq {} LIMIT ${}",
            if ascending { "ASC" } else { "DESC" },
            order.len() + 2
        ));
        let mut params: Vec<Param> = vec![&scope.account, &live];
        for v in &order {
            match v {
                V::S(i) => params.push(&strings[*i]),
                V::I(i) => params.push(&ints[*i]),
            }
        }
        let stmt = client
            .prepare_cached(&sql)
            .await
            .map_err(|e| classify("list", e))?;
        let rows = client
            .query(&stmt, &params)
            .await
            .map_err(|e| classify("list", e))?;
        let mut records: Vec<Record> = rows.iter().map(record).collect();
        let has_more = records.len() > q.limit as usize;
        records.truncate(q.limit as usize);
        if ascending {
            records.reverse();
        }
        Ok(Page { records, has_more })
    }

    async fn commit(&self, batch: WriteBatch) -> StoreResult<()> {
        let node = self.node.key;
        self.in_transaction(move |tx| Box::pin(async move { apply_batch(tx, &batch, node).await }))
            .await
    }

    async fn find_idempotency(
        &self,
        scope: &Scope,
        key: &str,
        fingerprint: &str,
        now: i64,
    ) -> StoreResult<KeyState> {
        let client = self.client().await?;
        Ok(key_state(
            idempotency_row(&client, scope, key, false).await?,
            fingerprint,
            now,
        ))
    }

    async fn claim_idempotency(
        &self,
        scope: &Scope,
        key: &str,
        fingerprint: &str,
        now: i64,
    ) -> StoreResult<KeyState> {
        const CLAIM: &str = "INSERT INTO idempotency_keys (account_id, livemode, key, fingerprint, state, created, locked_at, node)
             VALUES ($1, $2, $3, $4, 'running', $5, $5, $6) ON CONFLICT DO NOTHING";
        // The common case, a new key, is one autocommitted statement (one round trip, no
        // BEGIN/COMMIT); an existing key is examined under a row lock below.
        {
            let client = self.client().await?;
            let inserted = exec(
                &client,
                CLAIM,
                &[
                    &scope.account,
                    &scope.livemode(),
                    &key,
                    &fingerprint,
                    &now,
                    &self.node.key,
                ],
            )
            .await
            .map_err(|e| classify("claim idempotency", e))?;
            if inserted == 1 {
                return Ok(KeyState::Free);
            }
        }
        let (scope, key, fingerprint) = (scope.clone(), key.to_string(), fingerprint.to_string());
        let node = self.node.key;
        self.in_transaction(move |tx| {
            Box::pin(async move {
                let live = scope.livemode();
                let inserted = exec(tx, CLAIM, &[&scope.account, &live, &key, &fingerprint, &now, &node])
                    .await
                    .map_err(|e| classify("claim idempotency", e))?;
                if inserted == 1 {
                    return Ok(KeyState::Free);
                }
                // The row exists: lock it, so two nodes cannot both take over a stale claim.
                let row = idempotency_row(tx, &scope, &key, true).await?;
                let state = key_state(row, &fingerprint, now);
                if state == KeyState::Free {
                    exec(tx,
                        "UPDATE idempotency_keys SET fingerprint = $4, state = 'running', status = NULL, body = NULL,
                         created = $5, locked_at = $5, node = $6 WHERE account_id = $1 AND livemode = $2 AND key = $3",
                        &[&scope.account, &live, &key, &fingerprint, &now, &node],
                    )
                    .await
                    .map_err(|e| classify("claim idempotency", e))?;
                }
                Ok(state)
            })
        })
        .await
    }

    async fn release_idempotency(&self, scope: &Scope, key: &str) -> StoreResult<()> {
        let client = self.client().await?;
        client
            .execute(
                "DELETE FROM idempotency_keys WHERE account_id = $1 AND livemode = $2 AND key = $3 AND state = 'running'",
                &[&scope.account, &scope.livemode(), &key],
            )
            .await
            .map(|_| ())
            .map_err(|e| classify("release idempotency", e))
    }

    async fn purge_idempotency(&self, before: i64) -> StoreResult<u64> {
        let client = self.client().await?;
        client
            .execute(
                "DELETE FROM idempotency_keys WHERE created < $1",
                &[&before],
            )
            .await
            .map_err(|e| classify("purge idempotency", e))
    }

    async fn insert_account(
        &self,
        account: AccountRecord,
        keys: Vec<ApiKeyRecord>,
    ) -> StoreResult<()> {
        self.in_transaction(move |tx| {
            Box::pin(async move {
                tx.execute(
                    &format!(
                        "INSERT INTO accounts ({ACCOUNT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6)"
                    ),
                    &[
                        &account.id,
                        &account.email,
                        &account.name,
                        &account.password_hash,
                        &account.created,
                        &account.public_email,
                    ],
                )
                .await
                .map_err(|e| classify("insert account", e))?;
                for k in &keys {
                    insert_key(tx, k).await?;
                }
                Ok(())
            })
        })
        .await
    }

    async fn find_account(&self, id: &str) -> StoreResult<Option<AccountRecord>> {
        let client = self.client().await?;
        let row = client
            .query_opt(
                &format!("SELECT {ACCOUNT_COLUMNS} FROM accounts WHERE id = $1"),
                &[&id],
            )
            .await
            .map_err(|e| classify("find account", e))?;
        Ok(row.as_ref().map(account_row))
    }

    async fn find_account_by_email(&self, email: &str) -> StoreResult<Option<AccountRecord>> {
        let client = self.client().await?;
        let row = client
            .query_opt(
                &format!("SELECT {ACCOUNT_COLUMNS} FROM accounts WHERE lower(email) = lower($1)"),
                &[&email],
            )
            .await
            .map_err(|e| classify("find account", e))?;
        Ok(row.as_ref().map(account_row))
    }

    async fn list_accounts(&self) -> StoreResult<Vec<AccountRecord>> {
        let client = self.client().await?;
        let rows = client
            .query(
                &format!("SELECT {ACCOUNT_COLUMNS} FROM accounts ORDER BY created, id"),
                &[],
            )
            .await
            .map_err(|e| classify("list accounts", e))?;
        Ok(rows.iter().map(account_row).collect())
    }

    async fn update_account_profile(
        &self,
        account: &str,
        name: Option<&str>,
        public_email: Option<&str>,
    ) -> StoreResult<()> {
        let client = self.client().await?;
        client
            .execute(
                "UPDATE accounts SET name = $1, public_email = $2 WHERE id = $3",
                &[&name, &public_email, &account],
            )
            .await
            .map(|_| ())
            .map_err(|e| classify("update profile", e))
    }

    async fn update_account_password(
        &self,
        account: &str,
        password_hash: &str,
        keep_session: Option<&str>,
    ) -> StoreResult<()> {
        let (account, hash) = (account.to_string(), password_hash.to_string());
        let keep = keep_session.unwrap_or_default().to_string();
        self.in_transaction(move |tx| {
            Box::pin(async move {
                tx.execute(
                    "UPDATE accounts SET password_hash = $1 WHERE id = $2",
                    &[&hash, &account],
                )
                .await
                .map_err(|e| classify("update password", e))?;
                tx.execute(
                    "DELETE FROM dashboard_sessions WHERE account_id = $1 AND token_hash <> $2",
                    &[&account, &keep],
                )
                .await
                .map(|_| ())
                .map_err(|e| classify("end sessions", e))
            })
        })
        .await
    }

    async fn claim_setting(&self, name: &str, value: &str) -> StoreResult<String> {
        let client = self.client().await?;
        client
            .execute(
                "INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING",
                &[&name, &value],
            )
            .await
            .map_err(|e| classify("claim setting", e))?;
        client
            .query_one("SELECT value FROM settings WHERE name = $1", &[&name])
            .await
            .map(|r| r.get(0))
            .map_err(|e| classify("read setting", e))
    }

    async fn count_accounts(&self) -> StoreResult<u64> {
        let client = self.client().await?;
        let row = client
            .query_one("SELECT COUNT(*) FROM accounts", &[])
            .await
            .map_err(|e| classify("count", e))?;
        Ok(row.get::<_, i64>(0) as u64)
    }

    /// Served from the [`KeyCache`] when this key was found in the last few seconds.
    async fn find_api_key(&self, key_hash: &str) -> StoreResult<Option<ApiKeyRecord>> {
        if let Some(record) = self.keys.get(key_hash) {
            return Ok(Some(record));
        }
        let client = self.client().await?;
        let stmt = client
            .prepare_cached(&format!(
                "SELECT {KEY_COLUMNS} FROM api_keys WHERE key_hash = $1"
            ))
            .await
            .map_err(|e| classify("find api key", e))?;
        let row = client
            .query_opt(&stmt, &[&key_hash])
            .await
            .map_err(|e| classify("find api key", e))?;
        let found = row.as_ref().map(key_row);
        if let Some(record) = &found {
            self.keys.put(record);
        }
        Ok(found)
    }

    async fn list_api_keys(&self, account: &str) -> StoreResult<Vec<ApiKeyRecord>> {
        let client = self.client().await?;
        let rows = client
            .query(&format!("SELECT {KEY_COLUMNS} FROM api_keys WHERE account_id = $1 ORDER BY created DESC, id"), &[&account])
            .await
            .map_err(|e| classify("list keys", e))?;
        Ok(rows.iter().map(key_row).collect())
    }

    async fn insert_api_key(&self, key: ApiKeyRecord) -> StoreResult<()> {
        let client = self.client().await?;
        let result = insert_key(&client, &key).await;
        self.keys.clear();
        result
    }

    async fn update_api_key(
        &self,
        account: &str,
        key_id: &str,
        expires_at: Option<i64>,
        revoked: bool,
    ) -> StoreResult<()> {
        let client = self.client().await?;
        let result = client
            .execute(
                "UPDATE api_keys SET expires_at = $1, revoked = $2 WHERE id = $3 AND account_id = $4",
                &[&expires_at, &revoked, &key_id, &account],
            )
            .await
            .map(|_| ())
            .map_err(|e| classify("update key", e));
        // On this node the change takes effect at once; other nodes see it within the TTL.
        self.keys.clear();
        result
    }

    async fn insert_session(&self, s: SessionRecord) -> StoreResult<()> {
        let client = self.client().await?;
        client
            .execute(
                "INSERT INTO dashboard_sessions (token_hash, account_id, csrf_token, mode, created, expires_at) VALUES ($1, $2, $3, $4, $5, $6)",
                &[&s.token_hash, &s.account, &s.csrf_token, &s.mode.as_str(), &s.created, &s.expires_at],
            )
            .await
            .map(|_| ())
            .map_err(|e| classify("insert session", e))
    }

    async fn find_session(&self, token_hash: &str, now: i64) -> StoreResult<Option<SessionRecord>> {
        let client = self.client().await?;
        let row = client
            .query_opt(
                "SELECT token_hash, account_id, csrf_token, mode, created, expires_at FROM dashboard_sessions
                 WHERE token_hash = $1 AND expires_at > $2",
                &[&token_hash, &now],
            )
            .await
            .map_err(|e| classify("find session", e))?;
        Ok(row.as_ref().map(session_row))
    }

    async fn update_session_mode(&self, token_hash: &str, mode: Mode) -> StoreResult<()> {
        let client = self.client().await?;
        client
            .execute(
                "UPDATE dashboard_sessions SET mode = $1 WHERE token_hash = $2",
                &[&mode.as_str(), &token_hash],
            )
            .await
            .map(|_| ())
            .map_err(|e| classify("update session", e))
    }

    async fn delete_session(&self, token_hash: &str) -> StoreResult<()> {
        let client = self.client().await?;
        client
            .execute(
                "DELETE FROM dashboard_sessions WHERE token_hash = $1",
                &[&token_hash],
            )
            .await
            .map(|_| ())
            .map_err(|e| classify("delete session", e))
    }

    async fn count_pending_deliveries(&self) -> StoreResult<u64> {
        let client = self.client().await?;
        let row = client
            .query_one(
                "SELECT COUNT(*) FROM webhook_deliveries WHERE status = 'pending'",
                &[],
            )
            .await
            .map_err(|e| classify("count deliveries", e))?;
        Ok(row.get::<_, i64>(0) as u64)
    }

    async fn check_ready(&self) -> StoreResult<()> {
        let client = self.client().await?;
        let found: i64 = client
            .query_one(
                "SELECT COALESCE(MAX(version), 0) FROM schema_migrations",
                &[],
            )
            .await
            .map_err(|e| classify("schema version", e))?
            .get(0);
        let expected = migrate::latest_version();
        if found < expected {
            return Err(StoreError::Unavailable {
                message: format!("schema version {found}, this build needs {expected}"),
                source: None,
            });
        }
        Ok(())
    }

    fn pool_status(&self) -> (usize, usize) {
        let s = self.pool.status();
        (s.size.saturating_sub(s.available), s.available)
    }

    async fn find_payment_for_receipt(&self, id: &str) -> StoreResult<Option<(Scope, Record)>> {
        let client = self.client().await?;
        let row = client
            .query_opt(
                "SELECT account_id, livemode, id, version, body FROM payments WHERE id = $1",
                &[&id],
            )
            .await
            .map_err(|e| classify("find payment", e))?;
        Ok(row.map(|r| {
            (
                scope_from(r.get(0), r.get(1)),
                Record {
                    id: r.get(2),
                    version: r.get(3),
                    body: r.get(4),
                },
            )
        }))
    }

    async fn find_sealed(&self, scope: &Scope, owner: &str) -> StoreResult<Option<String>> {
        let client = self.client().await?;
        let row = client
            .query_opt(
                "SELECT sealed FROM sealed_values WHERE owner_id = $1 AND account_id = $2 AND livemode = $3",
                &[&owner, &scope.account, &scope.livemode()],
            )
            .await
            .map_err(|e| classify("find sealed", e))?;
        Ok(row.map(|r| r.get(0)))
    }

    async fn claim_tasks(
        &self,
        now: i64,
        lease_until: i64,
        limit: usize,
    ) -> StoreResult<Vec<ClaimedTask>> {
        let limit = limit as i64;
        let client = self.client().await?;
        let rows = client
            .query(
                "UPDATE scheduled_tasks SET lease_until = $2 WHERE id IN (
                    SELECT id FROM scheduled_tasks WHERE due_at <= $1 AND (lease_until IS NULL OR lease_until < $1)
                    ORDER BY due_at LIMIT $3 FOR UPDATE SKIP LOCKED)
                 RETURNING id, account_id, livemode, kind, object_id",
                &[&now, &lease_until, &limit],
            )
            .await
            .map_err(|e| classify("claim tasks", e))?;
        Ok(rows
            .iter()
            .map(|r| ClaimedTask {
                id: r.get(0),
                scope: scope_from(r.get(1), r.get(2)),
                kind: r.get(3),
                object_id: r.get(4),
            })
            .collect())
    }

    async fn claim_deliveries(&self, claim: DeliveryClaim) -> StoreResult<Vec<ClaimedDelivery>> {
        use std::collections::HashMap;
        use tender_core::webhook::{fair_pick, DueDelivery, CANDIDATES_PER_SCOPE};
        let client = self.client().await?;
        let now_ms = claim.now_ms;
        let mut busy_accounts: HashMap<(String, bool), usize> = HashMap::new();
        let mut busy_endpoints: HashMap<String, usize> = HashMap::new();
        let busy = client
            .query(
                "SELECT account_id, livemode, endpoint_id FROM webhook_deliveries
                 WHERE lease_until IS NOT NULL AND lease_until >= $1 AND status = 'pending'",
                &[&now_ms],
            )
            .await
            .map_err(|e| classify("claim deliveries", e))?;
        for r in &busy {
            *busy_accounts.entry((r.get(0), r.get(1))).or_insert(0) += 1;
            *busy_endpoints.entry(r.get(2)).or_insert(0) += 1;
        }
        // As on SQLite: each account and mode's oldest few (an index range each, through
        // LATERAL), plus the oldest overall; `fair_pick` chooses among them.
        let limit = claim.limit as i64;
        let rows = client
            .query(
                "SELECT d.id, s.account_id, s.livemode, d.endpoint_id, d.next_attempt_at
                 FROM (SELECT DISTINCT account_id, livemode FROM webhook_endpoints) s
                 CROSS JOIN LATERAL (
                    SELECT id, endpoint_id, next_attempt_at FROM webhook_deliveries w
                    WHERE w.account_id = s.account_id AND w.livemode = s.livemode AND w.status = 'pending'
                      AND w.next_attempt_at <= $1 AND (w.lease_until IS NULL OR w.lease_until < $1)
                    ORDER BY w.next_attempt_at LIMIT $3) d
                 UNION
                 SELECT id, account_id, livemode, endpoint_id, next_attempt_at FROM (
                    SELECT id, account_id, livemode, endpoint_id, next_attempt_at FROM webhook_deliveries
                    WHERE status = 'pending' AND next_attempt_at <= $1 AND (lease_until IS NULL OR lease_until < $1)
                    ORDER BY next_attempt_at LIMIT $2) oldest",
                &[&now_ms, &limit, &CANDIDATES_PER_SCOPE],
            )
            .await
            .map_err(|e| classify("claim deliveries", e))?;
        let candidates = rows
            .iter()
            .map(|r| DueDelivery {
                id: r.get(0),
                scope: (r.get(1), r.get(2)),
                endpoint_id: r.get(3),
                next_attempt_at_ms: r.get(4),
            })
            .collect();
        let ids = fair_pick(
            candidates,
            &busy_accounts,
            &busy_endpoints,
            claim.per_account,
            claim.per_endpoint,
            claim.limit,
        );
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        // The lease re-checks each row: another node that leased it meanwhile wins.
        let rows = client
            .query(
                "WITH claimed AS (
                    UPDATE webhook_deliveries SET lease_until = $2
                    WHERE id = ANY($3) AND status = 'pending'
                      AND (lease_until IS NULL OR lease_until < $1)
                    RETURNING id, account_id, livemode, event_id, endpoint_id, attempts)
                 SELECT c.id, c.account_id, c.livemode, c.event_id, e.body, c.endpoint_id, w.body, s.sealed,
                        h.failing_since, jsonb_array_length(c.attempts)
                 FROM claimed c
                 JOIN events e ON e.id = c.event_id
                 LEFT JOIN webhook_endpoints w ON w.id = c.endpoint_id
                 LEFT JOIN sealed_values s ON s.owner_id = c.endpoint_id
                 LEFT JOIN webhook_endpoint_health h ON h.endpoint_id = c.endpoint_id",
                &[&now_ms, &claim.lease_until_ms, &ids],
            )
            .await
            .map_err(|e| classify("claim deliveries", e))?;
        Ok(rows
            .iter()
            .map(|r| ClaimedDelivery {
                id: r.get(0),
                scope: scope_from(r.get(1), r.get(2)),
                event_id: r.get(3),
                event_body: r.get(4),
                endpoint_id: r.get(5),
                endpoint_body: r.get(6),
                endpoint_secrets: r.get(7),
                endpoint_failing_since: r.get(8),
                attempts_made: r.get::<_, i32>(9) as usize,
            })
            .collect())
    }

    async fn record_delivery_attempt(&self, rec: DeliveryAttemptRecord) -> StoreResult<()> {
        self.in_transaction(move |tx| {
            Box::pin(async move {
                tx.execute(
                    "UPDATE webhook_deliveries SET attempts = attempts || jsonb_build_array($1::text::jsonb), status = $2,
                     next_attempt_at = $3, lease_until = NULL WHERE id = $4",
                    &[&rec.attempt, &rec.status, &rec.next_attempt_at_ms, &rec.delivery_id],
                )
                .await
                .map_err(|e| classify("record attempt", e))?;
                tx.execute(
                    "INSERT INTO webhook_endpoint_health (endpoint_id, failing_since) VALUES ($1, $2)
                     ON CONFLICT (endpoint_id) DO UPDATE SET failing_since = excluded.failing_since",
                    &[&rec.endpoint_id, &rec.endpoint_failing_since],
                )
                .await
                .map_err(|e| classify("endpoint health", e))?;
                Ok(())
            })
        })
        .await
    }

    async fn list_deliveries(
        &self,
        scope: &Scope,
        event_id: &str,
    ) -> StoreResult<Vec<DeliveryRecord>> {
        let client = self.client().await?;
        let rows = client
            .query(
                &format!(
                    "SELECT {DELIVERY_COLUMNS} FROM webhook_deliveries WHERE account_id = $1 AND livemode = $2 AND event_id = $3 ORDER BY seq"
                ),
                &[&scope.account, &scope.livemode(), &event_id],
            )
            .await
            .map_err(|e| classify("list deliveries", e))?;
        Ok(rows.iter().map(delivery_row).collect())
    }

    async fn schedule_delivery(
        &self,
        scope: &Scope,
        event_id: &str,
        endpoint_id: &str,
        now_ms: i64,
    ) -> StoreResult<DeliveryRecord> {
        let client = self.client().await?;
        let created = now_ms / 1000;
        let row = client
            .query_one(
                &format!(
                    "INSERT INTO webhook_deliveries (id, account_id, livemode, event_id, endpoint_id, status, next_attempt_at, created)
                     VALUES ($1, $2, $3, $4, $5, 'pending', $6, $7)
                     ON CONFLICT (event_id, endpoint_id) DO UPDATE SET status = 'pending', next_attempt_at = excluded.next_attempt_at
                     RETURNING {DELIVERY_COLUMNS}"
                ),
                &[
                    &ids::generate(IdKind::WebhookDelivery),
                    &scope.account,
                    &scope.livemode(),
                    &event_id,
                    &endpoint_id,
                    &now_ms,
                    &created,
                ],
            )
            .await
            .map_err(|e| classify("schedule delivery", e))?;
        Ok(delivery_row(&row))
    }
}
