//! The queues on SQLite: webhook deliveries (leased by [`claim_deliveries`], attempts recorded by
//! [`record_attempt`], listed, rescheduled, counted) and scheduled tasks (leased by
//! `claim_tasks`).
//!
//! - Leases are taken on the writer, so no other worker takes a leased delivery or task until its
//!   lease runs out; recording an attempt releases the delivery's lease.
//! - A delivery claim looks only at each account and mode's oldest few due deliveries plus the
//!   oldest overall, and lets `tender_core::webhooks::webhook::fair_pick` choose: the cost grows with the
//!   number of scopes, not with the backlog.
//! - Deliveries are created by the outbox (in [`super::documents`], in their event's batch) or by
//!   `schedule_delivery`: one per event and endpoint.
//!
//! Depends on the parent module's connection helpers and shared row helpers.

use async_trait::async_trait;
use rusqlite::{params, Connection};
use std::collections::HashMap;
use tender_core::auth::Scope;
use tender_core::ids::{self, IdKind};
use tender_core::store::{
    ClaimedDelivery, ClaimedTask, DeliveryAttemptRecord, DeliveryClaim, DeliveryRecord, QueueStore,
    StoreResult,
};
use tender_core::webhooks::webhook::{fair_pick, DueDelivery, CANDIDATES_PER_SCOPE};

use super::{classify, scope_from, Document, SqliteStore};

/// Leases what `tender_core::webhooks::webhook::fair_pick` chooses among the due deliveries: each
/// account and mode's oldest few (an index range each; scopes come from the endpoints table,
/// which is small), plus the oldest overall (deliveries of deleted endpoints, whose scope may
/// have no endpoint left). The cost grows with the number of scopes, not with the backlog.
fn claim_deliveries(conn: &Connection, claim: DeliveryClaim) -> StoreResult<Vec<ClaimedDelivery>> {
    let (busy_accounts, busy_endpoints) = leased(conn, claim.now_ms)?;
    let candidates = due_candidates(conn, &claim, &busy_accounts)?;
    let ids = fair_pick(
        candidates,
        &busy_accounts,
        &busy_endpoints,
        claim.per_account,
        claim.per_endpoint,
        claim.limit,
    );
    ids.into_iter()
        .map(|id| lease(conn, &id, claim.lease_until_ms))
        .collect()
}

