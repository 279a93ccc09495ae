//! Outside MCP servers as connections (provider `mcp`), on the servers' own
//! wiring (SQLite in memory, the real runner, the egress guard opened for
//! loopback): an rmcp server on 127.0.0.1 with `echo`, `add`, a slow tool,
//! a failing tool and a destructive one, also behind a bearer token.
//! Saving lists its tools; a workflow of two `mcp_tool` steps chains their
//! results; a wrong token, a dead server, a server that is not MCP and one
//! that answers 10 MB are refused with what went wrong and nothing saved;
//! another lenser sees and uses none of it.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::Request;
use axum::response::IntoResponse;
use axum::routing::any;
use lf_core::{LenserId, Principal, Scopes};
use lf_server::{Background, Database, KeySealer, RunSettings};
use lf_tools::{Catalog, CatalogOptions, Group, LfServer, Services};
use lf_workflow::engine::RunStatus;
use lf_workflow::run::{Run, StartRun};
use lf_workflow::{NewConnection, NewWorkflow, RawBlueprint, Secret};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{ServerCapabilities, ServerConfig};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ServerHandler, tool, tool_handler, tool_router};
use serde_json::{Value, json};

const TOKEN: &str = "s3cret-token-of-the-outside-server";

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct EchoIn {
    text: String,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct AddIn {
    a: i64,
    b: i64,
}

#[derive(Clone)]
struct Outside {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Outside {
    #[tool(description = "Says the text back.", annotations(read_only_hint = true))]
    fn echo(&self, Parameters(EchoIn { text }): Parameters<EchoIn>) -> String {
        text
    }

    #[tool(description = "Adds two numbers.", annotations(idempotent_hint = true))]
    fn add(&self, Parameters(AddIn { a, b }): Parameters<AddIn>) -> String {
        (a + b).to_string()
    }

    #[tool(description = "Takes a minute.")]
    async fn slow(&self) -> String {
        tokio::time::sleep(Duration::from_secs(60)).await;
        "late".into()
    }

    #[tool(description = "Always fails.")]
    fn broken(&self) -> Result<String, String> {
        Err("the disk is on fire".into())
    }

    #[tool(description = "Deletes everything.", annotations(destructive_hint = true))]
    fn wipe(&self) -> String {
        "wiped".into()
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Outside {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

/// Serves the outside server on 127.0.0.1: `/mcp` open, `/secure` behind
/// [`TOKEN`], `/html` a web page, `/huge` 10 MB. Its address.
async fn outside() -> String {
    let config = StreamableHttpServerConfig::default().disable_allowed_hosts().disable_allowed_origins();
    let service = StreamableHttpService::new(
        || Ok(Outside { tool_router: Outside::tool_router() }),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let open = service.clone();
    let app = Router::new()
        .route("/mcp", any(move |r: Request| async move { open.handle(r).await.into_response() }))
        .route(
            "/secure",
            any(move |r: Request| async move {
                let bearer = format!("Bearer {TOKEN}");
                if r.headers().get("authorization").and_then(|v| v.to_str().ok()) != Some(bearer.as_str()) {
                    return (axum::http::StatusCode::UNAUTHORIZED, "no").into_response();
                }
                service.handle(r).await.into_response()
            }),
        )
        .route("/html", any(|| async { ([("content-type", "text/html")], "<html>hello</html>") }))
        .route("/huge", any(|| async { ([("content-type", "application/json")], "x".repeat(10 << 20)) }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

fn lenser(id: LenserId) -> Principal {
    Principal::Lenser { id, scopes: Scopes::READ_WRITE }
}

fn server(services: &Arc<Services>, id: LenserId) -> LfServer {
    let every = CatalogOptions { toolsets: Some(Group::all().to_vec()), ..CatalogOptions::default() };
    LfServer::new(Arc::new(Catalog::new()), services.clone(), every, lenser(id))
}

/// Calls `tool`: its structured content and whether it failed.
async fn call(s: &LfServer, tool: &str, args: Value) -> (Value, bool) {
    let r = s.call(tool, args.as_object().unwrap().clone()).await.expect("a known tool");
    (r.structured_content.clone().unwrap_or(Value::Null), r.is_error == Some(true))
}

async fn setup() -> (Arc<Services>, lf_runner::Runner, String) {
    let db = Database::connect("sqlite::memory:").await.unwrap();
    let runs =
        RunSettings { egress_allow: lf_egress::Allow::parse("127.0.0.1").unwrap(), ..RunSettings::default() };
    let (services, runner) = lf_server::services(
        &db,
        Arc::new(lf_model::OfflineProvider),
        Background::new(tokio::runtime::Handle::current()),
        KeySealer::new(Some(lf_server::SecretKey::generate().unwrap())),
        &runs,
    );
    std::mem::forget(db);
    (services, runner, outside().await)
}

fn mcp(r: &str, url: String, token: Option<&str>) -> NewConnection {
    NewConnection {
        provider: "mcp".into(),
        connection_ref: r.into(),
        settings: json!({"url": url, "timeout_secs": 2}).as_object().unwrap().clone(),
        secret: token.map_or_else(Secret::empty, |t| Secret::new(t.as_bytes().to_vec()).unwrap()),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn saving_lists_the_tools_and_modes_follow_the_rules() {
    let (services, _runner, base) = setup().await;
    let alice = LenserId::new();
    let saved =
        services.connections.add(&lenser(alice), mcp("outside", format!("{base}/secure"), Some(TOKEN))).await;
    assert_eq!(saved.expect("saved").provider.as_str(), "mcp");
    let s = server(&services, alice);
    let (listed, failed) = call(&s, "list_connection_tools", json!({"connection_ref": "outside"})).await;
    assert!(!failed, "{listed}");
    let modes: Vec<(&str, &str)> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["name"].as_str().unwrap(), t["mode"].as_str().unwrap()))
        .collect();
    let mut sorted = modes.clone();
    sorted.sort();
    assert_eq!(
        sorted,
        [("add", "off"), ("broken", "off"), ("echo", "off"), ("slow", "off"), ("wipe", "ask")]
    );
    let echo = listed["tools"].as_array().unwrap().iter().find(|t| t["name"] == "echo").unwrap();
    assert_eq!(echo["annotations"]["readOnlyHint"], true);
    assert_eq!(echo["input_schema"]["properties"]["text"]["type"], "string");

    let (set, failed) = call(
        &s,
        "set_connection_tool_mode",
        json!({"connection_ref": "outside", "tool": "echo", "mode": "on"}),
    )
    .await;
    assert!(!failed && set["mode"] == "on", "{set}");
    let (again, failed) = call(&s, "refresh_connection_tools", json!({"connection_ref": "outside"})).await;
    assert!(!failed, "{again}");
    let echo = again["tools"].as_array().unwrap().iter().find(|t| t["name"] == "echo").unwrap();
    assert_eq!(echo["mode"], "on", "a refresh keeps the modes set");

    // Another lenser: none of it exists.
    let bob = server(&services, LenserId::new());
    for (tool, args) in [
        ("list_connection_tools", json!({"connection_ref": "outside"})),
        ("refresh_connection_tools", json!({"connection_ref": "outside"})),
        ("set_connection_tool_mode", json!({"connection_ref": "outside", "tool": "echo", "mode": "on"})),
    ] {
        let (out, failed) = call(&bob, tool, args).await;
        assert!(failed, "{tool}: {out}");
        assert_eq!(out["code"], "NOT_FOUND", "{tool}: {out}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_is_not_an_answering_mcp_server_is_refused_and_nothing_saved() {
    let (services, _runner, base) = setup().await;
    let alice = LenserId::new();
    let dead = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/mcp", l.local_addr().unwrap())
    };
    let cases = [
        ("wrong-token", format!("{base}/secure"), Some("not-the-token"), "refused the credentials"),
        ("no-token", format!("{base}/secure"), None, "refused the credentials"),
        ("dead", dead, None, "gave no answer"),
        ("html", format!("{base}/html"), None, "does not look like an MCP server"),
        ("huge", format!("{base}/huge"), None, "gave no answer"),
    ];
    for (r, url, token, says) in cases {
        let e = services.connections.add(&lenser(alice), mcp(r, url, token)).await.expect_err(r);
        assert!(e.message().contains(says), "{r}: {}", e.message());
        assert!(
            !e.message().contains(TOKEN) && !e.message().contains("not-the-token"),
            "{r}: {}",
            e.message()
        );
    }
    assert!(services.connections.list(&lenser(alice)).await.unwrap().is_empty(), "nothing saved");
}

async fn ended(services: &Services, id: lf_workflow::run::RunId) -> Run {
    for _ in 0..1000 {
        let run = services.runs.store().load_run(id).await.unwrap();
        if run.status().is_final() {
            return run;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the run did not end");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workflow_chains_two_mcp_tool_steps() {
    let (services, runner, base) = setup().await;
    runner.start();
    let alice = LenserId::new();
    services.connections.add(&lenser(alice), mcp("outside", format!("{base}/mcp"), None)).await.unwrap();
    let s = server(&services, alice);
    for tool in ["echo", "add", "broken"] {
        let args = json!({"connection_ref": "outside", "tool": tool, "mode": "on"});
        assert!(!call(&s, "set_connection_tool_mode", args).await.1);
    }
    let step = |key: &str, config: Value| {
        json!({"key": key, "kind": "tool", "name": key, "node_type": "mcp_tool", "config": config,
               "connector": {"provider": "mcp", "connection_ref": "outside"}})
    };
    let blueprint = |second: Value| -> RawBlueprint {
        serde_json::from_value(json!({
            "title": "Outside tools",
            "steps": [
                {"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"},
                step("sum", json!({"tool": "add", "arguments": {"a": "[[a]]", "b": 2}})),
                second,
            ],
            "connections": [
                {"from_step": "start", "to_step": "sum", "input_parameter": "input"},
                {"from_step": "sum", "to_step": "say", "input_parameter": "input"}
            ]
        }))
        .unwrap()
    };
    let good = blueprint(step("say", json!({"tool": "echo", "arguments": {"text": "sum=[[input]]"}})));
    let created =
        services.workflow.create(&lenser(alice), NewWorkflow { blueprint: good, owner: None }).await;
    let wf = created.expect("created").workflow.id;
    let start = StartRun {
        workflow_id: Some(wf),
        inputs: json!({"a": 40}).as_object().unwrap().clone(),
        ..Default::default()
    };
    let id = services.runs.start(&lenser(alice), start).await.unwrap().run.id;
    let run = ended(&services, id).await;
    assert_eq!(run.status(), RunStatus::Completed, "{:#?}", run.state);
    let out = format!("{:?}", run.state);
    assert!(out.contains("sum=42"), "{out}");

    let bad = blueprint(step("say", json!({"tool": "broken", "arguments": {}})));
    let wf =
        services.workflow.create(&lenser(alice), NewWorkflow { blueprint: bad, owner: None }).await.unwrap();
    let start = StartRun {
        workflow_id: Some(wf.workflow.id),
        inputs: json!({"a": 1}).as_object().unwrap().clone(),
        ..Default::default()
    };
    let id = services.runs.start(&lenser(alice), start).await.unwrap().run.id;
    let run = ended(&services, id).await;
    assert_eq!(run.status(), RunStatus::Failed);
    let out = format!("{:?}", run.state);
    assert!(out.contains("the disk is on fire") && out.contains("tool_error"), "{out}");
}
