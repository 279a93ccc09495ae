//! Outside MCP servers as connections (provider `mcp`), on the servers' own
//! wiring (SQLite in memory, the real runner, the egress guard opened for
//! loopback): an rmcp server on 127.0.0.1 with `echo`, `add`, a slow tool,
//! a failing tool and a destructive one, also behind a bearer token.
//! Saving lists its tools; a workflow of two `mcp_tool` steps chains their
//! results; a wrong token, a dead server, a server that is not MCP and one
//! that answers 10 MB are refused with what went wrong and nothing saved;
//! another lenser sees and uses none of it.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
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

    #[tool(description = "Answers 1.5 MB.")]
    fn big(&self) -> String {
        "x".repeat(1_500_000)
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Outside {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

/// `/mcp`'s request, after counting it in `counts` if it is an
/// `initialize` (the first) or a DELETE ending a session (the second).
async fn counted(counts: &[AtomicUsize; 2], r: Request) -> Request {
    let (parts, body) = r.into_parts();
    let bytes = axum::body::to_bytes(body, usize::MAX).await.unwrap();
    if serde_json::from_slice::<Value>(&bytes).is_ok_and(|m| m["method"] == "initialize") {
        counts[0].fetch_add(1, Ordering::SeqCst);
    }
    if parts.method == axum::http::Method::DELETE {
        counts[1].fetch_add(1, Ordering::SeqCst);
    }
    Request::from_parts(parts, axum::body::Body::from(bytes))
}

/// A server of 2026-07-28's per-request envelope, by hand: no
/// `initialize` (method not found); every request must carry the version
/// in `params._meta` and the `Mcp-Method` header (and a call `Mcp-Name`),
/// else it is refused. One tool, `shout`.
async fn envelope(headers: axum::http::HeaderMap, body: axum::body::Bytes) -> axum::Json<Value> {
    let m: Value = serde_json::from_slice(&body).unwrap();
    let (id, method) = (m["id"].clone(), m["method"].as_str().unwrap_or_default());
    let header = |k: &str| headers.get(k).and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
    let error = |code: i64, message: &str| json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
    if method == "initialize" {
        return axum::Json(error(-32601, "Method not found"));
    }
    let meta = &m["params"]["_meta"];
    if meta["io.modelcontextprotocol/protocolVersion"] != "2026-07-28"
        || header("mcp-method") != method
        || header("mcp-protocol-version") != "2026-07-28"
    {
        return axum::Json(error(-32600, "no 2026-07-28 envelope"));
    }
    let result = match method {
        "tools/list" => json!({"tools": [{
            "name": "shout", "description": "Says the text louder.",
            "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
            "annotations": {"readOnlyHint": true}}]}),
        "tools/call" if header("mcp-name") == "shout" => {
            let loud = m["params"]["arguments"]["text"].as_str().unwrap_or_default().to_uppercase();
            json!({"content": [{"type": "text", "text": loud}], "structuredContent": {"shouted": loud}})
        }
        _ => return axum::Json(error(-32602, "no such tool")),
    };
    axum::Json(json!({"jsonrpc": "2.0", "id": id, "result": result}))
}

/// Serves the outside server on 127.0.0.1: `/mcp` open (its handshakes
/// counted), `/secure` behind [`TOKEN`], `/html` a web page, `/huge`
/// 10 MB, `/envelope` a server of the per-request envelope. Its address,
/// and the counts of `/mcp`'s handshakes and of the sessions ended.
async fn outside() -> (String, Arc<[AtomicUsize; 2]>) {
    let config = StreamableHttpServerConfig::default().disable_allowed_hosts().disable_allowed_origins();
    let service = StreamableHttpService::new(
        || Ok(Outside { tool_router: Outside::tool_router() }),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let open = service.clone();
    let handshakes = Arc::new([AtomicUsize::new(0), AtomicUsize::new(0)]);
    let counter = handshakes.clone();
    let app = Router::new()
        .route(
            "/mcp",
            any(move |r: Request| {
                let (open, counter) = (open.clone(), counter.clone());
                async move { open.handle(counted(&counter, r).await).await.into_response() }
            }),
        )
        .route("/envelope", axum::routing::post(envelope))
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
    (format!("http://{addr}"), handshakes)
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

/// The server's wiring and the outside server.
struct Stack {
    services: Arc<Services>,
    runner: lf_runner::Runner,
    base: String,
    /// `/mcp`'s handshakes and the sessions its clients ended.
    handshakes: Arc<[AtomicUsize; 2]>,
}

async fn setup() -> Stack {
    setup_with(Arc::new(lf_model::OfflineProvider)).await
}

async fn setup_with(model: Arc<dyn lf_core::ModelProvider>) -> Stack {
    let db = Database::connect("sqlite::memory:").await.unwrap();
    let runs =
        RunSettings { egress_allow: lf_egress::Allow::parse("127.0.0.1").unwrap(), ..RunSettings::default() };
    let (services, runner) = lf_server::services(
        &db,
        model,
        Background::new(tokio::runtime::Handle::current()),
        KeySealer::new(Some(lf_server::SecretKey::generate().unwrap())),
        &runs,
    );
    std::mem::forget(db);
    let (base, handshakes) = outside().await;
    Stack { services, runner, base, handshakes }
}

fn mcp(r: &str, url: String, token: Option<&str>) -> NewConnection {
    with_settings(r, json!({"url": url, "timeout_secs": 2}), token)
}

fn with_settings(r: &str, settings: Value, token: Option<&str>) -> NewConnection {
    NewConnection {
        provider: "mcp".into(),
        connection_ref: r.into(),
        settings: settings.as_object().unwrap().clone(),
        secret: token.map_or_else(Secret::empty, |t| Secret::new(t.as_bytes().to_vec()).unwrap()),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn saving_lists_the_tools_and_modes_follow_the_rules() {
    let Stack { services, base, .. } = setup().await;
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
        [
            ("add", "off"),
            ("big", "off"),
            ("broken", "off"),
            ("echo", "off"),
            ("slow", "off"),
            ("wipe", "ask")
        ]
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
    let Stack { services, base, .. } = setup().await;
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
    let Stack { services, runner, base, handshakes } = setup().await;
    runner.start();
    let (alice, s) = alice_outside(&services, &base).await;
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
    let before = handshakes.each_ref().map(|c| c.load(Ordering::SeqCst));
    let id = services.runs.start(&lenser(alice), start).await.unwrap().run.id;
    let run = ended(&services, id).await;
    assert_eq!(run.status(), RunStatus::Completed, "{:#?}", run.state);
    let out = format!("{:?}", run.state);
    assert!(out.contains("sum=42"), "{out}");
    assert_eq!(
        handshakes[0].load(Ordering::SeqCst) - before[0],
        2,
        "each call opens a session of its own: one handshake per step"
    );
    // Each session is ended once its call is answered (in the background).
    for _ in 0..200 {
        if handshakes[1].load(Ordering::SeqCst) - before[1] >= 2 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    assert_eq!(handshakes[1].load(Ordering::SeqCst) - before[1], 2, "each session ended with a DELETE");

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

/// A workflow of `owner`'s: its trigger, then one `mcp_tool` step calling
/// `tool` of connection `r` with `arguments`.
fn one_step(r: &str, tool: &str, arguments: Value) -> RawBlueprint {
    serde_json::from_value(json!({
        "title": "One outside tool",
        "steps": [
            {"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"},
            {"key": "call", "kind": "tool", "name": "Call", "node_type": "mcp_tool",
             "config": {"tool": tool, "arguments": arguments},
             "connector": {"provider": "mcp", "connection_ref": r}},
        ],
        "connections": [{"from_step": "start", "to_step": "call", "input_parameter": "input"}]
    }))
    .unwrap()
}

/// The output of a run's last step (its slots are in node order).
fn last_output(run: &Run) -> Value {
    run.state.slots.values().last().and_then(|n| n.output.clone()).expect("the last step's output")
}

/// Creates `blueprint` as `owner`'s, runs it and waits for its end.
async fn run_once(services: &Services, owner: LenserId, blueprint: RawBlueprint) -> Run {
    let created = services.workflow.create(&lenser(owner), NewWorkflow { blueprint, owner: None }).await;
    let start = StartRun { workflow_id: Some(created.expect("created").workflow.id), ..Default::default() };
    let id = services.runs.start(&lenser(owner), start).await.unwrap().run.id;
    ended(services, id).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_ends_at_its_connections_timeout_and_a_long_result_is_cut() {
    let Stack { services, runner, base, .. } = setup().await;
    runner.start();
    let alice = LenserId::new();
    let quick = with_settings(
        "quick",
        json!({"url": format!("{base}/mcp"), "timeout_secs": 1, "new_tools": "on"}),
        None,
    );
    services.connections.add(&lenser(alice), quick).await.unwrap();

    let run = run_once(&services, alice, one_step("quick", "slow", json!({}))).await;
    assert_eq!(run.status(), RunStatus::Failed);
    let out = format!("{:?}", run.state);
    assert!(out.contains("timeout") && out.contains("within 1 s"), "{out}");

    let run = run_once(&services, alice, one_step("quick", "big", json!({}))).await;
    assert_eq!(run.status(), RunStatus::Completed, "{:#?}", run.state);
    let output = last_output(&run);
    let text = output.as_str().expect("the text");
    assert!(text.len() < 1_100_000, "{}", text.len());
    assert!(
        text.ends_with("[cut by LenserFight: the result was 1500000 bytes; the first 1048576 are kept]"),
        "{}",
        &text[text.len() - 120..]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_of_the_per_request_envelope_is_listed_and_called() {
    let Stack { services, runner, base, .. } = setup().await;
    runner.start();
    let alice = LenserId::new();
    let settings = json!({"url": format!("{base}/envelope"), "timeout_secs": 2, "new_tools": "on"});
    services.connections.add(&lenser(alice), with_settings("loud", settings, None)).await.expect("saved");
    let (listed, failed) =
        call(&server(&services, alice), "list_connection_tools", json!({"connection_ref": "loud"})).await;
    assert!(!failed, "{listed}");
    assert_eq!(listed["tools"][0]["name"], "shout");
    assert_eq!(listed["tools"][0]["mode"], "on");

    let run = run_once(&services, alice, one_step("loud", "shout", json!({"text": "hi"}))).await;
    assert_eq!(run.status(), RunStatus::Completed, "{:#?}", run.state);
    let output = last_output(&run);
    assert_eq!(output, json!({"shouted": "HI"}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn validation_names_an_unknown_connection_tool_or_an_off_one() {
    let Stack { services, base, .. } = setup().await;
    let (alice, s) = alice_outside(&services, &base).await;
    let on = json!({"connection_ref": "outside", "tool": "echo", "mode": "on"});
    assert!(!call(&s, "set_connection_tool_mode", on).await.1);
    let owner = lenser(alice);
    let create = |blueprint| services.workflow.create(&owner, NewWorkflow { blueprint, owner: None });

    let e = create(one_step("outside", "nope", json!({}))).await.expect_err("an unknown tool");
    assert!(e.message().contains("\"nope\", which connection \"outside\" does not have"), "{}", e.message());
    assert!(format!("{:?}", e.details()).contains("Its tools are: "), "{:?}", e.details());
    let e = create(one_step("outside", "add", json!({}))).await.expect_err("an off tool");
    assert!(e.message().contains("which is off"), "{}", e.message());
    assert!(format!("{:?}", e.details()).contains("set_connection_tool_mode"), "{:?}", e.details());
    let e = create(one_step("elsewhere", "echo", json!({}))).await.expect_err("an unknown connection");
    assert!(e.message().contains("\"elsewhere\" (mcp), which is not saved"), "{}", e.message());
    let bob = lenser(LenserId::new());
    let theirs = NewWorkflow { blueprint: one_step("outside", "echo", json!({})), owner: None };
    let e = services.workflow.create(&bob, theirs).await.expect_err("alice's connection is not bob's");
    assert!(e.message().contains("\"outside\" (mcp), which is not saved"), "{}", e.message());

    // Valid while the tool is on; turned off, validate_workflow says so.
    let wf = create(one_step("outside", "echo", json!({"text": "hi"}))).await.expect("valid").workflow.id;
    let off = json!({"connection_ref": "outside", "tool": "echo", "mode": "off"});
    assert!(!call(&s, "set_connection_tool_mode", off).await.1);
    let (checked, failed) = call(&s, "validate_workflow", json!({"workflow_id": wf.to_string()})).await;
    assert!(!failed, "{checked}");
    assert_eq!(checked["valid"], false, "{checked}");
    let first = &checked["errors"][0];
    assert_eq!(
        (first["code"].as_str(), first["field"].as_str()),
        (Some("CONFIG_INVALID"), Some("tool")),
        "{checked}"
    );
}

/// A new lenser with her connection `outside` to `/mcp` saved, and her
/// session of this server.
async fn alice_outside(services: &Arc<Services>, base: &str) -> (LenserId, LfServer) {
    let alice = LenserId::new();
    services.connections.add(&lenser(alice), mcp("outside", format!("{base}/mcp"), None)).await.unwrap();
    (alice, server(services, alice))
}

/// An AI Lenser of `owner`'s.
async fn agent_of(services: &Services, owner: LenserId, handle: &str) -> lf_agent::Agent {
    let new = lf_agent::NewAgent::new(
        lf_agent::AgentHandle::parse(handle).unwrap(),
        lf_agent::DisplayName::parse("Outsider").unwrap(),
    );
    services.agents.create(&lenser(owner), new).await.unwrap()
}

/// Sets the modes of tools of alice's connection `outside`.
async fn modes(s: &LfServer, modes: &[(&str, &str)]) {
    for (tool, mode) in modes {
        let args = json!({"connection_ref": "outside", "tool": tool, "mode": mode});
        let (out, failed) = call(s, "set_connection_tool_mode", args).await;
        assert!(!failed, "{out}");
    }
}

/// The name an agent's model is offered for the tool `tool` of `outside`.
fn offered(tool: &str) -> String {
    lf_tools::agent_calls::mcp_tool_ref(&format!("mcp:outside/{tool}"), false).name.as_str().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_is_granted_and_calls_its_owners_outside_tools() {
    let Stack { services, base, .. } = setup().await;
    let (alice, s) = alice_outside(&services, &base).await;
    modes(&s, &[("echo", "on"), ("broken", "on")]).await;
    let a = agent_of(&services, alice, "outsider").await;
    let id = a.id.to_string();
    let assign = |tool: &str, confirm: bool| json!({"ai_lenser_id": id, "tool_id": tool, "confirm": confirm});
    let act =
        |key: &str, metadata: Value| json!({"ai_lenser_id": id, "action_type": key, "metadata": metadata});

    let (granted, failed) = call(&s, "assign_agent_tool", assign("mcp:outside/echo", false)).await;
    assert!(!failed, "{granted}");
    assert_eq!(
        (granted["group"].as_str(), granted["name"].as_str()),
        (Some("mcp"), Some(offered("echo").as_str()))
    );
    for (key, code) in [
        ("mcp:outside/add", "INVALID_ARGUMENT"),
        ("mcp:outside/nope", "NOT_FOUND"),
        ("mcp:elsewhere/echo", "NOT_FOUND"),
        ("mcp:outside", "INVALID_ARGUMENT"),
        ("mcp:outside/wipe", "CONFIRMATION_REQUIRED"),
    ] {
        let (out, failed) = call(&s, "assign_agent_tool", assign(key, false)).await;
        assert!(failed && out["code"] == code, "{key}: {out}");
    }
    let (_, failed) = call(&s, "assign_agent_tool", assign("mcp:outside/wipe", true)).await;
    assert!(!failed, "a destructive tool is granted with confirm");

    let (done, failed) =
        call(&s, "run_agent_action", act("mcp:outside/echo", json!({"text": "hello"}))).await;
    assert!(!failed, "{done}");
    assert_eq!((&done["result"], done["tool"].as_str()), (&json!("hello"), Some(offered("echo").as_str())));
    let (out, failed) = call(&s, "run_agent_action", act("mcp:outside/echo", json!({"text": 3}))).await;
    assert!(failed && out["code"] == "INVALID_ARGUMENT", "arguments are checked against the schema: {out}");
    let (out, failed) = call(&s, "run_agent_action", act("mcp:outside/broken", json!({}))).await;
    assert!(failed && out["code"] == "PERMISSION_DENIED", "not granted: {out}");
    // An ask tool (destructive, so ask by default) runs when its owner calls it.
    let (out, failed) = call(&s, "run_agent_action", act("mcp:outside/wipe", json!({}))).await;
    assert!(!failed && out["result"] == "wiped", "{out}");
    modes(&s, &[("echo", "off")]).await;
    let (out, failed) = call(&s, "run_agent_action", act("mcp:outside/echo", json!({"text": "hi"}))).await;
    assert!(failed && out["code"] == "PERMISSION_DENIED", "granted but off: {out}");
    assert!(out["message"].as_str().unwrap().contains("is off"), "{out}");
    let (log, _) = call(&s, "list_agent_actions", json!({"ai_lenser_id": id})).await;
    let outcomes: Vec<&str> =
        log["items"].as_array().unwrap().iter().map(|e| e["outcome"].as_str().unwrap()).collect();
    assert_eq!(outcomes, ["failed", "succeeded", "refused", "failed", "succeeded"], "newest first: {log}");

    // Another lenser: neither the agent nor the connection is theirs.
    let bob_id = LenserId::new();
    let bob = server(&services, bob_id);
    let (out, _) = call(&bob, "assign_agent_tool", assign("mcp:outside/echo", false)).await;
    assert_eq!(out["code"], "NOT_FOUND", "{out}");
    let (out, _) = call(&bob, "run_agent_action", act("mcp:outside/wipe", json!({}))).await;
    assert_eq!(out["code"], "NOT_FOUND", "{out}");
    let his = agent_of(&services, bob_id, "bobs_own").await;
    let args = json!({"ai_lenser_id": his.id.to_string(), "tool_id": "mcp:outside/wipe", "confirm": true});
    let (out, _) = call(&bob, "assign_agent_tool", args).await;
    assert_eq!(out["code"], "NOT_FOUND", "alice's connection is not his agent's owner's: {out}");
}

#[allow(dead_code)] // Only the model and its answers are used here.
#[path = "../../lf-runner/tests/support/scripted.rs"]
mod scripted;

/// A reply of the scripted model calling `calls` (id, tool, arguments).
fn calling(calls: &[(&str, &str, Value)]) -> Value {
    let calls: Vec<Value> = calls
        .iter()
        .map(|(id, name, args)| json!({"id": id, "type": "function", "function": {"name": name, "arguments": args.to_string()}}))
        .collect();
    json!({"model": "agent-model", "choices": [{"message": {"role": "assistant", "content": "Working.", "tool_calls": calls}}],
        "usage": {"total_tokens": 100}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agents_loop_calls_outside_tools_and_waits_for_approval_of_an_ask_one() {
    let (model, model_base) = scripted::Model::start(vec![
        calling(&[
            ("e1", &offered("echo"), json!({"text": "hi"})),
            ("b1", &offered("broken"), json!({})),
            ("a1", &offered("add"), json!({"a": 1, "b": 2})),
        ]),
        calling(&[("w1", &offered("wipe"), json!({}))]),
        scripted::answer("All done.", 50),
    ])
    .await;
    let Stack { services, runner, base, .. } = setup_with(Arc::new(scripted::client(&model_base))).await;
    runner.start();
    let (alice, s) = alice_outside(&services, &base).await;
    modes(&s, &[("echo", "on"), ("broken", "on"), ("add", "on")]).await;
    let a = agent_of(&services, alice, "looper").await;
    for (tool, confirm) in [("echo", false), ("broken", false), ("wipe", true)] {
        let args = json!({"ai_lenser_id": a.id.to_string(), "tool_id": format!("mcp:outside/{tool}"), "confirm": confirm});
        assert!(!call(&s, "assign_agent_tool", args).await.1, "{tool}");
    }
    // Granted, then turned off.
    modes(&s, &[("broken", "off")]).await;

    let blueprint: RawBlueprint = serde_json::from_value(json!({
        "title": "Agent outside",
        "steps": [
            {"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"},
            {"key": "agent", "kind": "tool", "name": "Agent", "node_type": "agent_execute",
             "config": {"ai_lenser_id": a.id.to_string(), "prompt": "Use the outside tools."}},
        ],
        "connections": [{"from_step": "start", "to_step": "agent", "input_parameter": "input"}]
    }))
    .unwrap();
    let wf = services.workflow.create(&lenser(alice), NewWorkflow { blueprint, owner: None }).await.unwrap();
    let team = lf_agent::NewTeamRun {
        agent: a.id,
        workflow_id: wf.workflow.id,
        inputs: lf_agent::TeamInputs::new(json!({"topic": "x"}).as_object().unwrap().clone()).unwrap(),
        policy: lf_agent::DelegationPolicy::Auto,
        parent: None,
    };
    let svc = Principal::Service { acting_as: Some(alice) };
    let team = services.agents.start_team_run(&svc, team).await.unwrap().run.id;
    let agent_id = a.id;
    let until = |status: lf_agent::TeamRunStatus| {
        let services = services.clone();
        async move {
            for _ in 0..1000 {
                let run = services.agents.get_team_run(&lenser(alice), agent_id, team).await.unwrap();
                if run.status == status {
                    return run;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            panic!("the team run never reached {status:?}");
        }
    };
    until(lf_agent::TeamRunStatus::AwaitingApproval).await;
    assert_eq!(model.asked(), 2, "the wipe waits for approval; the model is not asked again");
    let tools: Vec<Value> = model.seen.lock().unwrap()[0]["tools"].as_array().unwrap().clone();
    let echo = tools.iter().find(|t| t["function"]["name"] == offered("echo")).expect("echo is offered");
    assert!(echo["function"]["description"].as_str().unwrap().starts_with("Says the text back."), "{echo}");
    assert_eq!(echo["function"]["parameters"]["properties"]["text"]["type"], "string");
    let first = model.results(1);
    assert_eq!(first[0], ("e1".to_owned(), json!("hi")));
    assert!(first[1].1["message"].as_str().unwrap().contains("is off"), "{first:?}");
    assert!(first[2].1["message"].as_str().unwrap().contains("not a tool granted"), "{first:?}");

    services.agents.decide_approval(&lenser(alice), a.id, team, true, None).await.unwrap();
    until(lf_agent::TeamRunStatus::Completed).await;
    let last = model.results(2);
    assert_eq!(last.last(), Some(&("w1".to_owned(), json!("wiped"))), "approved, it ran: {last:?}");
}
