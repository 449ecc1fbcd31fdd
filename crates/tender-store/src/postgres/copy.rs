//! A SQLite database copied whole into an empty PostgreSQL one (`tender migrate-store`): every
//! table both backends share (accounts and keys, every document, the ledger, idempotency
//! records, sealed secrets, pending webhook deliveries and scheduled tasks), row for row, in one
//! transaction, in the order the tables were created (so every row a foreign key names is
//! there first), each value turned into the PostgreSQL column's type. The `seq` counters then
//! continue after the highest copied. A target that holds anything is refused before anything
//! is written, and a column the target lacks stops the copy; the copy is counted table by
//! table against the source before it commits.
//!
//! Secrets stay sealed as they were: the target must be served with the source's vault key.
//! Document bodies stay packed as they were: SQLite keeps a packed body (a BLOB) in `body`,
//! PostgreSQL in `packed` (migration 0007), so a BLOB there goes to `packed`.

use std::path::Path;

use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};
use tokio_postgres::types::ToSql;

use super::{classify, pool_error, PgStore};

/// Why a copy did not happen.
#[derive(Debug)]
pub enum CopyError {
    /// The target already holds rows (the first table found with some).
    NotEmpty(String),
    /// The two schemas differ (a table or column the target lacks, a version apart).
    Mismatch(String),
    /// Reading the source or writing the target failed.
    Failed(String),
}

