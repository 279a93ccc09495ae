//! The rules of accounts, tokens and OAuth 2.1, over an [`AuthStore`] and a
//! [`Clock`].

use std::sync::Arc;
use std::time::Duration;

use argon2::{Argon2, PasswordHasher, PasswordVerifier};
use lf_core::{Clock, ErrorCode, LenserId, LfError, LfResult, Principal, Scopes, Timestamp};

use crate::error::{AuthFailure, OAuthError, OAuthErrorKind};
use crate::metadata::{ClientIdUrl, ClientMetadataSource, is_client_id_url};
use crate::model::{
    ClientId, CodeRecord, FamilyId, GrantInfo, GrantTokens, Handle, Lenser, LenserRecord, LocalLenser,
    NO_PASSWORD, OAuthClient, Password, RefreshRecord, SESSION_LABEL, TokenId, TokenInfo, TokenRecord,
};
use crate::pkce;
use crate::redirect::{append_query, redirect_matches, validate_redirect_uris};
use crate::scope::{format_scope, is_grantable, is_subset, parse_scope};
use crate::secret::{
    ACCESS_TOKEN_PREFIX, CODE_PREFIX, REFRESH_TOKEN_PREFIX, SecretHash, is_access_token, is_code,
    is_refresh_token, new_secret,
};
use crate::store::AuthStore;

mod oauth;

pub(crate) use oauth::check_client_fields;
pub use oauth::{AuthorizationRequest, ClientRegistration, IssuedCode, TokenGrant, ValidAuthorization};

/// The client name shown when a client registers without one.
pub const DEFAULT_CLIENT_NAME: &str = "MCP client";
/// Most characters of a client name.
pub const MAX_CLIENT_NAME_CHARS: usize = 120;
/// Most characters of a token label.
pub const MAX_LABEL_CHARS: usize = 120;
/// Most bytes of a resource URI.
pub const MAX_RESOURCE_LEN: usize = 2048;
/// The grant types every client gets (RFC 7591 `grant_types`).
pub const GRANT_TYPES: [&str; 2] = ["authorization_code", "refresh_token"];
/// The response types every client gets (RFC 7591 `response_types`).
pub const RESPONSE_TYPES: [&str; 1] = ["code"];
/// How every client authenticates at the token endpoint: it doesn't (a
/// public client; PKCE binds the code to it).
pub const TOKEN_ENDPOINT_AUTH_METHOD: &str = "none";

/// An argon2id hash, with argon2's default parameters, of a password nobody
/// knows: verified against when a handle is unknown, so that an unknown
/// handle costs what a wrong password does.
pub(crate) const DUMMY_HASH: &str =
    "$argon2id$v=19$m=19456,t=2,p=1$OEG/JL/Ej6HzMsW6kT8Nxw$cEQ0F9Yflj0L/39fBr3WCqFmqpbuVbyOnyENqzFYkT4";

/// Handles tried for the local lenser before giving up.
const LOCAL_HANDLE_ATTEMPTS: usize = 12;

/// Lifetimes and bindings of what [`AuthService`] issues.
#[derive(Clone, Debug)]
pub struct AuthConfig {
    /// How long an authorization code may be redeemed. Default 5 minutes.
    pub code_ttl: Duration,
    /// How long an OAuth access token works. Default 1 hour.
    pub access_ttl: Duration,
    /// How long a refresh token works; each rotation issues a new one with
    /// the full lifetime. Default 30 days.
    pub refresh_ttl: Duration,
    /// The resources (RFC 8707 audience URLs, e.g.
    /// `https://mcp.example.com/mcp`) tokens may be issued for. An
    /// authorization request without `resource` is bound to the first. Empty:
    /// any absolute http(s) URL is accepted, and a request without one gets
    /// a token for any resource of this server.
    pub resources: Vec<String>,
    /// Whether presenting an already-redeemed code (with the right client,
    /// redirect URI and verifier) revokes the tokens that code was turned
    /// into (RFC 6749 §4.1.2, "SHOULD"). Default true. With it, of two
    /// concurrent redeems one wins and the other then revokes the winner's
    /// tokens.
    pub revoke_on_code_replay: bool,
    /// `last_used_at` is written at most once per this interval per token, so
    /// authenticating is a read. Default 60 seconds.
    pub touch_interval: Duration,
    /// This authorization server's issuer identifier (RFC 8414 `issuer`).
    /// When set, every authorization response, a code or an error, carries
    /// it as `iss` (RFC 9207), so that a client of several servers can tell
    /// which one answered. Default none.
    pub issuer: Option<String>,
    /// Whether a client metadata document URL may be `http://` on a
    /// loopback host ([`ClientIdUrl::parse`]): tests and local development
    /// only. Default false.
    pub client_metadata_http_loopback: bool,
}

