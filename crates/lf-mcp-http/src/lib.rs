//! The LenserFight MCP server over Streamable HTTP.
//!
//! `POST /mcp` is rmcp's Streamable HTTP service over the catalog's
//! [`LfServer`], in both protocol eras, stateless unless `--sessions`; every
//! request carries its caller, resolved by [`auth`] from a bearer token and
//! attached to the request for the tools to read. `GET /health` answers
//! liveness. `POST /hooks/{workflow_id}` (`hooks.rs`) starts a run of a
//! workflow whose trigger is a webhook trigger, its credential the
//! workflow's webhook secret. `GET /icons/{group}.svg` serves the toolsets'
//! icons (`icons.rs`). [`guard`] keeps other hosts and browser origins out.
//! `GET /ready` answers readiness and `GET /metrics` the metrics ([`ops`]),
//! the latter on an address of its own when `LENSERFIGHT_METRICS_BIND` says.
//!
//! This crate holds no domain logic and is the only one that knows HTTP; its
//! configuration, database and wiring come from lf-server. A domain error
//! becomes an HTTP status in one place, `responses.rs` (`status_of`), for
//! every route that answers one.

pub mod admin;
pub mod app;
pub mod auth;
pub mod client_metadata;
pub mod config;
mod connections;
pub mod guard;
mod hooks;
mod icons;
mod inflight;
pub mod limits;
mod mcp;
pub mod oauth;
pub mod ops;
mod responses;

use std::future::Future;
use std::sync::Arc;

use lf_auth::{AuthConfig, AuthService};
use lf_core::{Principal, SystemClock};
use lf_server::{Background, ConfigError, Database, SHUTDOWN_GRACE, Setting};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

pub use app::{AppState, router};
pub use config::{HttpConfig, ServeArgs};
pub use hooks::{HookCall, HookCheck, HookRuns, HookStart};

/// A server that has its socket and database and is ready to serve.
pub struct Prepared {
    pub listener: TcpListener,
    /// `/metrics`' own socket, when `LENSERFIGHT_METRICS_BIND` is set.
    pub metrics_listener: Option<TcpListener>,
    pub state: AppState,
    pub db: Arc<Database>,
    /// Background work the tools start; shut down after the server stops.
    pub background: Arc<Background>,
    /// Runs workflows while the server serves; shut down after it stops.
    pub runner: lf_server::Runner,
    /// The agents' call ledger: flushed while the server serves, closed
    /// after it stops.
    pub ledger: lf_server::AgentLedger,
}

/// The accounts and OAuth service over `db`, issuing tokens for this
/// server's MCP endpoint, and accepting clients identified by their
/// metadata document's URL (fetched by [`client_metadata`]).
pub fn auth_service(db: &Database, config: &HttpConfig) -> AuthService {
    let auth_config = AuthConfig {
        resources: vec![config.resource()],
        issuer: Some(config.public_url.clone()),
        client_metadata_http_loopback: config.client_metadata.http_loopback,
        ..AuthConfig::default()
    };
    let fetcher = client_metadata::MetadataFetcher::new(
        config.common.runs.egress_allow.clone(),
        config.client_metadata,
    )
    .expect("the outbound HTTP client builds with the default TLS settings");
    AuthService::new(db.auth_store(), Arc::new(SystemClock), auth_config)
        .with_client_metadata(Arc::new(fetcher))
}

