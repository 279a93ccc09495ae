//! The OAuth 2.1 authorization server's endpoints: discovery documents
//! (RFC 8414, RFC 9728), dynamic client registration (RFC 7591), the
//! sign-in and consent page, the token endpoint (authorization code with
//! PKCE, refresh with rotation) and revocation (RFC 7009). The rules live in
//! lf-auth, the rate limits in [`crate::limits`]; this module speaks HTTP.

use std::time::Duration;

use axum::extract::rejection::{FormRejection, JsonRejection};
use axum::extract::{Query, State};
use axum::response::{IntoResponse, Response};
use axum::{Form, Json};
use http::{HeaderMap, HeaderValue, StatusCode, header};
use lf_auth::{
    AuthorizationRequest, ClientRegistration, GRANT_TYPES, OAuthError, OAuthErrorKind, RESPONSE_TYPES,
    SUPPORTED_SCOPES, TOKEN_ENDPOINT_AUTH_METHOD, TokenGrant, ValidAuthorization,
};
use lf_core::{ErrorCode, Scopes};
use serde::Deserialize;
use serde_json::json;
use subtle::ConstantTimeEq;

use crate::app::AppState;
use crate::limits::ClientIp;
use crate::responses::json_error;

fn no_store(headers: &mut HeaderMap) {
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::PRAGMA, HeaderValue::from_static("no-cache"));
}

/// An OAuth error as JSON: 401 for `invalid_client`, 500 for
/// `server_error` (logged with its cause), 400 otherwise.
fn oauth_error(error: &OAuthError) -> Response {
    let status = match error.kind {
        OAuthErrorKind::InvalidClient => StatusCode::UNAUTHORIZED,
        OAuthErrorKind::ServerError => {
            tracing::error!(error = ?error.cause, "OAuth request failed");
            StatusCode::INTERNAL_SERVER_ERROR
        }
        _ => StatusCode::BAD_REQUEST,
    };
    let mut response = json_error(status, error.kind.as_str(), &error.description);
    no_store(response.headers_mut());
    response
}

fn invalid_request(description: &str) -> Response {
    oauth_error(&OAuthError::new(OAuthErrorKind::InvalidRequest, description))
}

// ----- Discovery ------------------------------------------------------------

/// RFC 8414 authorization server metadata.
pub async fn authorization_server_metadata(State(state): State<AppState>) -> Response {
    let base = &state.config.public_url;
    cacheable(json!({
        "issuer": base,
        "authorization_endpoint": format!("{base}/oauth/authorize"),
        "token_endpoint": format!("{base}/oauth/token"),
        "registration_endpoint": format!("{base}/oauth/register"),
        "revocation_endpoint": format!("{base}/oauth/revoke"),
        "response_types_supported": RESPONSE_TYPES,
        "response_modes_supported": ["query"],
        "grant_types_supported": GRANT_TYPES,
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": [TOKEN_ENDPOINT_AUTH_METHOD],
        "revocation_endpoint_auth_methods_supported": [TOKEN_ENDPOINT_AUTH_METHOD],
        "scopes_supported": SUPPORTED_SCOPES,
        "authorization_response_iss_parameter_supported": true,
        "client_id_metadata_document_supported": true,
    }))
}

/// RFC 9728 protected resource metadata of `/mcp`.
pub async fn protected_resource_metadata(State(state): State<AppState>) -> Response {
    cacheable(json!({
        "resource": &*state.resource,
        "authorization_servers": [&state.config.public_url],
        "bearer_methods_supported": ["header"],
        "scopes_supported": SUPPORTED_SCOPES,
        "resource_name": "LenserFight",
    }))
}

fn cacheable(body: serde_json::Value) -> Response {
    let mut response = Json(body).into_response();
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("public, max-age=300"));
    response
}

// ----- Registration ---------------------------------------------------------

/// The fields of RFC 7591 §2 this server reads; others are ignored.
#[derive(Deserialize)]
pub struct RegisterBody {
    client_name: Option<String>,
    #[serde(default)]
    redirect_uris: Vec<String>,
    grant_types: Option<Vec<String>>,
    response_types: Option<Vec<String>>,
    token_endpoint_auth_method: Option<String>,
}

