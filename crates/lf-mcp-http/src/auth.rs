//! Who is calling `/mcp`: the bearer token, resolved to a Lenser with its
//! scopes, or the development lenser. Everything else is answered here with
//! 400, 401 or 403 before rmcp sees the request.
//!
//! Without sessions, a plain tool call that rmcp's checks would pass is
//! answered here too (see [`direct_version`] and [`lf_tools::direct`]):
//! rmcp serves each stateless request with a one-shot service of its own,
//! which cost more than the call.

use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::{HeaderValue, Method, StatusCode, header};
use lf_core::{Principal, Scopes, clip};
use lf_tools::direct::{is_inline_era, known_version};
use rmcp::model::ProtocolVersion;
use serde_json::Value;

use crate::app::AppState;
use crate::config::MAX_BODY;
use crate::inflight::hold_until_sent;
use crate::responses::{json_error, rpc_error};

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
fn bearer_token(value: &str) -> Option<&str> {
    let (scheme, token) = value.trim().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// Whether the query string carries a token, which is refused: query strings
/// end up in logs and browser history.
fn token_in_query(request: &Request) -> bool {
    request.uri().query().is_some_and(|q| {
        q.split('&').any(|pair| {
            let key = pair.split('=').next().unwrap_or("");
            key.eq_ignore_ascii_case("access_token") || key.eq_ignore_ascii_case("token")
        })
    })
}

/// Resolves the caller and attaches it to the request as a [`Principal`].
pub async fn authenticate(State(state): State<AppState>, request: Request, next: Next) -> Response {
    if token_in_query(&request) {
        let response = json_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "tokens are not accepted in the query string; send Authorization: Bearer <token>",
        );
        return with_challenge(response, &state, &error_params("invalid_request", "token in query string"));
    }
    let principal = match request.headers().get(header::AUTHORIZATION) {
        None => match state.dev_lenser {
            Some(id) => Principal::Lenser { id, scopes: Scopes::READ_WRITE },
            None => return unauthorized(&state, None),
        },
        Some(value) => {
            let Some(token) = value.to_str().ok().and_then(bearer_token) else {
                return unauthorized(
                    &state,
                    Some(("invalid_request", "send the token as Authorization: Bearer <token>")),
                );
            };
            match state.auth.authenticate(token, &state.resource).await {
                Ok(Ok(who)) => {
                    tracing::debug!(token = %who.token_id, "authenticated");
                    who.principal()
                }
                Ok(Err(why)) => {
                    tracing::info!(reason = %why, "bearer token refused");
                    return unauthorized(
                        &state,
                        Some((
                            "invalid_token",
                            "the token is unknown, revoked, expired or for another server",
                        )),
                    );
                }
                Err(e) => {
                    tracing::error!(error = ?e, "authenticating a token failed");
                    return json_error(
                        StatusCode::SERVICE_UNAVAILABLE,
                        "temporarily_unavailable",
                        "try again shortly",
                    );
                }
            }
        }
    };
    let (mut parts, body) = request.into_parts();
    let bytes = match axum::body::to_bytes(body, MAX_BODY).await {
        Ok(b) => b,
        Err(_) => {
            return json_error(
                StatusCode::PAYLOAD_TOO_LARGE,
                "request_too_large",
                "a request may be 1 MiB at most",
            );
        }
    };
    let mut claim = None;
    if parts.method == Method::POST {
        if !state.config.sessions
            && let Some(version) = direct_version(&parts.headers)
            && let Some(call) = state.server.direct_call(&bytes, &version)
        {
            if let Some(refusal) = scope_refusal(&state, &principal, call.tool()) {
                return refusal;
            }
            // As rmcp answers a stateless request in JSON: 200, application/json.
            let answer = state.server.answer(principal, call).await;
            let mut body = Vec::with_capacity(4096);
            return match answer.write(&mut body) {
                Ok(()) => ([(header::CONTENT_TYPE, "application/json")], body).into_response(),
                Err(e) => {
                    tracing::error!(error = %e, "an answer could not be serialized");
                    rpc_error(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        -32603,
                        "Internal error: the answer could not be written",
                    )
                }
            };
        }
        let message: Value = match serde_json::from_slice(&bytes) {
            Ok(v) => v,
            Err(e) => {
                return rpc_error(
                    StatusCode::BAD_REQUEST,
                    -32700,
                    &format!("Parse error: {}", clip(&e.to_string(), 200)),
                );
            }
        };
        if message.is_array() {
            return rpc_error(
                StatusCode::BAD_REQUEST,
                -32600,
                "Invalid Request: JSON-RPC batches are not supported; send one message per request",
            );
        }
        if let Some(tool) = tool_called(&message)
            && let Some(refusal) = scope_refusal(&state, &principal, tool)
        {
            return refusal;
        }
        if let (Some(inflight), Some((session, id))) = (&state.inflight, session_request(&parts, &message)) {
            match inflight.claim(session, id) {
                Some(c) => claim = Some(c),
                None => {
                    return rpc_error(
                        StatusCode::BAD_REQUEST,
                        -32600,
                        "Invalid Request: this request id is already in use in this session; use a new id for each request",
                    );
                }
            }
        }
    }
    parts.extensions.insert(principal);
    let response = next.run(Request::from_parts(parts, Body::from(bytes))).await;
    match claim {
        Some(claim) => hold_until_sent(response, claim),
        None => response,
    }
}