/// How many deliveries each account (and mode) and each endpoint has in flight at `now_ms`.
#[allow(clippy::type_complexity)]
fn leased(
    conn: &Connection,
    now_ms: i64,
) -> StoreResult<(HashMap<(String, bool), usize>, HashMap<String, usize>)> {
    let mut busy_accounts: HashMap<(String, bool), usize> = HashMap::new();
    let mut busy_endpoints: HashMap<String, usize> = HashMap::new();
    let busy: Vec<(String, bool, String)> = conn
        .prepare_cached(
            "SELECT account_id, livemode, endpoint_id FROM webhook_deliveries
             WHERE lease_until IS NOT NULL AND lease_until >= ?1 AND status = 'pending'",
        )
        .and_then(|mut s| {
            s.query_map([now_ms], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
                .collect::<Result<Vec<_>, _>>()
        })
        .map_err(|e| classify("claim deliveries", e))?;
    for (account, live, endpoint) in busy {
        *busy_accounts.entry((account, live)).or_insert(0) += 1;
        *busy_endpoints.entry(endpoint).or_insert(0) += 1;
    }
    Ok((busy_accounts, busy_endpoints))
}

/// The due deliveries [`fair_pick`] chooses among: each scope's oldest few (a scope at its
/// limit skipped) and the oldest overall.
fn due_candidates(
    conn: &Connection,
    claim: &DeliveryClaim,
    busy_accounts: &HashMap<(String, bool), usize>,
) -> StoreResult<Vec<DueDelivery>> {
    let now_ms = claim.now_ms;
    let due_row = |r: &rusqlite::Row<'_>| {
        Ok(DueDelivery {
            id: r.get(0)?,
            scope: (r.get(1)?, r.get(2)?),
            endpoint_id: r.get(3)?,
            next_attempt_at_ms: r.get(4)?,
        })
    };
    let mut candidates: HashMap<String, DueDelivery> = HashMap::new();
    let scopes: Vec<(String, bool)> = conn
        .prepare_cached("SELECT DISTINCT account_id, livemode FROM webhook_endpoints")
        .and_then(|mut s| {
            s.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<Result<Vec<_>, _>>()
        })
        .map_err(|e| classify("claim deliveries", e))?;
    for (account, live) in scopes {
        if busy_accounts
            .get(&(account.clone(), live))
            .copied()
            .unwrap_or(0)
            >= claim.per_account
        {
            continue;
        }
        let rows = conn
            .prepare_cached(
                "SELECT id, account_id, livemode, endpoint_id, next_attempt_at FROM webhook_deliveries
                 WHERE account_id = ?1 AND livemode = ?2 AND status = 'pending' AND next_attempt_at <= ?3
                   AND (lease_until IS NULL OR lease_until < ?3)
                 ORDER BY next_attempt_at LIMIT ?4",
            )
            .and_then(|mut s| {
                s.query_map(params![account, live, now_ms, CANDIDATES_PER_SCOPE], due_row)?
                    .collect::<Result<Vec<_>, _>>()
            })
            .map_err(|e| classify("claim deliveries", e))?;
        candidates.extend(rows.into_iter().map(|d| (d.id.clone(), d)));
    }
    let oldest = conn
        .prepare_cached(
            "SELECT id, account_id, livemode, endpoint_id, next_attempt_at FROM webhook_deliveries
             WHERE status = 'pending' AND next_attempt_at <= ?1 AND (lease_until IS NULL OR lease_until < ?1)
             ORDER BY next_attempt_at LIMIT ?2",
        )
        .and_then(|mut s| {
            s.query_map(params![now_ms, claim.limit as i64], due_row)?
                .collect::<Result<Vec<_>, _>>()
        })
        .map_err(|e| classify("claim deliveries", e))?;
    candidates.extend(oldest.into_iter().map(|d| (d.id.clone(), d)));
    Ok(candidates.into_values().collect())
}

/// Delivery `id` leased until `lease_until_ms`, with what its attempt needs (the event, the
/// endpoint, its sealed secrets and health).
fn lease(conn: &Connection, id: &str, lease_until_ms: i64) -> StoreResult<ClaimedDelivery> {
    conn.prepare_cached("UPDATE webhook_deliveries SET lease_until = ?1 WHERE id = ?2")
        .and_then(|mut s| s.execute(params![lease_until_ms, id]))
        .map_err(|e| classify("lease delivery", e))?;
    let row = conn
        .prepare_cached(
            "SELECT d.id, d.account_id, d.livemode, d.event_id, e.body, d.endpoint_id, w.body, s.sealed,
                    h.failing_since, json_array_length(d.attempts), d.variant
             FROM webhook_deliveries d
             JOIN events e ON e.id = d.event_id
             LEFT JOIN webhook_endpoints w ON w.id = d.endpoint_id
             LEFT JOIN sealed_values s ON s.owner_id = d.endpoint_id
             LEFT JOIN webhook_endpoint_health h ON h.endpoint_id = d.endpoint_id
             WHERE d.id = ?1",
        )
        .and_then(|mut s| {
            s.query_row([&id], |r| {
                Ok(ClaimedDelivery {
                    id: r.get(0)?,
                    scope: scope_from(r.get(1)?, r.get(2)?),
                    event_id: r.get(3)?,
                    event_body: r.get::<_, Document>(4)?.0,
                    endpoint_id: r.get(5)?,
                    endpoint_body: r.get::<_, Option<Document>>(6)?.map(|d| d.0),
                    endpoint_secrets: r.get(7)?,
                    endpoint_failing_since: r.get(8)?,
                    attempts_made: r.get::<_, i64>(9)? as usize,
                    variant: r.get(10)?,
                })
            })
        })
        .map_err(|e| classify("load delivery", e))?;
    Ok(row)
}

