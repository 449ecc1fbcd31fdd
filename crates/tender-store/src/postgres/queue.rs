//! The queues on PostgreSQL: webhook deliveries (leased by `claim_deliveries`, attempts recorded
//! by `record_delivery_attempt`, listed, rescheduled, counted) and scheduled tasks (leased by
//! `claim_tasks`).
//!
//! - Each due item goes to exactly one node: tasks are leased with `FOR UPDATE SKIP LOCKED`;
//!   a delivery's lease re-checks the row, so another node that leased it meanwhile wins.
//!   Recording an attempt releases the delivery's lease.
//! - A delivery claim looks only at each account and mode's oldest few due deliveries (an index
//!   range each, through `LATERAL`) plus the oldest overall, as on SQLite, and lets
//!   `tender_core::webhooks::webhook::fair_pick` choose.
//! - Deliveries are created by the outbox (in [`super::documents`], in their event's batch) or by
//!   `schedule_delivery`: one per event and endpoint.
//!
//! Depends on the parent module's connection helpers and shared row helpers.

use async_trait::async_trait;
use std::collections::HashMap;
use tender_core::auth::Scope;
use tender_core::ids::{self, IdKind};
use tender_core::store::{
    ClaimedDelivery, ClaimedTask, DeliveryAttemptRecord, DeliveryClaim, DeliveryRecord, QueueStore,
    StoreResult,
};
use tender_core::webhooks::webhook::{fair_pick, DueDelivery, CANDIDATES_PER_SCOPE};
use tokio_postgres::Row;

use super::{body_of, classify, document, optional_document, scope_from, PgStore};

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

fn task_row(r: &tokio_postgres::Row) -> ClaimedTask {
    ClaimedTask {
        id: r.get(0),
        scope: scope_from(r.get(1), r.get(2)),
        kind: r.get(3),
        object_id: r.get(4),
        due_at: r.get(5),
        clock: r.get(6),
    }
}

#[async_trait]
impl QueueStore for PgStore {
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
                    SELECT id FROM scheduled_tasks WHERE clock IS NULL AND due_at <= $1 AND (lease_until IS NULL OR lease_until < $1)
                    ORDER BY due_at LIMIT $3 FOR UPDATE SKIP LOCKED)
                 RETURNING id, account_id, livemode, kind, object_id, due_at, clock",
                &[&now, &lease_until, &limit],
            )
            .await
            .map_err(|e| classify("claim tasks", e))?;
        Ok(rows.iter().map(task_row).collect())
    }

    async fn claim_clock_tasks(
        &self,
        clock: &str,
        up_to: i64,
        now: i64,
        lease_until: i64,
        limit: usize,
    ) -> StoreResult<Vec<ClaimedTask>> {
        let limit = limit as i64;
        let client = self.client().await?;
        let rows = client
            .query(
                "UPDATE scheduled_tasks SET lease_until = $4 WHERE id IN (
                    SELECT id FROM scheduled_tasks
                    WHERE clock = $1 AND due_at = (SELECT MIN(due_at) FROM scheduled_tasks WHERE clock = $1 AND due_at <= $2)
                      AND (lease_until IS NULL OR lease_until < $3)
                    ORDER BY id LIMIT $5 FOR UPDATE SKIP LOCKED)
                 RETURNING id, account_id, livemode, kind, object_id, due_at, clock",
                &[&clock, &up_to, &now, &lease_until, &limit],
            )
            .await
            .map_err(|e| classify("claim clock tasks", e))?;
        let mut tasks: Vec<ClaimedTask> = rows.iter().map(task_row).collect();
        tasks.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(tasks)
    }

    async fn clock_tasks_due(&self, clock: &str, up_to: i64) -> StoreResult<u64> {
        let client = self.client().await?;
        let row = client
            .query_one(
                "SELECT COUNT(*) FROM scheduled_tasks WHERE clock = $1 AND due_at <= $2",
                &[&clock, &up_to],
            )
            .await
            .map_err(|e| classify("count clock tasks", e))?;
        Ok(row.get::<_, i64>(0) as u64)
    }

    async fn claim_deliveries(&self, claim: DeliveryClaim) -> StoreResult<Vec<ClaimedDelivery>> {
        let client = self.client().await?;
        let (busy_accounts, busy_endpoints) = leased(&client, claim.now_ms).await?;
        let candidates = due_candidates(&client, &claim).await?;
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
        lease(&client, &claim, &ids).await
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
                     ON CONFLICT (event_id, endpoint_id, variant) DO UPDATE SET status = 'pending', next_attempt_at = excluded.next_attempt_at
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

/// How many deliveries each account (and mode) and each endpoint has in flight at `now_ms`.
#[allow(clippy::type_complexity)]
async fn leased(
    client: &tokio_postgres::Client,
    now_ms: i64,
) -> StoreResult<(HashMap<(String, bool), usize>, HashMap<String, usize>)> {
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
    Ok((busy_accounts, busy_endpoints))
}

/// The due deliveries [`fair_pick`] chooses among.
async fn due_candidates(
    client: &tokio_postgres::Client,
    claim: &DeliveryClaim,
) -> StoreResult<Vec<DueDelivery>> {
    let now_ms = claim.now_ms;
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
    Ok(rows
        .iter()
        .map(|r| DueDelivery {
            id: r.get(0),
            scope: (r.get(1), r.get(2)),
            endpoint_id: r.get(3),
            next_attempt_at_ms: r.get(4),
        })
        .collect())
}

/// Deliveries `ids` leased until the claim's lease ends (a row another node leased meanwhile is
/// left out), with what each attempt needs.
async fn lease(
    client: &tokio_postgres::Client,
    claim: &DeliveryClaim,
    ids: &[String],
) -> StoreResult<Vec<ClaimedDelivery>> {
    let now_ms = claim.now_ms;
    // The lease re-checks each row: another node that leased it meanwhile wins.
    let rows = client
        .query(
            &format!("WITH claimed AS (
                UPDATE webhook_deliveries SET lease_until = $2
                WHERE id = ANY($3) AND status = 'pending'
                  AND (lease_until IS NULL OR lease_until < $1)
                RETURNING id, account_id, livemode, event_id, endpoint_id, attempts, variant)
             SELECT c.id, c.account_id, c.livemode, c.event_id, {event_body}, c.endpoint_id, {endpoint_body}, s.sealed,
                    h.failing_since, jsonb_array_length(c.attempts), c.variant
             FROM claimed c
             JOIN events e ON e.id = c.event_id
             LEFT JOIN webhook_endpoints w ON w.id = c.endpoint_id
             LEFT JOIN sealed_values s ON s.owner_id = c.endpoint_id
             LEFT JOIN webhook_endpoint_health h ON h.endpoint_id = c.endpoint_id",
                event_body = body_of("e"),
                endpoint_body = body_of("w"),
            ),
            &[&now_ms, &claim.lease_until_ms, &ids],
        )
        .await
        .map_err(|e| classify("claim deliveries", e))?;
    rows.iter()
        .map(|r| {
            Ok(ClaimedDelivery {
                id: r.get(0),
                scope: scope_from(r.get(1), r.get(2)),
                event_id: r.get(3),
                event_body: document(r, 4)?,
                endpoint_id: r.get(5),
                endpoint_body: optional_document(r, 6)?,
                endpoint_secrets: r.get(7),
                endpoint_failing_since: r.get(8),
                attempts_made: r.get::<_, i32>(9) as usize,
                variant: r.get(10),
            })
        })
        .collect()
}
