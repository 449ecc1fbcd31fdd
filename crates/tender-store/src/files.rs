//! The files Tender keeps on disk (CONTRACT §12): readable by the service's own user only —
//! directories 0700, files 0600 — and the lock that lets one server at a time use a SQLite
//! database.
//!
//! Depends on `std` only.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

/// Creates `dir` (and missing parents) with mode 0700; an existing directory is left as it is.
pub fn create_private_dir(dir: &Path) -> io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir)
}

/// Makes sure `path` exists with mode 0600 before a library (SQLite) creates it with the
/// process umask: SQLite gives its `-wal` and `-shm` files the database file's mode. An existing
/// file is narrowed to 0600.
pub fn ensure_private_file(path: &Path) -> io::Result<()> {
    let mut options = OpenOptions::new();
    options.write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let file = options.open(path)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    #[cfg(not(unix))]
    drop(file);
    Ok(())
}

/// An exclusive lock on a SQLite database, held by the one server using it for as long as the
/// value lives (the kernel releases it when the process dies, however it dies).
#[derive(Debug)]
pub struct DatabaseLock {
    _file: File,
    pub path: PathBuf,
}

/// Why the lock could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error(
        "another `tender serve` is using {0} (it holds {0}.lock); stop it first: two servers on one \
         SQLite database would take each other's requests in flight"
    )]
    Held(String),
    #[error("cannot lock {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: io::Error,
    },
}

/// Takes the exclusive lock of the database at `db` (the file `<db>.lock`, mode 0600).
pub fn lock_database(db: &Path) -> Result<DatabaseLock, LockError> {
    let mut name = db.as_os_str().to_owned();
    name.push(".lock");
    let path = PathBuf::from(name);
    let io_error = |source| LockError::Io {
        path: path.display().to_string(),
        source,
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        create_private_dir(dir).map_err(io_error)?;
    }
    ensure_private_file(&path).map_err(io_error)?;
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(&path)
        .map_err(io_error)?;
    match file.try_lock() {
        Ok(()) => Ok(DatabaseLock { _file: file, path }),
        Err(std::fs::TryLockError::WouldBlock) => Err(LockError::Held(db.display().to_string())),
        Err(std::fs::TryLockError::Error(e)) => Err(io_error(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_lock_at_a_time_and_free_again_when_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("sub/t.sqlite3");
        let first = lock_database(&db).unwrap();
        assert!(matches!(lock_database(&db), Err(LockError::Held(_))));
        drop(first);
        assert!(lock_database(&db).is_ok());
    }

    #[cfg(unix)]
    #[test]
    fn files_and_directories_are_owner_only() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("a/b");
        create_private_dir(&sub).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&sub), 0o700);
        let file = sub.join("f");
        std::fs::write(&file, b"x").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        ensure_private_file(&file).unwrap();
        assert_eq!(mode(&file), 0o600);
        assert_eq!(std::fs::read(&file).unwrap(), b"x", "contents kept");
    }
}
