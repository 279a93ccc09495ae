//! `/mcp`: each request's caller found ([`crate::auth`]), with sessions
//! a session of someone else's refused as unknown ([`sessions`]), and its
//! body read once. Then, for a POST: without sessions, a plain tool call is answered
//! directly ([`direct`]); a batch is answered member by member ([`batch`]);
//! every other message is checked for what only this layer knows (that it
//! is JSON, the token's scope, an id already in flight) and handed to rmcp's
//! Streamable HTTP service with its caller attached.

mod batch;
mod direct;
mod sessions;

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use axum::{Json, Router};
use http::request::Parts;
use http::{Method, StatusCode};
use lf_core::{Principal, clip};
use lf_tools::mcp::jsonrpc;
use lf_tools::{Group, LfServer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use self::sessions::Sessions;
use crate::app::AppState;
use crate::auth::{caller, scope_refusal, tool_called};
use crate::config::{HttpConfig, MAX_BODY};
use crate::inflight::hold_until_sent;
use crate::responses::{json_error, rpc_error};

/// How HTTP refuses a batch where the protocol version has none.
const NO_BATCHES: &str = "Invalid Request: JSON-RPC batches are not supported; send one message per request";

/// The rmcp service's settings: JSON answers, hosts and origins checked by
/// [`crate::guard`] instead (with the public URL), and the body limit.
fn rmcp_config(config: &HttpConfig, shutdown: CancellationToken) -> StreamableHttpServerConfig {
    StreamableHttpServerConfig::default()
        .with_legacy_session_mode(config.sessions)
        .with_json_response(true)
        .disable_allowed_hosts()
        .disable_allowed_origins()
        .with_max_request_body_bytes(MAX_BODY)
        .with_cancellation_token(shutdown)
}

/// The caller the endpoint attached to the HTTP request behind an MCP request.
fn principal_of(extensions: &rmcp::model::Extensions) -> Option<Principal> {
    extensions.get::<Parts>()?.extensions.get::<Principal>().cloned()
}

/// With dynamic toolsets, the groups a request names in its
/// `X-MCP-Toolsets` header (comma-separated ids; unknown ones are left
/// out, as list_toolsets shows): how a stateless caller, whose every
/// request is a new session, has its tools.
fn toolsets_of(extensions: &rmcp::model::Extensions) -> Vec<&'static Group> {
    let Some(parts) = extensions.get::<Parts>() else { return Vec::new() };
    parts
        .headers
        .get_all(TOOLSETS_HEADER)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|id| Group::parse(id).ok())
        .collect()
}

/// The header a request names its toolsets in (dynamic toolsets).
const TOOLSETS_HEADER: &str = "x-mcp-toolsets";

/// rmcp's Streamable HTTP service, stateless or with sessions.
#[derive(Clone)]
enum Rmcp {
    Stateless(StreamableHttpService<LfServer, NeverSessionManager>),
    Sessions(StreamableHttpService<LfServer, LocalSessionManager>),
}

impl Rmcp {
    async fn handle(&self, request: Request) -> Response {
        match self {
            Rmcp::Stateless(service) => service.handle(request).await.map(Body::new),
            Rmcp::Sessions(service) => service.handle(request).await.map(Body::new),
        }
    }
}

/// The endpoint: the application's state, rmcp's service, and with
/// sessions, what is known of them.
struct Mcp {
    state: AppState,
    rmcp: Rmcp,
    sessions: Option<Arc<Sessions>>,
}

/// The `/mcp` route. `shutdown` stops rmcp's streams once the server has
/// finished the requests in flight.
pub(crate) fn routes(state: &AppState, shutdown: CancellationToken) -> Router<AppState> {
    let server = state
        .server
        .clone()
        .with_principal_source(Arc::new(principal_of))
        .with_toolset_source(Arc::new(toolsets_of));
    let config = rmcp_config(&state.config, shutdown);
    // Each session (each request without sessions) starts with the
    // toolsets of --toolsets enabled, with dynamic toolsets.
    let factory = move || Ok(server.new_session());
    let (rmcp, sessions) = if state.config.sessions {
        let service = StreamableHttpService::new(factory, Arc::new(LocalSessionManager::default()), config);
        (Rmcp::Sessions(service), Some(Arc::new(Sessions::default())))
    } else {
        let service = StreamableHttpService::new(factory, Arc::new(NeverSessionManager::default()), config);
        (Rmcp::Stateless(service), None)
    };
    let mcp = Arc::new(Mcp { state: state.clone(), rmcp, sessions });
    Router::new().route(
        "/mcp",
        any(move |request: Request| {
            let mcp = mcp.clone();
            // One call: the token's check and the tool's reads share what
            // the first of them checked (see lf_core::call).
            async move { lf_core::call::within(mcp.serve(request)).await }
        }),
    )
}

