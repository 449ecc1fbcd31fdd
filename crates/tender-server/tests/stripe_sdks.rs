//! Stripe's official SDKs, unmodified, against a real Tender (CONTRACT §13): a shop's code
//! written for Stripe (`tests/stripe_sdks/python/test_shop.py` with stripe-python 16.1.0,
//! `tests/stripe_sdks/node/shop.test.mjs` with stripe-node 23.1.0) runs against `/v1` with only
//! its base address changed. Each test starts a server on port 0 and runs the SDK's suite
//! against it; the suites' own assertions are what is checked, and their output is shown when
//! they fail.
//!
//! They skip when the SDK is not installed (`python3 -m pip install stripe==16.1.0`;
//! `npm ci --prefix crates/tender-server/tests/stripe_sdks/node`), unless
//! `TENDER_REQUIRE_STRIPE_SDKS=1` (CI sets it and installs both).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::PathBuf;
use std::process::Command;

fn suite_dir(sdk: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/stripe_sdks")
        .join(sdk)
}

/// Whether the SDK is there; if not, skips (or fails when the SDKs are required).
fn available(sdk: &str, present: bool) -> bool {
    if !present && std::env::var("TENDER_REQUIRE_STRIPE_SDKS").as_deref() == Ok("1") {
        panic!("{sdk} is required (TENDER_REQUIRE_STRIPE_SDKS=1) but not installed");
    }
    if !present {
        eprintln!("skipping: {sdk} is not installed");
    }
    present
}

/// Runs `program args` in the SDK's suite directory against a fresh server; panics with its
/// output unless it passes.
async fn run_suite(sdk: &str, program: &str, args: &[&str]) {
    let app = common::spawn_app().await;
    let dir = suite_dir(sdk);
    let sk = app.account.keys.test.secret.clone();
    // A second account for the card-testing guard's test, whose blocks stop its keys only.
    let guard = app.other_account("a long enough password").await.keys.test;
    let base = app.base.clone();
    let (program, args) = (
        program.to_string(),
        args.iter().map(|a| a.to_string()).collect::<Vec<_>>(),
    );
    let output = tokio::task::spawn_blocking(move || {
        Command::new(program)
            .args(args)
            .current_dir(dir)
            .env("TENDER_BASE", base)
            .env("TENDER_SK", sk)
            .env("TENDER_GUARD_SK", guard.secret)
            .env("TENDER_GUARD_PK", guard.publishable)
            .output()
            .expect("run the SDK's suite")
    })
    .await
    .unwrap();
    assert!(
        output.status.success(),
        "{sdk}'s suite failed:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn stripe_python_runs_a_shops_code_unchanged() {
    let present = Command::new("python3")
        .args([
            "-c",
            "import stripe; assert stripe.VERSION == '16.1.0', stripe.VERSION",
        ])
        .status()
        .is_ok_and(|s| s.success());
    if !available("stripe-python 16.1.0", present) {
        return;
    }
    run_suite("python", "python3", &["-m", "unittest", "-v", "test_shop"]).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn stripe_node_runs_a_shops_code_unchanged() {
    let present = suite_dir("node")
        .join("node_modules/stripe/package.json")
        .exists();
    if !available("stripe-node 23.1.0", present) {
        return;
    }
    run_suite("node", "node", &["--test"]).await;
}
