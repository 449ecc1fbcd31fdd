//! `tender migrate-store --to postgres://…`: a SQLite data directory's whole state moved into
//! an empty PostgreSQL database (tender_store's `postgres::copy`), then checked there: the rows
//! of every table counted against the source, and the ledger verified on the target with the
//! data directory's vault key. The source is locked for the copy (no server may be running on
//! it) and left as it was.

use anyhow::{bail, Context};
use tender_store::postgres::PgStore;
use tender_store::DatabaseUrl;

use crate::StoreArgs;

pub async fn migrate_store(store: StoreArgs, to: String) -> anyhow::Result<()> {
    let source = match DatabaseUrl::parse(store.database_url.as_deref(), &store.data_dir)
        .map_err(anyhow::Error::msg)?
    {
        DatabaseUrl::Sqlite(path) => path,
        DatabaseUrl::Postgres(_) => bail!(
            "the source must be a SQLite data directory (--data-dir, or --database-url sqlite://…)"
        ),
    };
    if !source.exists() {
        bail!("no database at {}", source.display());
    }
    if !matches!(
        DatabaseUrl::parse(Some(&to), &store.data_dir),
        Ok(DatabaseUrl::Postgres(_))
    ) {
        bail!("--to must be a postgres:// URL");
    }
    // No server may write the source while it is copied.
    let _lock = tender_store::files::lock_database(&source)
        .map_err(|e| anyhow::anyhow!("{e}: stop the server using {} first", source.display()))?;
    let target = PgStore::open(&to, 2)
        .await
        .context("opening the target PostgreSQL database")?;
    let counts = target
        .copy_from_sqlite(&source)
        .await
        .map_err(|e| anyhow::anyhow!("nothing was copied: {e}"))?;
    drop(target);
    let rows: i64 = counts.iter().map(|(_, n)| n).sum();
    for (table, n) in &counts {
        println!("{table}: {n} rows");
    }
    println!(
        "copied {rows} rows in {} tables from {}",
        counts.len(),
        source.display()
    );
    // Checked on the target, with the key its secrets are sealed under.
    let mut on_target = store.clone();
    on_target.database_url = Some(to);
    if on_target.vault_key.is_none() && on_target.vault_key_file.is_none() {
        on_target.vault_key_file = Some(store.data_dir.join("vault.key"));
    }
    super::ledger_verify(None, on_target)
        .await
        .context("the copy's ledger does not hold")?;
    println!(
        "serve it with: tender serve --database-url <the URL> --vault-key-file {} (or TENDER_VAULT_KEY)",
        store.data_dir.join("vault.key").display()
    );
    Ok(())
}
