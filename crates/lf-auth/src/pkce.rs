//! PKCE (RFC 7636), S256 only: `plain` is refused.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// The only code challenge method accepted.
pub const S256: &str = "S256";

fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

/// Whether `verifier` is a valid code verifier: 43 to 128 characters from
/// the unreserved set `[A-Za-z0-9-._~]` (RFC 7636 §4.1).
pub fn is_valid_verifier(verifier: &str) -> bool {
    (43..=128).contains(&verifier.len()) && verifier.bytes().all(is_unreserved)
}

/// Whether `challenge` has the shape of an S256 challenge: the unpadded
/// base64url of 32 bytes, 43 characters.
pub fn is_valid_challenge(challenge: &str) -> bool {
    challenge.len() == 43 && challenge.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// `BASE64URL(SHA256(verifier))` without padding (RFC 7636 §4.2).
pub fn s256_challenge(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// Whether `verifier` is valid and hashes to `challenge`, compared in
/// constant time.
pub fn verify_s256(verifier: &str, challenge: &str) -> bool {
    is_valid_verifier(verifier) && bool::from(s256_challenge(verifier).as_bytes().ct_eq(challenge.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 7636 Appendix B.
    const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
    const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";

    #[test]
    fn rfc7636_appendix_b() {
        assert_eq!(s256_challenge(VERIFIER), CHALLENGE);
        assert!(verify_s256(VERIFIER, CHALLENGE));
        assert!(is_valid_challenge(CHALLENGE));
    }

    #[test]
    fn wrong_or_malformed_verifiers_fail() {
        assert!(!verify_s256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXl", CHALLENGE));
        // `plain`: the challenge itself as verifier.
        assert!(!verify_s256(CHALLENGE, CHALLENGE));
        assert!(!verify_s256("", CHALLENGE));
        assert!(!is_valid_verifier(&"a".repeat(42)));
        assert!(is_valid_verifier(&"a".repeat(43)));
        assert!(is_valid_verifier(&"~._-".repeat(32)));
        assert!(!is_valid_verifier(&"a".repeat(129)));
        assert!(!is_valid_verifier(&format!("{}+", "a".repeat(50))));
        assert!(!is_valid_verifier(&format!("{}é", "a".repeat(50))));
        // A verifier that is too short never verifies, even against its own hash.
        let short = "a".repeat(42);
        assert!(!verify_s256(&short, &s256_challenge(&short)));
    }

    #[test]
    fn challenge_shape() {
        assert!(!is_valid_challenge(&format!("{CHALLENGE}=")));
        assert!(!is_valid_challenge(&CHALLENGE[1..]));
        assert!(!is_valid_challenge(&CHALLENGE.replace('-', "+")));
    }
}
