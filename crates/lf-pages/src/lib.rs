//! LenserFight's web pages: an adapter like the transports, an axum router
//! over the catalog's services that `lf-mcp-http` mounts (off with
//! `--no-pages`). Server-rendered HTML that works without JavaScript.
//!
//! - `GET/POST /sign-in`, `POST /sign-out` ([`session`]): a session cookie
//!   backed by a revocable, expiring access token in the accounts' store
//!   (memory, SQLite or PostgreSQL, so every process serving the database
//!   knows it), bound to the pages' own audience so it opens nothing else.
//! - `GET /battles/{id}`, `POST /battles/{id}/vote`, `GET /arena`
//!   ([`battle`]): blind side-by-side voting through
//!   [`lf_battle::BattleService::cast_vote`], the service `cast_battle_vote` calls.
//! - `GET /leaderboard` ([`board`]): ratings with their intervals as SVG.
//! - `GET /experiments/{id}` and its cells ([`experiment`]): the case ×
//!   contender matrix as a heat map, a page of cases at a time.
//! - `GET /experiments/{a}/compare/{b}` ([`compare`]): what changed from
//!   one experiment to another, regressions first, as `compare_experiments`.
//! - `GET /workflows/{id}/runs/{run_id}` ([`workflow`]): a run's graph as
//!   SVG with each step's status and time, and its log.
//!
//! Every page reads as the signed-in person through the same store queries
//! as the tools: what they may not read is 404. Every form carries a CSRF
//! token; every answer carries a strict Content-Security-Policy (no inline
//! script or style: the style sheet and the one small script are served
//! from here); all third-party text goes through [`html::Html`], which
//! escapes.

pub mod battle;
pub mod board;
pub mod compare;
pub mod experiment;
pub mod html;
pub mod session;
pub mod workflow;

use std::sync::Arc;

use async_trait::async_trait;
use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::response::Response;
use axum::routing::{get, post};
use http::request::Parts;
use lf_auth::AuthService;
use lf_tools::LfServer;

pub use battle::order;
pub use session::SESSION_TTL;

/// The largest form the pages take.
pub const MAX_FORM: usize = 16 * 1024;

/// The sign-in's rate limits and lockouts, as the host applies them to its
/// own sign-in page (lf-mcp-http's limits over the database).
#[async_trait]
pub trait SignInGuard: Send + Sync {
    /// `None` to go ahead with an attempt to sign in as `handle`, or the
    /// answer that refuses it (429 with `Retry-After`).
    async fn attempt(&self, request: &mut Parts, handle: &str) -> Option<Response>;
    /// The attempt succeeded: forget the handle's failures.
    async fn succeeded(&self, handle: &str);
}

/// What the pages are given by their host.
#[derive(Clone)]
pub struct Pages {
    /// Scheme, host and port people use, without a trailing slash
    /// (`LENSERFIGHT_PUBLIC_URL`): links, the cookie's `Secure`, the
    /// sessions' audience.
    pub public_url: String,
    /// The catalog's server: its services are what the pages read and write.
    pub server: LfServer,
    /// Accounts (sign-in) and the store sessions are kept in.
    pub auth: Arc<AuthService>,
    /// The host's sign-in limits.
    pub guard: Arc<dyn SignInGuard>,
}

/// The pages' shared state.
#[derive(Clone)]
pub(crate) struct State(Arc<Inner>);

pub(crate) struct Inner {
    pub(crate) pages: Pages,
    pub(crate) sessions: session::Sessions,
}

impl std::ops::Deref for State {
    type Target = Inner;
    fn deref(&self) -> &Inner {
        &self.0
    }
}

impl Inner {
    pub(crate) fn services(&self) -> &lf_tools::Services {
        self.pages.server.services()
    }

    /// Whether cookies must be `Secure`.
    pub(crate) fn https(&self) -> bool {
        self.pages.public_url.starts_with("https://")
    }
}

/// The pages' routes, ready to merge into the host's router (whose Host,
/// Origin, size and time limits then apply to them).
pub fn router<S: Clone + Send + Sync + 'static>(pages: Pages) -> Router<S> {
    let sessions = session::Sessions::new(&pages);
    let state = State(Arc::new(Inner { pages, sessions }));
    Router::new()
        .route("/sign-in", get(session::sign_in_page).post(session::sign_in_submit))
        .route("/sign-out", post(session::sign_out))
        .route("/battles/{id}", get(battle::battle_page))
        .route("/battles/{id}/vote", post(battle::vote))
        .route("/arena", get(battle::arena))
        .route("/leaderboard", get(board::leaderboard))
        .route("/experiments/{id}", get(experiment::experiment_page))
        .route("/experiments/{id}/cells/{position}/{contender}", get(experiment::cell_page))
        .route("/experiments/{id}/compare", get(compare::compare_with))
        .route("/experiments/{id}/compare/{other}", get(compare::compare_page))
        .route("/workflows/{id}/runs/{run_id}", get(workflow::run_page))
        .route("/pages/style.css", get(html::style))
        .route("/pages/keys.js", get(html::script))
        .layer(DefaultBodyLimit::max(MAX_FORM))
        .with_state(state)
}