/// `POST /oauth/register`: 201 with the client's metadata.
pub async fn register(
    State(state): State<AppState>,
    client: ClientIp,
    body: Result<Json<RegisterBody>, JsonRejection>,
) -> Response {
    if let Some(r) = state.limits.register(client).await {
        return r;
    }
    let Json(body) = match body {
        Ok(b) => b,
        Err(e) => {
            return oauth_error(&OAuthError::new(
                OAuthErrorKind::InvalidClientMetadata,
                format!(
                    "the body must be a JSON client metadata document: {}",
                    lf_core::clip(&e.body_text(), 200)
                ),
            ));
        }
    };
    let registration = ClientRegistration {
        client_name: body.client_name,
        redirect_uris: body.redirect_uris,
        grant_types: body.grant_types,
        response_types: body.response_types,
        token_endpoint_auth_method: body.token_endpoint_auth_method,
    };
    match state.auth.register_client(registration).await {
        Ok(client) => {
            let mut response = (
                StatusCode::CREATED,
                Json(json!({
                    "client_id": client.id.as_str(),
                    "client_name": client.name,
                    "redirect_uris": client.redirect_uris,
                    "grant_types": GRANT_TYPES,
                    "response_types": RESPONSE_TYPES,
                    "token_endpoint_auth_method": TOKEN_ENDPOINT_AUTH_METHOD,
                    "client_id_issued_at": client.created_at.as_micros() / 1_000_000,
                })),
            )
                .into_response();
            no_store(response.headers_mut());
            response
        }
        Err(e) => oauth_error(&e),
    }
}

// ----- Authorization: the sign-in and consent page --------------------------

/// The authorization request's parameters, from the query (GET) or the
/// page's hidden fields (POST).
#[derive(Deserialize, Default, Clone)]
pub struct AuthorizeParams {
    response_type: Option<String>,
    client_id: Option<String>,
    redirect_uri: Option<String>,
    scope: Option<String>,
    state: Option<String>,
    code_challenge: Option<String>,
    code_challenge_method: Option<String>,
    resource: Option<String>,
}

impl AuthorizeParams {
    fn request(&self) -> AuthorizationRequest {
        AuthorizationRequest {
            response_type: self.response_type.clone(),
            client_id: self.client_id.clone(),
            redirect_uri: self.redirect_uri.clone(),
            scope: self.scope.clone(),
            state: self.state.clone(),
            code_challenge: self.code_challenge.clone(),
            code_challenge_method: self.code_challenge_method.clone(),
            resource: self.resource.clone(),
        }
    }
}

/// The page's form: the request, the CSRF token, the credentials and the
/// decision.
#[derive(Deserialize)]
pub struct AuthorizeForm {
    #[serde(flatten)]
    params: AuthorizeParams,
    csrf: Option<String>,
    handle: Option<String>,
    password: Option<String>,
    decision: Option<String>,
    grant_write: Option<String>,
}

const CSRF_COOKIE: &str = "lf_csrf";

/// Checks the request; a refusal is shown on this server's page, never
/// redirected: nothing the user has not acted on is sent to a redirect URI
/// (see [`lf_auth::AuthService::validate_authorization`]).
async fn validated(state: &AppState, params: &AuthorizeParams) -> Result<ValidAuthorization, Response> {
    state.auth.validate_authorization(&params.request()).await.map_err(|error| match error.kind {
        OAuthErrorKind::ServerError => oauth_error(&error),
        kind => page(
            StatusCode::BAD_REQUEST,
            &format!(
                "<h1>This sign-in cannot continue</h1><p class=\"error\">{}</p><p>Error code: <code>{kind}</code></p>",
                escape(&error.description)
            ),
            None,
        ),
    })
}

/// `GET /oauth/authorize`.
pub async fn authorize_page(
    State(state): State<AppState>,
    params: Result<Query<AuthorizeParams>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let Ok(Query(params)) = params else {
        return error_page("The authorization request's parameters could not be read.");
    };
    match validated(&state, &params).await {
        Ok(valid) => consent_page(&state, &params, &valid, None),
        Err(response) => response,
    }
}

