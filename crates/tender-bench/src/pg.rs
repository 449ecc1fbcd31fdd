//! PostgreSQL helpers: reachability, fresh schemas, settings worth printing.

use std::time::Duration;

use anyhow::Context;

/// The default database the harness uses when none is given.
pub const DEFAULT_URL: &str = "postgres://postgres@127.0.0.1:5432/test";

pub async fn connect(url: &str) -> anyhow::Result<tokio_postgres::Client> {
    let (client, conn) = tokio::time::timeout(
        Duration::from_secs(5),
        tokio_postgres::connect(url, tokio_postgres::NoTls),
    )
    .await
    .context("connecting to PostgreSQL timed out")?
    .with_context(|| format!("connecting to {url}"))?;
    tokio::spawn(async move {
        if let Err(e) = conn.await {
            eprintln!("postgres connection: {e}");
        }
    });
    Ok(client)
}

pub async fn execute(url: &str, sql: &str) -> anyhow::Result<()> {
    connect(url).await?.batch_execute(sql).await?;
    Ok(())
}

/// `url` with the schema as its search path.
pub fn schema_url(url: &str, schema: &str) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}options=-c%20search_path%3D{schema}")
}

/// `synchronous_commit` and `fsync` as the server has them (both must be `on` for the
/// durable figures to mean anything).
pub async fn durability_settings(url: &str) -> anyhow::Result<String> {
    let client = connect(url).await?;
    let mut out = Vec::new();
    for name in ["synchronous_commit", "fsync", "wal_sync_method"] {
        let row = client.query_one(&format!("SHOW {name}"), &[]).await?;
        out.push(format!("{name}={}", row.get::<_, String>(0)));
    }
    Ok(out.join(", "))
}
