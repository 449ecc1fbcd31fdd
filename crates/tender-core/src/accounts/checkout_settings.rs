//! The settings of an account's public payment surfaces (CONTRACT §14): how many declines the
//! card-testing guard lets through, and which shop origins may frame the card field. Kept as
//! one JSON text on the account (`None`: every default). Pure, but for the two
//! [`Accounts`] methods that read and write it.
//!
//! | setting | default | bounds |
//! |---|---|---|
//! | `declines_per_address` | 10 an hour | 1..=[`MAX_LIMIT`] |
//! | `declines_per_card` | 10 an hour | 1..=[`MAX_LIMIT`] |
//! | `declines_per_session` | 3 per Checkout Session | 1..=[`MAX_LIMIT`] |
//! | `frame_origins` | none: any page may frame the card field | at most [`MAX_FRAME_ORIGINS`] origins, `https://host[:port]` (or `http://` for loopback) |

use serde::{Deserialize, Serialize};

use super::Accounts;
use crate::error::{CoreError, CoreResult};
use crate::store::AccountSetting;

pub use crate::risk::MAX_LIMIT;
/// Shop origins an account may list.
pub const MAX_FRAME_ORIGINS: usize = 20;

/// What an account set; each field has its default when not set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct CheckoutSettings {
    pub declines_per_address: u32,
    pub declines_per_card: u32,
    pub declines_per_session: u32,
    pub frame_origins: Vec<String>,
}

impl Default for CheckoutSettings {
    fn default() -> Self {
        CheckoutSettings {
            declines_per_address: 10,
            declines_per_card: 10,
            declines_per_session: 3,
            frame_origins: Vec::new(),
        }
    }
}

impl CheckoutSettings {
    /// The stored form; a text that does not read is the defaults (it was written by us).
    pub fn decode(stored: Option<&str>) -> CheckoutSettings {
        stored
            .and_then(|s| serde_json::from_str(s).ok())
            .unwrap_or_default()
    }

    pub fn encode(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// 400 naming the first setting out of its bounds; origins are normalised (lower case, no
    /// trailing slash, no duplicates).
    pub fn checked(mut self) -> CoreResult<CheckoutSettings> {
        for (name, value) in [
            ("declines_per_address", self.declines_per_address),
            ("declines_per_card", self.declines_per_card),
            ("declines_per_session", self.declines_per_session),
        ] {
            if !(1..=MAX_LIMIT).contains(&value) {
                return Err(CoreError::invalid(
                    name,
                    "parameter_invalid",
                    format!("{name} must be between 1 and {MAX_LIMIT}."),
                ));
            }
        }
        let mut origins: Vec<String> = Vec::new();
        for raw in &self.frame_origins {
            let origin = origin(raw).ok_or_else(|| {
                CoreError::invalid(
                    "frame_origins",
                    "parameter_invalid",
                    format!("{raw:.100} is not an origin like https://shop.example (scheme, host, optional port; no path)."),
                )
            })?;
            if !origins.contains(&origin) {
                origins.push(origin);
            }
        }
        if origins.len() > MAX_FRAME_ORIGINS {
            return Err(CoreError::invalid(
                "frame_origins",
                "parameter_invalid",
                format!("At most {MAX_FRAME_ORIGINS} origins may frame the card field."),
            ));
        }
        self.frame_origins = origins;
        Ok(self)
    }
}

/// `raw` as an origin a CSP `frame-ancestors` can name: `https://host[:port]`, or `http://` for
/// a loopback host; `None` for anything else (paths, wildcards, quotes, spaces).
fn origin(raw: &str) -> Option<String> {
    let lower = raw.trim().trim_end_matches('/').to_ascii_lowercase();
    let (scheme, authority) = lower.split_once("://")?;
    let (host, port) = match authority.split_once(':') {
        Some((h, p)) => (h, Some(p)),
        None => (authority, None),
    };
    let port_ok =
        port.is_none_or(|p| !p.is_empty() && p.len() <= 5 && p.chars().all(|c| c.is_ascii_digit()));
    let host_ok = !host.is_empty()
        && host.len() <= 253
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-');
    let loopback = host == "localhost" || host == "127.0.0.1";
    let scheme_ok = scheme == "https" || (scheme == "http" && loopback);
    (port_ok && host_ok && scheme_ok).then_some(lower)
}

impl Accounts<'_> {
    /// The account's settings (the defaults where it set none).
    pub async fn checkout_settings(&self, account: &str) -> CoreResult<CheckoutSettings> {
        let record = self.store.find_account(account).await?;
        Ok(CheckoutSettings::decode(
            record.and_then(|r| r.checkout_settings).as_deref(),
        ))
    }

    /// Sets them, after [`CheckoutSettings::checked`].
    pub async fn set_checkout_settings(
        &self,
        account: &str,
        settings: CheckoutSettings,
    ) -> CoreResult<CheckoutSettings> {
        let settings = settings.checked()?;
        self.store
            .update_account_setting(account, AccountSetting::Checkout, Some(&settings.encode()))
            .await?;
        Ok(settings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_origin_is_a_scheme_a_host_and_a_port_and_nothing_else() {
        assert_eq!(
            origin("https://Shop.Example/").as_deref(),
            Some("https://shop.example")
        );
        assert_eq!(
            origin("https://shop.example:8443").as_deref(),
            Some("https://shop.example:8443")
        );
        assert_eq!(
            origin("http://127.0.0.1:3000").as_deref(),
            Some("http://127.0.0.1:3000")
        );
        for bad in [
            "http://shop.example",
            "https://shop.example/cart",
            "*",
            "https://*.shop",
            "'self'",
            "https://a b",
            "shop.example",
            "https://",
        ] {
            assert_eq!(origin(bad), None, "{bad}");
        }
    }

    #[test]
    fn limits_are_bounded_and_origins_normalised() {
        let s = CheckoutSettings {
            frame_origins: vec!["https://A.example/".into(), "https://a.example".into()],
            ..Default::default()
        };
        assert_eq!(
            s.checked().unwrap().frame_origins,
            vec!["https://a.example"]
        );
        let zero = CheckoutSettings {
            declines_per_card: 0,
            ..Default::default()
        };
        assert!(zero.checked().is_err());
        assert_eq!(CheckoutSettings::decode(None), CheckoutSettings::default());
    }
}
