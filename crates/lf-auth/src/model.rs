//! The values of accounts, tokens and OAuth grants, as plain Rust. Parsed
//! types (`Handle`, `Password`, `ClientId`) can only hold valid values.
//! Records that carry a [`SecretHash`] are for stores; what leaves the crate
//! for listing is [`TokenInfo`], which has none.

use std::fmt;

use lf_core::{LenserId, LfError, LfResult, Scopes, Timestamp};

use crate::secret::{CLIENT_ID_PREFIX, SecretHash, is_prefixed_hex, random_bytes};

lf_core::id_newtype!(
    /// An access token or a refresh token: what `list_tokens` shows and
    /// `revoke_token` takes. Not a secret.
    TokenId
);
lf_core::id_newtype!(
    /// The tokens descending from one authorization code: its access tokens
    /// and its chain of refresh tokens. Revoked as a whole when a refresh
    /// token is replayed or revoked.
    FamilyId
);

/// A lenser's sign-in name: 3 to 32 characters of `[a-z0-9_]`. Parsing
/// lowercases ASCII letters first, so `Alice` and `alice` are one handle.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Handle(String);

impl Handle {
    /// Fewest characters of a handle.
    pub const MIN_LEN: usize = 3;
    /// Most characters of a handle.
    pub const MAX_LEN: usize = 32;

    /// Lowercases ASCII letters, then checks `[a-z0-9_]{3,32}`.
    /// INVALID_ARGUMENT (field `handle`) otherwise.
    pub fn parse(s: &str) -> LfResult<Handle> {
        let lower = s.to_ascii_lowercase();
        let ok = (Self::MIN_LEN..=Self::MAX_LEN).contains(&lower.len())
            && lower.bytes().all(|b| matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'_'));
        if ok {
            Ok(Handle(lower))
        } else {
            Err(LfError::invalid_argument(format!(
                "A handle is 3 to 32 characters of lowercase letters, digits and _, got {}",
                LfError::excerpt(s)
            ))
            .with_field("handle"))
        }
    }

    /// The handle, lowercase.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The handle a login name (`$USER`) makes: ASCII letters lowercased,
    /// digits and `_` kept, every run of anything else one `_`, none at
    /// either end, at most [`Handle::MAX_LEN`] characters;
    /// [`Handle::FALLBACK`] when fewer than [`Handle::MIN_LEN`] are left.
    pub fn from_login(login: &str) -> Handle {
        let mut out = String::with_capacity(login.len());
        for c in login.chars() {
            let c = c.to_ascii_lowercase();
            if c.is_ascii_lowercase() || c.is_ascii_digit() {
                out.push(c);
            } else if !out.is_empty() && !out.ends_with('_') {
                out.push('_');
            }
        }
        out.truncate(Self::MAX_LEN);
        let out = out.trim_end_matches('_');
        if out.len() < Self::MIN_LEN { Handle(Self::FALLBACK.to_owned()) } else { Handle(out.to_owned()) }
    }

    /// The handle of a login name that gives none.
    pub const FALLBACK: &str = "local_lenser";

    /// This handle with `_suffix` appended, shortened to fit
    /// [`Handle::MAX_LEN`]. `suffix` is lowercase letters and digits.
    pub fn with_suffix(&self, suffix: &str) -> Handle {
        let keep = Self::MAX_LEN.saturating_sub(suffix.len() + 1).min(self.0.len());
        Handle(format!("{}_{suffix}", self.0[..keep].trim_end_matches('_')))
    }
}

impl fmt::Display for Handle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for Handle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Handle({})", self.0)
    }
}

/// A password as typed: 8 to 1024 characters (Unicode scalar values), kept
/// exactly (no trimming or normalization). `Debug` never prints it.
#[derive(Clone)]
pub struct Password(String);

impl Password {
    /// Fewest characters of a password.
    pub const MIN_CHARS: usize = 8;
    /// Most characters of a password.
    pub const MAX_CHARS: usize = 1024;

    /// INVALID_ARGUMENT (field `password`) unless 8 to 1024 characters.
    pub fn parse(s: &str) -> LfResult<Password> {
        let n = s.chars().take(Self::MAX_CHARS + 1).count();
        if (Self::MIN_CHARS..=Self::MAX_CHARS).contains(&n) {
            Ok(Password(s.to_owned()))
        } else {
            Err(LfError::invalid_argument(format!(
                "A password is {} to {} characters long",
                Self::MIN_CHARS,
                Self::MAX_CHARS
            ))
            .with_field("password"))
        }
    }

    /// The password.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Password {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Password(…)")
    }
}

/// An OAuth client id: `lf_client_` + 32 lowercase hex digits for a
/// registered client, or the URL of a client's metadata document
/// ([`crate::ClientIdUrl`]). Public: it identifies a client but proves
/// nothing.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ClientId(String);

