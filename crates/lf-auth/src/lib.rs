//! Accounts, access tokens and the rules of an OAuth 2.1 authorization
//! server, for the LenserFight HTTP transport: pure domain code behind the
//! [`AuthStore`] trait, with an in-memory store and a public
//! [`contract`] suite that every store runs.
//!
//! lf-auth knows nothing about HTTP, SQL or JSON, and no async runtime:
//! the transport maps [`OAuthError`] and [`AuthFailure`] to status codes,
//! and lf-store implements the store on SQLite and PostgreSQL.
//!
//! ```
//! use std::sync::Arc;
//! use lf_auth::{AuthConfig, AuthService, AuthorizationRequest, ClientRegistration, MemoryAuthStore, pkce};
//! use lf_core::{Scopes, SystemClock};
//!
//! let auth = AuthService::new(Arc::new(MemoryAuthStore::new()), Arc::new(SystemClock), AuthConfig {
//!     resources: vec!["https://mcp.example.com/mcp".into()],
//!     ..AuthConfig::default()
//! });
//! pollster::block_on(async {
//!     let me = auth.create_lenser("alice", "correct horse battery").await.unwrap();
//!     // The sign-in page: one failure for a wrong password or an unknown handle.
//!     assert_eq!(auth.verify_password("Alice", "correct horse battery").await.unwrap(), me.id);
//!     assert!(auth.verify_password("alice", "wrong password").await.is_err());
//!
//!     // A client registers, sends the user to the authorization endpoint...
//!     let client = auth.register_client(ClientRegistration {
//!         redirect_uris: vec!["http://127.0.0.1/callback".into()],
//!         ..Default::default()
//!     }).await.unwrap();
//!     let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
//!     let request = AuthorizationRequest {
//!         response_type: Some("code".into()),
//!         client_id: Some(client.id.to_string()),
//!         redirect_uri: Some("http://127.0.0.1:53124/callback".into()),
//!         code_challenge: Some(pkce::s256_challenge(verifier)),
//!         code_challenge_method: Some("S256".into()),
//!         state: Some("xyz".into()),
//!         ..Default::default()
//!     };
//!     let valid = auth.validate_authorization(&request).await.unwrap();
//!     // ... the user signs in and consents; the client gets a code ...
//!     let issued = auth.issue_code(&valid, me.id).await.unwrap();
//!     assert!(issued.redirect_to.starts_with("http://127.0.0.1:53124/callback?code=lf_code_"));
//!     // ... and redeems it with its PKCE verifier, once.
//!     let grant = auth.redeem_code(client.id.as_str(), &issued.code,
//!         "http://127.0.0.1:53124/callback", verifier, None).await.unwrap();
//!     assert_eq!(grant.scope, "read write");
//!
//!     // Every request to /mcp then carries the bearer token.
//!     let who = auth.authenticate(&grant.access_token, "https://mcp.example.com/mcp").await.unwrap().unwrap();
//!     assert_eq!((who.lenser, who.scopes), (me.id, Scopes::READ_WRITE));
//! });
//! ```
//!
//! Invariants:
//! - tokens, refresh tokens and codes exist in clear only in the answer
//!   that hands them out; stores keep their SHA-256, looked up by hash and
//!   compared in constant time;
//! - a code is single use, short-lived, and bound to its client, redirect
//!   URI, PKCE challenge (S256 only), lenser, scopes and resource; a failed
//!   redeem does not consume it; of concurrent redeems exactly one wins;
//! - a refresh token is single use; presenting a used one revokes its
//!   whole family;
//! - an authorization request's errors are never for redirecting (they are
//!   found before the user acts, and any client may register any https
//!   redirect URI); with [`AuthConfig::issuer`] every authorization
//!   response carries `iss`;
//! - passwords are kept as argon2id PHC strings; a sign-in fails the same
//!   way, and as slowly, for an unknown handle as for a wrong password, and
//!   for an account without a password (the local lenser) whatever is typed;
//! - expiry is always checked, against the injected [`lf_core::Clock`].

pub mod contract;
mod error;
mod memory;
mod metadata;
mod model;
pub mod pkce;
mod redirect;
mod scope;
mod secret;
mod service;
mod store;
pub mod throttle;

pub use error::{AuthFailure, OAuthError, OAuthErrorKind};
pub use memory::MemoryAuthStore;
pub use metadata::{
    ClientIdUrl, ClientMetadata, ClientMetadataSource, MAX_CLIENT_ID_URL_LEN, is_client_id_url,
};
pub use model::{
    ClientId, CodeRecord, FamilyId, GrantInfo, GrantTokens, Handle, Lenser, LenserRecord, LocalLenser,
    NO_PASSWORD, OAuthClient, Password, RefreshRecord, SESSION_LABEL, TokenId, TokenInfo, TokenRecord,
};
pub use redirect::{
    MAX_REDIRECT_URI_LEN, MAX_REDIRECT_URIS, append_query, redirect_matches, validate_redirect_uri,
    validate_redirect_uris,
};
pub use scope::{DEFAULT_SCOPE, SUPPORTED_SCOPES, format_scope, is_grantable, is_subset, parse_scope};
pub use secret::{
    ACCESS_TOKEN_PREFIX, CLIENT_ID_PREFIX, CODE_PREFIX, REFRESH_TOKEN_PREFIX, SecretHash, is_access_token,
    is_code, is_refresh_token,
};
pub use service::{
    AuthConfig, AuthService, Authenticated, AuthorizationRequest, ClientRegistration, DEFAULT_CLIENT_NAME,
    GRANT_TYPES, IssuedCode, IssuedToken, MAX_CLIENT_NAME_CHARS, MAX_LABEL_CHARS, MAX_RESOURCE_LEN, NewToken,
    PasswordCheck, RESPONSE_TYPES, TOKEN_ENDPOINT_AUTH_METHOD, TokenGrant, ValidAuthorization, hash_password,
    sign_in_failed,
};
pub use store::AuthStore;
pub use throttle::{Change, MemoryThrottleStore, ThrottleStore};

#[cfg(test)]
mod tests;
