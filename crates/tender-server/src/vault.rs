//! The vault key: 32 bytes from which card fingerprints (and, for saved cards, the AES-256-GCM
//! encryption key) derive. From `TENDER_VAULT_KEY` (64 hex characters), else generated once into
//! `DATA_DIR/vault.key` with mode 0600 (SQLite only: every PostgreSQL node must share one key).

use std::io::Write;
use std::path::Path;

use anyhow::{bail, Context};
use rand::RngCore;

fn parse(hex_key: &str) -> anyhow::Result<[u8; 32]> {
    let bytes = hex::decode(hex_key.trim()).context("the vault key must be 64 hex characters")?;
    bytes
        .try_into()
        .map_err(|_| anyhow::anyhow!("the vault key must be 64 hex characters (32 bytes)"))
}

/// The configured key, or the one kept in (or newly written to) the data dir.
///
/// `sqlite_exists` is `None` on PostgreSQL (the key must be configured), else whether the SQLite
/// database already exists: a key is generated only for a new database, never beside existing
/// data (a backup restored without its `vault.key`), whose sealed values it could not open.
pub fn load_or_create(
    configured: Option<&str>,
    data_dir: &Path,
    sqlite_exists: Option<bool>,
) -> anyhow::Result<[u8; 32]> {
    if let Some(k) = configured.filter(|k| !k.is_empty()) {
        return parse(k);
    }
    let Some(database_exists) = sqlite_exists else {
        bail!("TENDER_VAULT_KEY is required with PostgreSQL (every node must use the same key)");
    };
    let path = data_dir.join("vault.key");
    if path.exists() {
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        return parse(&text);
    }
    if database_exists {
        bail!(
            "{} is missing but the database exists: its saved cards and secrets need the key it was              written with. Put the original vault.key back (or set TENDER_VAULT_KEY); see              docs/operations.md, \"Losing the vault key\"",
            path.display()
        );
    }
    tender_store::files::create_private_dir(data_dir)
        .with_context(|| format!("creating {}", data_dir.display()))?;
    let mut key = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut key);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options
        .open(&path)
        .with_context(|| format!("creating {}", path.display()))?;
    file.write_all(hex::encode(key).as_bytes())?;
    file.sync_all()?;
    Ok(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_once_with_owner_only_permissions_then_reused() {
        let dir = tempfile::tempdir().unwrap();
        let a = load_or_create(None, dir.path(), Some(false)).unwrap();
        let b = load_or_create(None, dir.path(), Some(true)).unwrap();
        assert_eq!(a, b);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.path().join("vault.key"))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        assert!(load_or_create(None, dir.path(), None).is_err());
        assert!(load_or_create(Some("abcd"), dir.path(), Some(true)).is_err());
        // A database without its key file: refused, never a new key.
        let restored = tempfile::tempdir().unwrap();
        let refused = load_or_create(None, restored.path(), Some(true)).unwrap_err();
        assert!(
            refused.to_string().contains("vault.key is missing"),
            "{refused}"
        );
        assert!(!restored.path().join("vault.key").exists());
        assert_eq!(
            load_or_create(Some(&"11".repeat(32)), dir.path(), Some(true)).unwrap(),
            [0x11; 32]
        );
    }
}