impl Default for AuthConfig {
    fn default() -> Self {
        Self {
            code_ttl: Duration::from_secs(5 * 60),
            access_ttl: Duration::from_secs(60 * 60),
            refresh_ttl: Duration::from_secs(30 * 24 * 60 * 60),
            resources: Vec::new(),
            revoke_on_code_replay: true,
            touch_interval: Duration::from_secs(60),
            issuer: None,
            client_metadata_http_loopback: false,
        }
    }
}

fn micros(d: Duration) -> i64 {
    i64::try_from(d.as_micros()).unwrap_or(i64::MAX)
}

/// An admin-issued access token to create ([`AuthService::issue_token`]).
#[derive(Clone, Debug)]
pub struct NewToken {
    /// Whose token.
    pub lenser: LenserId,
    /// `read`, or `read` and `write`.
    pub scopes: Scopes,
    /// The resource it is valid for; `None`: any resource of this server.
    pub resource: Option<String>,
    /// How long it works; `None`: until revoked.
    pub ttl: Option<Duration>,
    /// A name for people, at most 120 characters.
    pub label: Option<String>,
}

/// A token just issued: the secret, shown once and never stored, and what
/// was stored. `Debug` never prints the secret.
#[derive(Clone)]
pub struct IssuedToken {
    /// `lf_mcp_` + 64 hex digits.
    pub secret: String,
    /// What `list_tokens` will show of it.
    pub info: TokenInfo,
}

impl std::fmt::Debug for IssuedToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IssuedToken").field("info", &self.info).finish_non_exhaustive()
    }
}

/// Who a bearer token speaks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Authenticated {
    /// The lenser.
    pub lenser: LenserId,
    /// What the token may do.
    pub scopes: Scopes,
    /// The token, for logs.
    pub token_id: TokenId,
    /// The OAuth client it was issued to, if any.
    pub client_id: Option<ClientId>,
}

impl Authenticated {
    /// The principal of calls made with this token.
    pub fn principal(&self) -> Principal {
        Principal::Lenser { id: self.lenser, scopes: self.scopes }
    }
}

/// The first step of a sign-in ([`AuthService::sign_in_check`]): the stored
/// hash, or a dummy one for an unknown handle. [`PasswordCheck::verify`] is
/// the CPU-heavy second step (argon2, tens of milliseconds): it is `Send +
/// 'static` so a server can run it on a blocking thread.
#[derive(Clone)]
pub struct PasswordCheck {
    pub(crate) lenser: Option<LenserId>,
    pub(crate) hash: String,
}

impl std::fmt::Debug for PasswordCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PasswordCheck(…)")
    }
}

/// The one failure of a sign-in, whatever was wrong: PERMISSION_DENIED.
pub fn sign_in_failed() -> LfError {
    LfError::permission_denied("That handle and password do not match an account. Check both and try again.")
}

impl PasswordCheck {
    /// The lenser, if `password` is theirs; otherwise [`sign_in_failed`],
    /// the same for an unknown handle, a wrong password or a password of
    /// impossible length. Takes as long for an unknown handle as for a wrong
    /// password.
    pub fn verify(self, password: &str) -> LfResult<LenserId> {
        let Ok(password) = Password::parse(password) else {
            return Err(sign_in_failed());
        };
        let hash = argon2::PasswordHash::new(&self.hash)
            .map_err(|e| LfError::internal(format!("a stored password hash is not a PHC string: {e}")))?;
        match (Argon2::default().verify_password(password.expose().as_bytes(), &hash), self.lenser) {
            (Ok(()), Some(id)) => Ok(id),
            (Ok(()) | Err(argon2::password_hash::Error::PasswordInvalid), _) => Err(sign_in_failed()),
            (Err(e), _) => Err(LfError::internal(format!("verifying a password hash failed: {e}"))),
        }
    }
}

