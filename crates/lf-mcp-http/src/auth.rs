//! Who is calling `/mcp`: the bearer token, resolved to a Lenser with its
//! scopes, or the development lenser (for requests to a loopback host
//! only). A request refused here is answered 400, 401 or 403 before its
//! body is read; a call its token's scopes do not allow (lf-tools decides)
//! is answered 403 `insufficient_scope` ([`insufficient_scope`]).

use axum::response::Response;
use http::request::Parts;
use http::{HeaderValue, StatusCode, header};
use lf_core::{Principal, Scopes};

use crate::app::AppState;
use crate::guard::for_loopback;
use crate::responses::json_error;

/// `response` with `WWW-Authenticate: Bearer <params>resource_metadata="..."`,
/// which names where the client finds how to sign in (RFC 9728); `params`
/// carries the RFC 6750 error attributes, each followed by ", ".
fn with_challenge(mut response: Response, state: &AppState, params: &str) -> Response {
    let metadata = format!("{}/.well-known/oauth-protected-resource/mcp", state.config.public_url);
    let value = format!("Bearer {params}resource_metadata=\"{metadata}\"");
    let value = HeaderValue::from_str(&value).unwrap_or_else(|_| HeaderValue::from_static("Bearer"));
    response.headers_mut().insert(header::WWW_AUTHENTICATE, value);
    response
}

/// The error attributes of a challenge.
fn error_params(code: &str, description: &str) -> String {
    format!("error=\"{code}\", error_description=\"{description}\", ")
}

fn unauthorized(state: &AppState, error: Option<(&str, &str)>) -> Response {
    let (code, description) =
        error.unwrap_or(("unauthorized", "sign in: send Authorization: Bearer <token>"));
    let params = error.map(|(c, d)| error_params(c, d)).unwrap_or_default();
    with_challenge(json_error(StatusCode::UNAUTHORIZED, code, description), state, &params)
}

/// The token of an `Authorization: Bearer <token>` value (scheme case-insensitive).
pub(crate) fn bearer_token(value: &str) -> Option<&str> {
    let (scheme, token) = value.trim().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// Whether the query string carries a token, which is refused: query strings
/// end up in logs and browser history.
fn token_in_query(request: &Parts) -> bool {
    request.uri.query().is_some_and(|q| {
        q.split('&').any(|pair| {
            let key = pair.split('=').next().unwrap_or("");
            key.eq_ignore_ascii_case("access_token") || key.eq_ignore_ascii_case("token")
        })
    })
}

/// The caller of a request to `/mcp`, or the answer that refuses it.
pub(crate) async fn caller(state: &AppState, request: &Parts) -> Result<Principal, Response> {
    if token_in_query(request) {
        let response = json_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "tokens are not accepted in the query string; send Authorization: Bearer <token>",
        );
        return Err(with_challenge(
            response,
            state,
            &error_params("invalid_request", "token in query string"),
        ));
    }
    let principal = match request.headers.get(header::AUTHORIZATION) {
        // Development mode acts for this machine's own clients only.
        None => match state.dev_lenser {
            Some(id) if for_loopback(&request.uri, &request.headers) => {
                Principal::Lenser { id, scopes: Scopes::READ_WRITE }
            }
            _ => return Err(unauthorized(state, None)),
        },
        Some(value) => {
            let Some(token) = value.to_str().ok().and_then(bearer_token) else {
                return Err(unauthorized(
                    state,
                    Some(("invalid_request", "send the token as Authorization: Bearer <token>")),
                ));
            };
            match state.auth.authenticate(token, &state.resource).await {
                Ok(Ok(who)) => {
                    tracing::debug!(token = %who.token_id, "authenticated");
                    who.principal()
                }
                Ok(Err(why)) => {
                    tracing::info!(reason = %why, "bearer token refused");
                    return Err(unauthorized(
                        state,
                        Some((
                            "invalid_token",
                            "the token is unknown, revoked, expired or for another server",
                        )),
                    ));
                }
                Err(e) => {
                    lf_tools::log_error("authenticating a token", &e);
                    return Err(json_error(
                        StatusCode::SERVICE_UNAVAILABLE,
                        "temporarily_unavailable",
                        "try again shortly",
                    ));
                }
            }
        }
    };
    Ok(principal)
}

/// 403 for a token without the scope a tool needs (RFC 6750 §3.1): how
/// this endpoint answers lf-tools' refusal of such a call.
pub(crate) fn insufficient_scope(state: &AppState, tool: &str) -> Response {
    let description = format!("{tool} needs the write scope; sign in again granting it");
    let response = json_error(StatusCode::FORBIDDEN, "insufficient_scope", &description);
    let params =
        format!("error=\"insufficient_scope\", scope=\"read write\", error_description=\"{description}\", ");
    with_challenge(response, state, &params)
}