/// What rmcp answers for a session it does not know, word for word: a
/// session of someone else's is answered alike.
fn session_not_found() -> Response {
    let mut response = Response::new(Body::from("Not Found: Session not found"));
    *response.status_mut() = StatusCode::NOT_FOUND;
    response
}

/// A JSON-RPC message the endpoint answers itself, with `status`.
fn rpc_answer(status: StatusCode, message: Value) -> Response {
    (status, Json(message)).into_response()
}

/// The session and JSON-RPC id of a request (not a notification) that
/// belongs to a session.
fn session_request<'a>(parts: &'a Parts, message: &'a Value) -> Option<(&'a str, &'a Value)> {
    let session = parts.headers.get("mcp-session-id")?.to_str().ok()?;
    message.get("method")?;
    Some((session, message.get("id")?))
}

impl Mcp {
    async fn serve(&self, request: Request) -> Response {
        let (parts, body) = request.into_parts();
        let principal = match caller(&self.state, &parts).await {
            Ok(principal) => principal,
            Err(refusal) => return refusal,
        };
        if let Some(sessions) = &self.sessions
            && let Some(session) = parts.headers.get("mcp-session-id")
            && !session.to_str().is_ok_and(|s| sessions.belongs_to(s, &principal))
        {
            return session_not_found();
        }
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
        if parts.method != Method::POST {
            return self.other(parts, principal, bytes).await;
        }
        if let Some(answer) = self.batch(&principal, &parts, &bytes).await {
            return answer;
        }
        self.one(&principal, parts, bytes).await
    }

    /// A POST of one message, answered as rmcp answers it (directly, for a
    /// plain tool call without sessions).
    async fn one(&self, principal: &Principal, parts: Parts, bytes: Bytes) -> Response {
        if self.sessions.is_none()
            && let Some(answer) = direct::answer(&self.state, principal, &parts.headers, &bytes).await
        {
            return answer;
        }
        let message: Value = match serde_json::from_slice(&bytes) {
            Ok(v) => v,
            Err(e) => {
                if jsonrpc::is_too_deep(&e)
                    && let Some(answer) = jsonrpc::too_deep(&bytes)
                {
                    return rpc_answer(StatusCode::BAD_REQUEST, answer);
                }
                return rpc_error(
                    StatusCode::BAD_REQUEST,
                    -32700,
                    &format!("Parse error: {}", clip(&e.to_string(), 200)),
                );
            }
        };
        if let Some(tool) = tool_called(&message)
            && let Some(refusal) = scope_refusal(&self.state, principal, tool)
        {
            return refusal;
        }
        let mut claim = None;
        if let (Some(inflight), Some((session, id))) =
            (&self.state.inflight, session_request(&parts, &message))
        {
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
        let initialize = message.get("method").and_then(Value::as_str) == Some("initialize");
        let mut response = self.rmcp(parts, principal.clone(), bytes).await;
        if initialize && let Some(sessions) = &self.sessions {
            sessions.own(&response, principal);
            response = sessions.watch(response);
        }
        match claim {
            Some(claim) => hold_until_sent(response, claim),
            None => response,
        }
    }

    /// A request that is not a POST (a stream, a session's end): rmcp's.
    async fn other(&self, parts: Parts, principal: Principal, bytes: Bytes) -> Response {
        let ended = (parts.method == Method::DELETE)
            .then(|| parts.headers.get("mcp-session-id").and_then(|v| v.to_str().ok()).map(str::to_owned))
            .flatten();
        let response = self.rmcp(parts, principal, bytes).await;
        if let (Some(sessions), Some(session)) = (&self.sessions, ended)
            && response.status().is_success()
        {
            sessions.forget(&session);
        }
        response
    }

    /// rmcp's answer to the request, with its caller attached.
    async fn rmcp(&self, mut parts: Parts, principal: Principal, bytes: Bytes) -> Response {
        parts.extensions.insert(principal);
        self.rmcp.handle(Request::from_parts(parts, Body::from(bytes))).await
    }
}
