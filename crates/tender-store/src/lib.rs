//! Tender's storage: implementations of the `tender_core::store::Store` port.
//!
//! # Layout
//! - [`sqlite`]: the embedded default — one writer thread doing group commit (every pending
//!   batch in one fsynced transaction, each inside its own savepoint) and a pool of read
//!   connections on the WAL.
//! - [`postgres`]: several stateless nodes on one PostgreSQL — a transaction per batch,
//!   optimistic versions, leases by `FOR UPDATE SKIP LOCKED`.
//! - [`open`]: picks the backend from a database URL, refusing unknown schemes.
//! - [`body`]: what every document's `body` column holds — its stored form as a zstd frame
//!   with Tender's trained dictionary — for both backends.
//! - [`files`]: owner-only files and directories, and the one-server lock of a SQLite database.
//!
//! Both backends are split the same way, one file per concern of the port: `documents` (and the
//! outbox), `idempotency`, `queue` and `accounts`, beside a `mod.rs` holding the store itself,
//! its connections and its lifecycle.
//!
//! All SQL of the project lives in this crate. Driver errors are classified into
//! `StoreError` here; nothing above matches on a driver's error type.

pub mod body;
pub mod files;
mod key_cache;
pub mod postgres;
mod schema;
pub mod sqlite;

use std::path::Path;
use std::sync::Arc;

use tender_core::store::Store;

/// Which backend a `--database-url` names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DatabaseUrl {
    /// `sqlite://PATH` (or the default file in the data dir).
    Sqlite(std::path::PathBuf),
    /// `postgres://…` or `postgresql://…`.
    Postgres(String),
}

impl DatabaseUrl {
    /// Parses a database URL; `None` means the default SQLite file in `data_dir`.
    pub fn parse(url: Option<&str>, data_dir: &Path) -> Result<Self, String> {
        let Some(url) = url.filter(|u| !u.is_empty()) else {
            return Ok(DatabaseUrl::Sqlite(data_dir.join("tender.sqlite3")));
        };
        if let Some(path) = url.strip_prefix("sqlite://") {
            if path.is_empty() {
                return Err(
                    "sqlite:// URL needs a file path, e.g. sqlite:///var/lib/tender/db".into(),
                );
            }
            return Ok(DatabaseUrl::Sqlite(path.into()));
        }
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            return Ok(DatabaseUrl::Postgres(url.to_string()));
        }
        Err(format!(
            "unsupported database URL scheme in {:?}: use sqlite://PATH or postgres://…",
            url.split("://").next().unwrap_or(url)
        ))
    }
}

/// Opens the store a URL names, applying migrations.
pub async fn open(url: &DatabaseUrl) -> Result<Arc<dyn Store>, String> {
    match url {
        DatabaseUrl::Sqlite(path) => sqlite::SqliteStore::open(path)
            .map(|s| Arc::new(s) as Arc<dyn Store>)
            .map_err(|e| format!("cannot open SQLite database {}: {e}", path.display())),
        DatabaseUrl::Postgres(url) => postgres::PgStore::open(url, postgres::DEFAULT_POOL_SIZE)
            .await
            .map(|s| Arc::new(s) as Arc<dyn Store>)
            .map_err(|e| format!("cannot open PostgreSQL database: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn database_url_scheme_decides_the_backend() {
        let dir = Path::new("/data");
        assert_eq!(
            DatabaseUrl::parse(None, dir),
            Ok(DatabaseUrl::Sqlite("/data/tender.sqlite3".into()))
        );
        assert_eq!(
            DatabaseUrl::parse(Some("sqlite:///tmp/x.db"), dir),
            Ok(DatabaseUrl::Sqlite("/tmp/x.db".into()))
        );
        assert!(matches!(
            DatabaseUrl::parse(Some("postgres://u@h/db"), dir),
            Ok(DatabaseUrl::Postgres(_))
        ));
        assert!(DatabaseUrl::parse(Some("mysql://h/db"), dir).is_err());
        assert!(DatabaseUrl::parse(Some("postgress://h/db"), dir).is_err());
    }
}
