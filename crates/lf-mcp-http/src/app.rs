//! The HTTP application: routes, shared state and layers.

use std::sync::Arc;

use axum::extract::DefaultBodyLimit;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router, middleware};
use http::StatusCode;
use lf_auth::AuthService;
use lf_core::LenserId;
use lf_tools::{LfServer, SERVER_NAME};
use serde_json::json;
use tokio_util::sync::CancellationToken;
use tower_http::timeout::TimeoutLayer;

use crate::config::HttpConfig;
use crate::config::MAX_BODY;
use crate::guard::{Gate, gate};
use crate::hooks::{self, HookRuns};
use crate::inflight::InFlight;
use crate::limits::{ClientIp, Limits};
use crate::oauth;
use crate::ops;
use crate::responses::{declared_over, json_error, too_large};

/// What every request handler can reach. Every layer clones it for each
/// request, so it is one shared reference.
#[derive(Clone)]
pub struct AppState(Arc<Shared>);

impl AppState {
    pub fn new(shared: Shared) -> Self {
        Self(Arc::new(shared))
    }

    /// The same state with another account service (tests give theirs a
    /// fixed clock).
    pub fn with_auth(&self, auth: Arc<AuthService>) -> Self {
        Self::new(Shared { auth, ..(*self.0).clone() })
    }

    /// The same state with another starter of webhook runs (tests give
    /// theirs one that refuses as they say).
    pub fn with_hook_runs(&self, hook_runs: Arc<dyn HookRuns>) -> Self {
        Self::new(Shared { hook_runs, ..(*self.0).clone() })
    }
}

impl std::ops::Deref for AppState {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.0
    }
}

/// The contents of [`AppState`].
#[derive(Clone)]
pub struct Shared {
    pub config: Arc<HttpConfig>,
    pub gate: Arc<Gate>,
    /// The lenser unauthenticated requests act as, in development mode.
    pub dev_lenser: Option<LenserId>,
    /// The catalog's server, for what the HTTP layer must know of a tool.
    pub server: LfServer,
    /// Accounts, tokens and the OAuth rules.
    pub auth: Arc<AuthService>,
    /// This server's MCP endpoint URL: the audience of its tokens.
    pub resource: Arc<str>,
    /// Rate limits of sign-in, token, registration and webhooks.
    pub limits: Arc<Limits>,
    /// What starts a webhook's run: the catalog's run service.
    pub hook_runs: Arc<dyn HookRuns>,
    /// With sessions: the request ids in flight in each session.
    pub inflight: Option<Arc<InFlight>>,
    /// What `/ready` asks: the database and the runner.
    pub readiness: ops::Readiness,
}

/// The largest body of an OAuth request (forms and registrations are small).
const OAUTH_MAX_BODY: usize = 64 * 1024;

/// The whole application. `shutdown` stops rmcp's streams once the server
/// has finished the requests in flight.
pub fn router(state: AppState, shutdown: CancellationToken) -> Router {
    let mcp = crate::mcp::routes(&state, shutdown);
    let oauth = Router::new()
        .route("/.well-known/oauth-authorization-server", get(oauth::authorization_server_metadata))
        .route("/.well-known/oauth-protected-resource", get(oauth::protected_resource_metadata))
        .route("/.well-known/oauth-protected-resource/mcp", get(oauth::protected_resource_metadata))
        .route("/oauth/register", post(oauth::register))
        .route("/oauth/authorize", get(oauth::authorize_page).post(oauth::authorize_submit))
        .route("/oauth/token", post(oauth::token))
        .route("/oauth/revoke", post(oauth::revoke))
        .layer(DefaultBodyLimit::max(OAUTH_MAX_BODY))
        .layer(middleware::from_fn(|r, n| within(OAUTH_MAX_BODY, r, n)));
    let hooks = Router::new()
        .route("/hooks/{workflow_id}", post(hooks::call))
        .layer(DefaultBodyLimit::max(hooks::HOOK_MAX_BODY))
        .layer(middleware::from_fn(|r, n| within(hooks::HOOK_MAX_BODY, r, n)));
    let mut operators = Router::new().route("/ready", get(ops::ready));
    if state.config.metrics_bind.is_none() && lf_metrics::enabled() {
        operators = operators.route("/metrics", get(ops::metrics));
    }
    let operators = operators.with_state(state.readiness.clone());
    let mut app = Router::new();
    if state.config.pages {
        app = app.merge(lf_pages::router(lf_pages::Pages {
            public_url: state.config.public_url.clone(),
            server: state.server.clone(),
            auth: state.auth.clone(),
            guard: Arc::new(PagesSignIn(state.clone())),
        }));
    }
    app.route("/health", get(health))
        .route("/icons/{file}", get(crate::icons::icon))
        .merge(operators)
        .merge(oauth)
        .merge(hooks)
        .merge(mcp)
        .fallback(not_found)
        .layer(middleware::from_fn(|r, n| within(MAX_BODY, r, n)))
        .layer(TimeoutLayer::with_status_code(StatusCode::GATEWAY_TIMEOUT, state.config.request_timeout))
        .layer(middleware::from_fn_with_state(state.clone(), gate))
        .layer(middleware::from_fn(ops::counted))
        .with_state(state)
}

/// The pages' sign-in under the limits of the OAuth sign-in page.
struct PagesSignIn(AppState);

#[async_trait::async_trait]
impl lf_pages::SignInGuard for PagesSignIn {
    async fn attempt(&self, request: &mut http::request::Parts, handle: &str) -> Option<Response> {
        use axum::extract::FromRequestParts;
        let client = match ClientIp::from_request_parts(request, &self.0).await {
            Ok(c) => c,
            Err(refused) => return Some(refused),
        };
        match self.0.limits.sign_in(client).await {
            Some(refused) => Some(refused),
            None => self.0.limits.sign_in_as(handle).await,
        }
    }

    async fn succeeded(&self, handle: &str) {
        self.0.limits.signed_in(handle).await;
    }
}

async fn health(State(_): State<AppState>) -> Response {
    Json(json!({ "status": "ok", "server": SERVER_NAME, "version": env!("CARGO_PKG_VERSION") }))
        .into_response()
}

/// 413 at once for a declared `Content-Length` over `limit`, instead of
/// reading the body up to it.
async fn within(limit: usize, request: Request, next: Next) -> Response {
    if declared_over(request.headers(), limit) {
        return too_large(limit);
    }
    next.run(request).await
}

async fn not_found() -> Response {
    json_error(StatusCode::NOT_FOUND, "not_found", "no such endpoint; the MCP endpoint is POST /mcp")
}