fn record_attempt(conn: &Connection, rec: &DeliveryAttemptRecord) -> StoreResult<()> {
    conn.prepare_cached(
        "UPDATE webhook_deliveries SET attempts = json_insert(attempts, '$[#]', json(?1)), status = ?2,
         next_attempt_at = ?3, lease_until = NULL WHERE id = ?4",
    )
    .and_then(|mut s| s.execute(params![rec.attempt, rec.status, rec.next_attempt_at_ms, rec.delivery_id]))
    .map_err(|e| classify("record attempt", e))?;
    conn.prepare_cached(
        "INSERT INTO webhook_endpoint_health (endpoint_id, failing_since) VALUES (?1, ?2)
         ON CONFLICT (endpoint_id) DO UPDATE SET failing_since = excluded.failing_since",
    )
    .and_then(|mut s| s.execute(params![rec.endpoint_id, rec.endpoint_failing_since]))
    .map_err(|e| classify("endpoint health", e))?;
    Ok(())
}

const DELIVERY_COLUMNS: &str =
    "id, event_id, endpoint_id, status, next_attempt_at, attempts, created";

fn delivery_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<DeliveryRecord> {
    Ok(DeliveryRecord {
        id: r.get(0)?,
        event_id: r.get(1)?,
        endpoint_id: r.get(2)?,
        status: r.get(3)?,
        next_attempt_at_ms: r.get(4)?,
        attempts: r.get(5)?,
        created: r.get(6)?,
    })
}

fn task_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<ClaimedTask> {
    Ok(ClaimedTask {
        id: r.get(0)?,
        scope: scope_from(r.get(1)?, r.get(2)?),
        kind: r.get(3)?,
        object_id: r.get(4)?,
        due_at: r.get(5)?,
        clock: r.get(6)?,
    })
}

fn lease_tasks(conn: &Connection, tasks: &[ClaimedTask], lease_until: i64) -> StoreResult<()> {
    for t in tasks {
        conn.prepare_cached("UPDATE scheduled_tasks SET lease_until = ?1 WHERE id = ?2")
            .and_then(|mut s| s.execute(params![lease_until, t.id]))
            .map_err(|e| classify("lease task", e))?;
    }
    Ok(())
}

#[async_trait]
impl QueueStore for SqliteStore {
    async fn claim_tasks(
        &self,
        now: i64,
        lease_until: i64,
        limit: usize,
    ) -> StoreResult<Vec<ClaimedTask>> {
        self.writer
            .write(move |conn| {
                let tasks = conn
                    .prepare_cached(
                        "SELECT id, account_id, livemode, kind, object_id, due_at, clock FROM scheduled_tasks
                         WHERE clock IS NULL AND due_at <= ?1 AND (lease_until IS NULL OR lease_until < ?1) ORDER BY due_at LIMIT ?2",
                    )
                    .and_then(|mut s| {
                        s.query_map(params![now, limit as i64], task_row)?
                            .collect::<Result<Vec<_>, _>>()
                    })
                    .map_err(|e| classify("claim tasks", e))?;
                lease_tasks(conn, &tasks, lease_until)?;
                Ok(tasks)
            })
            .await
    }

    async fn claim_clock_tasks(
        &self,
        clock: &str,
        up_to: i64,
        now: i64,
        lease_until: i64,
        limit: usize,
    ) -> StoreResult<Vec<ClaimedTask>> {
        let clock = clock.to_string();
        self.writer
            .write(move |conn| {
                let tasks = conn
                    .prepare_cached(
                        "SELECT id, account_id, livemode, kind, object_id, due_at, clock FROM scheduled_tasks
                         WHERE clock = ?1 AND due_at = (SELECT MIN(due_at) FROM scheduled_tasks WHERE clock = ?1 AND due_at <= ?2)
                           AND (lease_until IS NULL OR lease_until < ?3)
                         ORDER BY id LIMIT ?4",
                    )
                    .and_then(|mut s| {
                        s.query_map(params![clock, up_to, now, limit as i64], task_row)?
                            .collect::<Result<Vec<_>, _>>()
                    })
                    .map_err(|e| classify("claim clock tasks", e))?;
                lease_tasks(conn, &tasks, lease_until)?;
                Ok(tasks)
            })
            .await
    }

