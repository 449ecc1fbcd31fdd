//! SQLite's embedded migrations (numbered in lockstep with `migrations/postgres`).

use rusqlite::Connection;
use tender_core::error::StoreError;

use super::classify;

/// The migrations, numbered in lockstep with the PostgreSQL ones.
const MIGRATIONS: &[(i64, &str)] = &[
    (
        1,
        include_str!("../../migrations/sqlite/0001_create_tables.sql"),
    ),
    (
        2,
        include_str!("../../migrations/sqlite/0002_key_idempotency_and_vault_check.sql"),
    ),
    (
        3,
        include_str!("../../migrations/sqlite/0003_create_connectors.sql"),
    ),
    (
        4,
        include_str!("../../migrations/sqlite/0004_create_ledger.sql"),
    ),
    (
        5,
        include_str!("../../migrations/sqlite/0005_create_balance.sql"),
    ),
    (
        6,
        include_str!("../../migrations/sqlite/0006_create_billing.sql"),
    ),
    (
        7,
        include_str!("../../migrations/sqlite/0007_packed_bodies.sql"),
    ),
    (
        8,
        include_str!("../../migrations/sqlite/0008_ledger_entries_without_foreign_key.sql"),
    ),
    (
        9,
        include_str!("../../migrations/sqlite/0009_event_stream_order.sql"),
    ),
    (
        10,
        include_str!("../../migrations/sqlite/0010_test_clock_status.sql"),
    ),
    (
        11,
        include_str!("../../migrations/sqlite/0011_create_setup_intents.sql"),
    ),
    (
        12,
        include_str!("../../migrations/sqlite/0012_account_payout_destination.sql"),
    ),
    (
        13,
        include_str!("../../migrations/sqlite/0013_price_lookup_key.sql"),
    ),
    (
        14,
        include_str!("../../migrations/sqlite/0014_delivery_variants.sql"),
    ),
    (
        15,
        include_str!("../../migrations/sqlite/0015_create_checkout_sessions.sql"),
    ),
    (
        16,
        include_str!("../../migrations/sqlite/0016_create_payment_links.sql"),
    ),
    (
        17,
        include_str!("../../migrations/sqlite/0017_account_checkout_settings.sql"),
    ),
    (
        18,
        include_str!("../../migrations/sqlite/0018_create_invoice_sequences.sql"),
    ),
];

/// Applies the migrations not yet applied, each in its own transaction.
pub fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied INTEGER NOT NULL)",
    )
    .map_err(|e| classify("migrate", e))?;
    for (version, sql) in MIGRATIONS {
        let tx = conn.transaction().map_err(|e| classify("migrate", e))?;
        let done: bool = tx
            .query_row(
                "SELECT EXISTS(SELECT 1 FROM schema_migrations WHERE version = ?1)",
                [version],
                |r| r.get(0),
            )
            .map_err(|e| classify("migrate", e))?;
        if !done {
            tx.execute_batch(sql).map_err(|e| classify("migrate", e))?;
            tx.execute(
                "INSERT INTO schema_migrations (version, applied) VALUES (?1, strftime('%s','now'))",
                [version],
            )
            .map_err(|e| classify("migrate", e))?;
        }
        tx.commit().map_err(|e| classify("migrate", e))?;
    }
    Ok(())
}

/// The newest migration this build knows.
pub fn latest_version() -> i64 {
    MIGRATIONS.last().map(|(v, _)| *v).unwrap_or(0)
}
