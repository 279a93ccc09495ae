//! The rules of accounts, tokens and OAuth 2.1, over an [`AuthStore`] and a
//! [`Clock`].

use std::sync::Arc;
use std::time::Duration;

use argon2::{Argon2, PasswordHasher, PasswordVerifier};
use lf_core::{Clock, ErrorCode, LenserId, LfError, LfResult, Principal, Scopes, Timestamp};

use crate::error::{AuthFailure, OAuthError, OAuthErrorKind};
use crate::model::{
    ClientId, CodeRecord, FamilyId, GrantInfo, GrantTokens, Handle, Lenser, LenserRecord, LocalLenser,
    NO_PASSWORD, OAuthClient, Password, RefreshRecord, TokenId, TokenInfo, TokenRecord,
};
use crate::pkce;
use crate::redirect::{append_query, redirect_matches, validate_redirect_uris};
use crate::scope::{format_scope, is_grantable, is_subset, parse_scope};
use crate::secret::{
    ACCESS_TOKEN_PREFIX, CODE_PREFIX, REFRESH_TOKEN_PREFIX, SecretHash, is_access_token, is_code,
    is_refresh_token, new_secret,
};
use crate::store::AuthStore;

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

/// A dynamic client registration request (RFC 7591 §2), as sent.
#[derive(Clone, Debug, Default)]
pub struct ClientRegistration {
    /// Shown on the consent page; default [`DEFAULT_CLIENT_NAME`].
    pub client_name: Option<String>,
    /// 1 to 10 redirect URIs, each https or loopback http.
    pub redirect_uris: Vec<String>,
    /// If sent: only `authorization_code` and `refresh_token`, including the
    /// first.
    pub grant_types: Option<Vec<String>>,
    /// If sent: only `code`.
    pub response_types: Option<Vec<String>>,
    /// If sent, anything: every client is registered as public (`none`),
    /// which the response says (RFC 7591 §3.2.1 lets a server replace a
    /// requested value).
    pub token_endpoint_auth_method: Option<String>,
}

/// An authorization request (RFC 6749 §4.1.1, RFC 7636 §4.3, RFC 8707), as
/// sent to the authorization endpoint.
#[derive(Clone, Debug, Default)]
pub struct AuthorizationRequest {
    /// Must be `code`.
    pub response_type: Option<String>,
    /// A registered client.
    pub client_id: Option<String>,
    /// One of the client's redirect URIs (loopback ports may differ).
    pub redirect_uri: Option<String>,
    /// `read`, `write` or both; default both.
    pub scope: Option<String>,
    /// Passed back unchanged.
    pub state: Option<String>,
    /// The S256 challenge.
    pub code_challenge: Option<String>,
    /// Must be `S256`.
    pub code_challenge_method: Option<String>,
    /// The resource the token is for (RFC 8707).
    pub resource: Option<String>,
}

/// An authorization request that passed every check, for the consent page
/// and [`AuthService::issue_code`]. Only [`AuthService::validate_authorization`]
/// makes one.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ValidAuthorization {
    /// The client (its name goes on the consent page).
    pub client: OAuthClient,
    /// The redirect URI, exactly as requested.
    pub redirect_uri: String,
    /// The scopes asked for.
    pub scopes: Scopes,
    /// The S256 challenge.
    pub code_challenge: String,
    /// The resource the tokens will be bound to.
    pub resource: Option<String>,
    /// The client's state, passed back.
    pub state: Option<String>,
    /// [`AuthConfig::issuer`], passed as `iss`.
    pub issuer: Option<String>,
}

impl ValidAuthorization {
    /// The host of the redirect URI, for the consent page ("you will be
    /// sent back to ...").
    pub fn redirect_host(&self) -> &str {
        let after = self.redirect_uri.split_once("://").map_or("", |(_, a)| a);
        &after[..after.find(['/', '?']).unwrap_or(after.len())]
    }

