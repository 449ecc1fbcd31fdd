//! The reference servers the harness measures Tender against, each run as a subprocess of the
//! harness (`tender-bench echo`, `tender-bench pg-insert`) so that, like Tender, it has a process
//! and a runtime of its own:
//!
//! - the echo ceiling: axum + tokio parsing a JSON body and writing it back;
//! - the bare durable insert: the same, plus one `INSERT` of the body into PostgreSQL on a pool
//!   of 16 connections with `synchronous_commit = on`, answered after the commit.

use std::net::SocketAddr;
use std::sync::Arc;

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

async fn insert(
    State(pool): State<Arc<Pool>>,
    Json(body): Json<Value>,
) -> Result<Json<Value>, (StatusCode, String)> {
    let fail = |e: String| (StatusCode::INTERNAL_SERVER_ERROR, e);
    let client = pool.get().await.map_err(|e| fail(e.to_string()))?;
    let stmt = client
        .prepare_cached("INSERT INTO bench_insert (body) VALUES ($1) RETURNING id")
        .await
        .map_err(|e| fail(e.to_string()))?;
    let text = body.to_string();
    let row = client
        .query_one(&stmt, &[&text])
        .await
        .map_err(|e| fail(e.to_string()))?;
    let id: i64 = row.get(0);
    Ok(Json(serde_json::json!({"id": id, "object": "insert"})))
}

/// `tender-bench pg-insert`: `POST /insert` stores the JSON body durably, then answers.
pub async fn run_pg_insert(listen: SocketAddr, url: &str) -> anyhow::Result<()> {
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
    let router = Router::new()
        .route("/insert", post(insert))
        .route("/health", get(ok))
        .with_state(Arc::new(pool));
    serve(router, listen).await
}
