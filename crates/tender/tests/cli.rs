//! The binary as an operator uses it: `tender serve` output, `tender accounts create`, and
//! durability across SIGKILL and restart.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use serde_json::{json, Value};

mod support;
use support::{serve, tender};

fn secret_from(lines: &[String]) -> String {
    support::secret_from(lines).expect("bootstrap prints the test secret key")
}

async fn pay(
    client: &reqwest::Client,
    base: &str,
    key: &str,
    idem: &str,
) -> reqwest::Result<reqwest::Response> {
    client
        .post(format!("{base}/v2/payments"))
        .bearer_auth(key)
        .header("Idempotency-Key", idem)
        .json(&json!({"amount": 1000, "currency": "usd", "payment_method": {"type": "card", "card": {"number": "4242424242424242", "exp_month": 12, "exp_year": 2034, "cvc": "123"}}}))
        .send()
        .await
}

#[tokio::test]
async fn first_start_prints_keys_and_login_once_then_only_the_addresses() {
    let dir = tempfile::tempdir().unwrap();
    let first = serve(dir.path(), &[], &[]);
    assert!(first
        .lines
        .iter()
        .any(|l| l.contains("test secret key:") && l.contains("sk_test_")));
    assert!(first
        .lines
        .iter()
        .any(|l| l.contains("test publishable key:") && l.contains("pk_test_")));
    assert!(first
        .lines
        .iter()
        .any(|l| l.contains("dashboard login:") && l.contains('@')));
    assert!(first.base.starts_with("http://127.0.0.1:") && !first.base.ends_with(":0"));
    // Live keys, the dashboard's address and the vault key to back up are printed too.
    for wanted in ["live secret key:", "dashboard:", "vault key:"] {
        assert!(
            first.lines.iter().any(|l| l.contains(wanted)),
            "{wanted}: {:?}",
            first.lines
        );
    }
    let key = secret_from(&first.lines);
    let r = reqwest::Client::new()
        .get(format!("{}/v2/payments", first.base))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    drop(first);
    let second = serve(dir.path(), &[], &[]);
    assert_eq!(second.lines.len(), 2, "{:?}", second.lines);
    assert!(second.lines[0].starts_with("listening on http://"));
    assert!(second.lines[1].starts_with("receipts on http://"));
}

#[tokio::test]
async fn accounts_create_prints_json_and_works_while_a_server_runs() {
    let dir = tempfile::tempdir().unwrap();
    let server = serve(dir.path(), &[], &[]);
    let out = tender()
        .args([
            "accounts",
            "create",
            "--email",
            "shop@example.com",
            "--name",
            "Shop",
            "--password",
            "correct horse",
        ])
        .arg("--data-dir")
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let created: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert!(created["account"].as_str().unwrap().starts_with("acct_"));
    assert_eq!(created["email"], "shop@example.com");
    assert_eq!(created["password"], "correct horse");
    for (mode, kind, prefix) in [
        ("test", "secret", "sk_test_"),
        ("test", "publishable", "pk_test_"),
        ("live", "secret", "sk_live_"),
        ("live", "publishable", "pk_live_"),
    ] {
        assert!(created["keys"][mode][kind]
            .as_str()
            .unwrap()
            .starts_with(prefix));
    }
    let key = created["keys"]["test"]["secret"].as_str().unwrap();
    let r = reqwest::Client::new()
        .get(format!("{}/v2/customers", server.base))
        .bearer_auth(key)
        .send()
        .await
        .unwrap();
    assert_eq!(
        r.status(),
        200,
        "the running server sees the new account at once"
    );
    let bad = tender()
        .args(["accounts", "create", "--email", "not-an-email"])
        .arg("--data-dir")
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(!bad.status.success());
}

#[test]
fn an_unknown_database_scheme_is_refused_with_a_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    let out = tender()
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--receipt-listen",
            "127.0.0.1:0",
            "--database-url",
            "mysql://localhost/db",
        ])
        .arg("--data-dir")
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("unsupported database URL scheme"));
}

