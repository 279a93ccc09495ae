//! No log level prints a secret: the built server, logging at trace with
//! sessions, is given a bearer token, shows a webhook secret once, runs a
//! step with a saved connection and asks a model through a profile on a
//! saved `openai_compatible` connection, and its log holds none of the four.

#[path = "common/process.rs"]
mod process;

use process::{Home, Request, Service, holds};
use serde_json::json;

const CANARY: &str = "canary-bearer-7f3c9e1d52a84b06";
const MODEL_CANARY: &str = "canary-model-key-5b21d8e0a4c9f713";

/// An OpenAI-compatible endpoint that answers only when it is sent the
/// model connection's key, so a completed step shows the key was used.
fn chat(r: &Request) -> process::Answer {
    let json = vec![("content-type".into(), "application/json".into())];
    if !r.head.to_ascii_lowercase().contains(&format!("authorization: bearer {MODEL_CANARY}")) {
        return (401, json, r#"{"error":{"message":"no key"}}"#.into());
    }
    let body = json!({"id": "c1", "object": "chat.completion", "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hi."}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}});
    (200, json, body.to_string())
}

fn ok(_: &Request) -> process::Answer {
    (200, vec![("content-type".into(), "application/json".into())], r#"{"ok":true}"#.into())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_secret_reaches_the_log_at_trace_level() {
    let home = Home::new();
    let service = Service::start(ok);
    let mut log = Vec::new();
    let trace = [("LENSERFIGHT_LOG", "trace")];
    home.admin(&["create-lenser", "--handle", "ops"], "a long password here\n", &trace, &mut log);
    let token = home.admin(&["issue-token", "--handle", "ops", "--scope", "write"], "", &trace, &mut log);
    let token = token.trim().to_owned();
    let url_setting = format!("url={}", service.url("/"));
    home.admin(
        &[
            "connection",
            "add",
            "--handle",
            "ops",
            "--provider",
            "http",
            "--ref",
            "api",
            "--setting",
            &url_setting,
        ],
        CANARY,
        &trace,
        &mut log,
    );

    let model = Service::start(chat);
    let base_url = format!("base_url={}", model.url("/v1"));
    home.admin(
        &[
            "connection",
            "add",
            "--handle",
            "ops",
            "--provider",
            "openai_compatible",
            "--ref",
            "llm",
            "--setting",
            &base_url,
        ],
        MODEL_CANARY,
        &trace,
        &mut log,
    );

    let served = home.serve(
        &["--sessions", "--toolsets", "default,model"],
        &[("LENSERFIGHT_LOG", "trace"), ("LENSERFIGHT_EGRESS_ALLOW", "127.0.0.1")],
    );
    let mut s = process::Session::open(&served.base, &token).await;
    let hooked = s
        .ok(
            "create_workflow",
            json!({"title": "Hooked", "steps": [
                {"key": "start", "kind": "trigger", "name": "Start", "node_type": "webhook_trigger"},
                {"key": "note", "kind": "tool", "name": "Note", "node_type": "logger", "config": {"message": "hi"}}
            ], "connections": [{"from_step": "start", "to_step": "note", "input_parameter": "input"}]}),
        )
        .await;
    let hook_secret = hooked["webhook"]["secret"].as_str().expect("shown once").to_owned();
    let fetch = s
        .ok(
            "create_workflow",
            json!({"title": "Fetch", "steps": [
                {"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"},
                {"key": "get", "kind": "tool", "name": "Get", "node_type": "http_request",
                 "config": {"url": service.url("/data")}, "connector": {"provider": "http", "connection_ref": "api"}}
            ], "connections": [{"from_step": "start", "to_step": "get", "input_parameter": "input"}]}),
        )
        .await;
    let run = s.run(fetch["id"].as_str().unwrap()).await;
    let status = s.ok("get_workflow_run_status", json!({"run_id": run})).await;
    assert_eq!(status["status"], "completed", "{status}");
    s.ok("create_model_profile", json!({"name": "mine", "endpoint": "connection:llm", "model": "m"})).await;
    let asked = s
        .ok(
            "create_workflow",
            json!({"title": "Ask", "steps": [
                {"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"},
                {"key": "ask", "kind": "tool", "name": "Ask", "node_type": "prompt_template",
                 "config": {"template": "Say hi.", "model": "mine"}}
            ], "connections": [{"from_step": "start", "to_step": "ask", "input_parameter": "input"}]}),
        )
        .await;
    let run = s.run(asked["id"].as_str().unwrap()).await;
    let status = s.ok("get_workflow_run_status", json!({"run_id": run})).await;
    assert_eq!(status["status"], "completed", "the profile's endpoint was sent its key: {status}");
    drop(s);
    log.extend(served.stop());

    let text = String::from_utf8_lossy(&log);
    assert!(text.contains(" TRACE "), "the log is at trace level");
    for (what, secret) in [
        ("the bearer token", token.as_str()),
        ("the webhook secret", &hook_secret),
        ("the connection's secret", CANARY),
        ("the model connection's key", MODEL_CANARY),
    ] {
        assert!(!holds(&log, secret), "{what} is in the log:\n{}", excerpt_around(&text, secret));
    }
}

/// The log's lines that hold `secret`, for the failure message.
fn excerpt_around(text: &str, secret: &str) -> String {
    text.lines()
        .filter(|l| l.contains(secret))
        .map(|l| lf_core::clip(l, 400).into_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

/// A workflow step that names a credential in a header or a query
/// parameter is refused when it is created or updated, pointing
/// at saved connections; one stored before the rule shows those values
/// redacted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credential_names_in_step_config_are_refused_by_rule() {
    let home = Home::new();
    let mut log = Vec::new();
    home.admin(&["create-lenser", "--handle", "ops"], "a long password here\n", &[], &mut log);
    let token = home.admin(&["issue-token", "--handle", "ops", "--scope", "write"], "", &[], &mut log);
    let served = home.serve(&["--sessions"], &[]);
    let mut s = process::Session::open(&served.base, token.trim()).await;
    let blueprint = |config: serde_json::Value| {
        json!({"title": "Fetch", "steps": [
            {"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"},
            {"key": "get", "kind": "tool", "name": "Get", "node_type": "http_request", "config": config}
        ], "connections": [{"from_step": "start", "to_step": "get", "input_parameter": "input"}]})
    };
    let url = "https://api.example.com/v1/items";
    let kept = s
        .ok("create_workflow", blueprint(json!({"url": url, "headers": {"X-Trace": "stored-value-41"}})))
        .await;
    let id = kept["id"].as_str().unwrap().to_owned();
    let mut refused = Vec::new();
    for name in ["X-API-Key", "Api-Key", "X-Auth-Token", "X-Access-Token", "Cookie", "Proxy-Authorization"] {
        refused.push(json!({"url": url, "headers": {"Accept": "application/json", name: "v"}}));
    }
    refused.push(json!({"url": format!("{url}?page=2&Access.Token=v")}));
    refused.push(json!({"url": url, "query": {"client_SECRET": "v"}}));
    refused.push(json!({"url": url, "params": {"X-Amz-Signature": "v"}}));
    for config in refused {
        for (tool, mut arguments) in
            [("create_workflow", blueprint(config.clone())), ("update_workflow", blueprint(config.clone()))]
        {
            if tool == "update_workflow" {
                arguments["workflow_id"] = json!(id);
                arguments.as_object_mut().unwrap().remove("title");
            }
            let result = s.call(tool, arguments).await;
            let text = result.to_string();
            let refused_here =
                result["isError"] == json!(true) || result["structuredContent"]["valid"] == json!(false);
            assert!(refused_here, "{tool} refuses {config}: {text}");
            assert!(text.contains("names a credential") && text.contains("connection"), "{tool}: {text}");
        }
    }

    // A version stored before the rule: its credential-named values are not shown.
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", home.database().display())).await.unwrap();
    sqlx::query("UPDATE workflow_nodes SET config = replace(config, 'X-Trace', 'X-Api-Key')")
        .execute(&pool)
        .await
        .unwrap();
    pool.close().await;
    let graph = s.ok("get_workflow_graph", json!({"workflow_id": id})).await.to_string();
    assert!(graph.contains("X-Api-Key") && graph.contains("[redacted]"), "{graph}");
    assert!(!graph.contains("stored-value-41"), "{graph}");
    drop(s);
    served.stop();
}
