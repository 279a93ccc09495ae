//! OAuth scopes: `read` and `write`, space-separated (RFC 6749 §3.3).
//! `write` implies `read`: no token can write without reading.

use lf_core::Scopes;

use crate::error::{OAuthError, OAuthErrorKind};

/// The scope granted when a client asks for none.
pub const DEFAULT_SCOPE: &str = "read write";

/// Every scope this server knows, for discovery documents.
pub const SUPPORTED_SCOPES: [&str; 2] = ["read", "write"];

/// Parses a space-separated scope string. `None` or a blank string is
/// [`DEFAULT_SCOPE`]. `write` implies `read`. An unknown scope is
/// `invalid_scope`.
pub fn parse_scope(scope: Option<&str>) -> Result<Scopes, OAuthError> {
    let scope = scope.unwrap_or(DEFAULT_SCOPE);
    let mut scopes = Scopes::default();
    for word in scope.split_ascii_whitespace() {
        match word {
            "read" => scopes.read = true,
            "write" => scopes = Scopes::READ_WRITE,
            _ => {
                return Err(OAuthError::new(
                    OAuthErrorKind::InvalidScope,
                    "Unknown scope; this server knows read and write",
                ));
            }
        }
    }
    if !scopes.read {
        // Blank: nothing was asked for.
        return Ok(Scopes::READ_WRITE);
    }
    Ok(scopes)
}

/// The scope string of `scopes`: `read`, `read write`, `write` or empty.
pub fn format_scope(scopes: Scopes) -> String {
    match (scopes.read, scopes.write) {
        (true, true) => "read write",
        (true, false) => "read",
        (false, true) => "write",
        (false, false) => "",
    }
    .to_owned()
}

/// Whether every scope of `narrow` is in `wide`.
pub fn is_subset(narrow: Scopes, wide: Scopes) -> bool {
    (!narrow.read || wide.read) && (!narrow.write || wide.write)
}

/// Whether `scopes` may be carried by a token: `read`, or `read write`.
pub fn is_grantable(scopes: Scopes) -> bool {
    scopes.read
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_formats() {
        assert_eq!(parse_scope(None).unwrap(), Scopes::READ_WRITE);
        assert_eq!(parse_scope(Some("")).unwrap(), Scopes::READ_WRITE);
        assert_eq!(parse_scope(Some("  ")).unwrap(), Scopes::READ_WRITE);
        assert_eq!(parse_scope(Some("read")).unwrap(), Scopes::READ);
        assert_eq!(parse_scope(Some("read write")).unwrap(), Scopes::READ_WRITE);
        assert_eq!(parse_scope(Some("write read read")).unwrap(), Scopes::READ_WRITE);
        assert_eq!(parse_scope(Some("write")).unwrap(), Scopes::READ_WRITE, "write implies read");
        for bad in ["admin", "read admin", "openid", "READ", "read,write"] {
            assert_eq!(parse_scope(Some(bad)).unwrap_err().kind, OAuthErrorKind::InvalidScope, "{bad}");
        }
        assert_eq!(format_scope(Scopes::READ_WRITE), DEFAULT_SCOPE);
        assert_eq!(format_scope(Scopes::READ), "read");
        for s in [Scopes::READ, Scopes::READ_WRITE] {
            assert_eq!(parse_scope(Some(&format_scope(s))).unwrap(), s);
        }
    }

    #[test]
    fn subsets() {
        assert!(is_subset(Scopes::READ, Scopes::READ_WRITE));
        assert!(is_subset(Scopes::READ, Scopes::READ));
        assert!(!is_subset(Scopes::READ_WRITE, Scopes::READ));
        assert!(is_grantable(Scopes::READ) && !is_grantable(Scopes { read: false, write: true }));
    }
}