#[tokio::test]
async fn acknowledged_payments_survive_sigkill_and_pending_webhooks_are_delivered_after_restart() {
    let dir = tempfile::tempdir().unwrap();
    let server = serve(dir.path(), &["--webhook-retry-scale", "0.001"], &[]);
    let key = secret_from(&server.lines);
    let client = reqwest::Client::new();

    // An endpoint that is down: deliveries stay pending across the crash.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let ep = client
        .post(format!("{}/v2/webhook_endpoints", server.base))
        .bearer_auth(&key)
        .json(&json!({"url": format!("http://127.0.0.1:{port}/hook"), "enabled_events": ["payment.succeeded"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(ep.status(), 200);

    let mut acknowledged = Vec::new();
    for i in 0..40 {
        let r = pay(&client, &server.base, &key, &format!("crash-{i}"))
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        let body: Value = r.json().await.unwrap();
        acknowledged.push(body["id"].as_str().unwrap().to_string());
    }
    let mut server = server;
    server.kill(); // SIGKILL

    // A receiver on the endpoint's port, then the restart.
    let received = std::sync::Arc::new(std::sync::Mutex::new(std::collections::HashSet::new()));
    let rec = received.clone();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |body: axum::body::Bytes| {
            let rec = rec.clone();
            async move {
                let v: Value = serde_json::from_slice(&body).unwrap();
                rec.lock()
                    .unwrap()
                    .insert(v["data"]["object"]["id"].as_str().unwrap().to_string());
                "ok"
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    let restarted = serve(dir.path(), &["--webhook-retry-scale", "0.001"], &[]);
    for id in &acknowledged {
        let r = client
            .get(format!("{}/v2/payments/{id}", restarted.base))
            .bearer_auth(&key)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200, "acknowledged payment {id} was lost");
    }
    // Retrying with the same keys after the crash replays, never charges again.
    let r = pay(&client, &restarted.base, &key, "crash-0")
        .await
        .unwrap();
    assert_eq!(r.headers().get("idempotent-replayed").unwrap(), "true");

    // Deliveries the killed worker had leased wait for the lease (20 s) to expire.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while received.lock().unwrap().len() < acknowledged.len()
        && std::time::Instant::now() < deadline
    {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let got = received.lock().unwrap().clone();
    for id in &acknowledged {
        assert!(got.contains(id), "the webhook for {id} was never delivered");
    }
}

/// Logs in to the dashboard over HTTP; the status of the login POST (303 = logged in) and the
/// session cookie.
async fn dashboard_login(base: &str, email: &str, password: &str) -> (u16, Option<String>) {
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let page = client
        .get(format!("{base}/dashboard/login"))
        .send()
        .await
        .unwrap();
    let token = page
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find_map(|c| c.strip_prefix("tender_login="))
        .and_then(|c| c.split(';').next())
        .unwrap()
        .to_string();
    let resp = client
        .post(format!("{base}/dashboard/login"))
        .header("cookie", format!("tender_login={token}"))
        .form(&[
            ("csrf_token", token.as_str()),
            ("email", email),
            ("password", password),
        ])
        .send()
        .await
        .unwrap();
    let session = resp
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find_map(|c| c.strip_prefix("tender_session="))
        .and_then(|c| c.split(';').next())
        .map(str::to_string);
    (resp.status().as_u16(), session)
}

/// First-run review findings 5, 7 and 11: the operator can reset a lost dashboard password from
/// the CLI (every session of the old one ends), give the account the business name and public
/// e-mail customers see on receipts, and a taken e-mail is said so.
#[tokio::test]
async fn the_operator_resets_a_password_names_the_business_and_is_told_an_email_is_taken() {
    let dir = tempfile::tempdir().unwrap();
    let s = serve(dir.path(), &[], &[]);
    let login = s
        .lines
        .iter()
        .find_map(|l| l.trim().strip_prefix("dashboard login:"))
        .unwrap()
        .trim()
        .to_string();
    let (email, password) = login.split_once(" / ").unwrap();
    let (status, old_session) = dashboard_login(&s.base, email, password).await;
    assert_eq!(status, 303);
    let old_session = old_session.unwrap();

    let run = |args: &[&str]| {
        let out = tender()
            .args(args)
            .arg("--data-dir")
            .arg(dir.path())
            .output()
            .unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    // Reset by login e-mail, with a generated password.
    let (ok, out, err) = run(&["accounts", "set-password", "--account", email]);
    assert!(ok, "{err}");
    let printed: Value = serde_json::from_str(out.trim()).unwrap();
    let new_password = printed["password"].as_str().unwrap();
    assert_eq!(dashboard_login(&s.base, email, password).await.0, 401);
    assert_eq!(dashboard_login(&s.base, email, new_password).await.0, 303);
    let old = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
        .get(format!("{}/dashboard/payments", s.base))
        .header("cookie", format!("tender_session={old_session}"))
        .send()
        .await
        .unwrap();
    assert_eq!(old.status(), 303, "the old session survived the reset");

    // The business identity on receipts.
    let account = printed["account"].as_str().unwrap();
    let (ok, out, err) = run(&[
        "accounts",
        "update",
        "--account",
        account,
        "--name",
        "Corner Café",
        "--public-email",
        "hello@corner.example",
    ]);
    assert!(ok, "{err}");
    assert!(out.contains("Corner Café"));
    let key = secret_from(&s.lines);
    let paid: Value = pay(&reqwest::Client::new(), &s.base, &key, "r1")
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let receipt = reqwest::get(paid["receipt_url"].as_str().unwrap())
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(receipt.contains("Receipt from Corner Café"), "{receipt}");
    assert!(
        !receipt.contains(email),
        "the login e-mail is shown to customers"
    );

    let (ok, _, err) = run(&["accounts", "create", "--email", email]);
    assert!(!ok);
    assert!(err.contains("already exists"), "{err}");
}

#[tokio::test]
async fn connectors_are_managed_from_the_command_line_with_the_key_kept_out_of_flags() {
    let dir = tempfile::tempdir().unwrap();
    let s = serve(dir.path(), &[], &[]);
    let key = secret_from(&s.lines);
    let run = |args: &[&str], env: &[(&str, &str)]| {
        let out = tender()
            .args(args)
            .arg("--data-dir")
            .arg(dir.path())
            .envs(env.iter().copied())
            .output()
            .unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let account = "admin@tender.local";
    // A refused setting is said in the API's words, with a non-zero exit.
    let (ok, _, err) = run(
        &[
            "connectors",
            "create",
            "--account",
            account,
            "--mode",
            "test",
            "--type",
            "stripe",
        ],
        &[],
    );
    assert!(!ok);
    assert!(err.contains("api_key"), "{err}");
    let (ok, out, err) = run(
        &[
            "connectors",
            "create",
            "--account",
            account,
            "--mode",
            "test",
            "--type",
            "stripe",
            "--priority",
            "2",
            "--name",
            "Stripe",
        ],
        &[("TENDER_CONNECTOR_API_KEY", "sk_test_fromtheenv5678")],
    );
    assert!(ok, "{err}");
    assert!(!out.contains("sk_test_fromtheenv5678"), "{out}");
    let created: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(created["api_key_last4"], "5678");
    let id = created["id"].as_str().unwrap().to_string();
    // The running server sees it at once.
    let seen: Value = reqwest::Client::new()
        .get(format!("{}/v2/connectors/{id}", s.base))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(seen["priority"], 2);
    let (ok, out, err) = run(
        &[
            "connectors",
            "update",
            "--account",
            account,
            "--mode",
            "test",
            "--connector",
            &id,
            "--disabled",
            "true",
        ],
        &[],
    );
    assert!(ok, "{err}");
    assert!(out.contains("\"disabled\""), "{out}");
    let (ok, out, _) = run(
        &["connectors", "list", "--account", account, "--mode", "test"],
        &[],
    );
    assert!(ok);
    assert_eq!(out.lines().count(), 1);
    let (ok, out, _) = run(
        &["connectors", "list", "--account", account, "--mode", "live"],
        &[],
    );
    assert!(ok);
    assert_eq!(out.lines().count(), 0);
    let (ok, out, err) = run(
        &[
            "connectors",
            "delete",
            "--account",
            account,
            "--mode",
            "test",
            "--connector",
            &id,
        ],
        &[],
    );
    assert!(ok, "{err}");
    assert!(out.contains("\"deleted\":true"), "{out}");
}