impl ClientId {
    /// A new random client id.
    pub fn generate() -> LfResult<ClientId> {
        Ok(ClientId(format!("{CLIENT_ID_PREFIX}{}", hex::encode(random_bytes::<16>()?))))
    }
    /// `None` unless `s` has the shape of a client id: an id this server
    /// issued, or a metadata document URL (https, or http on loopback).
    pub fn parse(s: &str) -> Option<ClientId> {
        let ok = is_prefixed_hex(s, CLIENT_ID_PREFIX, 32) || crate::ClientIdUrl::parse(s, true).is_ok();
        ok.then(|| ClientId(s.to_owned()))
    }

    /// The URL of its metadata document, for a client identified by one.
    pub fn metadata_url(&self) -> Option<&str> {
        crate::metadata::is_client_id_url(&self.0).then_some(self.0.as_str())
    }
    /// The id.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ClientId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for ClientId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ClientId({})", self.0)
    }
}

/// A lenser's account, without its password hash.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lenser {
    /// The lenser id every domain row refers to.
    pub id: LenserId,
    /// The unique sign-in name.
    pub handle: Handle,
    /// When the account was created.
    pub created_at: Timestamp,
}

/// The account a stdio server acts as when no lenser is configured: one per
/// database, created on first start and kept (see
/// [`crate::AuthStore::local_lenser`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LocalLenser {
    /// The account.
    pub lenser: Lenser,
    /// Whether this call created it.
    pub created: bool,
}

/// The `password_hash` of an account that has no password, such as the
/// local lenser: no PHC string, so no password ever matches it, and signing
/// in as it fails as for an unknown handle.
pub const NO_PASSWORD: &str = "!no password";

/// An account as stored: the lenser and its argon2id hash, a PHC string
/// (`$argon2id$v=19$m=...`). `Debug` never prints the hash.
#[derive(Clone, PartialEq, Eq)]
pub struct LenserRecord {
    /// The account.
    pub lenser: Lenser,
    /// The PHC string of the password's argon2id hash.
    pub password_hash: String,
}

impl fmt::Debug for LenserRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LenserRecord").field("lenser", &self.lenser).finish_non_exhaustive()
    }
}

/// The label of a browser session: an access token without a family that
/// [`crate::AuthService::issue_session`] alone gives (an admin-issued
/// token may not carry it), so a store knows it as a session, deleted once
/// expired ([`crate::AuthStore::purge_expired`]).
pub const SESSION_LABEL: &str = "browser session";

/// What may be shown about an access token: never its secret or hash.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenInfo {
    /// The token's id (for revoking it).
    pub id: TokenId,
    /// Whose token it is.
    pub lenser: LenserId,
    /// `read`, or `read` and `write`.
    pub scopes: Scopes,
    /// The OAuth client it was issued to; `None` for an admin-issued token.
    pub client_id: Option<ClientId>,
    /// The authorization it descends from; `None` for an admin-issued token.
    pub family_id: Option<FamilyId>,
    /// The resource (audience URL) it is valid for; `None`: any resource of
    /// this server.
    pub resource: Option<String>,
    /// A name for people (admin-issued tokens).
    pub label: Option<String>,
    /// When it was issued.
    pub created_at: Timestamp,
    /// When it stops working; `None`: never.
    pub expires_at: Option<Timestamp>,
    /// When it was revoked, if it was.
    pub revoked_at: Option<Timestamp>,
    /// When it last authenticated a request, to within
    /// [`crate::AuthConfig::touch_interval`].
    pub last_used_at: Option<Timestamp>,
}

impl TokenInfo {
    /// Neither revoked nor expired at `now`.
    pub fn is_active(&self, now: Timestamp) -> bool {
        self.revoked_at.is_none() && self.expires_at.is_none_or(|e| now < e)
    }
}

/// What may be shown about an OAuth grant: the tokens one sign-in gave a
/// client (a family), as a person sees them to end one. Its id is that of
/// its refresh token not used yet (each refresh uses one and adds one),
/// which [`crate::AuthService::revoke_token`] takes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GrantInfo {
    /// The id of its refresh token not used yet (for revoking the grant).
    pub id: TokenId,
    /// The family of its tokens.
    pub family_id: FamilyId,
    /// Whose grant it is.
    pub lenser: LenserId,
    /// The client it was given to.
    pub client_id: ClientId,
    /// What its tokens may do at most.
    pub scopes: Scopes,
    /// When the user signed in (the family's first refresh token).
    pub created_at: Timestamp,
    /// When one of its access tokens last authenticated a request or its
    /// refresh token was last used, whichever is later.
    pub last_used_at: Option<Timestamp>,
    /// When it ends unless refreshed (its refresh token's expiry).
    pub expires_at: Timestamp,
    /// When it was revoked, if it was.
    pub revoked_at: Option<Timestamp>,
}

impl GrantInfo {
    /// Neither revoked nor expired at `now`.
    pub fn is_active(&self, now: Timestamp) -> bool {
        self.revoked_at.is_none() && now < self.expires_at
    }
}

