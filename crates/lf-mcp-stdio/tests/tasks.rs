//! MCP's tasks extension (SEP-2663) over stdio, the runner running: a
//! session that declared the extension at `initialize`, and a 2026-07-28
//! request that declares it in its own `_meta`, get `run_workflow` as a
//! task and follow it with `tasks/get` to the run's result; a session that
//! did not declare it gets the run's result (`run_workflow` never takes
//! the direct path, whose answer could not be a task).

mod common;

use std::time::{Duration, Instant};

use common::{Client, LENSER, inline_meta};
use serde_json::{Value, json};

const TASKS: &str = "io.modelcontextprotocol/tasks";

/// A session of 2025-11-25 whose client declares `capabilities`.
async fn session(capabilities: Value) -> Client {
    let mut c = Client::start(Some(LENSER)).await;
    let init = c
        .request(0, "initialize", json!({"protocolVersion": "2025-11-25", "capabilities": capabilities, "clientInfo": {"name": "t", "version": "1"}}))
        .await;
    assert_eq!(init["result"]["capabilities"]["extensions"], json!({TASKS: {}}), "{init}");
    c.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    c
}

/// A workflow of a manual trigger and one extract_field step: its id.
async fn workflow(c: &mut Client) -> String {
    let made = c
        .request(1, "tools/call", json!({"name": "create_workflow", "arguments": {
            "title": "Pick",
            "steps": [
                {"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"},
                {"key": "pick", "kind": "tool", "name": "Pick", "node_type": "extract_field", "config": {"path": "n"}}
            ],
            "connections": [{"from_step": "start", "to_step": "pick", "input_parameter": "input"}]
        }}))
        .await;
    made["result"]["structuredContent"]["id"].as_str().unwrap_or_else(|| panic!("{made}")).to_owned()
}

/// Polls `tasks/get` (with `meta`, if any) until the task has ended.
async fn until_ended(c: &mut Client, task: &str, meta: Option<Value>) -> Value {
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut params = json!({"taskId": task});
    if let Some(meta) = meta {
        params["_meta"] = meta;
    }
    loop {
        let got = c.request(9, "tasks/get", params.clone()).await;
        let status = got["result"]["status"].as_str().unwrap_or_else(|| panic!("{got}"));
        if status != "working" {
            return got["result"].clone();
        }
        assert!(Instant::now() < deadline, "task {task} never ended: {got}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_client_of_the_extension_follows_a_run_as_a_task() {
    let mut c = session(json!({"extensions": {TASKS: {}}})).await;
    let wf = workflow(&mut c).await;
    let call = json!({"name": "run_workflow", "arguments": {"workflow_id": wf, "inputs": {"n": 5}}});
    let task = c.request(2, "tools/call", call).await;
    assert_eq!(task["result"]["resultType"], "task", "{task}");
    let id = task["result"]["taskId"].as_str().unwrap().to_owned();
    let done = until_ended(&mut c, &id, None).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["structuredContent"]["result"], 5, "{done}");
    assert_eq!(done["result"]["structuredContent"]["id"], id.as_str());

    // 2026-07-28: the request declares the extension itself.
    let mut meta = inline_meta();
    meta["io.modelcontextprotocol/clientCapabilities"] = json!({"extensions": {TASKS: {}}});
    let call =
        json!({"name": "run_workflow", "arguments": {"workflow_id": wf, "inputs": {"n": 6}}, "_meta": meta});
    let task = c.request(3, "tools/call", call).await;
    let id = task["result"]["taskId"].as_str().unwrap_or_else(|| panic!("{task}")).to_owned();
    let done = until_ended(&mut c, &id, Some(meta)).await;
    assert_eq!(done["result"]["structuredContent"]["result"], 6, "{done}");
}

#[tokio::test]
async fn a_client_that_did_not_declare_it_gets_the_run() {
    let mut c = session(json!({})).await;
    let wf = workflow(&mut c).await;
    let started =
        c.request(2, "tools/call", json!({"name": "run_workflow", "arguments": {"workflow_id": wf}})).await;
    let result = &started["result"];
    assert!(result.get("taskId").is_none() && result.get("resultType").is_none(), "{started}");
    let id = result["structuredContent"]["id"].as_str().unwrap_or_else(|| panic!("{started}"));
    let refused = c.request(3, "tasks/get", json!({"taskId": id})).await;
    assert_eq!(refused["error"]["code"], -32021, "{refused}");
}
