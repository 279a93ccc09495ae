//! What operators ask of the server: `GET /ready` (whether it can serve
//! now) and `GET /metrics` (what it has done, in the Prometheus text
//! format), neither behind a token and neither telling a secret; and the
//! count of every request, by route and status, that `/metrics` shows.

use std::sync::Arc;
use std::time::Instant;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use http::StatusCode;
use http::header::{CACHE_CONTROL, CONTENT_TYPE, HeaderValue};
use lf_server::{Database, Runner};
use serde_json::json;

/// What `/ready` asks.
#[derive(Clone)]
pub struct Readiness {
    pub db: Arc<Database>,
    pub runner: Runner,
}

impl Readiness {
    /// `Ok` when the database answers with this build's migrations and the
    /// runner claims runs; else why not.
    pub async fn check(&self) -> Result<(), String> {
        self.db.ready().await?;
        if !self.runner.alive() {
            return Err("the workflow runner is not running".into());
        }
        Ok(())
    }
}

/// `GET /ready`: 200 `{"status":"ready"}`, or 503 with the reason.
pub async fn ready(State(readiness): State<Readiness>) -> Response {
    let (status, body) = match readiness.check().await {
        Ok(()) => (StatusCode::OK, json!({ "status": "ready" })),
        Err(reason) => {
            tracing::warn!(%reason, "not ready");
            (StatusCode::SERVICE_UNAVAILABLE, json!({ "status": "not_ready", "reason": reason }))
        }
    };
    let mut response = (status, Json(body)).into_response();
    response.headers_mut().insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// `GET /metrics`: everything counted so far.
pub async fn metrics() -> Response {
    let mut response = lf_metrics::metrics().render().into_response();
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(lf_metrics::CONTENT_TYPE));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// The routes of an address of their own (`LENSERFIGHT_METRICS_BIND`).
pub fn own_router(readiness: Readiness) -> Router {
    let mut router = Router::new();
    if lf_metrics::enabled() {
        router = router.route("/metrics", get(metrics));
    }
    router.route("/ready", get(ready)).layer(axum::middleware::from_fn(counted)).with_state(readiness)
}

/// The route a request counts under: a fixed name for each of the
/// server's routes, never the path itself (which names workflows, or
/// anything a client sends).
fn route_of(path: &str) -> &'static str {
    match path {
        "/mcp" => "/mcp",
        "/health" => "/health",
        "/ready" => "/ready",
        "/metrics" => "/metrics",
        p if p.starts_with("/icons/") => "/icons",
        p if p.starts_with("/hooks/") => "/hooks",
        p if p.starts_with("/oauth/") || p.starts_with("/.well-known/") => "/oauth",
        _ => "other",
    }
}

/// Counts each request by route and status, with the time to its answer.
pub async fn counted(request: Request, next: Next) -> Response {
    let began = Instant::now();
    let route = route_of(request.uri().path());
    let response = next.run(request).await;
    lf_metrics::metrics().http_request(route, response.status().as_u16(), began.elapsed());
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_are_a_fixed_set() {
        assert_eq!(route_of("/hooks/0193a7c4-0000-7000-8000-000000000000"), "/hooks");
        assert_eq!(route_of("/oauth/token"), "/oauth");
        assert_eq!(route_of("/.well-known/oauth-protected-resource/mcp"), "/oauth");
        assert_eq!(route_of("/mcp"), "/mcp");
        assert_eq!(route_of("/icons/lens.svg"), "/icons");
        assert_eq!(route_of("/anything?token=secret"), "other");
    }
}
