//! API keys and who is calling: key kinds, modes, and the authenticated [`Principal`].
//!
//! Secret keys are stored only as SHA-256 hashes and compared in constant time; publishable keys
//! are public by design. Pure; depends on `sha2`, `subtle`.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::ids::random_base62;

/// Test or live: two separate worlds inside one account.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Test,
    Live,
}

impl Mode {
    pub fn is_live(self) -> bool {
        self == Mode::Live
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Test => "test",
            Mode::Live => "live",
        }
    }
    /// The mode [`Mode::as_str`] printed; anything else is `None` (a store reading a row
    /// refuses it rather than guess: a live key read as a test one would move real money).
    pub fn parse(s: &str) -> Option<Mode> {
        [Mode::Test, Mode::Live]
            .into_iter()
            .find(|m| m.as_str() == s)
    }
}

/// Secret keys may do everything; publishable keys only tokenise cards.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum KeyKind {
    Secret,
    Publishable,
}

impl KeyKind {
    pub fn as_str(self) -> &'static str {
        match self {
            KeyKind::Secret => "secret",
            KeyKind::Publishable => "publishable",
        }
    }
    /// The kind [`KeyKind::as_str`] printed; anything else is `None`.
    pub fn parse(s: &str) -> Option<KeyKind> {
        [KeyKind::Secret, KeyKind::Publishable]
            .into_iter()
            .find(|k| k.as_str() == s)
    }
}

/// The tenant scope every store call takes first, so no query can forget it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Scope {
    pub account: String,
    pub mode: Mode,
}

impl Scope {
    pub fn livemode(&self) -> bool {
        self.mode.is_live()
    }
}

/// An authenticated caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    pub scope: Scope,
    pub key_kind: KeyKind,
}

/// Parses the prefix of a presented key: `sk_test_…` → (Secret, Test), etc.
pub fn classify_key(key: &str) -> Option<(KeyKind, Mode)> {
    let (kind, rest) = if let Some(rest) = key.strip_prefix("sk_") {
        (KeyKind::Secret, rest)
    } else if let Some(rest) = key.strip_prefix("pk_") {
        (KeyKind::Publishable, rest)
    } else {
        return None;
    };
    let mode = if rest.starts_with("test_") {
        Mode::Test
    } else if rest.starts_with("live_") {
        Mode::Live
    } else {
        return None;
    };
    Some((kind, mode))
}

/// A new key of the given kind and mode, e.g. `sk_test_` + 32 base62 characters.
pub fn generate_key(kind: KeyKind, mode: Mode) -> String {
    let prefix = match kind {
        KeyKind::Secret => "sk",
        KeyKind::Publishable => "pk",
    };
    format!("{prefix}_{}_{}", mode.as_str(), random_base62(32))
}

/// SHA-256 of a key, hex-encoded: what the store keeps and looks keys up by.
///
/// Keys carry 190 bits of randomness, so an unsalted fast hash is the right tool (as for session
/// tokens); a password hash would only slow every request.
pub fn hash_key(key: &str) -> String {
    hex::encode(Sha256::digest(key.as_bytes()))
}

/// Constant-time equality for secrets that are compared directly.
pub fn secrets_equal(a: &[u8], b: &[u8]) -> bool {
    a.ct_eq(b).into()
}

/// The last four characters of a key, what lists show after creation.
pub fn last4(key: &str) -> String {
    let chars: Vec<char> = key.chars().collect();
    chars[chars.len().saturating_sub(4)..].iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_and_key_kinds_parse_exactly_what_they_print() {
        for m in [Mode::Test, Mode::Live] {
            assert_eq!(Mode::parse(m.as_str()), Some(m));
        }
        for k in [KeyKind::Secret, KeyKind::Publishable] {
            assert_eq!(KeyKind::parse(k.as_str()), Some(k));
        }
        for bad in ["", "Live", "LIVE", "live ", "prod", "secret"] {
            assert_eq!(Mode::parse(bad), None, "{bad:?}");
        }
        for bad in ["", "Secret", "public", "test"] {
            assert_eq!(KeyKind::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn classify_key_reads_kind_and_mode() {
        assert_eq!(
            classify_key("sk_test_x"),
            Some((KeyKind::Secret, Mode::Test))
        );
        assert_eq!(
            classify_key("pk_live_x"),
            Some((KeyKind::Publishable, Mode::Live))
        );
        assert_eq!(classify_key("rk_test_x"), None);
        assert_eq!(classify_key("sk_prod_x"), None);
    }

    #[test]
    fn generated_keys_classify_as_what_they_are() {
        let k = generate_key(KeyKind::Publishable, Mode::Live);
        assert_eq!(classify_key(&k), Some((KeyKind::Publishable, Mode::Live)));
        assert_eq!(hash_key(&k).len(), 64);
        assert_ne!(
            hash_key(&k),
            hash_key(&generate_key(KeyKind::Publishable, Mode::Live))
        );
    }

    #[test]
    fn secrets_equal_is_plain_equality() {
        assert!(secrets_equal(b"abc", b"abc"));
        assert!(!secrets_equal(b"abc", b"abd"));
        assert!(!secrets_equal(b"abc", b"abcd"));
    }
}
