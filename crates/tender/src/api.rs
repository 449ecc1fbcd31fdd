//! What `tender listen` and `tender trigger` share: a client of a running Tender's API (they
//! talk to it over HTTP, as a merchant's code does, not to its store) and errors worded for a
//! person at a terminal.
//!
//! Depends on: `tender-client`, `tender-core` (`root_cause`).

use tender_client::Error;
use tender_core::error::root_cause;

/// One line saying what went wrong with a call to the API at `api`, and what to do.
pub fn explain(api: &str, e: &Error) -> String {
    match e {
        Error::Api(e) if e.status == 401 => format!(
            "the API at {api} refused the key: {} (check --api-key or TENDER_API_KEY: a \
             secret key sk_test_… or sk_live_… of this server)",
            e.message
        ),
        Error::Api(e) if e.status == 403 => format!(
            "the key may not do this: {} (use a secret key, sk_…, not a publishable one)",
            e.message
        ),
        Error::Api(e) => format!(
            "the API answered {} {}: {}",
            e.status,
            if e.code.is_empty() { "error" } else { &e.code },
            e.message
        ),
        Error::Transport(t) => format!(
            "cannot reach the Tender API at {api}: {} (is `tender serve` running there? \
             --api sets the address)",
            root_cause(t)
        ),
        Error::Stalled { idle } => format!(
            "nothing from {api} for {} s, not even a keep-alive: the connection is presumed dead",
            idle.as_secs()
        ),
        other => format!("the API at {api} answered unexpectedly: {other}"),
    }
}