    /// The redirect carrying `error` (and `state` and `iss`) back to the
    /// client: only for what happens after the user has acted on the page.
    pub fn redirect_with_error(&self, error: &OAuthError) -> String {
        append_query(
            &self.redirect_uri,
            &[
                ("error", Some(error.kind.as_str())),
                ("error_description", Some(&error.description)),
                ("state", self.state.as_deref()),
                ("iss", self.issuer.as_deref()),
            ],
        )
    }

    /// The redirect telling the client the user declined (`access_denied`).
    pub fn deny(&self) -> String {
        self.redirect_with_error(&OAuthError::new(OAuthErrorKind::AccessDenied, "The user declined"))
    }

    /// The same request with fewer scopes (the user unticked `write`).
    /// `invalid_scope` if `scopes` is not a grantable subset.
    pub fn narrow(mut self, scopes: Scopes) -> Result<Self, OAuthError> {
        if !is_grantable(scopes) || !is_subset(scopes, self.scopes) {
            return Err(OAuthError::new(OAuthErrorKind::InvalidScope, "Scopes may only be narrowed"));
        }
        self.scopes = scopes;
        Ok(self)
    }
}

/// An authorization code just issued. `Debug` never prints the code.
#[derive(Clone)]
pub struct IssuedCode {
    /// `lf_code_` + 64 hex digits; stored only as its hash.
    pub code: String,
    /// The redirect carrying `code`, `state` and `iss` to the client.
    pub redirect_to: String,
    /// When it stops working.
    pub expires_at: Timestamp,
}

impl std::fmt::Debug for IssuedCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IssuedCode").field("expires_at", &self.expires_at).finish_non_exhaustive()
    }
}

/// A successful token response (RFC 6749 §5.1). `Debug` never prints the
/// tokens.
#[derive(Clone)]
pub struct TokenGrant {
    /// `lf_mcp_` + 64 hex digits.
    pub access_token: String,
    /// Always `Bearer`.
    pub token_type: &'static str,
    /// Seconds until the access token expires.
    pub expires_in: u64,
    /// `lf_rt_` + 64 hex digits, single use.
    pub refresh_token: String,
    /// The access token's scopes as a scope string.
    pub scope: String,
    /// The access token's scopes.
    pub scopes: Scopes,
    /// Whose tokens.
    pub lenser: LenserId,
    /// The access token's id.
    pub access_token_id: TokenId,
}

impl std::fmt::Debug for TokenGrant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenGrant")
            .field("scope", &self.scope)
            .field("expires_in", &self.expires_in)
            .field("lenser", &self.lenser)
            .field("access_token_id", &self.access_token_id)
            .finish_non_exhaustive()
    }
}

/// Who a grant is for and what it carries, before its tokens are made.
struct GrantSpec<'a> {
    family: FamilyId,
    client: &'a ClientId,
    lenser: LenserId,
    access_scopes: Scopes,
    refresh_scopes: Scopes,
    resource: Option<&'a str>,
}

/// Accounts, access tokens and the OAuth 2.1 authorization server's rules.
/// Cheap to share behind an `Arc`.
pub struct AuthService {
    store: Arc<dyn AuthStore>,
    clock: Arc<dyn Clock>,
    config: AuthConfig,
}