/// `POST /oauth/authorize`: the page was submitted.
pub async fn authorize_submit(
    State(state): State<AppState>,
    client: ClientIp,
    headers: HeaderMap,
    form: Result<Form<AuthorizeForm>, FormRejection>,
) -> Response {
    let Ok(Form(form)) = form else {
        return error_page("The sign-in form could not be read. Start again from your app.");
    };
    if !csrf_matches(&headers, form.csrf.as_deref()) {
        return error_page("This sign-in page expired or was opened elsewhere. Start again from your app.");
    }
    let valid = match validated(&state, &form.params).await {
        Ok(v) => v,
        Err(response) => return response,
    };
    if form.decision.as_deref() != Some("approve") {
        return redirect(&valid.deny());
    }
    if let Some(r) = state.limits.sign_in(client).await {
        return r;
    }
    let handle = form.handle.unwrap_or_default();
    let password = form.password.unwrap_or_default();
    if let Some(r) = state.limits.sign_in_as(&handle).await {
        return r;
    }
    let lenser = match state.auth.sign_in_check(&handle).await {
        Ok(check) => match tokio::task::spawn_blocking(move || check.verify(&password)).await {
            Ok(result) => result,
            Err(e) => Err(lf_core::LfError::internal(format!("password check panicked: {e}"))),
        },
        Err(e) => Err(e),
    };
    let lenser = match lenser {
        Ok(id) => {
            state.limits.signed_in(&handle).await;
            id
        }
        Err(e) if e.code() == ErrorCode::PermissionDenied => {
            return consent_page(&state, &form.params, &valid, Some(e.message()));
        }
        Err(e) => {
            tracing::error!(error = ?e, "sign-in failed");
            return error_page("Signing in failed on the server. Try again shortly.");
        }
    };
    // The user unticked the write scope: read alone is always grantable.
    let valid = if valid.scopes.write && form.grant_write.is_none() {
        valid.clone().narrow(Scopes::READ).unwrap_or(valid)
    } else {
        valid
    };
    match state.auth.issue_code(&valid, lenser).await {
        Ok(issued) => redirect(&issued.redirect_to),
        Err(e) => {
            tracing::error!(error = ?e.cause, "issuing a code failed");
            redirect(&valid.redirect_with_error(&e))
        }
    }
}

/// 303 to `to` (a verified redirect URI), never cached.
fn redirect(to: &str) -> Response {
    let Ok(location) = HeaderValue::from_str(to) else {
        return error_page("The app's redirect address cannot be used.");
    };
    let mut response = StatusCode::SEE_OTHER.into_response();
    response.headers_mut().insert(header::LOCATION, location);
    no_store(response.headers_mut());
    response
}

fn random_hex() -> String {
    let mut bytes = [0u8; 32];
    if getrandom::fill(&mut bytes).is_err() {
        // No randomness: a token nobody can match, so the form fails closed.
        return String::new();
    }
    hex::encode(bytes)
}

fn csrf_matches(headers: &HeaderMap, field: Option<&str>) -> bool {
    let Some(field) = field.filter(|f| f.len() == 64) else { return false };
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .any(|(name, value)| name == CSRF_COOKIE && bool::from(value.as_bytes().ct_eq(field.as_bytes())))
}

fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem;color:#1d1d1f}\
h1{font-size:1.4rem}label{display:block;margin:.8rem 0}input[type=text],input[type=password]{width:100%;padding:.5rem;font-size:1rem;box-sizing:border-box}\
fieldset{border:1px solid #ccc;margin:1rem 0}.error{color:#b00020}button{font-size:1rem;padding:.5rem 1rem;margin-right:.5rem}";

/// Security headers of every page: no framing, nothing loaded from
/// elsewhere, forms only to here and to the client's redirect origin.
fn page(status: StatusCode, body: &str, form_target: Option<&str>) -> Response {
    let html = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
<title>Sign in to LenserFight</title><style>{STYLE}</style></head><body><main>{body}</main></body></html>"
    );
    let mut response = (status, [(header::CONTENT_TYPE, "text/html; charset=utf-8")], html).into_response();
    let headers = response.headers_mut();
    let form_action = match form_target {
        Some(origin) => format!("'self' {origin}"),
        None => "'self'".to_owned(),
    };
    let csp = format!(
        "default-src 'none'; style-src 'unsafe-inline'; form-action {form_action}; frame-ancestors 'none'; base-uri 'none'"
    );
    if let Ok(v) = HeaderValue::from_str(&csp) {
        headers.insert(header::CONTENT_SECURITY_POLICY, v);
    }
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    // Not `no-referrer`: with it browsers send `Origin: null` on the form's
    // POST, which the origin check refuses.
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("same-origin"));
    no_store(headers);
    response
}

