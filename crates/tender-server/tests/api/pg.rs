//! PostgreSQL for the test suite: one fresh schema per test on the server named by
//! `TENDER_TEST_DATABASE_URL` (default `postgres://postgres@127.0.0.1:5432/test`).
//!
//! Where no server is reachable the PostgreSQL tests are skipped, saying so on stderr — unless
//! `TENDER_REQUIRE_POSTGRES=1` (CI sets it), which turns "unreachable" into a failure.

use std::sync::atomic::{AtomicBool, Ordering};

pub fn admin_url() -> String {
    std::env::var("TENDER_TEST_DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_string())
}

static WARNED: AtomicBool = AtomicBool::new(false);

/// Creates a uniquely named schema and returns a URL whose connections use it.
pub async fn fresh_schema() -> Option<(String, String)> {
    let admin = admin_url();
    let client = match tokio_postgres::connect(&admin, tokio_postgres::NoTls).await {
        Ok((client, conn)) => {
            tokio::spawn(conn);
            client
        }
        Err(e) => {
            if std::env::var("TENDER_REQUIRE_POSTGRES").as_deref() == Ok("1") {
                panic!("TENDER_REQUIRE_POSTGRES=1 but PostgreSQL at {admin} is unreachable: {e}");
            }
            if !WARNED.swap(true, Ordering::SeqCst) {
                eprintln!("skipped: PostgreSQL tests need a server at {admin} (set TENDER_TEST_DATABASE_URL): {e}");
            }
            return None;
        }
    };
    let name = format!("t_{}", tender_core::ids::random_base62(16).to_lowercase());
    client
        .batch_execute(&format!("CREATE SCHEMA {name}"))
        .await
        .expect("create schema");
    let sep = if admin.contains('?') { '&' } else { '?' };
    Some((
        format!("{admin}{sep}options=-c%20search_path%3D{name}"),
        name,
    ))
}

/// Where the `host:port` part of a `postgres://user@host:port/db` URL is.
fn host_span(url: &str) -> std::ops::Range<usize> {
    let at = url.find('@').map_or(url.find("//").unwrap() + 2, |i| i + 1);
    at..at + url[at..].find('/').unwrap()
}

/// `url` with its `host:port` replaced by `via`.
#[allow(dead_code)] // used by the PostgreSQL-only modules
pub fn with_host(url: &str, via: &str) -> String {
    let span = host_span(url);
    format!("{}{via}{}", &url[..span.start], &url[span.end..])
}

/// The `host:port` of the test server.
#[allow(dead_code)]
pub fn server_address() -> String {
    let url = admin_url();
    url[host_span(&url)].to_string()
}

/// Drops its schema when the test ends.
pub struct SchemaGuard(pub String);

impl Drop for SchemaGuard {
    fn drop(&mut self) {
        let name = self.0.clone();
        let _ = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async {
                if let Ok((client, conn)) =
                    tokio_postgres::connect(&admin_url(), tokio_postgres::NoTls).await
                {
                    tokio::spawn(conn);
                    // The test's own runtime is blocked on this thread's join, so a transaction
                    // its app still had open (a webhook worker mid-attempt) can never finish and
                    // would hold DROP SCHEMA forever: end the sessions holding locks in the
                    // schema first.
                    let _ = client
                        .execute(
                            "SELECT pg_terminate_backend(l.pid) FROM pg_locks l
                             JOIN pg_class c ON c.oid = l.relation
                             JOIN pg_namespace n ON n.oid = c.relnamespace
                             WHERE n.nspname = $1 AND l.pid <> pg_backend_pid()",
                            &[&name],
                        )
                        .await;
                    let _ = client
                        .batch_execute(&format!("DROP SCHEMA IF EXISTS {name} CASCADE"))
                        .await;
                }
            });
        })
        .join();
    }
}

/// Every row of every table of `schema`, as text.
pub async fn dump_schema(schema: &str) -> Vec<u8> {
    let (client, conn) = tokio_postgres::connect(&admin_url(), tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    let tables = client
        .query(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = $1",
            &[&schema],
        )
        .await
        .unwrap();
    let mut out = Vec::new();
    for t in tables {
        let name: String = t.get(0);
        for row in client
            .query(&format!("SELECT t::text FROM {schema}.{name} t"), &[])
            .await
            .unwrap()
        {
            out.extend(row.get::<_, String>(0).into_bytes());
        }
    }
    out
}
