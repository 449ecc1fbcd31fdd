//! The ceilings Tender is measured against: a bare durable insert of the same JSON into the same
//! store (SQLite or PostgreSQL), through the same HTTP stack.

use crate::load::{drive_server, Call, MakeRequest, Target};
use crate::process::Server;
use crate::{echo_body, Report, RunArgs};
use rand::Rng;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

/// Which bare durable insert.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Baseline {
    /// One SQLite file, one writer thread, group commit.
    Sqlite,
    /// PostgreSQL, pool of 16, in a schema of its own.
    Postgres,
}

impl Baseline {
    /// The report's row: `sqlite bare insert`, or `… ×9` when each request stores 9 rows.
    fn row(self, rows: usize) -> String {
        let name = match self {
            Baseline::Sqlite => "sqlite bare insert",
            Baseline::Postgres => "pg bare insert",
        };
        match rows {
            1 => name.to_string(),
            n => format!("{name} ×{n}"),
        }
    }
}

/// The rows one create payment writes in its transaction: the payment, its event, the
/// idempotency record, the balance transaction, the ledger posting and its three entries, and
/// the task that makes the funds available (besides three balance rows it updates). The bare
/// inserts also run with this many rows per request: the ceiling for a write of that size.
pub(crate) const CREATE_ROWS: usize = 9;

/// The operation label of both bare-insert rows.
pub(crate) const BARE_INSERT_OP: &str = "POST 309-byte JSON → INSERT";

/// The bare durable insert of the same body: the ceiling of Tender's create on that backend.
pub(crate) async fn bare_insert(
    exe: &Path,
    client: &crate::load::HttpClient,
    args: &RunArgs,
    logs: &tempfile::TempDir,
    report: &mut Report,
    baseline: Baseline,
    rows: usize,
) -> anyhow::Result<()> {
    let schema = format!("bench_base_{}", rand::thread_rng().gen::<u32>());
    let dir = tempfile::Builder::new()
        .prefix("tender-bench-insert-")
        .tempdir()?;
    let mut cmd = Command::new(exe);
    match baseline {
        Baseline::Postgres => {
            crate::pg::execute(&args.database_url, &format!("CREATE SCHEMA {schema}")).await?;
            let url = crate::pg::schema_url(&args.database_url, &schema);
            cmd.args([
                "pg-insert",
                "--listen",
                "127.0.0.1:0",
                "--database-url",
                &url,
                "--rows",
                &rows.to_string(),
            ]);
        }
        Baseline::Sqlite => {
            cmd.args(["sqlite-insert", "--listen", "127.0.0.1:0", "--rows"])
                .arg(rows.to_string())
                .arg("--path")
                .arg(dir.path().join("insert.sqlite3"));
        }
    }
    let result = async {
        let server = Server::start(
            cmd,
            &logs
                .path()
                .join(format!("{}.log", baseline.row(rows).replace(' ', "-"))),
            Duration::from_secs(30),
        )?;
        let target = Target::new(client.clone(), &server.base, None)?;
        let body = echo_body();
        for &c in &args.concurrency {
            let b = body.clone();
            let make: MakeRequest = Arc::new(move |_, _| Call::post_json("/insert", b.clone()));
            let d = Duration::from_secs(args.seconds);
            let s = drive_server(&target, Some(server.pid()), c, d, make).await;
            eprintln!("{} c{c}: {:.0} req/s", baseline.row(rows), s.rps());
            report.put(&baseline.row(rows), BARE_INSERT_OP, c, s);
        }
        report
            .rss
            .push((baseline.row(rows), server.peak_rss().unwrap_or(0)));
        server.stop();
        anyhow::Ok(())
    }
    .await;
    if baseline == Baseline::Postgres {
        crate::pg::execute(&args.database_url, &format!("DROP SCHEMA {schema} CASCADE")).await?;
    }
    result
}
