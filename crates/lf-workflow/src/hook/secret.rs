//! A webhook's secret: made by the server, kept only as its SHA-256 (a
//! secret of 256 random bits needs no slow hash), compared in constant
//! time. The same approach as lf-auth's access tokens.

use lf_core::{LfError, LfResult};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use zeroize::Zeroizing;

/// Prefix of a webhook secret: `lfwh_` + 64 lowercase hex digits.
pub const WEBHOOK_SECRET_PREFIX: &str = "lfwh_";

/// Random bytes behind a secret.
const SECRET_BYTES: usize = 32;

/// A webhook secret in clear: wiped from memory when dropped, never
/// printed by `Debug`; equality is constant time.
#[derive(Clone)]
pub struct WebhookSecret(Zeroizing<String>);

impl WebhookSecret {
    /// A new secret from the operating system's random generator, and its
    /// hash. INTERNAL if the generator fails: nothing weaker is used.
    pub fn generate() -> LfResult<(WebhookSecret, HookHash)> {
        let mut bytes = Zeroizing::new([0u8; SECRET_BYTES]);
        getrandom::fill(bytes.as_mut())
            .map_err(|e| LfError::internal(format!("the OS random generator failed: {e}")))?;
        let secret = WebhookSecret(Zeroizing::new(format!("{WEBHOOK_SECRET_PREFIX}{}", hex::encode(*bytes))));
        let hash = HookHash::of(secret.expose());
        Ok((secret, hash))
    }

    /// The secret itself, for the one answer that shows it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl PartialEq for WebhookSecret {
    fn eq(&self, other: &Self) -> bool {
        self.0.as_bytes().ct_eq(other.0.as_bytes()).into()
    }
}

impl std::fmt::Debug for WebhookSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WebhookSecret([redacted])")
    }
}

/// Whether `s` has the shape of a webhook secret.
pub fn is_webhook_secret(s: &str) -> bool {
    s.strip_prefix(WEBHOOK_SECRET_PREFIX).is_some_and(|rest| {
        rest.len() == SECRET_BYTES * 2 && rest.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    })
}

/// The SHA-256 of a webhook secret, the only form stored. Equality is
/// constant time; `Debug` never prints it.
#[derive(Clone, Copy, Eq)]
pub struct HookHash([u8; 32]);

impl HookHash {
    /// The hash of `secret` (its UTF-8 bytes).
    pub fn of(secret: &str) -> Self {
        Self(Sha256::digest(secret.as_bytes()).into())
    }
    /// A hash read back from storage; `None` unless exactly 32 bytes.
    pub fn from_slice(bytes: &[u8]) -> Option<Self> {
        <[u8; 32]>::try_from(bytes).ok().map(Self)
    }
    /// The 32 bytes, for storage.
    pub const fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }
    /// Constant-time comparison.
    pub fn ct_eq(&self, other: &HookHash) -> bool {
        self.0.ct_eq(&other.0).into()
    }
}

impl PartialEq for HookHash {
    fn eq(&self, other: &Self) -> bool {
        self.ct_eq(other)
    }
}

impl std::fmt::Debug for HookHash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HookHash(…)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_have_their_shape_differ_and_hide() {
        let (a, ha) = WebhookSecret::generate().unwrap();
        let (b, hb) = WebhookSecret::generate().unwrap();
        assert_ne!(a.expose(), b.expose());
        assert!(!ha.ct_eq(&hb));
        assert_eq!(a.expose().len(), WEBHOOK_SECRET_PREFIX.len() + 64);
        assert!(is_webhook_secret(a.expose()), "{}", a.expose());
        assert_eq!(ha, HookHash::of(a.expose()));
        assert_eq!(format!("{a:?} {ha:?}"), "WebhookSecret([redacted]) HookHash(…)");
        for bad in [
            format!("lfwh_{}", "A1".repeat(32)),
            format!("lfwh_{}", "a1".repeat(31)),
            format!("lf_mcp_{}", "a1".repeat(32)),
            String::new(),
        ] {
            assert!(!is_webhook_secret(&bad), "{bad}");
        }
    }

    #[test]
    fn hashes_are_sha256() {
        // SHA-256("abc"), FIPS 180-2 appendix B.1.
        assert_eq!(
            hex::encode(HookHash::of("abc").as_bytes()),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(HookHash::from_slice(&[0; 31]), None);
        assert_eq!(HookHash::from_slice(HookHash::of("abc").as_bytes()), Some(HookHash::of("abc")));
    }
}
