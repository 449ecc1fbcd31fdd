//! One-time tokens of the hosted pages' forms (CONTRACT §14, §17): the pay button of a hosted
//! invoice, the pay form of a Checkout Session. Every rendering of such a page carries a fresh
//! token, `{issued}.{nonce}.{mac}`: an HMAC under a key derived from the vault key, bound to
//! the page (the object's id) and valid for [`PAGE_TOKEN_TTL_SECS`]. Its nonce names the
//! idempotency record of the one try the form may start, so a form sent twice (a double
//! press, a replayed request) runs once and the second answers as the first.
//!
//! Depends on the services' clocks and configuration only.

use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::error::{CoreError, CoreResult};
use crate::ids;
use crate::services::Services;

/// How long a rendered page's token may be used.
pub const PAGE_TOKEN_TTL_SECS: i64 = 3600;

impl Services {
    /// A one-time token for a rendering of page `page` (an object's id).
    pub fn page_token(&self, page: &str) -> String {
        let issued = self.wall_now();
        let nonce = ids::random_base62(20);
        format!("{issued}.{nonce}.{}", self.page_mac(page, issued, &nonce))
    }

    fn page_mac(&self, page: &str, issued: i64, nonce: &str) -> String {
        let key = crate::vault::derive_key(&self.config.vault_key, "hosted page token");
        let mut mac = Hmac::<Sha256>::new_from_slice(&key).expect("any key length");
        mac.update(format!("{page}.{issued}.{nonce}").as_bytes());
        hex::encode(mac.finalize().into_bytes())
    }

    /// The nonce of `token` when it is one this service issued for `page` within the TTL
    /// (compared in constant time); otherwise the 400 `token_invalid` the page shows.
    pub(crate) fn check_page_token(&self, page: &str, token: Option<&str>) -> CoreResult<String> {
        let refused = || {
            CoreError::invalid(
                "token",
                "token_invalid",
                "This page has expired. Reload it and try again.",
            )
        };
        let mut parts = token.ok_or_else(refused)?.splitn(3, '.');
        let (Some(issued), Some(nonce), Some(mac)) = (parts.next(), parts.next(), parts.next())
        else {
            return Err(refused());
        };
        let issued: i64 = issued.parse().map_err(|_| refused())?;
        let age = self.wall_now() - issued;
        let expected = self.page_mac(page, issued, nonce);
        let same: bool = subtle::ConstantTimeEq::ct_eq(expected.as_bytes(), mac.as_bytes()).into();
        if !same || !(0..=PAGE_TOKEN_TTL_SECS).contains(&age) || nonce.len() > 64 {
            return Err(refused());
        }
        Ok(nonce.to_string())
    }
}
