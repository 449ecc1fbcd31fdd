//! Table and column names per collection, and the embedded migrations.
//!
//! Names here are static strings chosen by the code, never by input, so building SQL text from
//! them is safe; every value is bound as a parameter.

use rusqlite::Connection;
use tender_core::error::StoreError;
use tender_core::store::{Collection, Field, IndexValues};

use super::classify;

/// The migrations, numbered in lockstep with the PostgreSQL ones.
const MIGRATIONS: &[(i64, &str)] = &[(
    1,
    include_str!("../../migrations/sqlite/0001_create_tables.sql"),
)];

pub fn table(c: Collection) -> &'static str {
    match c {
        Collection::Payments => "payments",
        Collection::Customers => "customers",
        Collection::Refunds => "refunds",
        Collection::Events => "events",
        Collection::PaymentMethods => "payment_methods",
        Collection::WebhookEndpoints => "webhook_endpoints",
    }
}

pub fn column(f: Field) -> &'static str {
    match f {
        Field::Customer => "customer",
        Field::Status => "status",
        Field::Email => "email",
        Field::Payment => "payment",
        Field::Type => "type",
    }
}

/// The indexed columns of `c` with their values from `index`, in a fixed order.
pub fn index_columns(c: Collection, index: &IndexValues) -> Vec<(&'static str, Option<String>)> {
    let mut cols: Vec<(&'static str, Option<String>)> = c
        .filter_fields()
        .iter()
        .map(|f| (column(*f), index.get(*f).map(str::to_string)))
        .collect();
    if c == Collection::WebhookEndpoints {
        cols.push(("enabled_events", index.enabled_events.clone()));
    }
    cols
}

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