/// An access token as stored: its info and the hash of its secret.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenRecord {
    /// Everything but the secret.
    pub info: TokenInfo,
    /// SHA-256 of the secret.
    pub hash: SecretHash,
}

/// A refresh token as stored. One is used at most once: using it marks it
/// `used_at` and issues the next one of its family.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefreshRecord {
    /// Its id.
    pub id: TokenId,
    /// SHA-256 of the secret.
    pub hash: SecretHash,
    /// The authorization it descends from.
    pub family_id: FamilyId,
    /// The client it was issued to.
    pub client_id: ClientId,
    /// Whose it is.
    pub lenser: LenserId,
    /// The scopes of the grant (a refresh may narrow them for the access
    /// token, never for the next refresh token).
    pub scopes: Scopes,
    /// The resource the grant is bound to.
    pub resource: Option<String>,
    /// When it was issued.
    pub created_at: Timestamp,
    /// When it stops working.
    pub expires_at: Timestamp,
    /// When it was exchanged for new tokens.
    pub used_at: Option<Timestamp>,
    /// When it was revoked (with its family).
    pub revoked_at: Option<Timestamp>,
}

/// An authorization code as stored: bound to its client, redirect URI, PKCE
/// challenge, lenser, scopes and resource; single use; short-lived.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodeRecord {
    /// SHA-256 of the code.
    pub hash: SecretHash,
    /// The client it was issued to.
    pub client_id: ClientId,
    /// Who consented.
    pub lenser: LenserId,
    /// The redirect URI of the authorization request, exactly as sent.
    pub redirect_uri: String,
    /// The S256 PKCE challenge.
    pub code_challenge: String,
    /// The scopes granted.
    pub scopes: Scopes,
    /// The resource the grant is bound to.
    pub resource: Option<String>,
    /// The family of the tokens this code turns into.
    pub family_id: FamilyId,
    /// When it was issued.
    pub created_at: Timestamp,
    /// When it stops working.
    pub expires_at: Timestamp,
    /// When it was redeemed.
    pub used_at: Option<Timestamp>,
}

/// A registered OAuth client. Public (RFC 7591 `token_endpoint_auth_method:
/// none`): no secret; PKCE proves possession of a code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OAuthClient {
    /// Its id.
    pub id: ClientId,
    /// Its name, shown on the consent page (at most 120 characters).
    pub name: String,
    /// Where it may be redirected (1 to 10, validated).
    pub redirect_uris: Vec<String>,
    /// When it registered.
    pub created_at: Timestamp,
}

/// The access token and refresh token a redeemed code or a used refresh
/// token turns into: stored together with the consumption, atomically.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GrantTokens {
    /// The new access token.
    pub access: TokenRecord,
    /// The new refresh token.
    pub refresh: RefreshRecord,
}

#[cfg(test)]
mod tests {
    use super::*;
    use lf_core::ErrorCode;

    #[test]
    fn handles() {
        assert_eq!(Handle::parse("alice").unwrap().as_str(), "alice");
        assert_eq!(Handle::parse("Alice_42").unwrap().as_str(), "alice_42");
        assert_eq!(Handle::parse("abc").unwrap().as_str(), "abc");
        assert!(Handle::parse(&"a".repeat(32)).is_ok());
        for bad in ["ab", "", "a b", "al-ice", "alicé", "ａｌｉｃｅ", "alice!", " alice", "K\u{212A}K"]
        {
            let e = Handle::parse(bad).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidArgument, "{bad}");
        }
        assert!(Handle::parse(&"a".repeat(33)).is_err());
    }

    #[test]
    fn passwords() {
        assert!(Password::parse("12345678").is_ok());
        assert!(Password::parse("ééééééé").is_err(), "7 characters, 14 bytes");
        assert!(Password::parse("éééééééé").is_ok());
        assert!(Password::parse(&"x".repeat(1024)).is_ok());
        assert!(Password::parse(&"x".repeat(1025)).is_err());
        let e = Password::parse("short").unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument);
        assert_eq!(format!("{:?}", Password::parse("hunter2hunter2").unwrap()), "Password(…)");
    }

    #[test]
    fn client_ids() {
        let id = ClientId::generate().unwrap();
        assert!(id.as_str().starts_with("lf_client_") && id.as_str().len() == 42);
        assert_eq!(ClientId::parse(id.as_str()), Some(id.clone()));
        assert_ne!(ClientId::generate().unwrap(), id);
        assert_eq!(ClientId::parse("lf_client_"), None);
        assert_eq!(ClientId::parse(&id.as_str().to_uppercase()), None);
    }

    #[test]
    fn token_ids_round_trip() {
        let id = TokenId::new();
        assert_eq!(id.to_string().parse::<TokenId>().unwrap(), id);
        assert!(TokenId::parse("id", "nope").is_err());
    }
}
