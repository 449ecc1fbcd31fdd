//! `Secret`: a string that never shows itself by accident.
//!
//! Card numbers, CVCs, IBANs and keys travel through the domain wrapped in [`Secret`]. Its
//! `Debug` and `Display` print `[REDACTED]`, and it deliberately has no `Serialize` impl, so it
//! can be read from a request body but never written into a response or a log line without an
//! explicit call to [`Secret::expose`].
//!
//! Depends on: `serde` (Deserialize only). Nothing else in the crate.

use std::fmt;

use serde::{Deserialize, Deserializer};

/// The text printed in place of a secret's value.
pub const REDACTED: &str = "[REDACTED]";

/// A sensitive string. `Debug`/`Display` print `[REDACTED]`; there is no `Serialize` impl.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a sensitive value.
    pub fn new(value: String) -> Self {
        Secret(value)
    }

    /// The clear value. Every call site is a place where the secret may leave the type:
    /// keep them few and auditable.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl From<String> for Secret {
    fn from(value: String) -> Self {
        Secret(value)
    }
}

impl From<&str> for Secret {
    fn from(value: &str) -> Self {
        Secret(value.to_owned())
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

impl<'de> Deserialize<'de> for Secret {
    /// Reads a plain JSON string.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(Secret)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn debug_and_display_do_not_leak() {
        let s = Secret::new("4242424242424242".to_owned());
        assert_eq!(format!("{s:?}"), "[REDACTED]");
        assert_eq!(format!("{s}"), "[REDACTED]");
        assert_eq!(format!("{s:#?}"), "[REDACTED]");
        assert!(!format!("{:?}", Some(s.clone())).contains("4242"));
    }

    #[test]
    fn expose_returns_value() {
        let s = Secret::from("abc");
        assert_eq!(s.expose(), "abc");
        assert_eq!(s.clone(), s);
    }

    #[test]
    fn deserializes_from_plain_string() {
        #[derive(Deserialize, Debug)]
        struct Req {
            number: Secret,
        }
        let r: Req = serde_json::from_str(r#"{"number":"4000056655665556"}"#).unwrap();
        assert_eq!(r.number.expose(), "4000056655665556");
        assert!(!format!("{r:?}").contains("4000"));
        assert!(serde_json::from_str::<Secret>("12").is_err());
    }
}
