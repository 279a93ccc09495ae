//! Secrets: how they are made (the OS random generator), how they look
//! (a fixed prefix and lowercase hex), and how they are kept (SHA-256 only,
//! compared in constant time).

use lf_core::{LfError, LfResult};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// Prefix of an access token: `lf_mcp_` + 64 lowercase hex digits.
pub const ACCESS_TOKEN_PREFIX: &str = "lf_mcp_";
/// Prefix of a refresh token: `lf_rt_` + 64 lowercase hex digits.
pub const REFRESH_TOKEN_PREFIX: &str = "lf_rt_";
/// Prefix of an authorization code: `lf_code_` + 64 lowercase hex digits.
pub const CODE_PREFIX: &str = "lf_code_";
/// Prefix of an OAuth client id: `lf_client_` + 32 lowercase hex digits.
pub const CLIENT_ID_PREFIX: &str = "lf_client_";

/// Random bytes behind every token, refresh token and code.
const SECRET_BYTES: usize = 32;

/// The SHA-256 of a secret: the only form in which tokens, refresh tokens and
/// codes are stored. Equality is constant time; `Debug` never prints it.
#[derive(Clone, Copy, Eq)]
pub struct SecretHash([u8; 32]);

impl SecretHash {
    /// The hash of `secret` (its UTF-8 bytes).
    pub fn of(secret: &str) -> Self {
        Self(Sha256::digest(secret.as_bytes()).into())
    }
    /// A hash read back from storage.
    pub const fn from_bytes(bytes: [u8; 32]) -> Self {
        Self(bytes)
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
    pub fn ct_eq(&self, other: &SecretHash) -> bool {
        self.0.ct_eq(&other.0).into()
    }
}

impl PartialEq for SecretHash {
    fn eq(&self, other: &Self) -> bool {
        self.ct_eq(other)
    }
}

// By hand, beside the constant-time `PartialEq`: equal values hash equally
// either way.
impl std::hash::Hash for SecretHash {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.hash(state);
    }
}

impl std::fmt::Debug for SecretHash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretHash(…)")
    }
}

/// `N` bytes from the operating system's random generator. Its failure is
/// INTERNAL: no secret is ever made from anything weaker.
pub(crate) fn random_bytes<const N: usize>() -> LfResult<[u8; N]> {
    let mut buf = [0u8; N];
    getrandom::fill(&mut buf)
        .map_err(|e| LfError::internal(format!("the OS random generator failed: {e}")))?;
    Ok(buf)
}

/// A new secret: `prefix` + 64 lowercase hex digits (32 random bytes).
pub(crate) fn new_secret(prefix: &str) -> LfResult<String> {
    Ok(format!("{prefix}{}", hex::encode(random_bytes::<SECRET_BYTES>()?)))
}

/// Whether `s` is `prefix` followed by exactly `digits` lowercase hex digits.
pub(crate) fn is_prefixed_hex(s: &str, prefix: &str, digits: usize) -> bool {
    s.strip_prefix(prefix).is_some_and(|rest| {
        rest.len() == digits && rest.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    })
}

/// Whether `s` has the shape of an access token (`lf_mcp_` + 64 lowercase hex).
pub fn is_access_token(s: &str) -> bool {
    is_prefixed_hex(s, ACCESS_TOKEN_PREFIX, SECRET_BYTES * 2)
}

/// Whether `s` has the shape of a refresh token (`lf_rt_` + 64 lowercase hex).
pub fn is_refresh_token(s: &str) -> bool {
    is_prefixed_hex(s, REFRESH_TOKEN_PREFIX, SECRET_BYTES * 2)
}

/// Whether `s` has the shape of an authorization code (`lf_code_` + 64 lowercase hex).
pub fn is_code(s: &str) -> bool {
    is_prefixed_hex(s, CODE_PREFIX, SECRET_BYTES * 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_have_their_shape_and_differ() {
        let a = new_secret(ACCESS_TOKEN_PREFIX).unwrap();
        let b = new_secret(ACCESS_TOKEN_PREFIX).unwrap();
        assert_ne!(a, b);
        assert_eq!(a.len(), 7 + 64);
        assert!(is_access_token(&a) && !is_refresh_token(&a) && !is_code(&a));
        assert!(is_refresh_token(&new_secret(REFRESH_TOKEN_PREFIX).unwrap()));
        assert!(is_code(&new_secret(CODE_PREFIX).unwrap()));
    }

    #[test]
    fn token_shape_is_strict() {
        let ok = format!("lf_mcp_{}", "a1".repeat(32));
        assert!(is_access_token(&ok));
        for bad in [
            format!("lf_mcp_{}", "A1".repeat(32)),
            format!("lf_mcp_{}", "a1".repeat(31)),
            format!("lf_mcp_{}0", "a1".repeat(32)),
            format!("LF_MCP_{}", "a1".repeat(32)),
            format!("lf_mcp_{}g", "a1".repeat(31) + "0"),
            format!(" lf_mcp_{}", "a1".repeat(32)),
            "lf_mcp_".to_owned(),
            String::new(),
        ] {
            assert!(!is_access_token(&bad), "{bad}");
        }
    }

    #[test]
    fn hashes_are_sha256_and_compare_in_constant_time() {
        // SHA-256("abc"), FIPS 180-2 appendix B.1.
        let h = SecretHash::of("abc");
        assert_eq!(
            hex::encode(h.as_bytes()),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert!(h.ct_eq(&SecretHash::from_bytes(*h.as_bytes())));
        assert!(!h.ct_eq(&SecretHash::of("abd")));
        assert_eq!(SecretHash::from_slice(&[0; 31]), None);
        assert_eq!(format!("{h:?}"), "SecretHash(…)");
    }
}