/// The session and JSON-RPC id of a request (not a notification) that
/// belongs to a session.
fn session_request<'a>(parts: &'a http::request::Parts, message: &'a Value) -> Option<(&'a str, &'a Value)> {
    let session = parts.headers.get("mcp-session-id")?.to_str().ok()?;
    message.get("method")?;
    Some((session, message.get("id")?))
}

/// The tool a `tools/call` message names.
fn tool_called(message: &Value) -> Option<&str> {
    (message.get("method")?.as_str()? == "tools/call").then_some(())?;
    message.get("params")?.get("name")?.as_str()
}

/// The protocol version of a stateless request whose headers pass rmcp's
/// checks as they stand, for a direct answer: it accepts JSON and event
/// streams (listed plainly; a list with parameters or quotes is left to
/// rmcp's reading), sends JSON, and names one known version before the
/// inline era (none means 2025-03-26, as rmcp takes it). From 2026-07-28 on,
/// rmcp checks the standard headers and per-request metadata: those
/// requests stay rmcp's.
fn direct_version(headers: &http::HeaderMap) -> Option<ProtocolVersion> {
    let (mut json, mut sse) = (false, false);
    for value in headers.get_all(header::ACCEPT) {
        for entry in value.to_str().ok()?.split(',') {
            let entry = entry.trim();
            if entry.contains([';', '"']) {
                return None;
            }
            json |= entry.eq_ignore_ascii_case("application/json");
            sse |= entry.eq_ignore_ascii_case("text/event-stream");
        }
    }
    let content_type = headers.get(header::CONTENT_TYPE)?.to_str().ok()?;
    let essence = content_type.split_once(';').map_or(content_type, |(essence, _)| essence);
    if !(json && sse && essence.trim().eq_ignore_ascii_case("application/json")) {
        return None;
    }
    let mut versions = headers.get_all("mcp-protocol-version").iter();
    let version = match (versions.next(), versions.next()) {
        (None, _) => ProtocolVersion::V_2025_03_26,
        (Some(v), None) => known_version(v.to_str().ok()?)?,
        (Some(_), Some(_)) => return None,
    };
    (!is_inline_era(&version)).then_some(version)
}

/// 403 when `principal` is a Lenser whose token lacks the scope `tool` needs.
fn scope_refusal(state: &AppState, principal: &Principal, tool: &str) -> Option<Response> {
    let Principal::Lenser { scopes, .. } = principal else { return None };
    let needed = state.server.required_scope(tool)?;
    (!scopes.allows(needed)).then(|| insufficient_scope(state, tool))
}

/// 403 for a token without the scope a tool needs (RFC 6750 §3.1).
fn insufficient_scope(state: &AppState, tool: &str) -> Response {
    let description = format!("{tool} needs the write scope; sign in again granting it");
    let response = json_error(StatusCode::FORBIDDEN, "insufficient_scope", &description);
    let params =
        format!("error=\"insufficient_scope\", scope=\"read write\", error_description=\"{description}\", ");
    with_challenge(response, state, &params)
}