impl std::fmt::Display for CopyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CopyError::NotEmpty(table) => write!(
                f,
                "the target database is not empty (table {table} has rows): copy only into an empty one"
            ),
            CopyError::Mismatch(why) => write!(f, "the two databases' schemas differ: {why}"),
            CopyError::Failed(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for CopyError {}

fn failed(what: &str, e: impl std::fmt::Display) -> CopyError {
    CopyError::Failed(format!("{what}: {e}"))
}

/// How many rows each table holds, in copy order.
pub type Counts = Vec<(String, i64)>;

/// The plan of a `body` column whose packed values go to the target's `packed`.
const PACKED: &str = "body or packed";

/// Rows read from the source per statement batch.
const CHUNK: i64 = 500;

/// A value bound for PostgreSQL, with the cast that makes it the column's type.
enum Bound {
    Int(Option<i64>),
    Bool(Option<bool>),
    Text(Option<String>),
    Bytes(Option<Vec<u8>>),
    Float(Option<f64>),
}

impl Bound {
    fn param(&self) -> &(dyn ToSql + Sync) {
        match self {
            Bound::Int(v) => v,
            Bound::Bool(v) => v,
            Bound::Text(v) => v,
            Bound::Bytes(v) => v,
            Bound::Float(v) => v,
        }
    }
}

/// The placeholder `$n` cast for a column of PostgreSQL type `ty`, or `None` for a type the
/// copy does not know.
fn placeholder(n: usize, ty: &str) -> Option<String> {
    let cast = match ty {
        "bigint" | "integer" | "smallint" => "bigint",
        "boolean" => "boolean",
        "text" | "character varying" => "text",
        "bytea" => "bytea",
        "jsonb" => "text::jsonb",
        "json" => "text::json",
        "double precision" | "real" | "numeric" => "float8",
        _ => return None,
    };
    Some(format!("${n}::{cast}"))
}

/// A SQLite value as PostgreSQL type `ty` wants it.
fn bind(value: ValueRef<'_>, ty: &str) -> Result<Bound, String> {
    let text = |bytes: &[u8]| String::from_utf8(bytes.to_vec()).map_err(|e| e.to_string());
    Ok(match (ty, value) {
        ("bigint" | "integer" | "smallint", ValueRef::Null) => Bound::Int(None),
        ("bigint" | "integer" | "smallint", ValueRef::Integer(i)) => Bound::Int(Some(i)),
        ("boolean", ValueRef::Null) => Bound::Bool(None),
        ("boolean", ValueRef::Integer(i)) => Bound::Bool(Some(i != 0)),
        ("bytea", ValueRef::Null) => Bound::Bytes(None),
        ("bytea", ValueRef::Blob(b) | ValueRef::Text(b)) => Bound::Bytes(Some(b.to_vec())),
        ("double precision" | "real" | "numeric", ValueRef::Null) => Bound::Float(None),
        ("double precision" | "real" | "numeric", ValueRef::Real(f)) => Bound::Float(Some(f)),
        ("double precision" | "real" | "numeric", ValueRef::Integer(i)) => {
            Bound::Float(Some(i as f64))
        }
        (_, ValueRef::Null) => Bound::Text(None),
        (_, ValueRef::Text(b) | ValueRef::Blob(b)) => Bound::Text(Some(text(b)?)),
        (_, ValueRef::Integer(i)) => Bound::Text(Some(i.to_string())),
        (_, ValueRef::Real(f)) => Bound::Text(Some(f.to_string())),
    })
}

/// The source's tables in creation order (its own bookkeeping left out: the target's
/// migrations made the target's).
fn source_tables(db: &Connection) -> Result<Vec<String>, CopyError> {
    let mut stmt = db
        .prepare(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' \
             AND name <> 'schema_migrations' ORDER BY rowid",
        )
        .map_err(|e| failed("reading the source's tables", e))?;
    let names = stmt
        .query_map([], |r| r.get::<_, String>(0))
        .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
        .map_err(|e| failed("reading the source's tables", e))?;
    Ok(names)
}

fn source_columns(db: &Connection, table: &str) -> Result<Vec<String>, CopyError> {
    let mut stmt = db
        .prepare(&format!(
            "SELECT name FROM pragma_table_info('{table}') ORDER BY cid"
        ))
        .map_err(|e| failed("reading the source's columns", e))?;
    let names = stmt
        .query_map([], |r| r.get::<_, String>(0))
        .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
        .map_err(|e| failed("reading the source's columns", e))?;
    Ok(names)
}

impl PgStore {
    /// Copies the SQLite database at `source` into this (empty) database; the rows per table.
    pub async fn copy_from_sqlite(&self, source: &Path) -> Result<Counts, CopyError> {
        let db = Connection::open_with_flags(source, OpenFlags::SQLITE_OPEN_READ_ONLY)
            .map_err(|e| failed(&format!("opening {}", source.display()), e))?;
        let version: i64 = db
            .query_row(
                "SELECT COALESCE(MAX(version), 0) FROM schema_migrations",
                [],
                |r| r.get(0),
            )
            .map_err(|e| failed("reading the source's schema version", e))?;
        if version != Self::schema_version() {
            return Err(CopyError::Mismatch(format!(
                "the source is at schema version {version}, this build at {}: start this version of tender on the data directory once first",
                Self::schema_version()
            )));
        }
        let tables = source_tables(&db)?;
        let mut client = self
            .pool
            .get()
            .await
            .map_err(|e| failed("connecting", pool_error(e)))?;
        for table in &tables {
            let taken: bool = client
                .query_one(&format!("SELECT EXISTS (SELECT 1 FROM {table})"), &[])
                .await
                .map_err(|e| {
                    CopyError::Mismatch(format!("table {table}: {}", classify("read", e)))
                })?
                .get(0);
            if taken {
                return Err(CopyError::NotEmpty(table.clone()));
            }
        }
        let tx = client
            .transaction()
            .await
            .map_err(|e| failed("starting the copy", e))?;
        let mut counts = Vec::new();
        for table in &tables {
            let copied = copy_table(&db, &tx, table).await?;
            counts.push((table.clone(), copied));
        }
        for (table, copied) in &counts {
            let there: i64 = tx
                .query_one(&format!("SELECT COUNT(*) FROM {table}"), &[])
                .await
                .map_err(|e| failed("counting the copy", e))?
                .get(0);
            if there != *copied {
                return Err(CopyError::Failed(format!(
                    "table {table}: {copied} rows read, {there} in the target"
                )));
            }
        }
        tx.commit()
            .await
            .map_err(|e| failed("committing the copy", e))?;
        Ok(counts)
    }
}

/// The target's columns of `table` with their types.
async fn target_columns(
    tx: &tokio_postgres::Transaction<'_>,
    table: &str,
) -> Result<Vec<(String, String, bool)>, CopyError> {
    let rows = tx
        .query(
            "SELECT column_name::text, data_type::text, COALESCE(column_default, '') LIKE 'nextval(%' \
             FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1",
            &[&table],
        )
        .await
        .map_err(|e| failed("reading the target's columns", e))?;
    Ok(rows
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect())
}

/// Copies `table`'s rows in the source's order; how many.
async fn copy_table(
    db: &Connection,
    tx: &tokio_postgres::Transaction<'_>,
    table: &str,
) -> Result<i64, CopyError> {
    let columns = source_columns(db, table)?;
    let target = target_columns(tx, table).await?;
    let packs = target.iter().any(|(name, _, _)| name == "packed")
        && !columns.iter().any(|c| c == "packed");
    let mut types = Vec::new();
    let mut names = Vec::new();
    let mut marks = Vec::new();
    for c in &columns {
        let Some((_, ty, _)) = target.iter().find(|(name, _, _)| name == c) else {
            return Err(CopyError::Mismatch(format!(
                "the target has no column {table}.{c}"
            )));
        };
        let ty = if c == "body" && packs {
            PACKED.to_string()
        } else {
            ty.clone()
        };
        let wanted: &[(&str, &str)] = if ty == PACKED {
            &[("body", "text"), ("packed", "bytea")]
        } else {
            &[(c.as_str(), ty.as_str())]
        };
        for (name, t) in wanted {
            let mark = placeholder(marks.len() + 1, t)
                .ok_or_else(|| CopyError::Mismatch(format!("{table}.{name} is of type {t}")))?;
            names.push(name.to_string());
            marks.push(mark);
        }
        types.push(ty);
    }
    let insert = format!(
        "INSERT INTO {table} ({}) VALUES ({})",
        names.join(", "),
        marks.join(", ")
    );
    let statement = tx
        .prepare(&insert)
        .await
        .map_err(|e| failed(&format!("preparing the copy of {table}"), e))?;
    let select = format!(
        "SELECT rowid, {} FROM {table} WHERE rowid > ?1 ORDER BY rowid LIMIT {CHUNK}",
        columns.join(", ")
    );
    let mut after = i64::MIN;
    let mut copied = 0i64;
    loop {
        let rows = read_chunk(db, &select, after, &types)?;
        if rows.is_empty() {
            break;
        }
        for (rowid, values) in &rows {
            let params: Vec<&(dyn ToSql + Sync)> = values.iter().map(Bound::param).collect();
            tx.execute(&statement, &params)
                .await
                .map_err(|e| failed(&format!("copying {table} row {rowid}"), e))?;
            after = *rowid;
            copied += 1;
        }
    }
    for (column, _, counter) in &target {
        if *counter {
            tx.execute(
                &format!(
                    "SELECT setval(pg_get_serial_sequence('{table}', '{column}'), \
                     COALESCE((SELECT MAX({column}) FROM {table}), 0) + 1, false)"
                ),
                &[],
            )
            .await
            .map_err(|e| failed(&format!("continuing {table}.{column}"), e))?;
        }
    }
    Ok(copied)
}

/// Up to [`CHUNK`] rows of `select` after `rowid`, bound for the target's `types`.
fn read_chunk(
    db: &Connection,
    select: &str,
    after: i64,
    types: &[String],
) -> Result<Vec<(i64, Vec<Bound>)>, CopyError> {
    let mut stmt = db
        .prepare_cached(select)
        .map_err(|e| failed("reading the source", e))?;
    let mut rows = stmt
        .query([after])
        .map_err(|e| failed("reading the source", e))?;
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(|e| failed("reading the source", e))? {
        let rowid: i64 = row.get(0).map_err(|e| failed("reading the source", e))?;
        let mut values = Vec::with_capacity(types.len());
        for (i, ty) in types.iter().enumerate() {
            let value = row
                .get_ref(i + 1)
                .map_err(|e| failed("reading the source", e))?;
            let bad = |e: String| CopyError::Failed(format!("row {rowid}, column {}: {e}", i + 1));
            if ty == PACKED {
                let (body, packed) = match value {
                    ValueRef::Blob(b) => (Bound::Text(None), Bound::Bytes(Some(b.to_vec()))),
                    other => (bind(other, "text").map_err(bad)?, Bound::Bytes(None)),
                };
                values.extend([body, packed]);
            } else {
                values.push(bind(value, ty).map_err(bad)?);
            }
        }
        out.push((rowid, values));
    }
    Ok(out)
}
