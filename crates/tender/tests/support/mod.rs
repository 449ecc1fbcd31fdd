//! Running the `tender` binary from tests: start `serve` on port 0, read its printed addresses,
//! kill it; and PostgreSQL schemas for the multi-node tests.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use serde_json::{json, Value};

pub struct Server {
    pub child: Child,
    pub base: String,
    pub lines: Vec<String>,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// Sends a signal by name (`TERM`, `HUP`…).
    pub fn signal(&self, name: &str) {
        let status = Command::new("kill")
            .arg(format!("-{name}"))
            .arg(self.child.id().to_string())
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// SIGKILL: no graceful shutdown, no chance to release anything.
    pub fn kill(&mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }
}

pub fn tender() -> Command {
    Command::new(env!("CARGO_BIN_EXE_tender"))
}

/// Starts `tender serve` on port 0 with `data_dir`, reading stdout until the `receipts on` line.
pub fn serve(data_dir: &Path, extra: &[&str], env: &[(&str, &str)]) -> Server {
    serve_logging(data_dir, extra, env, None)
}

/// Like [`serve`], writing the server's stderr (its logs) to `stderr` when given.
pub fn serve_logging(
    data_dir: &Path,
    extra: &[&str],
    env: &[(&str, &str)],
    stderr: Option<&Path>,
) -> Server {
    let stderr = match stderr {
        Some(path) => Stdio::from(std::fs::File::create(path).unwrap()),
        None => Stdio::null(),
    };
    serve_with(data_dir, extra, env, stderr)
}

/// Like [`serve`], with the server's stderr going to `stderr` (`Stdio::piped()` leaves the
/// read end in `child.stderr`).
pub fn serve_with(data_dir: &Path, extra: &[&str], env: &[(&str, &str)], stderr: Stdio) -> Server {
    let mut cmd = tender();
    cmd.arg("serve");
    // Defaults for what the caller does not set itself (clap refuses a flag given twice).
    for (flag, value) in [
        ("--listen", "127.0.0.1:0"),
        ("--receipt-listen", "127.0.0.1:0"),
        ("--rate-limit", "0"),
    ] {
        if !extra.contains(&flag) {
            cmd.args([flag, value]);
        }
    }
    cmd.arg("--data-dir")
        .arg(data_dir)
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(stderr);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("spawn tender");
    let stdout = child.stdout.take().unwrap();
    let mut reader = BufReader::new(stdout);
    let mut lines = Vec::new();
    let mut base = String::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap() == 0 {
            panic!("tender exited early; output: {lines:?}");
        }
        let line = line.trim_end().to_string();
        if let Some(addr) = line.strip_prefix("listening on ") {
            base = addr.to_string();
        }
        let done = line.starts_with("receipts on http");
        lines.push(line);
        if done {
            break;
        }
    }
    // Keep draining stdout so the child never blocks on a full pipe.
    std::thread::spawn(move || for _ in reader.lines() {});
    Server { child, base, lines }
}

/// Runs `tender serve` on port 0 that is expected to refuse to start; its exit and stderr.
pub fn serve_refused(data_dir: &Path, env: &[(&str, &str)]) -> (bool, String) {
    let mut cmd = tender();
    cmd.args([
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--receipt-listen",
        "127.0.0.1:0",
    ])
    .arg("--data-dir")
    .arg(data_dir);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

pub fn secret_from(lines: &[String]) -> Option<String> {
    lines.iter().find_map(|l| {
        l.trim()
            .strip_prefix("test secret key:")
            .map(|k| k.trim().to_string())
    })
}

pub fn card_payment(amount: i64) -> Value {
    json!({"amount": amount, "currency": "usd", "payment_method": {"type": "card", "card": {"number": "4242424242424242", "exp_month": 12, "exp_year": 2034, "cvc": "123"}}})
}

pub fn pg_admin_url() -> String {
    std::env::var("TENDER_TEST_DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_string())
}

/// A fresh schema and a database URL that uses it, or `None` (with a note on stderr) when no
/// PostgreSQL is reachable and `TENDER_REQUIRE_POSTGRES` is not `1`.
pub async fn pg_schema() -> Option<(String, String)> {
    let admin = pg_admin_url();
    match tokio_postgres::connect(&admin, tokio_postgres::NoTls).await {
        Ok((client, conn)) => {
            tokio::spawn(conn);
            let name = format!("m_{}", tender_core::ids::random_base62(16).to_lowercase());
            client
                .batch_execute(&format!("CREATE SCHEMA {name}"))
                .await
                .unwrap();
            let sep = if admin.contains('?') { '&' } else { '?' };
            Some((
                format!("{admin}{sep}options=-c%20search_path%3D{name}"),
                name,
            ))
        }
        Err(e) => {
            if std::env::var("TENDER_REQUIRE_POSTGRES").as_deref() == Ok("1") {
                panic!("TENDER_REQUIRE_POSTGRES=1 but PostgreSQL at {admin} is unreachable: {e}");
            }
            eprintln!("skipped: multi-node tests need PostgreSQL at {admin}: {e}");
            None
        }
    }
}
