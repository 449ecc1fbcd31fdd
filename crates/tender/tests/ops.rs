//! Operating Tender: health and metrics, structured logs, graceful shutdown, TLS with reload,
//! the listen-address rule, and the operator CLI (keys, accounts, migrate, backup, config check).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use serde_json::Value;

mod support;
use support::{card_payment, secret_from, serve, serve_logging, serve_refused, serve_with, tender};

#[tokio::test]
async fn health_readiness_and_metrics_answer_without_a_key() {
    let dir = tempfile::tempdir().unwrap();
    let s = serve(dir.path(), &[], &[]);
    let key = secret_from(&s.lines).unwrap();
    let c = reqwest::Client::new();
    assert_eq!(
        c.get(format!("{}/healthz", s.base))
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    let ready = c.get(format!("{}/readyz", s.base)).send().await.unwrap();
    assert_eq!(ready.status(), 200);
    assert_eq!(ready.json::<Value>().await.unwrap()["status"], "ready");
    let p = c
        .post(format!("{}/v2/payments", s.base))
        .bearer_auth(&key)
        .json(&card_payment(1000))
        .send()
        .await
        .unwrap();
    assert_eq!(p.status(), 200);
    let id = p.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    c.get(format!("{}/v2/payments/{id}", s.base))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    let m = c.get(format!("{}/metrics", s.base)).send().await.unwrap();
    assert_eq!(m.status(), 200);
    let text = m.text().await.unwrap();
    assert!(
        text.contains(
            r#"tender_http_requests_total{route="/v2/payments",method="POST",status="200"} 1"#
        ),
        "{text}"
    );
    assert!(
        text.contains(r#"route="/v2/payments/{id}""#),
        "route templates, never raw ids"
    );
    assert!(!text.contains(&id), "payment ids never become labels");
    assert!(text.contains(r#"tender_payments_total{outcome="succeeded"} 1"#));
    assert!(text.contains("tender_http_request_duration_seconds_bucket"));
    assert!(text.contains("tender_webhook_queue_depth 0"));
    assert!(text.contains("tender_db_connections"));
}

#[tokio::test]
async fn json_logs_have_one_line_per_request_and_never_a_card_number() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("stderr.log");
    let s = serve_logging(dir.path(), &["--log-format", "json"], &[], Some(&log));
    let key = secret_from(&s.lines).unwrap();
    let c = reqwest::Client::new();
    let p = c
        .post(format!("{}/v2/payments", s.base))
        .bearer_auth(&key)
        .json(&card_payment(1000))
        .send()
        .await
        .unwrap();
    let request_id = p.headers()["request-id"].to_str().unwrap().to_string();
    c.post(format!("{}/v2/payments", s.base))
        .bearer_auth(&key)
        .body("{not json")
        .header("content-type", "application/json")
        .send()
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    assert!(!lines.is_empty(), "no JSON log lines: {text}");
    let line = lines
        .iter()
        .find(|l| l["request_id"] == request_id.as_str())
        .expect("a line for the request");
    assert_eq!(line["route"], "/v2/payments");
    assert_eq!(line["method"], "POST");
    assert_eq!(line["status"], 200);
    assert!(line["latency_ms"].as_f64().is_some());
    assert!(line["account"].as_str().unwrap().starts_with("acct_"));
    assert!(!text.contains("4242424242424242"));
    assert!(!text.contains(&key), "keys are never logged");
}

#[tokio::test]
async fn sigterm_stops_cleanly_with_exit_code_zero() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = serve(dir.path(), &[], &[]);
    s.signal("TERM");
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    loop {
        if let Some(status) = s.child.try_wait().unwrap() {
            assert!(status.success(), "exit status {status}");
            break;
        }
        assert!(std::time::Instant::now() < deadline, "did not stop");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// First-run review finding 4: with its log reader gone (`tender serve 2>&1 | head -5`, then
/// `head` exits), a stop used to panic in the "shutting down" log line, never signal the
/// workers, and spin a core forever. Logging must never stop the process from stopping.
#[tokio::test]
async fn sigterm_stops_cleanly_after_the_log_reader_went_away() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = serve_with(dir.path(), &[], &[], std::process::Stdio::piped());
    drop(s.child.stderr.take());
    // A request logs a line into the closed pipe.
    let key = secret_from(&s.lines).unwrap();
    let resp = reqwest::Client::new()
        .get(format!("{}/v2/payments", s.base))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    s.signal("TERM");
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    loop {
        if let Some(status) = s.child.try_wait().unwrap() {
            assert!(status.success(), "exit status {status}");
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "did not stop with its log reader gone"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[test]
fn plain_http_on_a_non_loopback_address_is_refused_unless_behind_a_proxy() {
    let dir = tempfile::tempdir().unwrap();
    let out = tender()
        .args([
            "serve",
            "--listen",
            "0.0.0.0:0",
            "--receipt-listen",
            "127.0.0.1:0",
        ])
        .arg("--data-dir")
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--behind-tls-proxy"));
    let s = serve(
        dir.path(),
        &["--listen", "0.0.0.0:0", "--behind-tls-proxy"],
        &[],
    );
    assert!(s
        .lines
        .iter()
        .any(|l| l.starts_with("listening on http://0.0.0.0:")));
}

fn self_signed(
    dir: &std::path::Path,
    name: &str,
) -> (std::path::PathBuf, std::path::PathBuf, Vec<u8>) {
    let cert =
        rcgen::generate_simple_self_signed(vec!["localhost".to_string(), "127.0.0.1".to_string()])
            .unwrap();
    let (cert_path, key_path) = (
        dir.join(format!("{name}.pem")),
        dir.join(format!("{name}.key")),
    );
    let pem = cert.cert.pem();
    std::fs::write(&cert_path, &pem).unwrap();
    std::fs::write(&key_path, cert.key_pair.serialize_pem()).unwrap();
    (cert_path, key_path, pem.into_bytes())
}

fn client_trusting(pem: &[u8]) -> reqwest::Client {
    reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(pem).unwrap())
        .tls_built_in_root_certs(false)
        .build()
        .unwrap()
}

#[tokio::test]
async fn tls_serves_https_and_reloads_the_certificate_on_sighup() {
    let dir = tempfile::tempdir().unwrap();
    let (cert, key, pem) = self_signed(dir.path(), "first");
    let s = serve(
        dir.path(),
        &[
            "--tls-cert",
            cert.to_str().unwrap(),
            "--tls-key",
            key.to_str().unwrap(),
        ],
        &[],
    );
    assert!(s.base.starts_with("https://"), "{}", s.base);
    assert!(s
        .lines
        .iter()
        .any(|l| l.starts_with("receipts on https://")));
    let port = s.base.rsplit(':').next().unwrap().to_string();
    let url = format!("https://localhost:{port}/healthz");
    assert_eq!(
        client_trusting(&pem)
            .get(&url)
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    // Plain HTTP on the TLS port gets nowhere.
    assert!(reqwest::get(format!("http://127.0.0.1:{port}/healthz"))
        .await
        .map(|r| r.status() != 200)
        .unwrap_or(true));

    // A new certificate, then SIGHUP: new connections get it.
    let (new_cert, new_key, new_pem) = self_signed(dir.path(), "second");
    std::fs::copy(&new_cert, &cert).unwrap();
    std::fs::copy(&new_key, &key).unwrap();
    s.signal("HUP");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        if client_trusting(&new_pem)
            .get(&url)
            .send()
            .await
            .map(|r| r.status() == 200)
            .unwrap_or(false)
        {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the new certificate was not served"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        client_trusting(&pem).get(&url).send().await.is_err(),
        "the old certificate is gone"
    );
}

fn run(args: &[&str], dir: &std::path::Path) -> (bool, String, String) {
    let out = tender()
        .args(args)
        .arg("--data-dir")
        .arg(dir)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test]
async fn the_cli_manages_keys_while_the_server_runs() {
    let dir = tempfile::tempdir().unwrap();
    let s = serve(dir.path(), &[], &[]);
    let (ok, out, _) = run(&["accounts", "list"], dir.path());
    assert!(ok);
    let account: Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    let acct = account["account"].as_str().unwrap().to_string();
    let (ok, out, err) = run(
        &["keys", "create", "--account", &acct, "--mode", "live"],
        dir.path(),
    );
    assert!(ok, "{err}");
    let created: Value = serde_json::from_str(out.trim()).unwrap();
    let live_key = created["key"].as_str().unwrap().to_string();
    assert!(live_key.starts_with("sk_live_"));
    let c = reqwest::Client::new();
    let get = |k: String| {
        let c = c.clone();
        let base = s.base.clone();
        async move {
            c.get(format!("{base}/v2/customers"))
                .bearer_auth(k)
                .send()
                .await
                .unwrap()
                .status()
                .as_u16()
        }
    };
    assert_eq!(get(live_key.clone()).await, 200);
    let (ok, out, _) = run(&["keys", "list", "--account", &acct], dir.path());
    assert!(ok);
    assert!(out.contains(&live_key[live_key.len() - 4..]));
    // By the login e-mail too, as the other commands take it (first-run review).
    let email = account["email"].as_str().unwrap();
    let (ok, by_email, err) = run(&["keys", "list", "--account", email], dir.path());
    assert!(ok, "{err}");
    assert_eq!(by_email, out);
    assert!(
        !out.contains(&live_key),
        "secret keys are listed by last four only"
    );
    // Roll with no grace: the old key stops at once, the new one works.
    let key_id = created["id"].as_str().unwrap();
    let (ok, out, err) = run(
        &[
            "keys",
            "roll",
            "--account",
            &acct,
            "--key",
            key_id,
            "--grace",
            "0",
        ],
        dir.path(),
    );
    assert!(ok, "{err}");
    let rolled: Value = serde_json::from_str(out.trim()).unwrap();
    let new_key = rolled["key"].as_str().unwrap().to_string();
    assert_eq!(get(new_key.clone()).await, 200);
    // Another process changed the key: a server caches key lookups for at most 5 s, so the
    // old key stops within that (docs/operations.md), never later.
    let changed_within = |key: String| {
        let get = &get;
        async move {
            let started = std::time::Instant::now();
            while get(key.clone()).await != 401 {
                assert!(
                    started.elapsed() < Duration::from_secs(7),
                    "the key still works after 7 s"
                );
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    };
    changed_within(live_key.clone()).await;
    let (ok, _, err) = run(
        &[
            "keys",
            "revoke",
            "--account",
            &acct,
            "--key",
            rolled["id"].as_str().unwrap(),
        ],
        dir.path(),
    );
    assert!(ok, "{err}");
    changed_within(new_key).await;
    let (ok, _, err) = run(
        &[
            "keys",
            "roll",
            "--account",
            &acct,
            "--key",
            key_id,
            "--grace",
            "999999",
        ],
        dir.path(),
    );
    assert!(!ok && err.contains("grace"), "{err}");
}

#[tokio::test]
async fn backup_copies_a_live_database_that_serves_on_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let s = serve(dir.path(), &[], &[]);
    let key = secret_from(&s.lines).unwrap();
    let c = reqwest::Client::new();
    let p: Value = c
        .post(format!("{}/v2/payments", s.base))
        .bearer_auth(&key)
        .json(&card_payment(777))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let copy = dir.path().join("backup.sqlite3");
    let (ok, out, err) = run(&["backup", copy.to_str().unwrap()], dir.path());
    assert!(ok, "{err}");
    assert!(out.contains("backed up"));
    let (ok, _, err) = run(&["backup", copy.to_str().unwrap()], dir.path());
    assert!(!ok && err.contains("exists"));
    // The copy, with the same vault key, is a working store.
    let restored_dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        dir.path().join("vault.key"),
        restored_dir.path().join("vault.key"),
    )
    .unwrap();
    std::fs::copy(&copy, restored_dir.path().join("tender.sqlite3")).unwrap();
    let r = serve(restored_dir.path(), &[], &[]);
    let got = c
        .get(format!(
            "{}/v2/payments/{}",
            r.base,
            p["id"].as_str().unwrap()
        ))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(got.status(), 200);
    assert_eq!(got.json::<Value>().await.unwrap()["amount"], 777);
}

#[test]
fn migrate_and_config_check_report_on_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let (ok, out, err) = run(&["migrate"], dir.path());
    assert!(ok, "{err}");
    assert!(out.contains("schema is current"));
    let (ok, out, err) = run(&["config", "check"], dir.path());
    assert!(ok, "{err}");
    assert!(out.contains("configuration ok"));
    let (ok, _, err) = run(&["config", "check", "--listen", "0.0.0.0:4242"], dir.path());
    assert!(!ok);
    assert!(err.contains("non-loopback"), "{err}");
    let (ok, _, err) = run(
        &["config", "check", "--database-url", "mysql://x"],
        dir.path(),
    );
    assert!(!ok);
    assert!(err.contains("unsupported database URL scheme"), "{err}");
}

/// First-run review finding 3: a node with another vault key, or a restored database without
/// its `vault.key`, used to report ready and then answer 500 on saved cards. Both are refused at
/// start with a message that says what to do, and `tender config check` says it too.
#[tokio::test]
async fn a_wrong_or_missing_vault_key_is_refused_at_start_and_by_config_check() {
    let dir = tempfile::tempdir().unwrap();
    let s = serve(dir.path(), &[], &[]);
    s.signal("TERM");
    let mut s = s;
    s.child.wait().unwrap();

    let other_key = "22".repeat(32);
    let (started, err) = serve_refused(dir.path(), &[("TENDER_VAULT_KEY", &other_key)]);
    assert!(!started);
    assert!(err.contains("vault key does not match"), "{err}");
    let checked = tender()
        .args(["config", "check", "--data-dir"])
        .arg(dir.path())
        .env("TENDER_VAULT_KEY", &other_key)
        .output()
        .unwrap();
    assert!(!checked.status.success());
    assert!(String::from_utf8_lossy(&checked.stderr).contains("vault key does not match"));
    let (ok, out, err) = run(&["config", "check"], dir.path());
    assert!(ok, "{err}");
    assert!(out.contains("configuration ok"));

    // A backup restored without vault.key: refused, and no new key is made up.
    std::fs::remove_file(dir.path().join("vault.key")).unwrap();
    let (ok, _, err) = run(&["config", "check"], dir.path());
    assert!(!ok);
    assert!(err.contains("vault.key is missing"), "{err}");
    assert!(!dir.path().join("vault.key").exists());
}

/// First-run review finding 6 and security review L8: a second server on the same SQLite data
/// dir is refused while the first runs (it would release the first's requests in flight), and
/// what the server writes there is readable by its own user only.
#[tokio::test]
async fn a_second_server_on_one_data_dir_is_refused_and_files_are_owner_only() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let _first = serve(&data, &[], &[]);
    let (started, err) = serve_refused(&data, &[]);
    assert!(!started);
    assert!(err.contains("another `tender serve` is using"), "{err}");
    // The CLI still works beside the running server.
    let (ok, _, err) = run(&["accounts", "list"], &data);
    assert!(ok, "{err}");

    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&data), 0o700);
        for entry in std::fs::read_dir(&data).unwrap() {
            let path = entry.unwrap().path();
            assert_eq!(mode(&path), 0o600, "{}", path.display());
        }
        let backup = dir.path().join("copy.sqlite3");
        let (ok, _, err) = run(&["backup", backup.to_str().unwrap()], &data);
        assert!(ok, "{err}");
        assert_eq!(mode(&backup), 0o600);
    }
}
