//! `--storage N`: how many bytes one payment costs on disk. A fresh Tender takes `N` card
//! payments through the API (64 at a time, each with its own `Idempotency-Key`, as merchants
//! send them); the store's size, table by table with its indexes, is read before and after, and
//! the difference is divided by `N`. SQLite: the pages each table and index uses (`dbstat`,
//! after a checkpoint). PostgreSQL: `pg_total_relation_size` (heap, TOAST and indexes) after a
//! `VACUUM`, so dead tuples of the run do not count.

use std::collections::BTreeMap;
use std::time::Duration;

use futures::StreamExt;

use crate::load::Call;
use crate::tender::{Backend, Tender, CARD_PAYMENT};

/// Bytes per table (its indexes included).
type Sizes = BTreeMap<String, f64>;

/// Creates `n` payments on `tender` and prints the bytes per payment of each table.
pub async fn run(tender: &Tender, backend: &Backend, name: &str, n: u64) -> anyhow::Result<()> {
    let before = sizes(tender, backend).await?;
    let started = std::time::Instant::now();
    let run = format!("{:08x}", rand::random::<u32>());
    let mut pending = futures::stream::FuturesUnordered::new();
    let mut sent = 0u64;
    let mut failed = 0u64;
    while sent < n || !pending.is_empty() {
        while sent < n && pending.len() < 64 {
            let t = tender.target.clone();
            let call = Call::post_json("/payments", CARD_PAYMENT.into())
                .idempotent(format!("st-{run}-{sent}"));
            pending.push(async move { t.json(call).await });
            sent += 1;
        }
        if let Some(r) = pending.next().await {
            if r.is_err() {
                failed += 1;
            }
        }
    }
    let took = started.elapsed();
    let after = sizes(tender, backend).await?;
    let made = (n - failed) as f64;
    println!();
    println!(
        "## Storage: {name}, bytes per payment after {n} creates ({failed} failed, {:.1} s)",
        took.as_secs_f64()
    );
    println!();
    println!("| table (with its indexes) | bytes per payment |");
    println!("|---|---:|");
    let (mut total, mut write_path) = (0.0, 0.0);
    for (table, bytes) in &after {
        let grown = bytes - before.get(table).copied().unwrap_or(0.0);
        if grown.abs() < 1.0 {
            continue;
        }
        total += grown;
        if WRITE_PATH_TABLES.contains(&table.as_str()) {
            write_path += grown;
        }
        println!("| {table} | {:.0} |", grown / made);
    }
    println!("| **total** | **{:.0}** |", total / made);
    println!();
    println!(
        "- {name} stored per payment: {:.0} bytes in all; {:.0} bytes in the payment, its event and \
         its idempotency record (issue 21's target ≤ 1200: {})",
        total / made,
        write_path / made,
        if write_path / made <= 1200.0 {
            "MET"
        } else {
            "MISSED"
        }
    );
    Ok(())
}

/// What issue 21's storage target counts (it predates the ledger's rows): the payment, its
/// event and its idempotency record, with their indexes.
const WRITE_PATH_TABLES: [&str; 3] = ["payments", "events", "idempotency_keys"];

async fn sizes(tender: &Tender, backend: &Backend) -> anyhow::Result<Sizes> {
    match backend {
        Backend::Sqlite => sqlite_sizes(tender),
        Backend::Postgres { .. } => {
            let (schema, url) = tender
                .pg
                .as_ref()
                .expect("a PostgreSQL tender has a schema");
            pg_sizes(url, schema).await
        }
    }
}

fn sqlite_sizes(tender: &Tender) -> anyhow::Result<Sizes> {
    let conn = rusqlite::Connection::open(tender.sqlite_path())?;
    conn.busy_timeout(Duration::from_secs(30))?;
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
    let mut stmt = conn.prepare(
        "SELECT COALESCE(m.tbl_name, d.name), SUM(d.pgsize) FROM dbstat d
         LEFT JOIN sqlite_master m ON m.name = d.name GROUP BY 1",
    )?;
    let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, f64>(1)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

async fn pg_sizes(url: &str, schema: &str) -> anyhow::Result<Sizes> {
    let client = crate::pg::connect(url).await?;
    client.batch_execute("VACUUM").await?;
    let rows = client
        .query(
            "SELECT c.relname::text, pg_total_relation_size(c.oid)::float8 FROM pg_class c
             JOIN pg_namespace n ON n.oid = c.relnamespace
             WHERE n.nspname = $1 AND c.relkind = 'r'",
            &[&schema],
        )
        .await?;
    Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
}
