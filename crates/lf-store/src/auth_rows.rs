//! Conversions between stored auth values and lf-auth's types, shared by
//! both backends. Reading back is strict: a value lf-auth would refuse is a
//! corrupt row (INTERNAL).

use lf_auth::{ClientId, Handle, SecretHash};
use lf_core::{LfResult, Scopes};

use crate::error::corrupt;

/// The stored form of a token's scopes: `read` or `read write`.
pub(crate) fn scopes_text(scopes: Scopes) -> String {
    lf_auth::format_scope(scopes)
}

pub(crate) fn scopes(s: &str) -> LfResult<Scopes> {
    match s {
        "read" => Ok(Scopes::READ),
        "read write" => Ok(Scopes::READ_WRITE),
        other => Err(corrupt(format!("scopes {other:?}"))),
    }
}

pub(crate) fn secret_hash(bytes: &[u8]) -> LfResult<SecretHash> {
    SecretHash::from_slice(bytes).ok_or_else(|| corrupt(format!("a secret hash of {} bytes", bytes.len())))
}

pub(crate) fn client_id(s: &str) -> LfResult<ClientId> {
    ClientId::parse(s).ok_or_else(|| corrupt(format!("client id {s:?}")))
}

pub(crate) fn handle(s: &str) -> LfResult<Handle> {
    Handle::parse(s).map_err(|_| corrupt(format!("handle {s:?}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_round_trip_and_refuse_the_rest() {
        for s in [Scopes::READ, Scopes::READ_WRITE] {
            assert_eq!(scopes(&scopes_text(s)).unwrap(), s);
        }
        for bad in ["write", "", "read  write", "admin"] {
            assert_eq!(scopes(bad).unwrap_err().code(), lf_core::ErrorCode::Internal);
        }
        assert!(secret_hash(&[0; 31]).is_err() && secret_hash(&[0; 32]).is_ok());
        assert!(client_id("nope").is_err() && handle("A b").is_err());
    }
}
