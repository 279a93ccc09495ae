//! The OAuth 2.1 authorization server's rules: client registration
//! (RFC 7591), the authorization request, codes with PKCE, refresh-token
//! rotation with replay detection, and revocation (RFC 7009). Accounts and
//! access tokens are in the parent module.

use super::*;

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

impl AuthService {
    // ----- OAuth: clients -------------------------------------------------

    /// Registers a public client (RFC 7591). `invalid_redirect_uri` for a
    /// bad redirect URI list, `invalid_client_metadata` for a bad name,
    /// grant type or response type.
    pub async fn register_client(&self, reg: ClientRegistration) -> Result<OAuthClient, OAuthError> {
        let name = check_client_fields(reg.client_name.as_deref(), &reg.grant_types, &reg.response_types)?;
        validate_redirect_uris(&reg.redirect_uris)?;
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

    /// The client a metadata document URL names: the document, fetched
    /// (or cached) by the source and checked. Its redirect URIs and name
    /// are the document's at every authorization request.
    async fn metadata_client(&self, client_id: &str) -> Result<OAuthClient, OAuthError> {
        let Some(source) = &self.metadata else {
            return Err(OAuthError::new(
                OAuthErrorKind::InvalidClient,
                "This server does not accept client metadata document URLs as client_id; register the client",
            ));
        };
        let url = ClientIdUrl::parse(client_id, self.config.client_metadata_http_loopback)?;
        source.fetch(&url).await?.into_client(&url, self.clock.now())
    }

    /// Stores a metadata document's client the first time one of its
    /// authorizations is granted: the row its codes and tokens refer to.
    /// The row's name and redirect URIs are never read for such a client.
    async fn keep_metadata_client(&self, client: &OAuthClient) -> Result<(), OAuthError> {
        if !is_client_id_url(client.id.as_str()) || self.store.client(&client.id).await?.is_some() {
            return Ok(());
        }
        match self.store.insert_client(client).await {
            Err(e) if e.code() != ErrorCode::Conflict => Err(e.into()),
            _ => Ok(()),
        }
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
        let client = if is_client_id_url(client_id) {
            self.metadata_client(client_id).await?
        } else {
            self.known_client(client_id).await?
        };
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

    pub(super) fn serves_resource(&self, r: &str) -> bool {
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
        self.keep_metadata_client(&auth.client).await?;
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

/// The name (trimmed; [`DEFAULT_CLIENT_NAME`] when absent), grant types
/// and response types of a registration or a client metadata document:
/// the name to show, or `invalid_client_metadata`.
pub(crate) fn check_client_fields(
    name: Option<&str>,
    grant_types: &Option<Vec<String>>,
    response_types: &Option<Vec<String>>,
) -> Result<String, OAuthError> {
    let metadata = |d: &str| OAuthError::new(OAuthErrorKind::InvalidClientMetadata, d);
    let name = match name.map(str::trim).filter(|n| !n.is_empty()) {
        None => DEFAULT_CLIENT_NAME.to_owned(),
        Some(n) if n.chars().count() > MAX_CLIENT_NAME_CHARS => {
            return Err(metadata("client_name is longer than 120 characters"));
        }
        Some(n) if n.chars().any(|c| c.is_control() || is_bidi_control(c)) => {
            return Err(metadata("client_name contains control characters"));
        }
        Some(n) => n.to_owned(),
    };
    if let Some(grants) = grant_types {
        if grants.iter().any(|g| !GRANT_TYPES.contains(&g.as_str())) {
            return Err(metadata("grant_types may only be authorization_code and refresh_token"));
        }
        if !grants.iter().any(|g| g == "authorization_code") {
            return Err(metadata("grant_types must include authorization_code"));
        }
    }
    if let Some(types) = response_types
        && (types.is_empty() || types.iter().any(|t| t != "code"))
    {
        return Err(metadata("response_types may only be code"));
    }
    Ok(name)
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
