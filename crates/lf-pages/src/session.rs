//! Signing in to the pages, and who a request is from.
//!
//! A session is an access token of the accounts' store (memory, SQLite or
//! PostgreSQL: every process on the database knows it), issued at sign-in
//! for the pages' own audience (`{public_url}/pages`), so the cookie opens
//! no other endpoint, and a bearer token of `/mcp` opens no page. It
//! expires after [`SESSION_TTL`], is replaced at every sign-in (the old one
//! revoked), ends at sign-out, and an operator revokes it as any token
//! (`admin list-tokens`, `admin revoke-token`; label `browser session`),
//! and the token purge deletes it once expired.
//!
//! The cookie is `HttpOnly`, `SameSite=Lax`, and `Secure` with the
//! `__Host-` prefix when the public URL is https. A form's CSRF token is
//! derived from the session's secret (the sign-in form's, before there is
//! a session, from a short-lived `SameSite=Strict` cookie of its own), and
//! compared in constant time.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, Request, State as AxumState};
use axum::response::Response;
use http::{HeaderMap, HeaderValue, StatusCode, header};
use lf_auth::{AuthConfig, AuthService, SecretHash, TokenId};
use lf_core::{ErrorCode, LenserId, Principal, SystemClock};
use serde::Deserialize;
use subtle::ConstantTimeEq;

use crate::html::{self, Header, Html};
use crate::{MAX_FORM, Pages, State};

/// How long a session lasts.
pub const SESSION_TTL: Duration = Duration::from_secs(12 * 3600);

/// The sign-in form's own CSRF cookie, for its path only.
const SIGN_IN_CSRF: &str = "lf_sign_in_csrf";

/// Issues, resolves and revokes sessions.
pub(crate) struct Sessions {
    /// An account service over the same store whose one resource is the
    /// pages' audience.
    tokens: AuthService,
    audience: String,
    cookie: &'static str,
}

/// Who a request is from.
pub(crate) struct Viewer {
    pub(crate) lenser: LenserId,
    pub(crate) handle: String,
    pub(crate) principal: Principal,
    /// The session, for signing out.
    token: TokenId,
    /// Every form's CSRF token.
    pub(crate) csrf: String,
}

impl Viewer {
    pub(crate) fn header(&self) -> Header<'_> {
        Header { handle: &self.handle, csrf: &self.csrf }
    }

    /// Whether `field` is this session's CSRF token.
    pub(crate) fn csrf_ok(&self, field: Option<&str>) -> bool {
        field.is_some_and(|f| bool::from(f.as_bytes().ct_eq(self.csrf.as_bytes())))
    }
}

impl Sessions {
    pub(crate) fn new(pages: &Pages) -> Self {
        let audience = format!("{}/pages", pages.public_url);
        let config = AuthConfig { resources: vec![audience.clone()], ..AuthConfig::default() };
        let tokens = AuthService::new(pages.auth.store().clone(), Arc::new(SystemClock), config);
        let cookie =
            if pages.public_url.starts_with("https://") { "__Host-lf_session" } else { "lf_session" };
        Self { tokens, audience, cookie }
    }

    /// The session cookie's value in `headers`, if any.
    fn secret<'h>(&self, headers: &'h HeaderMap) -> Option<&'h str> {
        cookie(headers, self.cookie)
    }

    /// Who sent `headers`: `None` without a live session.
    pub(crate) async fn viewer(&self, state: &State, headers: &HeaderMap) -> Option<Viewer> {
        let secret = self.secret(headers)?;
        let who = match self.tokens.authenticate(secret, &self.audience).await {
            Ok(Ok(who)) => who,
            Ok(Err(_)) => return None,
            Err(e) => {
                lf_tools::log_error("reading a page session", &e);
                return None;
            }
        };
        let handle = match state.pages.auth.lenser(who.lenser).await {
            Ok(Some(l)) => l.handle.to_string(),
            _ => return None,
        };
        Some(Viewer {
            lenser: who.lenser,
            handle,
            principal: who.principal(),
            token: who.token_id,
            csrf: csrf_of(secret),
        })
    }

    fn set_cookie(&self, response: &mut Response, value: &str, max_age: u64, https: bool) {
        let secure = if https { "; Secure" } else { "" };
        let cookie =
            format!("{}={value}; Path=/; HttpOnly; SameSite=Lax; Max-Age={max_age}{secure}", self.cookie);
        if let Ok(v) = HeaderValue::from_str(&cookie) {
            response.headers_mut().append(header::SET_COOKIE, v);
        }
    }
}

