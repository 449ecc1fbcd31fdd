//! What `tender listen` and `tender trigger` share: a client of a running Tender's API (they
//! talk to it over HTTP, as a merchant's code does, not to its store) and errors worded for a
//! person at a terminal.
//!
//! Depends on: `tender-client`, `tender-core` (`root_cause`).

use tender_client::Error;
use tender_core::error::root_cause;

/// `text` from a server, fit to print on a terminal: control characters (escape sequences
/// that would clear, recolour or retitle it) are shown escaped, never sent to it (T3-L4).
pub fn printable(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            let shown: Vec<char> = if c.is_control() {
                c.escape_default().collect()
            } else {
                vec![c]
            };
            shown
        })
        .collect()
}

/// Refuses an `--api` that would carry the API key in clear across a network: plain `http`
/// is for this machine only (T3-L4).
pub fn check_api_address(raw: &str) -> Result<String, String> {
    let url = url::Url::parse(raw).map_err(|e| format!("not a URL ({e})"))?;
    let loopback = match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        None => return Err("expected a URL with a host".into()),
    };
    match url.scheme() {
        "https" => Ok(raw.to_string()),
        "http" if loopback => Ok(raw.to_string()),
        "http" => Err(format!(
            "refusing to send the API key over plain http to {}: use https:// (plain http is for this machine only)",
            url.host_str().unwrap_or_default()
        )),
        _ => Err("expected an http:// or https:// URL".into()),
    }
}

/// One line saying what went wrong with a call to the API at `api`, and what to do; nothing
/// the server said reaches the terminal unescaped.
pub fn explain(api: &str, e: &Error) -> String {
    printable(&explain_raw(api, e))
}

fn explain_raw(api: &str, e: &Error) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_text_reaches_the_terminal_escaped() {
        let hostile = "payment.succeeded\u{1b}[2J\u{1b}]0;pwned\u{7}\r\n";
        let shown = printable(hostile);
        assert!(!shown.chars().any(char::is_control), "{shown:?}");
        assert!(shown.starts_with("payment.succeeded\\u{1b}[2J"));
        assert_eq!(printable("évt_Ünïcode"), "évt_Ünïcode");
    }

    #[test]
    fn plain_http_only_to_this_machine() {
        for ok in [
            "http://127.0.0.1:4242",
            "http://localhost:4242",
            "http://[::1]:4242",
            "https://tender.example.com",
        ] {
            assert!(check_api_address(ok).is_ok(), "{ok}");
        }
        for bad in [
            "http://tender.example.com",
            "http://10.0.0.5:4242",
            "ftp://x",
            "nope",
        ] {
            assert!(check_api_address(bad).is_err(), "{bad}");
        }
    }
}
