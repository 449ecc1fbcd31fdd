//! Encryption at rest for what must be recoverable (saved card numbers, webhook secrets):
//! AES-256-GCM under a key derived from the vault key, a fresh random nonce per value.
//! Pure; depends on `aes-gcm`, `hmac`, `sha2`.

use aes_gcm::aead::{Aead, KeyInit};
use aes_gcm::{Aes256Gcm, Nonce};
use base64::Engine;
use hmac::{Hmac, Mac};
use rand::RngCore;
use sha2::Sha256;

/// Derives a purpose-specific 32-byte key from the vault key, so one leaked derived key
/// reveals nothing about the others.
pub fn derive_key(vault_key: &[u8; 32], purpose: &str) -> [u8; 32] {
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(vault_key).expect("HMAC takes any key");
    mac.update(b"tender vault v1:");
    mac.update(purpose.as_bytes());
    mac.finalize().into_bytes().into()
}

/// A value that identifies the vault key without revealing it, kept in the database
/// (`settings.vault_check`) so that a node started with another key refuses to start instead of
/// failing later on every saved card and webhook secret.
pub fn key_check(vault_key: &[u8; 32]) -> String {
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&derive_key(vault_key, "key check"))
        .expect("HMAC takes any key");
    mac.update(b"tender vault key check v1");
    format!("v1:{}", hex::encode(&mac.finalize().into_bytes()[..16]))
}

/// Encrypts and decrypts small values under one derived key.
#[derive(Clone)]
pub struct Sealer {
    cipher: Aes256Gcm,
}

impl std::fmt::Debug for Sealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Sealer([REDACTED])")
    }
}

/// A sealed value could not be opened (wrong key or tampered data).
#[derive(Debug, thiserror::Error)]
#[error("sealed value could not be decrypted")]
pub struct OpenError;

impl Sealer {
    pub fn new(vault_key: &[u8; 32], purpose: &str) -> Self {
        let key = derive_key(vault_key, purpose);
        Self {
            cipher: Aes256Gcm::new_from_slice(&key).expect("32-byte key"),
        }
    }

    /// `base64(nonce ‖ ciphertext ‖ tag)`.
    pub fn seal(&self, plaintext: &[u8]) -> String {
        base64::engine::general_purpose::STANDARD.encode(self.seal_bytes(plaintext))
    }

    pub fn open(&self, sealed: &str) -> Result<Vec<u8>, OpenError> {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(sealed)
            .map_err(|_| OpenError)?;
        self.open_bytes(&bytes)
    }

    /// `nonce ‖ ciphertext ‖ tag`, for binary columns (28 bytes more than the plaintext).
    pub fn seal_bytes(&self, plaintext: &[u8]) -> Vec<u8> {
        let mut nonce = [0u8; 12];
        rand::rngs::OsRng.fill_bytes(&mut nonce);
        let ct = self
            .cipher
            .encrypt(Nonce::from_slice(&nonce), plaintext)
            .expect("AES-GCM encryption of a small value cannot fail");
        let mut out = nonce.to_vec();
        out.extend_from_slice(&ct);
        out
    }

    pub fn open_bytes(&self, sealed: &[u8]) -> Result<Vec<u8>, OpenError> {
        if sealed.len() < 12 {
            return Err(OpenError);
        }
        let (nonce, ct) = sealed.split_at(12);
        self.cipher
            .decrypt(Nonce::from_slice(nonce), ct)
            .map_err(|_| OpenError)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seal_then_open_round_trips_and_hides_the_plaintext() {
        let s = Sealer::new(&[7u8; 32], "test");
        let sealed = s.seal(b"4242424242424242");
        assert!(!sealed.contains("4242"));
        assert_eq!(s.open(&sealed).unwrap(), b"4242424242424242");
        assert_ne!(s.seal(b"x"), s.seal(b"x"), "fresh nonce each time");
    }

    #[test]
    fn the_key_check_tells_keys_apart_and_reveals_nothing() {
        assert_eq!(key_check(&[7u8; 32]), key_check(&[7u8; 32]));
        assert_ne!(key_check(&[7u8; 32]), key_check(&[8u8; 32]));
        assert!(!key_check(&[7u8; 32]).contains(&hex::encode([7u8; 32])));
    }

    #[test]
    fn another_key_or_purpose_cannot_open() {
        let sealed = Sealer::new(&[7u8; 32], "a").seal(b"secret");
        assert!(Sealer::new(&[7u8; 32], "b").open(&sealed).is_err());
        assert!(Sealer::new(&[8u8; 32], "a").open(&sealed).is_err());
        assert!(Sealer::new(&[7u8; 32], "a").open("not base64!").is_err());
    }
}