/// The argon2id hash (default parameters, random salt) of `password`, as a
/// PHC string.
pub fn hash_password(password: &Password) -> LfResult<String> {
    Argon2::default()
        .hash_password(password.expose().as_bytes())
        .map(|h| h.to_string())
        .map_err(|e| LfError::internal(format!("hashing a password failed: {e}")))
}

/// Accounts, access tokens and the OAuth 2.1 authorization server's rules.
/// Cheap to share behind an `Arc`.
pub struct AuthService {
    store: Arc<dyn AuthStore>,
    clock: Arc<dyn Clock>,
    config: AuthConfig,
    metadata: Option<Arc<dyn ClientMetadataSource>>,
}

impl AuthService {
    /// A service over `store`, telling time by `clock`. Without
    /// [`AuthService::with_client_metadata`], a `client_id` URL is an
    /// unknown client.
    pub fn new(store: Arc<dyn AuthStore>, clock: Arc<dyn Clock>, config: AuthConfig) -> Self {
        Self { store, clock, config, metadata: None }
    }

    /// The same service accepting clients identified by the URL of their
    /// metadata document, fetched from `source`.
    pub fn with_client_metadata(mut self, source: Arc<dyn ClientMetadataSource>) -> Self {
        self.metadata = Some(source);
        self
    }

    /// The source of client metadata documents, if any.
    pub fn client_metadata(&self) -> Option<&Arc<dyn ClientMetadataSource>> {
        self.metadata.as_ref()
    }