fn error_page(message: &str) -> Response {
    page(
        StatusCode::BAD_REQUEST,
        &format!("<h1>This sign-in cannot continue</h1><p class=\"error\">{}</p>", escape(message)),
        None,
    )
}

/// The origin (`scheme://host[:port]`) of a redirect URI, for the page's
/// form-action policy.
fn origin_of(uri: &str) -> Option<String> {
    let url = url::Url::parse(uri).ok()?;
    Some(url.origin().ascii_serialization()).filter(|o| o != "null")
}

fn consent_page(
    state: &AppState,
    params: &AuthorizeParams,
    valid: &ValidAuthorization,
    error: Option<&str>,
) -> Response {
    let csrf = random_hex();
    let hidden = [
        ("response_type", &params.response_type),
        ("client_id", &params.client_id),
        ("redirect_uri", &params.redirect_uri),
        ("scope", &params.scope),
        ("state", &params.state),
        ("code_challenge", &params.code_challenge),
        ("code_challenge_method", &params.code_challenge_method),
        ("resource", &params.resource),
    ]
    .iter()
    .filter_map(|(name, value)| {
        value.as_ref().map(|v| format!("<input type=\"hidden\" name=\"{name}\" value=\"{}\">", escape(v)))
    })
    .collect::<String>();
    let error =
        error.map(|e| format!("<p class=\"error\" role=\"alert\">{}</p>", escape(e))).unwrap_or_default();
    let write = if valid.scopes.write {
        "<label><input type=\"checkbox\" name=\"grant_write\" value=\"1\" checked> create, change, run and delete lenses as you</label>"
    } else {
        ""
    };
    // A metadata document's client is vouched for by the host serving it;
    // its name is only what the document says.
    let identified = valid
        .client
        .id
        .metadata_url()
        .and_then(|url| lf_auth::ClientIdUrl::parse(url, true).ok())
        .map(|url| format!("<p>Its details come from <strong>{}</strong>.</p>", escape(url.host())))
        .unwrap_or_default();
    let body = format!(
        "<h1>Sign in to LenserFight</h1>\
<p><strong>{client}</strong> wants to use your LenserFight account.</p>{identified}\
<p>When you allow it, you will be sent back to <strong>{host}</strong>.</p>{error}\
<form method=\"post\" action=\"{base}/oauth/authorize\">{hidden}\
<input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
<label>Handle <input type=\"text\" name=\"handle\" autocomplete=\"username\" autocapitalize=\"none\" required></label>\
<label>Password <input type=\"password\" name=\"password\" autocomplete=\"current-password\" required></label>\
<fieldset><legend>Allow it to</legend>\
<label><input type=\"checkbox\" checked disabled> read your lenses and everyone's public ones</label>{write}</fieldset>\
<button type=\"submit\" name=\"decision\" value=\"approve\">Sign in and allow</button>\
<button type=\"submit\" name=\"decision\" value=\"deny\" formnovalidate>Deny</button></form>",
        client = escape(&valid.client.name),
        host = escape(valid.redirect_host()),
        base = escape(&state.config.public_url),
    );
    let target = origin_of(&valid.redirect_uri);
    let mut response = page(StatusCode::OK, &body, target.as_deref());
    let secure = if state.config.public_url.starts_with("https://") { "; Secure" } else { "" };
    let cookie =
        format!("{CSRF_COOKIE}={csrf}; Path=/oauth; HttpOnly; SameSite=Strict; Max-Age=1800{secure}");
    if let Ok(v) = HeaderValue::from_str(&cookie) {
        response.headers_mut().insert(header::SET_COOKIE, v);
    }
    response
}

