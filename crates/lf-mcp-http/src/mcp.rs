//! `/mcp`: each request's caller found ([`crate::auth`]), with sessions
//! a session of someone else's refused as unknown ([`sessions`]), and its
//! body read once. Then, for a POST: a batch is answered member by member
//! ([`batch`]); a single message is read once by lf-tools
//! ([`LfServer::classify_body`]), which says whether it is a plain tool call
//! to answer directly (without sessions, [`direct`]), a message refused
//! (not JSON; a token without the tool's scope, answered 403 here), or one
//! for rmcp's Streamable HTTP service, which gets it with its caller
//! attached once the endpoint has refused an id already in flight.

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
use http::{HeaderMap, Method, StatusCode};
use lf_core::Principal;
use lf_tools::mcp::{Classified, Envelope, Refusal, one_call};
use lf_tools::{Group, LfServer};
use rmcp::model::ProtocolVersion;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use self::sessions::Sessions;
use crate::app::AppState;
use crate::auth::{caller, insufficient_scope};
use crate::config::{HttpConfig, MAX_BODY};
use crate::inflight::hold_until_sent;
use crate::responses::rpc_error;

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
        .flat_map(|id| Group::parse_set([id]).unwrap_or_default())
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
            // the first of them checked.
            async move { one_call(mcp.serve(request)).await }
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

/// The session a request names.
fn session_of(parts: &Parts) -> Option<&str> {
    parts.headers.get("mcp-session-id")?.to_str().ok()
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
            Err(_) => return crate::responses::too_large(MAX_BODY),
        };
        if parts.method != Method::POST {
            return self.other(parts, principal, bytes).await;
        }
        if let Some(answer) = self.batch(&principal, &parts, &bytes).await {
            return answer;
        }
        self.one(&principal, parts, bytes).await
    }

    /// The protocol version a plain tool call of a request with `headers`
    /// is answered directly in: only without sessions (see [`direct`]).
    fn direct_version(&self, headers: &HeaderMap) -> Option<ProtocolVersion> {
        if self.sessions.is_some() {
            return None;
        }
        direct::version(&self.state, headers)
    }

    /// A POST of one message, answered as rmcp answers it (directly, for a
    /// plain tool call without sessions).
    async fn one(&self, principal: &Principal, parts: Parts, bytes: Bytes) -> Response {
        let version = self.direct_version(&parts.headers);
        match self.state.server.classify_body(&bytes, principal, version.as_ref()) {
            Classified::Direct(call) => direct::answer(&self.state, principal, call).await,
            Classified::Rmcp(envelope) => self.to_rmcp(principal, parts, bytes, &envelope).await,
            Classified::Refused(refusal) => self.refused(refusal),
        }
    }

    /// The answer to a message refused before rmcp: 403 for a token without
    /// the tool's scope, else its JSON-RPC error (400), or 202 for a
    /// notification, which gets none.
    fn refused(&self, refusal: Refusal) -> Response {
        match refusal {
            Refusal::Scope { tool, .. } => insufficient_scope(&self.state, &tool),
            Refusal::Unreadable(Some(answer)) => rpc_answer(StatusCode::BAD_REQUEST, answer),
            Refusal::Unreadable(None) => StatusCode::ACCEPTED.into_response(),
        }
    }

    /// rmcp's answer to a POST of one message, of which the endpoint checks
    /// `envelope`: with sessions, an id already in flight is refused, and
    /// the session an `initialize` opens is recorded as the caller's.
    async fn to_rmcp(
        &self,
        principal: &Principal,
        parts: Parts,
        bytes: Bytes,
        envelope: &Envelope,
    ) -> Response {
        let mut claim = None;
        if let (Some(inflight), Some(session), Some(id)) =
            (&self.state.inflight, session_of(&parts), envelope.request_id())
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
        let mut response = self.rmcp(parts, principal.clone(), bytes).await;
        if envelope.initialize()
            && let Some(sessions) = &self.sessions
        {
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
