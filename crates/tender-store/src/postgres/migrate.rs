//! PostgreSQL's embedded migrations (numbered in lockstep with `migrations/sqlite`). Several
//! nodes may start at once: an advisory lock makes one apply them while the others wait.

use tender_core::error::StoreError;

use super::classify;

const MIGRATIONS: &[(i64, &str)] = &[
    (
        1,
        include_str!("../../migrations/postgres/0001_create_tables.sql"),
    ),
    (
        2,
        include_str!("../../migrations/postgres/0002_key_idempotency_and_vault_check.sql"),
    ),
    (
        3,
        include_str!("../../migrations/postgres/0003_create_connectors.sql"),
    ),
    (
        4,
        include_str!("../../migrations/postgres/0004_create_ledger.sql"),
    ),
    (
        5,
        include_str!("../../migrations/postgres/0005_create_balance.sql"),
    ),
    (
        6,
        include_str!("../../migrations/postgres/0006_create_billing.sql"),
    ),
    (
        7,
        include_str!("../../migrations/postgres/0007_packed_bodies.sql"),
    ),
    (
        8,
        include_str!("../../migrations/postgres/0008_ledger_entries_without_foreign_key.sql"),
    ),
    (
        9,
        include_str!("../../migrations/postgres/0009_event_stream_order.sql"),
    ),
    (
        10,
        include_str!("../../migrations/postgres/0010_test_clock_status.sql"),
    ),
    (
        11,
        include_str!("../../migrations/postgres/0011_create_setup_intents.sql"),
    ),
    (
        12,
        include_str!("../../migrations/postgres/0012_account_payout_destination.sql"),
    ),
    (
        13,
        include_str!("../../migrations/postgres/0013_price_lookup_key.sql"),
    ),
    (
        14,
        include_str!("../../migrations/postgres/0014_delivery_variants.sql"),
    ),
    (
        15,
        include_str!("../../migrations/postgres/0015_create_checkout_sessions.sql"),
    ),
    (
        16,
        include_str!("../../migrations/postgres/0016_create_payment_links.sql"),
    ),
    (
        17,
        include_str!("../../migrations/postgres/0017_account_checkout_settings.sql"),
    ),
    (
        18,
        include_str!("../../migrations/postgres/0018_create_invoice_sequences.sql"),
    ),
];

/// An arbitrary constant naming Tender's migration lock.
const MIGRATION_LOCK: i64 = 0x7465_6e64_6572;

pub async fn migrate(client: &mut deadpool_postgres::Object) -> Result<(), StoreError> {
    client
        .execute("SELECT pg_advisory_lock($1)", &[&MIGRATION_LOCK])
        .await
        .map_err(|e| classify("migration lock", e))?;
    let result = apply(client).await;
    let _ = client
        .execute("SELECT pg_advisory_unlock($1)", &[&MIGRATION_LOCK])
        .await;
    result
}

async fn apply(client: &mut deadpool_postgres::Object) -> Result<(), StoreError> {
    client
        .batch_execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY, applied BIGINT NOT NULL)",
        )
        .await
        .map_err(|e| classify("migrate", e))?;
    for (version, sql) in MIGRATIONS {
        let tx = client
            .transaction()
            .await
            .map_err(|e| classify("migrate", e))?;
        let done: bool = tx
            .query_one(
                "SELECT EXISTS(SELECT 1 FROM schema_migrations WHERE version = $1)",
                &[version],
            )
            .await
            .map_err(|e| classify("migrate", e))?
            .get(0);
        if !done {
            tx.batch_execute(sql)
                .await
                .map_err(|e| classify("migrate", e))?;
            tx.execute(
                "INSERT INTO schema_migrations (version, applied) VALUES ($1, extract(epoch from now())::bigint)",
                &[version],
            )
            .await
            .map_err(|e| classify("migrate", e))?;
        }
        tx.commit().await.map_err(|e| classify("migrate", e))?;
    }
    Ok(())
}

/// The newest migration this build knows.
pub fn latest_version() -> i64 {
    MIGRATIONS.last().map(|(v, _)| *v).unwrap_or(0)
}
