//! MCP's tasks extension (SEP-2663) over `POST /mcp` on real servers over
//! SQLite, their runners running, as a 2026-07-28 client speaks it (each
//! request declares its capabilities; `Mcp-Method` and `Mcp-Name` headers):
//! `run_workflow` answers with a task whose id is the run's, `tasks/get`
//! follows it to the run's result, `tasks/cancel` stops a waiting run,
//! another lenser neither sees nor cancels it, and a second server on the
//! same database file answers for it, also once the first has stopped.

mod common;

use std::time::{Duration, Instant};

use common::{Options, Server, call_tool, client};
use lf_core::Scopes;
use reqwest::StatusCode;
use serde_json::{Value, json};

const TASKS: &str = "io.modelcontextprotocol/tasks";

/// A 2026-07-28 client of one server, as one lenser.
struct Client<'a> {
    server: &'a Server,
    token: String,
    /// Whether its requests declare the tasks extension.
    tasks: bool,
}

impl Client<'_> {
    /// The JSON-RPC answer to `method` with `params` (HTTP 200).
    async fn request(&self, method: &str, params: Value) -> Value {
        let (status, answer) = self.exchange(method, params).await;
        assert_eq!(status, StatusCode::OK, "{method}: {answer}");
        answer
    }

    /// The HTTP status and JSON-RPC answer to `method` with `params`.
    async fn exchange(&self, method: &str, mut params: Value) -> (StatusCode, Value) {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities":
                if self.tasks { json!({"extensions": {TASKS: {}}}) } else { json!({}) }
        });
        let name = params.get("taskId").or_else(|| params.get("name")).and_then(Value::as_str);
        let mut request = client()
            .post(self.server.url("/mcp"))
            .bearer_auth(&self.token)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", method)
            .json(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}));
        if let Some(name) = name {
            request = request.header("mcp-name", name);
        }
        let response = request.send().await.unwrap();
        (response.status(), response.json().await.unwrap())
    }

    async fn result(&self, method: &str, params: Value) -> Value {
        let answer = self.request(method, params).await;
        assert!(answer.get("error").is_none(), "{method}: {answer}");
        answer["result"].clone()
    }

    async fn call(&self, tool: &str, arguments: Value) -> Value {
        self.result("tools/call", json!({"name": tool, "arguments": arguments})).await
    }

    /// Starts a run of `workflow` on `inputs` as a task: its id.
    async fn start(&self, workflow: &str, inputs: Value) -> String {
        let task = self.call("run_workflow", json!({"workflow_id": workflow, "inputs": inputs})).await;
        assert_eq!(task["resultType"], "task", "{task}");
        task["taskId"].as_str().unwrap().to_owned()
    }

    async fn get(&self, task: &str) -> Value {
        self.result("tasks/get", json!({"taskId": task})).await
    }

    /// Polls `tasks/get` until the task is `status` (ten seconds at most).
    async fn until(&self, task: &str, status: &str) -> Value {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let got = self.get(task).await;
            if got["status"] == status {
                return got;
            }
            assert!(Instant::now() < deadline, "task {task} never got {status}: {got}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// A workflow of the token's lenser: a manual trigger, then `step`.
async fn workflow(server: &Server, token: &str, step: Value) -> String {
    let args = json!({
        "title": "Flow", "visibility": "private",
        "steps": [{"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"}, step],
        "connections": [{"from_step": "start", "to_step": step["key"], "input_parameter": "input"}]
    });
    let made = call_tool(server, Some(token), "create_workflow", args).await;
    made["structuredContent"]["id"].as_str().unwrap_or_else(|| panic!("{made}")).to_owned()
}

fn quick() -> Value {
    json!({"key": "pick", "kind": "tool", "name": "Pick", "node_type": "extract_field", "config": {"path": "n"}})
}

fn waiting() -> Value {
    json!({"key": "wait", "kind": "tool", "name": "Wait", "node_type": "wait_delay", "config": {"delay_ms": 600_000}})
}

#[tokio::test]
async fn a_task_is_followed_to_its_result_and_only_its_reader_sees_it() {
    let s = Server::with(Options { lensers: vec!["alice", "bob"], ..Options::default() }).await;
    let token = s.token("alice", Scopes::READ_WRITE).await;
    let alice = Client { server: &s, token: token.clone(), tasks: true };
    let bob = Client { server: &s, token: s.token("bob", Scopes::READ_WRITE).await, tasks: true };
    let wf = workflow(&s, &token, quick()).await;

    let found = alice.result("server/discover", json!({})).await;
    assert_eq!(found["capabilities"]["extensions"][TASKS], json!({}), "{found}");
    let task = alice.call("run_workflow", json!({"workflow_id": wf, "inputs": {"n": 7}})).await;
    assert_eq!(task["resultType"], "task", "{task}");
    let id = task["taskId"].as_str().unwrap().to_owned();
    let done = alice.until(&id, "completed").await;
    let result = &done["result"];
    assert_eq!(
        (&result["isError"], &result["structuredContent"]["result"]),
        (&json!(false), &json!(7)),
        "{done}"
    );
    let status = alice.call("get_workflow_run_status", json!({"run_id": id})).await;
    assert_eq!(
        result["structuredContent"], status["structuredContent"],
        "the task's result is the run's status"
    );

    // Bob cannot read alice's private workflow: her task is unknown to him.
    for (method, params) in [("tasks/get", json!({"taskId": id})), ("tasks/cancel", json!({"taskId": id}))] {
        let refused = bob.request(method, params).await;
        assert_eq!(refused["error"]["code"], -32602, "{method}: {refused}");
        assert!(
            refused["error"]["message"].as_str().unwrap().contains("was not found, or you cannot see it")
        );
    }

    // A client that does not declare the extension gets the run's result,
    // on the inline era's path and on the direct path alike.
    let plain = Client { tasks: false, ..alice };
    let started = plain.call("run_workflow", json!({"workflow_id": wf, "inputs": {"n": 1}})).await;
    assert_eq!(
        (&started["resultType"], &started["structuredContent"]["status"]),
        (&json!("complete"), &json!("pending"))
    );
    assert!(started.get("taskId").is_none(), "{started}");
    // SEP-2575: a missing client capability is HTTP 400.
    let (status, refused) = plain.exchange("tasks/get", json!({"taskId": id})).await;
    assert_eq!((status, &refused["error"]["code"]), (StatusCode::BAD_REQUEST, &json!(-32021)), "{refused}");
    let direct = call_tool(&s, Some(&token), "run_workflow", json!({"workflow_id": wf})).await;
    assert_eq!(direct["structuredContent"]["status"], "pending", "{direct}");
    s.stop().await;
}

#[tokio::test]
async fn a_waiting_task_is_cancelled() {
    let s = Server::with(Options { lensers: vec!["alice", "bob"], ..Options::default() }).await;
    let token = s.token("alice", Scopes::READ_WRITE).await;
    let alice = Client { server: &s, token: token.clone(), tasks: true };
    let wf = workflow(&s, &token, waiting()).await;
    let id = alice.start(&wf, json!({})).await;
    let working = alice.get(&id).await;
    assert_eq!(
        (&working["status"], &working["pollIntervalMs"]),
        (&json!("working"), &json!(1_000)),
        "{working}"
    );
    let ack = alice.result("tasks/cancel", json!({"taskId": id})).await;
    assert_eq!(ack, json!({"resultType": "complete"}));
    let cancelled = alice.until(&id, "cancelled").await;
    assert!(cancelled.get("result").is_none(), "{cancelled}");
    let logs = alice.call("get_workflow_run_logs", json!({"run_id": id})).await;
    assert_eq!(logs["structuredContent"]["run"]["status"], "cancelled", "{logs}");
    // Cancelling it again is acknowledged alike.
    assert_eq!(alice.result("tasks/cancel", json!({"taskId": id})).await, ack);
    s.stop().await;
}

/// The task is the run's row: a second server on the same SQLite file
/// answers for a task the first made, cancels it, and after the first
/// stops, and a third started after both, still knows how it ended.
#[tokio::test]
async fn another_server_on_the_same_database_answers_for_a_task() {
    // The file outlives each server (a server removes a file it made).
    let dir = tempfile::tempdir().unwrap();
    let database_url = Some(format!("sqlite:{}", dir.path().join("shared.db").display()));
    let first = Server::with(Options {
        lensers: vec!["alice"],
        database_url: database_url.clone(),
        ..Options::default()
    })
    .await;
    let token = first.token("alice", Scopes::READ_WRITE).await;
    let wait = workflow(&first, &token, waiting()).await;
    let quick = workflow(&first, &token, quick()).await;
    let on_first = Client { server: &first, token: token.clone(), tasks: true };
    let waiting = on_first.start(&wait, json!({})).await;
    let done = on_first.start(&quick, json!({"n": 3})).await;

    let second = Server::with(Options { database_url: database_url.clone(), ..Options::default() }).await;
    let on_second = Client { server: &second, token: token.clone(), tasks: true };
    assert_eq!(on_second.get(&waiting).await["status"], "working");
    on_second.until(&done, "completed").await;
    assert_eq!(on_second.result("tasks/cancel", json!({"taskId": waiting})).await["resultType"], "complete");
    on_second.until(&waiting, "cancelled").await;
    on_first.until(&waiting, "cancelled").await;
    first.stop().await;
    second.stop().await;

    let third = Server::with(Options { database_url, ..Options::default() }).await;
    let on_third = Client { server: &third, token, tasks: true };
    assert_eq!(on_third.get(&waiting).await["status"], "cancelled");
    let completed = on_third.get(&done).await;
    assert_eq!((&completed["status"], &completed["result"]["isError"]), (&json!("completed"), &json!(false)));
    third.stop().await;
}