    /// The configuration.
    pub fn config(&self) -> &AuthConfig {
        &self.config
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn AuthStore> {
        &self.store
    }

    // ----- Accounts -------------------------------------------------------

    /// Creates an account; the password is hashed with argon2id (inline:
    /// tens of milliseconds of CPU). INVALID_ARGUMENT for a bad handle or
    /// password (field `handle` / `password`), CONFLICT if the handle is
    /// taken.
    pub async fn create_lenser(&self, handle: &str, password: &str) -> LfResult<Lenser> {
        let handle = Handle::parse(handle)?;
        let password = Password::parse(password)?;
        if self.store.lenser_by_handle(&handle).await?.is_some() {
            return Err(handle_taken(&handle));
        }
        let lenser = Lenser { id: LenserId::new(), handle, created_at: self.clock.now() };
        let record = LenserRecord { lenser: lenser.clone(), password_hash: hash_password(&password)? };
        self.store.create_lenser(&record).await.map_err(|e| match e.code() {
            ErrorCode::Conflict => handle_taken(&lenser.handle),
            _ => e,
        })?;
        Ok(lenser)
    }

    /// The account with this handle. INVALID_ARGUMENT if it is no handle.
    pub async fn find_lenser(&self, handle: &str) -> LfResult<Option<Lenser>> {
        let handle = Handle::parse(handle)?;
        Ok(self.store.lenser_by_handle(&handle).await?.map(|r| r.lenser))
    }

    /// The account with this id.
    pub async fn lenser(&self, id: LenserId) -> LfResult<Option<Lenser>> {
        self.store.lenser_by_id(id).await
    }

    /// The local lenser (see [`LocalLenser`]): the one this database
    /// recorded, or a new account without a password, recorded as it, whose
    /// handle is made from `login` ([`Handle::from_login`]) with a suffix
    /// when that is taken (`alice_2` ... `alice_9`, then random). It can never
    /// sign in with a password. CONFLICT when every handle tried was taken.
    pub async fn local_lenser(&self, login: &str) -> LfResult<LocalLenser> {
        let base = Handle::from_login(login);
        let mut last = None;
        for attempt in 0..LOCAL_HANDLE_ATTEMPTS {
            let handle = match attempt {
                0 => base.clone(),
                1..=8 => base.with_suffix(&(attempt + 1).to_string()),
                _ => base.with_suffix(&LenserId::new().as_uuid().simple().to_string()[24..]),
            };
            let lenser = Lenser { id: LenserId::new(), handle, created_at: self.clock.now() };
            let candidate = LenserRecord { lenser, password_hash: NO_PASSWORD.to_owned() };
            match self.store.local_lenser(&candidate).await {
                Err(e) if e.code() == ErrorCode::Conflict => last = Some(e),
                answer => return answer,
            }
        }
        Err(last.unwrap_or_else(|| LfError::conflict("no free handle for the local lenser")))
    }

    /// The first step of a sign-in: looks the handle up. Never fails for an
    /// unknown or malformed handle (the check then fails in
    /// [`PasswordCheck::verify`], just as slowly); INTERNAL if the store
    /// fails.
    pub async fn sign_in_check(&self, handle: &str) -> LfResult<PasswordCheck> {
        let record = match Handle::parse(handle) {
            Ok(h) => self.store.lenser_by_handle(&h).await?,
            Err(_) => None,
        };
        Ok(match record {
            // An account without a password signs in as an unknown handle does.
            Some(r) if r.password_hash != NO_PASSWORD => {
                PasswordCheck { lenser: Some(r.lenser.id), hash: r.password_hash }
            }
            _ => PasswordCheck { lenser: None, hash: DUMMY_HASH.to_owned() },
        })
    }

    /// Signs in: the lenser, or [`sign_in_failed`] (PERMISSION_DENIED)
    /// whether the handle is unknown or the password wrong. Runs argon2
    /// inline; a server may prefer [`AuthService::sign_in_check`] and
    /// [`PasswordCheck::verify`] on a blocking thread.
    pub async fn verify_password(&self, handle: &str, password: &str) -> LfResult<LenserId> {
        self.sign_in_check(handle).await?.verify(password)
    }

    // ----- Access tokens --------------------------------------------------

    /// Issues an access token (admin). INVALID_ARGUMENT for scopes without
    /// `read`, a label over 120 characters, or a resource this server does
    /// not serve; NOT_FOUND if the lenser has no account.
    pub async fn issue_token(&self, new: NewToken) -> LfResult<IssuedToken> {
        if new.label.as_deref().is_some_and(|l| l.trim().eq_ignore_ascii_case(SESSION_LABEL)) {
            return Err(LfError::invalid_argument(format!(
                "The label \"{SESSION_LABEL}\" is kept for the pages' sessions: choose another"
            ))
            .with_field("label"));
        }
        self.issue(new).await
    }

    /// Starts a read-write browser session of `lenser` for `resource` (the
    /// pages' audience): an access token labelled [`SESSION_LABEL`], listed
    /// and revoked as any token, and deleted once expired by
    /// [`AuthService::purge_expired`]. Errors as [`AuthService::issue_token`].
    pub async fn issue_session(
        &self,
        lenser: LenserId,
        resource: String,
        ttl: Duration,
    ) -> LfResult<IssuedToken> {
        let label = Some(SESSION_LABEL.to_owned());
        let scopes = Scopes::READ_WRITE;
        self.issue(NewToken { lenser, scopes, resource: Some(resource), ttl: Some(ttl), label }).await
    }

    async fn issue(&self, new: NewToken) -> LfResult<IssuedToken> {
        if !is_grantable(new.scopes) {
            return Err(
                LfError::invalid_argument("A token's scopes are read, or read and write").with_field("scope")
            );
        }
        let label = new.label.as_deref().map(str::trim).filter(|l| !l.is_empty());
        if label.is_some_and(|l| l.chars().count() > MAX_LABEL_CHARS || l.chars().any(char::is_control)) {
            return Err(LfError::invalid_argument(format!(
                "A label is at most {MAX_LABEL_CHARS} characters, without control characters"
            ))
            .with_field("label"));
        }
        if let Some(r) = &new.resource
            && !self.serves_resource(r)
        {
            return Err(LfError::invalid_argument(format!(
                "{} is not a resource of this server",
                LfError::excerpt(r)
            ))
            .with_field("resource"));
        }
        if self.store.lenser_by_id(new.lenser).await?.is_none() {
            return Err(LfError::not_found("Lenser", new.lenser));
        }
        let now = self.clock.now();
        let secret = new_secret(ACCESS_TOKEN_PREFIX)?;
        let info = TokenInfo {
            id: TokenId::new(),
            lenser: new.lenser,
            scopes: new.scopes,
            client_id: None,
            family_id: None,
            resource: new.resource.clone(),
            label: label.map(str::to_owned),
            created_at: now,
            expires_at: new.ttl.map(|t| now.plus_micros(micros(t))),
            revoked_at: None,
            last_used_at: None,
        };
        self.store.insert_token(&TokenRecord { info: info.clone(), hash: SecretHash::of(&secret) }).await?;
        Ok(IssuedToken { secret, info })
    }

    /// Resolves a bearer token sent to `resource` (this server's resource
    /// URL, e.g. `https://mcp.example.com/mcp`). The outer error is a store
    /// failure (INTERNAL); the inner one says why the token does not
    /// authenticate: malformed, unknown, revoked, expired, or issued for
    /// another resource. Writes `last_used_at` at most once per
    /// [`AuthConfig::touch_interval`].
    pub async fn authenticate(
        &self,
        bearer: &str,
        resource: &str,
    ) -> LfResult<Result<Authenticated, AuthFailure>> {
        if !is_access_token(bearer) {
            return Ok(Err(AuthFailure::Malformed));
        }
        let hash = SecretHash::of(bearer);
        let Some(token) = self.store.token_by_hash(&hash).await? else {
            return Ok(Err(AuthFailure::Unknown));
        };
        if !token.hash.ct_eq(&hash) {
            return Ok(Err(AuthFailure::Unknown));
        }
        let info = token.info;
        if info.revoked_at.is_some() {
            return Ok(Err(AuthFailure::Revoked));
        }
        let now = self.clock.now();
        if info.expires_at.is_some_and(|e| now >= e) {
            return Ok(Err(AuthFailure::Expired));
        }
        if info.resource.as_deref().is_some_and(|r| r != resource) {
            return Ok(Err(AuthFailure::WrongResource));
        }
        let interval = micros(self.config.touch_interval);
        if info.last_used_at.is_none_or(|last| now.as_micros().saturating_sub(last.as_micros()) >= interval) {
            self.store.touch_token(info.id, now).await?;
        }
        Ok(Ok(Authenticated {
            lenser: info.lenser,
            scopes: info.scopes,
            token_id: info.id,
            client_id: info.client_id,
        }))
    }

    /// Revokes an access token, or a grant by its id (admin): a token of an
    /// OAuth grant, or the grant, revokes every access and refresh token of
    /// the grant at once, so that it cannot be refreshed back. NOT_FOUND if
    /// there is none; revoking twice keeps the first time.
    pub async fn revoke_token(&self, id: TokenId) -> LfResult<()> {
        self.store.revoke_token(id, self.clock.now()).await
    }

    /// OAuth grants of `lenser` (or everyone's), newest first; revoked and
    /// expired ones only with `include_inactive`.
    pub async fn list_grants(
        &self,
        lenser: Option<LenserId>,
        include_inactive: bool,
    ) -> LfResult<Vec<GrantInfo>> {
        let active_at = (!include_inactive).then(|| self.clock.now());
        self.store.list_grants(lenser, active_at).await
    }

    /// Access tokens of `lenser` (or everyone's), newest first, without
    /// secrets or hashes; revoked and expired ones only with
    /// `include_inactive`.
    pub async fn list_tokens(
        &self,
        lenser: Option<LenserId>,
        include_inactive: bool,
    ) -> LfResult<Vec<TokenInfo>> {
        let active_at = (!include_inactive).then(|| self.clock.now());
        self.store.list_tokens(lenser, active_at).await
    }

    /// Deletes expired codes, refresh tokens and OAuth access tokens (see
    /// [`AuthStore::purge_expired`]); answers how many.
    pub async fn purge_expired(&self) -> LfResult<u64> {
        self.store.purge_expired(self.clock.now()).await
    }
}

fn handle_taken(handle: &Handle) -> LfError {
    LfError::conflict(format!("The handle {handle} is taken. Choose another.")).with_field("handle")
}