/// Opens the database, binds the socket, and finds the development lenser.
pub async fn prepare(mut config: HttpConfig) -> Result<Prepared, ConfigError> {
    let db = Arc::new(lf_server::open_database(&config.common).await?);
    let bind = config.bind;
    let from_file = config.common.from_file.clone();
    let cannot =
        move |e: std::io::Error| from_file.bad(Setting::Bind, format!("cannot listen on {bind}: {e}"));
    let listener = TcpListener::bind(config.bind).await.map_err(&cannot)?;
    let metrics_listener =
        match config.metrics_bind {
            None => None,
            Some(at) => Some(TcpListener::bind(at).await.map_err(|e| {
                config.common.bad(Setting::MetricsBind, format!("cannot listen on {at}: {e}"))
            })?),
        };
    if !config.public_url_set {
        // Port 0 binds some free port: the public URL names the real one.
        config.bind = listener.local_addr().map_err(&cannot)?;
        config.public_url = format!("http://{}", config.bind);
    }
    // The toolsets' icons are named under the public URL (`icons.rs`).
    config.common.options.icon_base = Some(config.public_url.clone());
    let auth = auth_service(&db, &config);
    let dev_lenser = match &config.dev_lenser {
        None => None,
        Some(handle) => {
            let bad = |message: String| config.common.bad(Setting::DevLenser, message);
            let found = auth.find_lenser(handle).await.map_err(|e| bad(e.message().to_owned()))?;
            let lenser = found.ok_or_else(|| {
                bad(
                    format!("no lenser has the handle {handle}; create one with `lf-mcp-http admin create-lenser --handle {handle}`"),
                )
            })?;
            tracing::warn!(handle = %handle, "development mode: requests without a token act as this lenser");
            Some(lenser.id)
        }
    };
    let gate = guard::Gate::new(&config.public_url, &config.extra_origins);
    let sessions = config.sessions;
    let (registrations_per_hour, hooks_per_minute) = (config.registrations_per_hour, config.hooks_per_minute);
    let background = Background::current();
    // The caller of each request comes from the request (see `router`).
    let lf_server::Built { server, runner, ledger } = lf_server::build_server(
        &db,
        config.common.model.clone(),
        background.clone(),
        config.common.options.clone(),
        Principal::Service { acting_as: None },
        config.common.sealer(),
        &config.common.runs,
    );
    let hook_runs = server.services().runs.clone();
    let state = AppState::new(app::Shared {
        resource: config.resource().into(),
        config: Arc::new(config),
        gate: Arc::new(gate),
        dev_lenser,
        server,
        auth: Arc::new(auth),
        limits: Arc::new(limits::Limits::new(db.throttle_store(), registrations_per_hour, hooks_per_minute)),
        hook_runs,
        inflight: sessions.then(|| Arc::new(inflight::InFlight::default())),
        readiness: ops::Readiness { db: db.clone(), runner: runner.clone() },
    });
    Ok(Prepared { listener, metrics_listener, state, db, background, runner, ledger })
}

/// Serves until `stop` resolves, then finishes the requests in flight (up
/// to the shutdown timeout), then the background work (up to
/// [`SHUTDOWN_GRACE`]).
pub async fn serve(prepared: Prepared, stop: impl Future<Output = ()> + Send + 'static) {
    let Prepared { listener, metrics_listener, state, db, background, runner, ledger } = prepared;
    let runs = runner.start();
    ledger.start();
    let streams = CancellationToken::new();
    if let Some(own) = metrics_listener {
        let app = ops::own_router(state.readiness.clone());
        let stopped = streams.clone();
        tokio::spawn(async move {
            let serving = axum::serve(own, app).with_graceful_shutdown(stopped.cancelled_owned());
            if let Err(e) = serving.await {
                tracing::warn!(error = %e, "serving /metrics stopped");
            }
        });
    }
    oauth::spawn_sweeper(state.clone(), streams.clone());
    let (limits, proxies) = (state.config.connections, state.config.trusted_proxies.clone());
    let app = router(state, streams.clone());
    connections::serve(listener, app, limits, proxies, stop).await;
    streams.cancel();
    // Running steps finish within the runner's grace; the rest are released
    // for another process (or the next start) to resume.
    runner.shutdown().await;
    let _ = runs.await;
    background.shutdown(SHUTDOWN_GRACE).await;
    ledger.close().await;
    db.close().await;
}
