//! The ledger from the command line: `tender accounts pricing`, `tender ledger verify` (exit
//! status and report, on a sound ledger and on one damaged behind the server's back) and
//! `tender reports balance` (the CSV a bookkeeper reconciles with).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Output;

use serde_json::{json, Value};

mod support;
use support::{card_payment, secret_from, serve, tender};

fn run(dir: &Path, args: &[&str]) -> Output {
    tender()
        .args(args)
        .arg("--data-dir")
        .arg(dir)
        .output()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn account_from(lines: &[String]) -> String {
    lines
        .iter()
        .find_map(|l| l.strip_prefix("created account "))
        .and_then(|rest| rest.split_whitespace().next())
        .expect("bootstrap prints the account")
        .to_string()
}

/// Today and tomorrow (UTC) as `YYYY-MM-DD`.
fn today_and_tomorrow() -> (String, String) {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let day = |t: i64| tender_core::clock::format_local(t, 0)[..10].to_string();
    (day(now), day(now + 86_400))
}

#[tokio::test]
async fn pricing_is_set_from_the_command_line_and_the_ledger_is_verified_and_exported() {
    let dir = tempfile::tempdir().unwrap();
    let server = serve(dir.path(), &[], &[]);
    let key = secret_from(&server.lines).unwrap();
    let account = account_from(&server.lines);

    // Prices: shown, then set; a bad one is refused with the flag named.
    let shown = run(dir.path(), &["accounts", "pricing", "--account", &account]);
    assert!(shown.status.success(), "{}", stderr(&shown));
    assert_eq!(
        stdout(&shown).trim(),
        format!("{account}: card 2.9%+30, bank transfer 0.8%/500, dispute 1500")
    );
    let set = run(
        dir.path(),
        &[
            "accounts",
            "pricing",
            "--account",
            &account,
            "--card",
            "3%+25",
            "--bank-transfer",
            "1%/400",
            "--dispute",
            "2000",
        ],
    );
    assert!(set.status.success(), "{}", stderr(&set));
    assert_eq!(
        stdout(&set).trim(),
        format!("{account}: card 3%+25, bank transfer 1%/400, dispute 2000")
    );
    for (flag, value) in [
        ("--card", "3%"),
        ("--bank-transfer", "1%+400"),
        ("--dispute", "15.00"),
    ] {
        let bad = run(
            dir.path(),
            &["accounts", "pricing", "--account", &account, flag, value],
        );
        assert!(!bad.status.success(), "{flag} {value}");
        assert!(stderr(&bad).contains(flag), "{flag}: {}", stderr(&bad));
    }
    let nobody = run(
        dir.path(),
        &["accounts", "pricing", "--account", "acct_nobody"],
    );
    assert!(!nobody.status.success());
    assert!(
        stderr(&nobody).contains("no account"),
        "{}",
        stderr(&nobody)
    );

    // A payment (fee 3% + 25) and a refund through the running server.
    let c = reqwest::Client::new();
    let p: Value = c
        .post(format!("{}/v2/payments", server.base))
        .bearer_auth(&key)
        .json(&card_payment(1000))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(p["status"], "succeeded", "{p}");
    let r = c
        .post(format!("{}/v2/refunds", server.base))
        .bearer_auth(&key)
        .json(&json!({"payment": p["id"], "amount": 300, "metadata": {"why": "a, \"quoted\" reason"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);

    let ok = run(dir.path(), &["ledger", "verify"]);
    assert!(ok.status.success(), "{}{}", stdout(&ok), stderr(&ok));
    let report = stdout(&ok);
    assert!(
        report.contains(&format!(
            "{account} test: 4 balances, 2 transactions, 1 payments: ok"
        )),
        "{report}"
    );
    assert!(
        report.contains(&format!("{account} live: 0 balances")),
        "{report}"
    );
    assert!(report.contains("the ledger holds"), "{report}");

    // The day's transactions as CSV, to a file and to stdout alike.
    let (today, tomorrow) = today_and_tomorrow();
    let file = dir.path().join("balance.csv");
    let file_arg = file.display().to_string();
    let out = run(
        dir.path(),
        &[
            "reports",
            "balance",
            "--account",
            &account,
            "--mode",
            "test",
            "--from",
            &today,
            "--to",
            &tomorrow,
            "--output",
            &file_arg,
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let csv = std::fs::read_to_string(&file).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[0],
        "id,created_utc,available_on_utc,type,reporting_category,status,currency,amount,fee,net,source,held_by,description"
    );
    assert_eq!(lines.len(), 3, "{csv}");
    let charge: Vec<&str> = lines[1].split(',').collect();
    assert_eq!(
        charge[3..11],
        [
            "charge",
            "charge",
            "pending",
            "usd",
            "1000",
            "55",
            "945",
            p["id"].as_str().unwrap()
        ]
    );
    let refund: Vec<&str> = lines[2].split(',').collect();
    assert_eq!(
        refund[3..10],
        ["refund", "refund", "available", "usd", "-300", "0", "-300"]
    );
    let to_stdout = run(
        dir.path(),
        &[
            "reports",
            "balance",
            "--account",
            &account,
            "--mode",
            "test",
            "--from",
            &today,
            "--to",
            &tomorrow,
        ],
    );
    assert_eq!(stdout(&to_stdout), csv);
    // Live mode has nothing; without --mode it is a usage error, never a quietly empty file
    // (the first-run review's report came out header-only in live mode).
    let live = run(
        dir.path(),
        &[
            "reports",
            "balance",
            "--account",
            &account,
            "--mode",
            "live",
            "--from",
            &today,
            "--to",
            &tomorrow,
        ],
    );
    assert_eq!(stdout(&live).lines().count(), 1, "{}", stdout(&live));
    let no_mode = run(
        dir.path(),
        &[
            "reports",
            "balance",
            "--account",
            &account,
            "--from",
            &today,
            "--to",
            &tomorrow,
        ],
    );
    assert_eq!(no_mode.status.code(), Some(2));
    assert!(stderr(&no_mode).contains("--mode"), "{}", stderr(&no_mode));
    for (from, to) in [
        ("2026-13-01", "2027-01-01"),
        (&tomorrow[..], &today[..]),
        ("soon", "later"),
    ] {
        let bad = run(
            dir.path(),
            &[
                "reports",
                "balance",
                "--account",
                &account,
                "--mode",
                "test",
                "--from",
                from,
                "--to",
                to,
            ],
        );
        assert!(!bad.status.success(), "{from} {to}");
        assert!(stderr(&bad).contains("--"), "{}", stderr(&bad));
    }

    // Damage one ledger entry behind the server's back: verify names it and exits non-zero.
    drop(server);
    let db = rusqlite::Connection::open(dir.path().join("tender.sqlite3")).unwrap();
    let changed = db
        .execute(
            "UPDATE ledger_entries SET amount = amount + 7 WHERE rowid = (SELECT min(rowid) FROM ledger_entries)",
            [],
        )
        .unwrap();
    assert_eq!(changed, 1);
    drop(db);
    let bad = run(dir.path(), &["ledger", "verify", "--account", &account]);
    assert!(!bad.status.success());
    let report = stdout(&bad);
    assert!(report.contains("does not sum to zero"), "{report}");
    assert!(report.contains("postings sum to"), "{report}");
    assert!(
        stderr(&bad).contains("the ledger does not hold"),
        "{}",
        stderr(&bad)
    );
}

#[tokio::test]
async fn payments_from_before_the_ledger_are_booked_once_by_backfill() {
    let dir = tempfile::tempdir().unwrap();
    let server = serve(dir.path(), &[], &[]);
    let key = secret_from(&server.lines).unwrap();
    let account = account_from(&server.lines);
    let c = reqwest::Client::new();
    let mut payments = Vec::new();
    for amount in [1000, 2500] {
        let p: Value = c
            .post(format!("{}/v2/payments", server.base))
            .bearer_auth(&key)
            .json(&card_payment(amount))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        payments.push(p);
    }
    let r = c
        .post(format!("{}/v2/refunds", server.base))
        .bearer_auth(&key)
        .json(&json!({"payment": payments[1]["id"], "amount": 500}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    drop(server);

    // What a database written before migration 0005 holds: payments and refunds with no
    // balance transaction, and nothing on the ledger.
    let db = rusqlite::Connection::open(dir.path().join("tender.sqlite3")).unwrap();
    db.execute_batch(
        "DELETE FROM ledger_entries; DELETE FROM ledger_postings; DELETE FROM ledger_balances;
         DELETE FROM balance_transactions; DELETE FROM scheduled_tasks WHERE kind = 'make_available';",
    )
    .unwrap();
    for table in ["payments", "refunds"] {
        let rows: Vec<(String, Vec<u8>)> = db
            .prepare(&format!("SELECT id, body FROM {table}"))
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        for (id, stored) in rows {
            let mut doc: Value =
                serde_json::from_str(&tender_store::body::unpack(&stored).unwrap()).unwrap();
            doc.as_object_mut().unwrap().remove("balance_transaction");
            let packed = tender_store::body::pack(&doc.to_string());
            db.execute(
                &format!("UPDATE {table} SET body = ?1 WHERE id = ?2"),
                rusqlite::params![packed, id],
            )
            .unwrap();
        }
    }
    drop(db);
    let before = run(dir.path(), &["ledger", "verify"]);
    assert!(!before.status.success());
    assert!(
        stdout(&before).contains("tender ledger backfill"),
        "{}",
        stdout(&before)
    );

    let filled = run(dir.path(), &["ledger", "backfill"]);
    assert!(filled.status.success(), "{}", stderr(&filled));
    assert!(
        stdout(&filled).contains(&format!("{account} test: booked 3 payments and refunds")),
        "{}",
        stdout(&filled)
    );
    let after = run(dir.path(), &["ledger", "verify"]);
    assert!(after.status.success(), "{}", stdout(&after));
    let again = run(dir.path(), &["ledger", "backfill", "--account", &account]);
    assert!(
        stdout(&again).contains(&format!("{account} test: booked 0 payments and refunds")),
        "{}",
        stdout(&again)
    );

    // The server sees the booked transactions: 3,500 less fees pending, 500 refunded.
    let server = serve(dir.path(), &[], &[]);
    let b: Value = c
        .get(format!("{}/v2/balance", server.base))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        b["pending"][0]["amount"],
        3500 - (29 + 30) - (73 + 30),
        "{b}"
    );
    assert_eq!(b["available"][0]["amount"], -500, "{b}");
    let p: Value = c
        .get(format!(
            "{}/v2/payments/{}",
            server.base,
            payments[0]["id"].as_str().unwrap()
        ))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(
        p["balance_transaction"]
            .as_str()
            .unwrap()
            .starts_with("txn_"),
        "{p}"
    );
}

#[tokio::test]
async fn a_ledger_damaged_past_i64_still_answers_and_verify_reports_every_account() {
    // T3-H1: a processor's amounts once took a ledger past i64 (now refused before they are
    // booked). Such a ledger, from before the fix, must not take /balance or the check down.
    let dir = tempfile::tempdir().unwrap();
    let server = serve(dir.path(), &[], &[]);
    let key = secret_from(&server.lines).unwrap();
    let damaged = account_from(&server.lines);
    let other: Value = serde_json::from_slice(
        &run(
            dir.path(),
            &["accounts", "create", "--email", "other@example.com"],
        )
        .stdout,
    )
    .unwrap();
    let c = reqwest::Client::new();
    for k in [
        key.as_str(),
        other["keys"]["test"]["secret"].as_str().unwrap(),
    ] {
        let p: Value = c
            .post(format!("{}/v2/payments", server.base))
            .bearer_auth(k)
            .json(&card_payment(1000))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(p["status"], "succeeded", "{p}");
    }
    drop(server);
    // Two balance rows and two entries of the first account, each near i64::MAX.
    let db = rusqlite::Connection::open(dir.path().join("tender.sqlite3")).unwrap();
    let huge = i64::MAX - 1000;
    db.execute(
        "INSERT INTO ledger_balances (account_id, livemode, ledger_account, currency, shard, amount)
         SELECT account_id, livemode, ledger_account, currency, shard + 1, ?2 FROM ledger_balances
         WHERE account_id = ?1 AND ledger_account = 'pending'",
        rusqlite::params![damaged, huge],
    )
    .unwrap();
    db.execute(
        "UPDATE ledger_balances SET amount = ?2 WHERE account_id = ?1 AND ledger_account = 'pending'",
        rusqlite::params![damaged, huge],
    )
    .unwrap();
    db.execute(
        "UPDATE ledger_entries SET amount = ?2 WHERE posting_seq IN
         (SELECT seq FROM ledger_postings WHERE account_id = ?1) AND ledger_account = 'pending'",
        rusqlite::params![damaged, huge],
    )
    .unwrap();
    drop(db);

    let verified = run(dir.path(), &["ledger", "verify"]);
    assert!(!verified.status.success());
    let report = stdout(&verified);
    let other_account = other["account"].as_str().unwrap();
    // The damaged account is reported, and the accounts after it are still checked.
    assert!(
        report.contains(&format!("{damaged} test:")) && report.contains("differences"),
        "{report}"
    );
    assert!(
        report
            .lines()
            .any(|l| l.starts_with(other_account) && l.ends_with("ok")),
        "{report}"
    );
    // The server still answers the damaged account's balance.
    let server = serve(dir.path(), &[], &[]);
    let balance = c
        .get(format!("{}/v2/balance", server.base))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(balance.status(), 200);
    let balance: Value = balance.json().await.unwrap();
    assert_eq!(balance["pending"][0]["amount"], i64::MAX, "{balance}");
}

/// `tender accounts payout-destination`: shown, refused when invalid, set (the IBAN shown by
/// its country and last four only); `/v1`'s payouts then have somewhere to go.
#[tokio::test]
async fn the_default_payout_destination_is_set_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let server = serve(dir.path(), &[], &[]);
    let key = secret_from(&server.lines).unwrap();
    let account = account_from(&server.lines);
    let cmd = |extra: &[&str]| {
        let mut args = vec!["accounts", "payout-destination", "--account", &account];
        args.extend_from_slice(extra);
        run(dir.path(), &args)
    };
    let payout = || async {
        let resp = reqwest::Client::new()
            .post(format!("{}/v1/payouts", server.base))
            .basic_auth(&key, Some(""))
            .form(&[("amount", "500"), ("currency", "usd")])
            .send()
            .await
            .unwrap();
        resp.json::<Value>().await.unwrap()
    };
    let none = cmd(&[]);
    assert!(none.status.success(), "{}", stderr(&none));
    assert_eq!(
        serde_json::from_str::<Value>(&stdout(&none)).unwrap(),
        json!({"account": account, "payout_destination": null})
    );
    assert_eq!(payout().await["error"]["param"], "destination");
    let bad = cmd(&["--iban", "DE00 1234", "--account-holder-name", "Shop"]);
    assert!(!bad.status.success());
    assert!(stderr(&bad).contains("IBAN"), "{}", stderr(&bad));
    let half = cmd(&["--iban", "DE89370400440532013000"]);
    assert!(!half.status.success(), "an IBAN needs its holder");
    let set = cmd(&[
        "--iban",
        "DE89 3704 0044 0532 0130 00",
        "--account-holder-name",
        "Shop GmbH",
    ]);
    assert!(set.status.success(), "{}", stderr(&set));
    let expected = json!({"account": account, "payout_destination":
        {"last4": "3000", "country": "DE", "account_holder_name": "Shop GmbH"}});
    assert_eq!(
        serde_json::from_str::<Value>(&stdout(&set)).unwrap(),
        expected
    );
    assert_eq!(
        serde_json::from_str::<Value>(&stdout(&cmd(&[]))).unwrap(),
        expected
    );
    // It has a destination now; what stops this payout is the empty balance.
    let refused = payout().await;
    assert_ne!(refused["error"]["param"], "destination", "{refused}");
    assert_eq!(
        refused["error"]["type"], "invalid_request_error",
        "{refused}"
    );
}
