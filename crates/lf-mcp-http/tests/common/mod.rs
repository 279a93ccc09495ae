//! A real server on a loopback port over a fresh SQLite file, and helpers
//! to call it.

#![allow(dead_code)]

pub mod pages;
pub mod raw;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use lf_auth::{AuthService, NewToken};
use lf_core::{Clock, FixedClock, LenserId, Scopes, Timestamp};
use lf_mcp_http::{HttpConfig, ServeArgs};
use lf_server::CommonArgs;
use serde_json::{Value, json};

pub struct Server {
    pub base: String,
    /// The address the server listens on.
    pub addr: SocketAddr,
    pub auth: Arc<AuthService>,
    /// The server's clock, when the test drives time.
    pub clock: Option<Arc<FixedClock>>,
    pub database_url: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<()>,
    _dir: tempfile::TempDir,
}

pub const PASSWORD: &str = "correct horse battery staple";

#[derive(Default)]
pub struct Options {
    /// Accounts to create first (with [`PASSWORD`]).
    pub lensers: Vec<&'static str>,
    /// Development mode as this handle.
    pub dev: Option<&'static str>,
    /// Drive the auth service's clock from the test.
    pub fixed_clock: bool,
    /// Keep MCP sessions (`--sessions`).
    pub sessions: bool,
    /// Dynamic toolsets (`--dynamic-toolsets`).
    pub dynamic_toolsets: bool,
    /// Changes to the settings of `serve`, made last.
    pub serve: Option<fn(&mut ServeArgs)>,
    /// Changes to the checked settings, made after the checks.
    pub config: Option<fn(&mut HttpConfig)>,
    /// Serve this database (another server's) instead of a fresh file.
    pub database_url: Option<String>,
    /// What starts webhook runs, instead of the server's run service.
    pub hook_runs: Option<Arc<dyn lf_mcp_http::HookRuns>>,
}

impl Options {
    /// Development mode as `dev_user`, an account created first.
    pub fn dev() -> Self {
        Self { lensers: vec!["dev_user"], dev: Some("dev_user"), ..Self::default() }
    }
}

impl Server {
    pub async fn start(dev: bool) -> Self {
        if dev {
            Self::with(Options { lensers: vec!["dev_user"], dev: Some("dev_user"), ..Options::default() })
                .await
        } else {
            Self::with(Options::default()).await
        }
    }

    pub async fn with(options: Options) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let database_url = (options.database_url.clone())
            .unwrap_or_else(|| format!("sqlite:{}", dir.path().join("t.db").display()));
        for handle in &options.lensers {
            let cmd = lf_mcp_http::admin::AdminCommand::CreateLenser {
                common: CommonArgs { database_url: Some(database_url.clone()), ..CommonArgs::default() },
                handle: (*handle).to_owned(),
            };
            let mut input = format!("{PASSWORD}\n").into_bytes();
            let mut out = Vec::new();
            lf_mcp_http::admin::run(cmd, &mut &input[..], &mut out).await.unwrap();
            input.clear();
        }
        let mut args = ServeArgs {
            common: CommonArgs {
                database_url: Some(database_url.clone()),
                dynamic_toolsets: options.dynamic_toolsets,
                ..CommonArgs::default()
            },
            bind: "127.0.0.1:0".into(),
            dev_lenser: options.dev.map(str::to_owned),
            sessions: options.sessions,
            ..ServeArgs::default()
        };
        if let Some(change) = options.serve {
            change(&mut args);
        }
        let mut config = HttpConfig::from_args(&args).unwrap();
        if let Some(change) = options.config {
            change(&mut config);
        }
        let mut prepared = lf_mcp_http::prepare(config).await.unwrap();
        let mut clock = None;
        if options.fixed_clock {
            let c = Arc::new(FixedClock::new(
                Timestamp::from_micros(1_800_000_000_000_000),
                chrono::TimeDelta::zero(),
            ));
            let auth_config = prepared.state.auth.config().clone();
            let mut auth = AuthService::new(prepared.db.auth_store(), c.clone(), auth_config);
            if let Some(source) = prepared.state.auth.client_metadata() {
                auth = auth.with_client_metadata(source.clone());
            }
            let auth = Arc::new(auth);
            prepared.state = prepared.state.with_auth(auth);
            clock = Some(c);
        }
        if let Some(hook_runs) = options.hook_runs {
            prepared.state = prepared.state.with_hook_runs(hook_runs);
        }
        let auth = prepared.state.auth.clone();
        let base = prepared.state.config.public_url.clone();
        let addr = prepared.listener.local_addr().unwrap();
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(lf_mcp_http::serve(prepared, async move {
            let _ = rx.await;
        }));
        Server { base, addr, auth, clock, database_url, stop: Some(tx), task, _dir: dir }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// GET `path` without a token: the JSON it answers.
    pub async fn get_json(&self, path: &str) -> Value {
        client().get(self.url(path)).send().await.unwrap().json().await.unwrap()
    }

    pub fn resource(&self) -> String {
        self.url("/mcp")
    }

    pub async fn lenser(&self, handle: &str) -> LenserId {
        self.auth.find_lenser(handle).await.unwrap().unwrap().id
    }

    /// An admin token for `handle`.
    pub async fn token(&self, handle: &str, scopes: Scopes) -> String {
        let lenser = self.lenser(handle).await;
        let new = NewToken { lenser, scopes, resource: None, ttl: None, label: None };
        self.auth.issue_token(new).await.unwrap().secret
    }

    pub fn advance(&self, by: Duration) {
        let clock = self.clock.as_ref().expect("started with a fixed clock");
        clock.advance(chrono::TimeDelta::from_std(by).unwrap());
        let _ = clock.now();
    }

    pub async fn stop(mut self) {
        let _ = self.stop.take().unwrap().send(());
        tokio::time::timeout(Duration::from_secs(10), self.task).await.unwrap().unwrap();
    }
}

pub fn client() -> reqwest::Client {
    lf_model::client_builder().redirect(reqwest::redirect::Policy::none()).build().unwrap()
}

pub fn rpc(method: &str, params: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params })
}

pub async fn post_mcp(server: &Server, body: &Value) -> reqwest::Response {
    post_mcp_as(server, None, body).await
}

pub async fn post_mcp_as(server: &Server, token: Option<&str>, body: &Value) -> reqwest::Response {
    let mut request =
        client().post(server.url("/mcp")).header("accept", "application/json, text/event-stream").json(body);
    if let Some(t) = token {
        request = request.bearer_auth(t);
    }
    request.send().await.unwrap()
}

/// Calls a tool as `token`; the JSON-RPC result.
pub async fn call_tool(server: &Server, token: Option<&str>, name: &str, arguments: Value) -> Value {
    let response =
        post_mcp_as(server, token, &rpc("tools/call", json!({ "name": name, "arguments": arguments }))).await;
    assert_eq!(response.status(), reqwest::StatusCode::OK, "{name}");
    let body: Value = response.json().await.unwrap();
    body["result"].clone()
}

/// Redeems an authorization code at the token endpoint `url` (PKCE verifier
/// left out when `None`).
pub async fn redeem_at(
    url: String,
    client_id: &str,
    code: &str,
    redirect_uri: &str,
    verifier: Option<&str>,
) -> reqwest::Response {
    let mut form = vec![
        ("grant_type", "authorization_code".to_owned()),
        ("client_id", client_id.to_owned()),
        ("code", code.to_owned()),
        ("redirect_uri", redirect_uri.to_owned()),
    ];
    if let Some(v) = verifier {
        form.push(("code_verifier", v.to_owned()));
    }
    client().post(url).form(&form).send().await.unwrap()
}