impl AuthService {
    /// A service over `store`, telling time by `clock`.
    pub fn new(store: Arc<dyn AuthStore>, clock: Arc<dyn Clock>, config: AuthConfig) -> Self {
        Self { store, clock, config }
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

    // ----- OAuth: clients -------------------------------------------------

    /// Registers a public client (RFC 7591). `invalid_redirect_uri` for a
    /// bad redirect URI list, `invalid_client_metadata` for a bad name,
    /// grant type or response type.
    pub async fn register_client(&self, reg: ClientRegistration) -> Result<OAuthClient, OAuthError> {
        let metadata = |d: &str| OAuthError::new(OAuthErrorKind::InvalidClientMetadata, d);
        let name = reg.client_name.as_deref().map(str::trim).filter(|n| !n.is_empty());
        let name = match name {
            None => DEFAULT_CLIENT_NAME.to_owned(),
            Some(n) if n.chars().count() > MAX_CLIENT_NAME_CHARS => {
                return Err(metadata("client_name is longer than 120 characters"));
            }
            Some(n) if n.chars().any(|c| c.is_control() || is_bidi_control(c)) => {
                return Err(metadata("client_name contains control characters"));
            }
            Some(n) => n.to_owned(),
        };
        validate_redirect_uris(&reg.redirect_uris)?;
        if let Some(grants) = &reg.grant_types {
            if grants.iter().any(|g| !GRANT_TYPES.contains(&g.as_str())) {
                return Err(metadata("grant_types may only be authorization_code and refresh_token"));
            }
            if !grants.iter().any(|g| g == "authorization_code") {
                return Err(metadata("grant_types must include authorization_code"));
            }
        }
        if let Some(types) = &reg.response_types
            && (types.is_empty() || types.iter().any(|t| t != "code"))
        {
            return Err(metadata("response_types may only be code"));
        }
        let client = OAuthClient {
            id: ClientId::generate()?,
            name,
            redirect_uris: reg.redirect_uris,
            created_at: self.clock.now(),
        };
        self.store.insert_client(&client).await?;
        Ok(client)
    }

    /// The client with this id; `None` for an unknown or malformed id.
    pub async fn client(&self, client_id: &str) -> LfResult<Option<OAuthClient>> {
        match ClientId::parse(client_id) {
            Some(id) => self.store.client(&id).await,
            None => Ok(None),
        }
    }

    async fn known_client(&self, client_id: &str) -> Result<OAuthClient, OAuthError> {
        self.client(client_id).await?.ok_or_else(OAuthError::invalid_client)
    }

    // ----- OAuth: authorization -------------------------------------------

    /// Checks an authorization request before the consent page is shown
    /// (and again when it is submitted): the client, the redirect URI, then
    /// `response_type` (`invalid_request`, `unsupported_response_type`),
    /// PKCE (`invalid_request`: no S256 challenge; `plain` refused),
    /// `invalid_scope`, `invalid_target`. Every error is found before the
    /// user has acted, so none is for redirecting: any client may register
    /// any https redirect URI, and redirecting there unasked would make this
    /// server an open redirector (RFC 9700 §4.11.2). The server shows it.
    pub async fn validate_authorization(
        &self,
        req: &AuthorizationRequest,
    ) -> Result<ValidAuthorization, OAuthError> {
        let client_id =
            req.client_id.as_deref().ok_or_else(|| OAuthError::invalid_request("client_id is missing"))?;
        let client = self.known_client(client_id).await?;
        let redirect_uri = req
            .redirect_uri
            .as_deref()
            .ok_or_else(|| OAuthError::invalid_request("redirect_uri is missing"))?;
        if !redirect_matches(&client.redirect_uris, redirect_uri) {
            return Err(OAuthError::invalid_request(
                "redirect_uri is not one of the client's registered redirect URIs",
            ));
        }
        match req.response_type.as_deref() {
            Some("code") => {}
            None => return Err(OAuthError::invalid_request("response_type is missing")),
            Some(_) => {
                return Err(OAuthError::new(
                    OAuthErrorKind::UnsupportedResponseType,
                    "response_type must be code",
                ));
            }
        }
        let Some(challenge) = req.code_challenge.as_deref() else {
            return Err(OAuthError::invalid_request("code_challenge is missing: PKCE with S256 is required"));
        };
        if req.code_challenge_method.as_deref() != Some(pkce::S256) {
            return Err(OAuthError::invalid_request("code_challenge_method must be S256"));
        }
        if !pkce::is_valid_challenge(challenge) {
            return Err(OAuthError::invalid_request("code_challenge must be 43 base64url characters (S256)"));
        }
        Ok(ValidAuthorization {
            client,
            redirect_uri: redirect_uri.to_owned(),
            scopes: parse_scope(req.scope.as_deref())?,
            code_challenge: challenge.to_owned(),
            resource: self.grant_resource(req.resource.as_deref())?,
            state: req.state.clone(),
            issuer: self.config.issuer.clone(),
        })
    }

    /// The resource a new grant is bound to: the one asked for, if this
    /// server serves it; else the first configured one.
    fn grant_resource(&self, asked: Option<&str>) -> Result<Option<String>, OAuthError> {
        match asked {
            Some(r) if self.serves_resource(r) => Ok(Some(r.to_owned())),
            Some(_) => Err(OAuthError::new(
                OAuthErrorKind::InvalidTarget,
                "resource is not a resource of this server",
            )),
            None => Ok(self.config.resources.first().cloned()),
        }
    }

    fn serves_resource(&self, r: &str) -> bool {
        if self.config.resources.is_empty() {
            is_absolute_http_uri(r)
        } else {
            self.config.resources.iter().any(|c| c == r)
        }
    }

    /// Issues an authorization code for a validated request the user
    /// consented to: random, stored only as its hash, bound to the client,
    /// redirect URI, challenge, scopes, resource and `lenser`, expiring after
    /// [`AuthConfig::code_ttl`].
    pub async fn issue_code(
        &self,
        auth: &ValidAuthorization,
        lenser: LenserId,
    ) -> Result<IssuedCode, OAuthError> {
        let now = self.clock.now();
        let code = new_secret(CODE_PREFIX)?;
        let record = CodeRecord {
            hash: SecretHash::of(&code),
            client_id: auth.client.id.clone(),
            lenser,
            redirect_uri: auth.redirect_uri.clone(),
            code_challenge: auth.code_challenge.clone(),
            scopes: auth.scopes,
            resource: auth.resource.clone(),
            family_id: FamilyId::new(),
            created_at: now,
            expires_at: now.plus_micros(micros(self.config.code_ttl)),
            used_at: None,
        };
        self.store.insert_code(&record).await?;
        let redirect_to = append_query(
            &auth.redirect_uri,
            &[("code", Some(&code)), ("state", auth.state.as_deref()), ("iss", auth.issuer.as_deref())],
        );
        Ok(IssuedCode { code, redirect_to, expires_at: record.expires_at })
    }

    // ----- OAuth: token endpoint ------------------------------------------

    /// `grant_type=authorization_code`: checks the client, the code, that
    /// the code was issued to this client and this exact redirect URI, the
    /// PKCE verifier, the resource and the expiry, all BEFORE consuming the
    /// code, so a failed request leaves it redeemable. Then consumes it and
    /// stores the tokens in one atomic step: of concurrent redeems exactly
    /// one wins.
    ///
    /// Errors: `invalid_client` (unknown client), `invalid_request` (no
    /// verifier), `invalid_target` (another resource), `invalid_grant`
    /// (everything about the code). A replayed code (right client, redirect
    /// URI and verifier) also revokes the tokens it was turned into, with
    /// [`AuthConfig::revoke_on_code_replay`].
    pub async fn redeem_code(
        &self,
        client_id: &str,
        code: &str,
        redirect_uri: &str,
        code_verifier: &str,
        resource: Option<&str>,
    ) -> Result<TokenGrant, OAuthError> {
        let client = self.known_client(client_id).await?;
        if code_verifier.is_empty() {
            return Err(OAuthError::invalid_request("code_verifier is missing"));
        }
        let bad_code = || {
            OAuthError::invalid_grant(
                "The code is invalid, expired, already used, or was issued to another client or redirect URI",
            )
        };
        if !is_code(code) {
            return Err(bad_code());
        }
        let hash = SecretHash::of(code);
        let record = self.store.code_by_hash(&hash).await?.ok_or_else(bad_code)?;
        if !record.hash.ct_eq(&hash) || record.client_id != client.id || record.redirect_uri != redirect_uri {
            return Err(bad_code());
        }
        if !pkce::verify_s256(code_verifier, &record.code_challenge) {
            return Err(OAuthError::invalid_grant("The code_verifier does not match the code_challenge"));
        }
        if let Some(r) = resource
            && record.resource.as_deref() != Some(r)
        {
            return Err(OAuthError::new(
                OAuthErrorKind::InvalidTarget,
                "resource differs from the one the code was issued for",
            ));
        }
        let now = self.clock.now();
        if record.used_at.is_some() {
            return Err(self.code_replayed(&record, now).await);
        }
        if now >= record.expires_at {
            return Err(bad_code());
        }
        let spec = GrantSpec {
            family: record.family_id,
            client: &client.id,
            lenser: record.lenser,
            access_scopes: record.scopes,
            refresh_scopes: record.scopes,
            resource: record.resource.as_deref(),
        };
        let (grant, response) = self.new_grant(&spec, now)?;
        if self.store.consume_code(&hash, now, &grant).await? {
            return Ok(response);
        }
        // Lost a race, or expired meanwhile: either way this request fails.
        match self.store.code_by_hash(&hash).await? {
            Some(r) if r.used_at.is_some() => Err(self.code_replayed(&r, now).await),
            _ => Err(bad_code()),
        }
    }

    async fn code_replayed(&self, record: &CodeRecord, now: Timestamp) -> OAuthError {
        if self.config.revoke_on_code_replay
            && let Err(e) = self.store.revoke_family(record.family_id, now).await
        {
            return OAuthError::server(e);
        }
        OAuthError::invalid_grant("The code was already used")
    }

    /// `grant_type=refresh_token`: rotates the refresh token. The old one is
    /// marked used and a new access token and refresh token of the same
    /// family are issued; `scope` may narrow the access token's scopes
    /// (never widen them; the new refresh token keeps the grant's).
    /// Presenting a refresh token that was already used revokes its whole
    /// family. Errors: `invalid_client`, `invalid_grant` (unknown, another
    /// client's, used, revoked, expired), `invalid_scope`, `invalid_target`.
    pub async fn refresh(
        &self,
        client_id: &str,
        refresh_token: &str,
        scope: Option<&str>,
        resource: Option<&str>,
    ) -> Result<TokenGrant, OAuthError> {
        let client = self.known_client(client_id).await?;
        let bad = || {
            OAuthError::invalid_grant(
                "The refresh token is invalid, expired, revoked or was issued to another client",
            )
        };
        if !is_refresh_token(refresh_token) {
            return Err(bad());
        }
        let hash = SecretHash::of(refresh_token);
        let record = self.store.refresh_by_hash(&hash).await?.ok_or_else(bad)?;
        if !record.hash.ct_eq(&hash) || record.client_id != client.id {
            return Err(bad());
        }
        let now = self.clock.now();
        if record.revoked_at.is_some() {
            return Err(bad());
        }
        if record.used_at.is_some() {
            return Err(self.refresh_replayed(&record, now).await);
        }
        if now >= record.expires_at {
            return Err(bad());
        }
        let access_scopes = match scope.filter(|s| !s.trim().is_empty()) {
            None => record.scopes,
            Some(s) => {
                let asked = parse_scope(Some(s))?;
                if !is_subset(asked, record.scopes) {
                    return Err(OAuthError::new(
                        OAuthErrorKind::InvalidScope,
                        "scope may only narrow the scopes of the grant",
                    ));
                }
                asked
            }
        };
        if let Some(r) = resource
            && record.resource.as_deref() != Some(r)
        {
            return Err(OAuthError::new(
                OAuthErrorKind::InvalidTarget,
                "resource differs from the one the grant was issued for",
            ));
        }
        let spec = GrantSpec {
            family: record.family_id,
            client: &client.id,
            lenser: record.lenser,
            access_scopes,
            refresh_scopes: record.scopes,
            resource: record.resource.as_deref(),
        };
        let (grant, response) = self.new_grant(&spec, now)?;
        if self.store.rotate_refresh(record.id, now, &grant).await? {
            return Ok(response);
        }
        match self.store.refresh_by_hash(&hash).await? {
            Some(r) if r.used_at.is_some() && r.revoked_at.is_none() => {
                Err(self.refresh_replayed(&r, now).await)
            }
            _ => Err(bad()),
        }
    }

    async fn refresh_replayed(&self, record: &RefreshRecord, now: Timestamp) -> OAuthError {
        if let Err(e) = self.store.revoke_family(record.family_id, now).await {
            return OAuthError::server(e);
        }
        OAuthError::invalid_grant(
            "The refresh token was already used; every token of this grant is now revoked",
        )
    }

    fn new_grant(
        &self,
        spec: &GrantSpec<'_>,
        now: Timestamp,
    ) -> Result<(GrantTokens, TokenGrant), OAuthError> {
        let access_secret = new_secret(ACCESS_TOKEN_PREFIX)?;
        let refresh_secret = new_secret(REFRESH_TOKEN_PREFIX)?;
        let access = TokenRecord {
            hash: SecretHash::of(&access_secret),
            info: TokenInfo {
                id: TokenId::new(),
                lenser: spec.lenser,
                scopes: spec.access_scopes,
                client_id: Some(spec.client.clone()),
                family_id: Some(spec.family),
                resource: spec.resource.map(str::to_owned),
                label: None,
                created_at: now,
                expires_at: Some(now.plus_micros(micros(self.config.access_ttl))),
                revoked_at: None,
                last_used_at: None,
            },
        };
        let refresh = RefreshRecord {
            id: TokenId::new(),
            hash: SecretHash::of(&refresh_secret),
            family_id: spec.family,
            client_id: spec.client.clone(),
            lenser: spec.lenser,
            scopes: spec.refresh_scopes,
            resource: spec.resource.map(str::to_owned),
            created_at: now,
            expires_at: now.plus_micros(micros(self.config.refresh_ttl)),
            used_at: None,
            revoked_at: None,
        };
        let response = TokenGrant {
            access_token: access_secret,
            token_type: "Bearer",
            expires_in: self.config.access_ttl.as_secs(),
            refresh_token: refresh_secret,
            scope: format_scope(spec.access_scopes),
            scopes: spec.access_scopes,
            lenser: spec.lenser,
            access_token_id: access.info.id,
        };
        Ok((GrantTokens { access, refresh }, response))
    }

    // ----- OAuth: revocation ----------------------------------------------

    /// Token revocation (RFC 7009): an access token or a refresh token
    /// revokes its whole family (RFC 7009 §2.1 allows it for an access
    /// token). A token that is unknown, malformed
    /// or already revoked is no error. `invalid_client` for an unknown
    /// client; `unauthorized_client` for a token issued to another client
    /// (or by an admin), which stays valid.
    pub async fn revoke(&self, token: &str, client_id: &str) -> Result<(), OAuthError> {
        let client = self.known_client(client_id).await?;
        let not_yours =
            || OAuthError::new(OAuthErrorKind::UnauthorizedClient, "The token was not issued to this client");
        let now = self.clock.now();
        if is_access_token(token) {
            let hash = SecretHash::of(token);
            if let Some(t) = self.store.token_by_hash(&hash).await?
                && t.hash.ct_eq(&hash)
            {
                if t.info.client_id.as_ref() != Some(&client.id) {
                    return Err(not_yours());
                }
                self.store.revoke_token(t.info.id, now).await?;
            }
        } else if is_refresh_token(token) {
            let hash = SecretHash::of(token);
            if let Some(r) = self.store.refresh_by_hash(&hash).await?
                && r.hash.ct_eq(&hash)
            {
                if r.client_id != client.id {
                    return Err(not_yours());
                }
                self.store.revoke_family(r.family_id, now).await?;
            }
        }
        Ok(())
    }
}

fn handle_taken(handle: &Handle) -> LfError {
    LfError::conflict(format!("The handle {handle} is taken. Choose another.")).with_field("handle")
}

fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// An absolute http(s) URI without fragment, of URI characters, at most
/// [`MAX_RESOURCE_LEN`] bytes (RFC 8707 §2).
fn is_absolute_http_uri(r: &str) -> bool {
    let rest = r.strip_prefix("https://").or_else(|| r.strip_prefix("http://"));
    r.len() <= MAX_RESOURCE_LEN
        && rest.is_some_and(|rest| !rest.is_empty() && !rest.starts_with('/'))
        && !r.contains('#')
        && r.bytes().all(|b| b.is_ascii_graphic() && !b"\"<>\\^`{|}".contains(&b))
}
