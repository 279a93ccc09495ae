//! The typed failures of this crate: [`OAuthError`] for the OAuth endpoints,
//! [`AuthFailure`] for a bearer token that does not authenticate. Neither
//! knows HTTP status codes: the transport maps them.

use std::fmt;

use lf_core::LfError;

/// The error codes of RFC 6749 §4.1.2.1 and §5.2, RFC 7591 §3.2.2 and
/// RFC 8707 §2, by their registered names ([`OAuthErrorKind::as_str`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OAuthErrorKind {
    /// A parameter is missing, repeated, or malformed.
    InvalidRequest,
    /// The client is unknown.
    InvalidClient,
    /// The code or refresh token is unknown, expired, used, revoked, or was
    /// issued to another client or redirect URI; or the PKCE verifier fails.
    InvalidGrant,
    /// The client may not do this (e.g. revoke another client's token).
    UnauthorizedClient,
    /// A grant type other than `authorization_code` and `refresh_token`.
    UnsupportedGrantType,
    /// A response type other than `code`.
    UnsupportedResponseType,
    /// A scope other than `read` and `write`, or a widened scope.
    InvalidScope,
    /// A `resource` (RFC 8707) this server does not serve, or another one
    /// than the grant was issued for.
    InvalidTarget,
    /// A redirect URI refused at registration (RFC 7591).
    InvalidRedirectUri,
    /// Other client metadata refused at registration (RFC 7591).
    InvalidClientMetadata,
    /// The user declined.
    AccessDenied,
    /// The server failed; the cause is in [`OAuthError::cause`], for logs only.
    ServerError,
}

impl OAuthErrorKind {
    /// The registered error code, e.g. `invalid_grant`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::InvalidRequest => "invalid_request",
            Self::InvalidClient => "invalid_client",
            Self::InvalidGrant => "invalid_grant",
            Self::UnauthorizedClient => "unauthorized_client",
            Self::UnsupportedGrantType => "unsupported_grant_type",
            Self::UnsupportedResponseType => "unsupported_response_type",
            Self::InvalidScope => "invalid_scope",
            Self::InvalidTarget => "invalid_target",
            Self::InvalidRedirectUri => "invalid_redirect_uri",
            Self::InvalidClientMetadata => "invalid_client_metadata",
            Self::AccessDenied => "access_denied",
            Self::ServerError => "server_error",
        }
    }
}

impl fmt::Display for OAuthErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An OAuth error response: `{"error": kind.as_str(), "error_description":
/// description}`. The description is safe to show the client; a server
/// error keeps its [`LfError`] as `cause`, for logs only.
#[derive(Debug)]
pub struct OAuthError {
    /// The error code.
    pub kind: OAuthErrorKind,
    /// What went wrong, for the client's developer (ASCII, no quotes or
    /// backslashes, as RFC 6749 asks of `error_description`).
    pub description: String,
    /// For [`OAuthErrorKind::ServerError`]: the failure, to be logged.
    pub cause: Option<LfError>,
}

impl OAuthError {
    /// An error of `kind` with a client-facing `description`.
    pub fn new(kind: OAuthErrorKind, description: impl Into<String>) -> Self {
        Self { kind, description: description.into(), cause: None }
    }
    /// A server error wrapping a domain or store failure. The description is
    /// generic; `cause` keeps the failure.
    pub fn server(cause: LfError) -> Self {
        Self {
            kind: OAuthErrorKind::ServerError,
            description: "The server failed; try again later".to_owned(),
            cause: Some(cause),
        }
    }
    pub(crate) fn invalid_request(description: impl Into<String>) -> Self {
        Self::new(OAuthErrorKind::InvalidRequest, description)
    }
    pub(crate) fn invalid_grant(description: impl Into<String>) -> Self {
        Self::new(OAuthErrorKind::InvalidGrant, description)
    }
    pub(crate) fn invalid_client() -> Self {
        Self::new(OAuthErrorKind::InvalidClient, "Unknown client_id; register the client first")
    }
}

impl From<LfError> for OAuthError {
    fn from(e: LfError) -> Self {
        Self::server(e)
    }
}

impl fmt::Display for OAuthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind, self.description)
    }
}

impl std::error::Error for OAuthError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.cause.as_ref().map(|e| e as &(dyn std::error::Error + 'static))
    }
}

/// Why a bearer token did not authenticate. The transport answers every one
/// of them the same way (401) and logs which it was.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AuthFailure {
    /// Not `lf_mcp_` followed by 64 lowercase hex digits.
    Malformed,
    /// Well formed, but no such token.
    Unknown,
    /// Revoked (by an admin, by the client, or with its refresh family).
    Revoked,
    /// Past its expiry.
    Expired,
    /// Issued for another resource (audience) than the one it was sent to.
    WrongResource,
}

impl AuthFailure {
    /// A short name for logs: `malformed`, `unknown`, `revoked`, `expired`,
    /// `wrong_resource`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Malformed => "malformed",
            Self::Unknown => "unknown",
            Self::Revoked => "revoked",
            Self::Expired => "expired",
            Self::WrongResource => "wrong_resource",
        }
    }
}

impl fmt::Display for AuthFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::error::Error for AuthFailure {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_have_their_registered_names() {
        use OAuthErrorKind::*;
        let all = [
            (InvalidRequest, "invalid_request"),
            (InvalidClient, "invalid_client"),
            (InvalidGrant, "invalid_grant"),
            (UnauthorizedClient, "unauthorized_client"),
            (UnsupportedGrantType, "unsupported_grant_type"),
            (UnsupportedResponseType, "unsupported_response_type"),
            (InvalidScope, "invalid_scope"),
            (InvalidTarget, "invalid_target"),
            (InvalidRedirectUri, "invalid_redirect_uri"),
            (InvalidClientMetadata, "invalid_client_metadata"),
            (AccessDenied, "access_denied"),
            (ServerError, "server_error"),
        ];
        for (kind, name) in all {
            assert_eq!(kind.as_str(), name);
            assert_eq!(kind.to_string(), name);
        }
    }

    #[test]
    fn server_errors_hide_their_cause() {
        let e = OAuthError::server(LfError::internal("disk full at /var/lib"));
        assert_eq!(e.kind, OAuthErrorKind::ServerError);
        assert!(!e.description.contains("disk"));
        assert!(e.cause.as_ref().unwrap().cause().unwrap().to_string().contains("disk full"));
        assert_eq!(AuthFailure::WrongResource.to_string(), "wrong_resource");
    }
}