// ----- Token and revocation -------------------------------------------------

/// The token endpoint's form (RFC 6749 §4.1.3, §6; RFC 8707).
#[derive(Deserialize)]
pub struct TokenForm {
    grant_type: Option<String>,
    client_id: Option<String>,
    code: Option<String>,
    redirect_uri: Option<String>,
    code_verifier: Option<String>,
    refresh_token: Option<String>,
    scope: Option<String>,
    resource: Option<String>,
}

fn grant_response(grant: &TokenGrant) -> Response {
    let mut response = Json(json!({
        "access_token": grant.access_token,
        "token_type": grant.token_type,
        "expires_in": grant.expires_in,
        "refresh_token": grant.refresh_token,
        "scope": grant.scope,
    }))
    .into_response();
    no_store(response.headers_mut());
    response
}

/// `POST /oauth/token`.
pub async fn token(
    State(state): State<AppState>,
    client: ClientIp,
    form: Result<Form<TokenForm>, FormRejection>,
) -> Response {
    if let Some(r) = state.limits.token(client).await {
        return r;
    }
    let Ok(Form(form)) = form else {
        return invalid_request("the body must be application/x-www-form-urlencoded");
    };
    let Some(client_id) = form.client_id.as_deref() else {
        return invalid_request("client_id is missing");
    };
    let result = match form.grant_type.as_deref() {
        Some("authorization_code") => {
            let (Some(code), Some(redirect_uri)) = (form.code.as_deref(), form.redirect_uri.as_deref())
            else {
                return invalid_request("code and redirect_uri are required");
            };
            let verifier = form.code_verifier.as_deref().unwrap_or_default();
            state.auth.redeem_code(client_id, code, redirect_uri, verifier, form.resource.as_deref()).await
        }
        Some("refresh_token") => {
            let Some(refresh) = form.refresh_token.as_deref() else {
                return invalid_request("refresh_token is missing");
            };
            state.auth.refresh(client_id, refresh, form.scope.as_deref(), form.resource.as_deref()).await
        }
        Some(_) => Err(OAuthError::new(
            OAuthErrorKind::UnsupportedGrantType,
            "grant_type must be authorization_code or refresh_token",
        )),
        None => return invalid_request("grant_type is missing"),
    };
    match result {
        Ok(grant) => grant_response(&grant),
        Err(e) => oauth_error(&e),
    }
}

/// The revocation endpoint's form (RFC 7009 §2.1).
#[derive(Deserialize)]
pub struct RevokeForm {
    token: Option<String>,
    client_id: Option<String>,
}

/// `POST /oauth/revoke`: 200 whether or not the token existed.
pub async fn revoke(
    State(state): State<AppState>,
    client: ClientIp,
    form: Result<Form<RevokeForm>, FormRejection>,
) -> Response {
    if let Some(r) = state.limits.token(client).await {
        return r;
    }
    let Ok(Form(form)) = form else {
        return invalid_request("the body must be application/x-www-form-urlencoded");
    };
    let (Some(token), Some(client_id)) = (form.token.as_deref(), form.client_id.as_deref()) else {
        return invalid_request("token and client_id are required");
    };
    match state.auth.revoke(token, client_id).await {
        Ok(()) => {
            let mut response = StatusCode::OK.into_response();
            no_store(response.headers_mut());
            response
        }
        Err(e) => oauth_error(&e),
    }
}

/// Until the server stops: every minute forgets idle rate-limit entries, and
/// every hour deletes expired codes and tokens.
pub fn spawn_sweeper(state: AppState, stop: tokio_util::sync::CancellationToken) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(60));
        let mut minutes = 0u64;
        loop {
            tokio::select! {
                _ = tick.tick() => {}
                _ = stop.cancelled() => break,
            }
            state.limits.forget_idle().await;
            if minutes.is_multiple_of(60) {
                match state.auth.purge_expired().await {
                    Ok(n) if n > 0 => tracing::info!(deleted = n, "expired codes and tokens deleted"),
                    Ok(_) => {}
                    Err(e) => tracing::warn!(error = ?e, "deleting expired codes and tokens failed"),
                }
            }
            minutes += 1;
        }
    });
}
