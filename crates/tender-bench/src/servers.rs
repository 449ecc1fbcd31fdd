//! The reference servers the harness measures Tender against, each run as a subprocess of the
//! harness (`tender-bench echo`, `tender-bench pg-insert`) so that, like Tender, it has a process
//! and a runtime of its own:
//!
//! - the echo ceiling: axum + tokio parsing a JSON body and writing it back;
//! - the bare durable insert: the same, plus one `INSERT` of the body into PostgreSQL on a pool
//!   of 16 connections with `synchronous_commit = on`, answered after the commit;
//! - the bare durable SQLite insert: the same body as one row of a SQLite file (WAL,
//!   `synchronous=FULL`) through one writer thread that commits in groups (whatever is queued,
//!   up to 256 rows, one COMMIT and so one fsync), answered after its group committed. It is
//!   the ceiling of any SQLite server that answers only what is durable.
//!
//! Both inserts take `--rows N`: each request then stores its body as N rows in the one
//! transaction (SQLite: N statements; PostgreSQL: one `INSERT … SELECT` of N rows), the ceiling
//! for a write of as many rows as a create payment makes ([`crate::CREATE_ROWS`]).

use std::net::SocketAddr;
use std::path::Path;
use std::sync::{mpsc, Arc};

use anyhow::Context;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use serde_json::Value;

/// Pool size of the bare-insert baseline (the reference figure uses 16).
pub const BASELINE_POOL: usize = 16;

async fn echo(Json(body): Json<Value>) -> Json<Value> {
    Json(body)
}

async fn ok() -> Json<Value> {
    Json(serde_json::json!({"ok": true}))
}

async fn serve(router: Router, listen: SocketAddr) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(listen).await?;
    println!("listening on http://{}", listener.local_addr()?);
    axum::serve(listener, router).await?;
    Ok(())
}

/// `tender-bench echo`: `POST /echo` answers the JSON body it was sent; `GET /echo` a constant.
pub async fn run_echo(listen: SocketAddr) -> anyhow::Result<()> {
    let router = Router::new().route("/echo", post(echo).get(ok));
    serve(router, listen).await
}

/// The pool and the statement each request runs.
struct PgInsert {
    pool: Pool,
    sql: String,
}

async fn insert(
    State(pg): State<Arc<PgInsert>>,
    Json(body): Json<Value>,
) -> Result<Json<Value>, (StatusCode, String)> {
    let fail = |e: String| (StatusCode::INTERNAL_SERVER_ERROR, e);
    let client = pg.pool.get().await.map_err(|e| fail(e.to_string()))?;
    let stmt = client
        .prepare_cached(&pg.sql)
        .await
        .map_err(|e| fail(e.to_string()))?;
    let text = body.to_string();
    let rows = client
        .query(&stmt, &[&text])
        .await
        .map_err(|e| fail(e.to_string()))?;
    let id: i64 = rows.first().map_or(0, |r| r.get(0));
    Ok(Json(serde_json::json!({"id": id, "object": "insert"})))
}

/// `tender-bench pg-insert`: `POST /insert` stores the JSON body durably (as `rows` rows), then
/// answers.
pub async fn run_pg_insert(listen: SocketAddr, url: &str, rows: usize) -> anyhow::Result<()> {
    let pg: tokio_postgres::Config = url.parse().context("database URL")?;
    let manager = Manager::from_config(
        pg,
        tokio_postgres::NoTls,
        ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        },
    );
    let pool = Pool::builder(manager).max_size(BASELINE_POOL).build()?;
    {
        let client = pool.get().await?;
        client
            .batch_execute(
                "CREATE TABLE IF NOT EXISTS bench_insert (id BIGSERIAL PRIMARY KEY, body TEXT NOT NULL)",
            )
            .await?;
    }
    let sql = match rows {
        1 => "INSERT INTO bench_insert (body) VALUES ($1) RETURNING id".to_string(),
        n => format!(
            "INSERT INTO bench_insert (body) SELECT $1 FROM generate_series(1, {n}) RETURNING id"
        ),
    };
    let router = Router::new()
        .route("/insert", post(insert))
        .route("/health", get(ok))
        .with_state(Arc::new(PgInsert { pool, sql }));
    serve(router, listen).await
}

/// One row to insert and where to say it is durable.
type SqliteJob = (String, tokio::sync::oneshot::Sender<Result<i64, String>>);

/// Most rows one SQLite transaction of the baseline carries (as Tender's writer).
const SQLITE_GROUP: usize = 256;

async fn sqlite_insert(
    State(jobs): State<mpsc::Sender<SqliteJob>>,
    Json(body): Json<Value>,
) -> Result<Json<Value>, (StatusCode, String)> {
    let fail = |e: String| (StatusCode::INTERNAL_SERVER_ERROR, e);
    let (tx, rx) = tokio::sync::oneshot::channel();
    jobs.send((body.to_string(), tx))
        .map_err(|_| fail("writer gone".into()))?;
    let id = rx
        .await
        .map_err(|_| fail("writer gone".into()))?
        .map_err(fail)?;
    Ok(Json(serde_json::json!({"id": id, "object": "insert"})))
}

/// The writer thread: each group of queued requests (`rows` rows each) in one transaction,
/// answered after COMMIT.
fn sqlite_writer(conn: rusqlite::Connection, jobs: mpsc::Receiver<SqliteJob>, rows: usize) {
    while let Ok(first) = jobs.recv() {
        let mut group = vec![first];
        while group.len() < SQLITE_GROUP {
            match jobs.try_recv() {
                Ok(job) => group.push(job),
                Err(_) => break,
            }
        }
        let mut ids = Vec::with_capacity(group.len());
        let result = (|| -> rusqlite::Result<()> {
            conn.execute_batch("BEGIN IMMEDIATE")?;
            let mut stmt = conn.prepare_cached("INSERT INTO bench_insert (body) VALUES (?1)")?;
            for (body, _) in &group {
                for _ in 0..rows {
                    stmt.execute([body])?;
                }
                ids.push(conn.last_insert_rowid());
            }
            drop(stmt);
            conn.execute_batch("COMMIT")
        })();
        match result {
            Ok(()) => {
                for ((_, reply), id) in group.into_iter().zip(ids) {
                    let _ = reply.send(Ok(id));
                }
            }
            Err(e) => {
                let _ = conn.execute_batch("ROLLBACK");
                for (_, reply) in group {
                    let _ = reply.send(Err(e.to_string()));
                }
            }
        }
    }
}

/// `tender-bench sqlite-insert`: `POST /insert` stores the JSON body durably in `path` (as
/// `rows` rows), then answers.
pub async fn run_sqlite_insert(listen: SocketAddr, path: &Path, rows: usize) -> anyhow::Result<()> {
    let conn = rusqlite::Connection::open(path)?;
    conn.execute_batch(
        "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;
         CREATE TABLE IF NOT EXISTS bench_insert (id INTEGER PRIMARY KEY, body TEXT NOT NULL);",
    )?;
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name("bench-sqlite-writer".into())
        .spawn(move || sqlite_writer(conn, rx, rows))?;
    let router = Router::new()
        .route("/insert", post(sqlite_insert))
        .route("/health", get(ok))
        .with_state(tx);
    serve(router, listen).await
}