/// The CSRF token of the session with this secret.
fn csrf_of(secret: &str) -> String {
    hex::encode(SecretHash::of(&format!("lf-pages csrf {secret}")).as_bytes())
}

/// The value of cookie `name` in `headers` (the first, of every `Cookie`).
pub(crate) fn cookie<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    for value in headers.get_all(header::COOKIE) {
        let Ok(value) = value.to_str() else { continue };
        for pair in value.split(';') {
            if let Some(v) = pair.trim().strip_prefix(name).and_then(|rest| rest.strip_prefix('=')) {
                return Some(v);
            }
        }
    }
    None
}

/// A form's fields, read from the body (at most [`MAX_FORM`] bytes).
pub(crate) struct Form(Vec<(String, String)>);

impl Form {
    pub(crate) async fn read(body: Body) -> Option<Form> {
        let bytes = axum::body::to_bytes(body, MAX_FORM).await.ok()?;
        Some(Form(form_urlencoded::parse(&bytes).into_owned().collect()))
    }

    pub(crate) fn get(&self, name: &str) -> Option<&str> {
        self.0.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

/// Where to go after signing in: a path of this site, else the arena.
fn local_path(next: Option<&str>) -> &str {
    match next {
        Some(p) if p.starts_with('/') && !p.starts_with("//") && !p.contains('\\') && !p.contains("://") => p,
        _ => "/arena",
    }
}

/// A page that needs a session sends here.
pub(crate) fn to_sign_in(path: &str) -> Response {
    let mut to = String::from("/sign-in?next=");
    to.extend(form_urlencoded::byte_serialize(path.as_bytes()));
    html::see_other(&to)
}

fn random_hex() -> String {
    let mut bytes = [0u8; 32];
    if getrandom::fill(&mut bytes).is_err() {
        // No randomness: a token nobody can match, so the form fails closed.
        return String::new();
    }
    hex::encode(bytes)
}

#[derive(Deserialize)]
pub(crate) struct Next {
    next: Option<String>,
}

fn sign_in_form(state: &State, status: StatusCode, next: &str, error: Option<&str>) -> Response {
    let csrf = random_hex();
    let mut body = Html::raw("<h1>Sign in to LenserFight</h1>");
    if let Some(e) = error {
        body.push_raw("<p class=\"error\" role=\"alert\">").push_text(e).push_raw("</p>");
    }
    body.push_raw("<form method=\"post\" action=\"/sign-in\"><input type=\"hidden\" name=\"csrf\" value=\"");
    body.push_text(&csrf).push_raw("\"><input type=\"hidden\" name=\"next\" value=\"").push_text(next);
    body.push_raw(
        "\"><label>Handle <input type=\"text\" name=\"handle\" autocomplete=\"username\" autocapitalize=\"none\" required></label>\
<label>Password <input type=\"password\" name=\"password\" autocomplete=\"current-password\" required></label>\
<button type=\"submit\">Sign in</button></form>",
    );
    let mut response = html::page(status, "Sign in", None, &body);
    let secure = if state.https() { "; Secure" } else { "" };
    let cookie =
        format!("{SIGN_IN_CSRF}={csrf}; Path=/sign-in; HttpOnly; SameSite=Strict; Max-Age=1800{secure}");
    if let Ok(v) = HeaderValue::from_str(&cookie) {
        response.headers_mut().append(header::SET_COOKIE, v);
    }
    response
}

/// `GET /sign-in?next=/path`.
pub(crate) async fn sign_in_page(
    AxumState(state): AxumState<State>,
    next: Result<Query<Next>, QueryRejection>,
) -> Response {
    let next = next.ok().and_then(|Query(n)| n.next);
    sign_in_form(&state, StatusCode::OK, local_path(next.as_deref()), None)
}

/// `POST /sign-in`: checks the form's token, the limits and the password;
/// then a new session replaces the one the browser had.
pub(crate) async fn sign_in_submit(AxumState(state): AxumState<State>, request: Request) -> Response {
    let (mut parts, body) = request.into_parts();
    let Some(form) = Form::read(body).await else {
        return html::problem(StatusCode::BAD_REQUEST, None, "The sign-in form could not be read.");
    };
    let next = local_path(form.get("next")).to_owned();
    let expected = cookie(&parts.headers, SIGN_IN_CSRF).filter(|c| c.len() == 64);
    let csrf_ok = matches!((expected, form.get("csrf")), (Some(e), Some(f)) if bool::from(e.as_bytes().ct_eq(f.as_bytes())));
    if !csrf_ok {
        return sign_in_form(
            &state,
            StatusCode::FORBIDDEN,
            &next,
            Some("This sign-in form expired or was opened elsewhere. Sign in again."),
        );
    }
    let handle = form.get("handle").unwrap_or_default().to_owned();
    let password = form.get("password").unwrap_or_default().to_owned();
    if let Some(refused) = state.pages.guard.attempt(&mut parts, &handle).await {
        return refused;
    }
    let lenser = match state.pages.auth.sign_in_check(&handle).await {
        Ok(check) => match tokio::task::spawn_blocking(move || check.verify(&password)).await {
            Ok(result) => result,
            Err(e) => Err(lf_core::LfError::internal(format!("password check panicked: {e}"))),
        },
        Err(e) => Err(e),
    };
    let lenser = match lenser {
        Ok(id) => id,
        Err(e) if e.code() == ErrorCode::PermissionDenied => {
            return sign_in_form(&state, StatusCode::UNAUTHORIZED, &next, Some(e.message()));
        }
        Err(e) => {
            lf_tools::log_error("signing in to the pages", &e);
            return html::problem(
                StatusCode::SERVICE_UNAVAILABLE,
                None,
                "Signing in failed. Try again shortly.",
            );
        }
    };
    state.pages.guard.succeeded(&handle).await;
    // Rotation: the session this browser had (anyone's) ends.
    if let Some(old) = state.sessions.viewer(&state, &parts.headers).await {
        revoke(&state, old.token).await;
    }
    let issued =
        state.sessions.tokens.issue_session(lenser, state.sessions.audience.clone(), SESSION_TTL).await;
    match issued {
        Ok(issued) => {
            let mut response = html::see_other(&next);
            state.sessions.set_cookie(&mut response, &issued.secret, SESSION_TTL.as_secs(), state.https());
            response
        }
        Err(e) => {
            lf_tools::log_error("starting a page session", &e);
            html::problem(StatusCode::SERVICE_UNAVAILABLE, None, "Signing in failed. Try again shortly.")
        }
    }
}

async fn revoke(state: &State, token: TokenId) {
    if let Err(e) = state.sessions.tokens.revoke_token(token).await {
        lf_tools::log_error("ending a page session", &e);
    }
}

/// `POST /sign-out`: ends the session (CSRF-checked) and clears the cookie.
pub(crate) async fn sign_out(AxumState(state): AxumState<State>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let Some(viewer) = state.sessions.viewer(&state, &parts.headers).await else {
        return html::see_other("/sign-in");
    };
    let form = Form::read(body).await;
    if !viewer.csrf_ok(form.as_ref().and_then(|f| f.get("csrf"))) {
        return html::problem(
            StatusCode::FORBIDDEN,
            Some(&viewer.header()),
            "This form expired or came from elsewhere. Reload the page and try again.",
        );
    }
    revoke(&state, viewer.token).await;
    let mut response = html::see_other("/sign-in");
    state.sessions.set_cookie(&mut response, "", 0, state.https());
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_local_paths_are_followed() {
        for (given, to) in [
            (Some("/battles/1"), "/battles/1"),
            (Some("//evil.example/x"), "/arena"),
            (Some("https://evil.example"), "/arena"),
            (Some("/\\evil.example"), "/arena"),
            (None, "/arena"),
        ] {
            assert_eq!(local_path(given), to, "{given:?}");
        }
    }

    #[test]
    fn cookies_are_read_by_name() {
        let mut h = HeaderMap::new();
        h.insert(header::COOKIE, HeaderValue::from_static("a=1; lf_session=xyz; b=2"));
        assert_eq!(cookie(&h, "lf_session"), Some("xyz"));
        assert_eq!(cookie(&h, "session"), None);
    }
}