    async fn clock_tasks_due(&self, clock: &str, up_to: i64) -> StoreResult<u64> {
        let clock = clock.to_string();
        self.read_now(move |conn| {
            conn.query_row(
                "SELECT COUNT(*) FROM scheduled_tasks WHERE clock = ?1 AND due_at <= ?2",
                params![clock, up_to],
                |r| r.get::<_, i64>(0),
            )
            .map(|n| n as u64)
            .map_err(|e| classify("count clock tasks", e))
        })
    }

    async fn claim_deliveries(&self, claim: DeliveryClaim) -> StoreResult<Vec<ClaimedDelivery>> {
        self.writer
            .write(move |conn| claim_deliveries(conn, claim))
            .await
    }

    async fn record_delivery_attempt(&self, record: DeliveryAttemptRecord) -> StoreResult<()> {
        self.writer
            .write(move |conn| record_attempt(conn, &record))
            .await
    }

    async fn list_deliveries(
        &self,
        scope: &Scope,
        event_id: &str,
    ) -> StoreResult<Vec<DeliveryRecord>> {
        let (scope, event_id) = (scope.clone(), event_id.to_string());
        self.read(move |conn| {
            let sql = format!(
                "SELECT {DELIVERY_COLUMNS} FROM webhook_deliveries WHERE account_id = ?1 AND livemode = ?2 AND event_id = ?3 ORDER BY seq"
            );
            conn.prepare_cached(&sql)
                .and_then(|mut s| {
                    s.query_map(params![scope.account, scope.livemode(), event_id], delivery_row)?
                        .collect::<Result<Vec<_>, _>>()
                })
                .map_err(|e| classify("list deliveries", e))
        })
        .await
    }

    async fn schedule_delivery(
        &self,
        scope: &Scope,
        event_id: &str,
        endpoint_id: &str,
        now_ms: i64,
    ) -> StoreResult<DeliveryRecord> {
        let (scope, event_id, endpoint_id) =
            (scope.clone(), event_id.to_string(), endpoint_id.to_string());
        self.writer
            .write(move |conn| {
                conn.prepare_cached(
                    "INSERT INTO webhook_deliveries (id, account_id, livemode, event_id, endpoint_id, status, next_attempt_at, created)
                     VALUES (?1, ?2, ?3, ?4, ?5, 'pending', ?6, ?6 / 1000)
                     ON CONFLICT (event_id, endpoint_id, variant) DO UPDATE SET status = 'pending', next_attempt_at = excluded.next_attempt_at",
                )
                .and_then(|mut s| {
                    s.execute(params![
                        ids::generate(IdKind::WebhookDelivery),
                        scope.account,
                        scope.livemode(),
                        event_id,
                        endpoint_id,
                        now_ms
                    ])
                })
                .map_err(|e| classify("schedule delivery", e))?;
                let sql = format!("SELECT {DELIVERY_COLUMNS} FROM webhook_deliveries WHERE event_id = ?1 AND endpoint_id = ?2");
                conn.query_row(&sql, params![event_id, endpoint_id], delivery_row)
                    .map_err(|e| classify("schedule delivery", e))
            })
            .await
    }

    async fn count_pending_deliveries(&self) -> StoreResult<u64> {
        self.read(|conn| {
            conn.query_row(
                "SELECT COUNT(*) FROM webhook_deliveries WHERE status = 'pending'",
                [],
                |r| r.get::<_, i64>(0),
            )
            .map(|n| n as u64)
            .map_err(|e| classify("count deliveries", e))
        })
        .await
    }
}
