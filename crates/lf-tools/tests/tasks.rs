//! MCP's tasks extension (SEP-2663) through rmcp's service, as a client
//! sees it: JSON-RPC lines over an in-process pipe, in a 2025-11-25 session
//! that declared the extension at `initialize` and in 2026-07-28 requests
//! that declare it in their own `_meta`, for two lensers on one set of
//! memory stores. No runner: the test records a run's end in the run
//! store as a runner would. A task is a run: its id is the run's, and
//! `tasks/get` and the run tools tell the same story.

use lf_core::{Clock, LenserId, Principal, Scopes, SystemClock};
use lf_tools::CatalogOptions;
use lf_tools::mcp::Classified;
use lf_workflow::engine::{RunError, RunState, RunStatus};
use lf_workflow::run::RunId;
use rmcp::model::ProtocolVersion;
use serde_json::{Value, json};

mod common;
use common::wire::Wire;
use common::{World, err, ok, small_workflow};

const TASKS: &str = "io.modelcontextprotocol/tasks";

/// What a client declares: the tasks extension, or nothing.
fn declared(tasks: bool) -> Value {
    if tasks { json!({"extensions": {TASKS: {}}}) } else { json!({}) }
}

impl Wire {
    async fn call(&mut self, tool: &str, arguments: Value) -> Value {
        self.result("tools/call", json!({"name": tool, "arguments": arguments})).await
    }

    async fn get(&mut self, task: &str) -> Value {
        self.result("tasks/get", json!({"taskId": task})).await
    }
}

impl World {
    /// A session of `who` in protocol `version`, declaring the extension or not.
    async fn open(&self, who: LenserId, version: &str, tasks: bool) -> Wire {
        Wire::declaring(self.as_(who), version, declared(tasks)).await
    }

    /// Records that run `id` ended as `status`, as its runner would.
    async fn end(&self, id: &str, status: RunStatus, result: Option<Value>, error: Option<RunError>) {
        let mut state = RunState::new(json!({}), Default::default());
        state.status = status;
        let started = SystemClock.now();
        state.started_at = Some(started);
        state.finished_at = Some(started.plus_micros(9_000_000));
        state.result = result;
        state.error = error;
        self.record(id, state, Vec::new()).await
    }
}

#[track_caller]
fn s(v: &Value) -> &str {
    v.as_str().unwrap_or_else(|| panic!("not a string: {v}"))
}

/// What get_workflow_run_status answers of `run` for `who`.
async fn status_of(w: &World, who: LenserId, run: &str) -> Value {
    ok(&w.as_(who), "get_workflow_run_status", json!({"run_id": run})).await
}

#[tokio::test]
async fn the_extension_is_declared_and_gates_its_methods() {
    let w = World::new();
    let wf = small_workflow(&w.as_(w.alice), "Flow", "private").await;
    for version in ["2025-11-25", "2026-07-28"] {
        let mut c = w.open(w.alice, version, false).await;
        let declared = &c.server_capabilities;
        assert_eq!(declared["extensions"], json!({TASKS: {}}), "{declared}");
        assert!(declared.get("tasks").is_none(), "no 2025-11-25 tasks capability: {declared}");
        // A client that did not declare the extension gets the run's result.
        let started = c.call("run_workflow", json!({"workflow_id": wf})).await;
        assert!(started.get("taskId").is_none() && started["resultType"] != "task", "{started}");
        assert_eq!(started["structuredContent"]["status"], "pending", "{started}");
        let id = s(&started["structuredContent"]["id"]).to_owned();
        for (method, params) in [
            ("tasks/get", json!({"taskId": id})),
            ("tasks/cancel", json!({"taskId": id})),
            ("tasks/update", json!({"taskId": id, "inputResponses": {}})),
        ] {
            let refused = c.error(method, params).await;
            assert_eq!(refused["code"], -32021, "{method}: {refused}");
            assert_eq!(
                refused["data"]["requiredCapabilities"]["extensions"],
                json!({TASKS: {}}),
                "{refused}"
            );
        }
    }
    let mut c = w.open(w.alice, "2026-07-28", true).await;
    for removed in ["tasks/result", "tasks/list"] {
        assert_eq!(c.error(removed, json!({"taskId": "x"})).await["code"], -32601, "{removed}");
    }

    // A server without the Workflow group has no runs to offer as tasks.
    let lenses_only =
        CatalogOptions { toolsets: Some(vec![&lf_tools::groups::lens::GROUP]), ..CatalogOptions::default() };
    let server = w.server_with(Principal::Lenser { id: w.alice, scopes: Scopes::READ_WRITE }, lenses_only);
    let mut c = Wire::declaring(server, "2026-07-28", declared(true)).await;
    assert!(c.server_capabilities.get("extensions").is_none(), "{}", c.server_capabilities);
    assert_eq!(c.error("tasks/get", json!({"taskId": RunId::new().to_string()})).await["code"], -32601);

    // One with the Eval group alone does: its experiments are tasks.
    let eval_only =
        CatalogOptions { toolsets: Some(vec![&lf_tools::groups::eval::GROUP]), ..CatalogOptions::default() };
    let server = w.server_with(Principal::Lenser { id: w.alice, scopes: Scopes::READ_WRITE }, eval_only);
    let c = Wire::declaring(server, "2026-07-28", declared(true)).await;
    assert_eq!(c.server_capabilities["extensions"], json!({TASKS: {}}), "{}", c.server_capabilities);
}

#[tokio::test]
async fn a_run_started_as_a_task_is_followed_to_its_result() {
    let w = World::new();
    let wf = small_workflow(&w.as_(w.alice), "Flow", "private").await;
    for version in ["2025-11-25", "2026-07-28"] {
        let mut c = w.open(w.alice, version, true).await;
        let task = c.call("run_workflow", json!({"workflow_id": wf, "inputs": {"n": 1}})).await;
        assert_eq!((&task["resultType"], &task["status"]), (&json!("task"), &json!("working")), "{task}");
        for absent in ["content", "structuredContent", "result", "error", "inputRequests", "task", "ttl"] {
            assert!(task.get(absent).is_none(), "a task handle has no {absent}: {task}");
        }
        assert_eq!((&task["ttlMs"], &task["pollIntervalMs"]), (&Value::Null, &json!(1_000)), "{task}");
        let id = s(&task["taskId"]).to_owned();
        // The task is the run: the run tools know it by the task's id.
        let status = status_of(&w, w.alice, &id).await;
        assert_eq!(status["status"], "pending");
        let runs = ok(&w.as_(w.alice), "list_workflow_runs", json!({"workflow_id": wf})).await;
        assert_eq!(runs["items"][0]["id"], id.as_str(), "{runs}");
        assert_eq!(task["createdAt"], runs["items"][0]["created_at"]);
        assert_eq!(task["lastUpdatedAt"], task["createdAt"]);
        assert!(s(&task["statusMessage"]).contains("waiting for a runner"), "{task}");

        let working = c.get(&id).await;
        assert_eq!((&working["taskId"], &working["status"]), (&json!(id), &json!("working")), "{working}");
        assert_eq!(working["resultType"], "complete", "{working}");
        assert!(working.get("result").is_none() && working.get("error").is_none(), "{working}");

        w.end(&id, RunStatus::Completed, Some(json!({"text": "done"})), None).await;
        let done = c.get(&id).await;
        assert_eq!(done["status"], "completed", "{done}");
        let result = &done["result"];
        assert_eq!(result["isError"], false, "{done}");
        // The result is what get_workflow_run_status answers, its text the same JSON.
        let status = status_of(&w, w.alice, &id).await;
        assert_eq!(done["lastUpdatedAt"], status["completed_at"], "its end: {done}");
        assert_eq!(result["structuredContent"], status, "{done}");
        assert_eq!(result["structuredContent"]["result"], json!({"text": "done"}));
        let text: Value = serde_json::from_str(s(&result["content"][0]["text"])).unwrap();
        assert_eq!(text, status);
        // ... which fits run_workflow's listed output schema as well.
        let listed = w.as_(w.alice).listing(&[]);
        let schema = listed.iter().find(|t| t.name == "run_workflow").unwrap().output_schema.clone().unwrap();
        let validator = jsonschema::validator_for(&Value::Object((*schema).clone())).unwrap();
        assert!(validator.is_valid(&result["structuredContent"]), "{schema:?}");

        // Cancelling a task that ended is acknowledged; it stays completed.
        assert_eq!(c.result("tasks/cancel", json!({"taskId": id})).await, json!({"resultType": "complete"}));
        assert_eq!(
            c.result("tasks/update", json!({"taskId": id, "inputResponses": {"x": {}}})).await,
            json!({"resultType": "complete"})
        );
        assert_eq!(c.get(&id).await["status"], "completed");

        // Other tools answer as ever to a client of the extension.
        let read = c.call("get_workflow_run_status", json!({"run_id": id})).await;
        assert!(read.get("taskId").is_none() && read["structuredContent"]["id"] == id.as_str(), "{read}");
        // A tool error is the tool's result: no run, no task.
        let refused = c.call("run_workflow", json!({"workflow_id": RunId::new().to_string()})).await;
        assert_eq!(
            (&refused["isError"], &refused["structuredContent"]["code"]),
            (&json!(true), &json!("NOT_FOUND"))
        );
    }
}

#[tokio::test]
async fn a_failed_run_completes_its_task_with_an_error_result_and_a_cancelled_one_is_cancelled() {
    let w = World::new();
    let wf = small_workflow(&w.as_(w.alice), "Flow", "private").await;
    let mut c = w.open(w.alice, "2026-07-28", true).await;
    let failed = s(&c.call("run_workflow", json!({"workflow_id": wf})).await["taskId"]).to_owned();
    let error =
        RunError { code: "node_failed".into(), message: "log failed".into(), node: Some("log".into()) };
    w.end(&failed, RunStatus::Failed, None, Some(error)).await;
    let task = c.get(&failed).await;
    assert_eq!(task["status"], "completed", "a run that fails has its answer: {task}");
    assert!(task.get("error").is_none(), "failed is for JSON-RPC errors: {task}");
    assert_eq!(task["result"]["isError"], true, "{task}");
    assert_eq!(task["result"]["structuredContent"], status_of(&w, w.alice, &failed).await);
    assert_eq!(
        task["result"]["structuredContent"]["error"],
        json!({"code": "node_failed", "message": "log failed", "step": "log"})
    );
    assert!(s(&task["statusMessage"]).contains("failed: log failed"), "{task}");

    // A cancel is asked of the run; the task turns cancelled once its runner stops it.
    let cancelled = s(&c.call("run_workflow", json!({"workflow_id": wf})).await["taskId"]).to_owned();
    assert_eq!(
        c.result("tasks/cancel", json!({"taskId": cancelled})).await,
        json!({"resultType": "complete"})
    );
    assert_eq!(status_of(&w, w.alice, &cancelled).await["cancel_requested_by"], w.alice.to_string());
    let asked = c.get(&cancelled).await;
    assert_eq!(asked["status"], "working", "{asked}");
    assert!(s(&asked["statusMessage"]).contains("asked to cancel"), "{asked}");
    w.end(&cancelled, RunStatus::Cancelled, None, None).await;
    let task = c.get(&cancelled).await;
    assert_eq!(task["status"], "cancelled", "{task}");
    assert!(task.get("result").is_none(), "{task}");
    assert!(s(&task["statusMessage"]).contains(&format!("cancelled by {}", w.alice)), "{task}");
}

#[tokio::test]
async fn only_readers_see_a_task_and_only_its_controllers_cancel_it() {
    let w = World::new();
    let alice = w.as_(w.alice);
    let private = small_workflow(&alice, "Mine", "private").await;
    let public = small_workflow(&alice, "Ours", "public").await;
    let mut a = w.open(w.alice, "2026-07-28", true).await;
    let hidden = s(&a.call("run_workflow", json!({"workflow_id": private})).await["taskId"]).to_owned();
    let shown = s(&a.call("run_workflow", json!({"workflow_id": public})).await["taskId"]).to_owned();

    let mut b = w.open(w.bob, "2026-07-28", true).await;
    let unknown = RunId::new().to_string();
    let not_found = |e: &Value, id: &str| {
        assert_eq!(e["code"], -32602, "{e}");
        let message = s(&e["message"]).replace(id, "ID");
        assert!(message.starts_with("Task ID was not found, or you cannot see it"), "{message}");
        message
    };
    // Another's task on a workflow they cannot read is as unknown as no task at all.
    let of_unknown = not_found(&b.error("tasks/get", json!({"taskId": unknown})).await, &unknown);
    for (method, params) in [
        ("tasks/get", json!({"taskId": hidden})),
        ("tasks/cancel", json!({"taskId": hidden})),
        ("tasks/update", json!({"taskId": hidden, "inputResponses": {}})),
    ] {
        assert_eq!(not_found(&b.error(method, params).await, &hidden), of_unknown, "{method}");
    }
    assert_eq!(
        not_found(&b.error("tasks/get", json!({"taskId": "not a run"})).await, "not a run"),
        of_unknown
    );
    assert_eq!(status_of(&w, w.alice, &hidden).await["cancel_requested_by"], Value::Null);
    // Another's run of a workflow they may read is as unknown: a run is its
    // starter's and its workflow owner's.
    for (method, params) in [
        ("tasks/get", json!({"taskId": shown})),
        ("tasks/cancel", json!({"taskId": shown})),
        ("tasks/update", json!({"taskId": shown, "inputResponses": {}})),
    ] {
        assert_eq!(not_found(&b.error(method, params).await, &shown), of_unknown, "{method}");
    }

    // Once the owner opens the workflow's runs, they see it, and still may not cancel it.
    ok(&alice, "update_workflow", json!({"workflow_id": public, "public_runs": true})).await;
    assert_eq!(b.get(&shown).await["status"], "working");
    let refused = b.error("tasks/cancel", json!({"taskId": shown})).await;
    assert_eq!(refused["code"], -32602, "{refused}");
    assert!(
        s(&refused["message"]).starts_with("FORBIDDEN: Only the lenser who started workflow run"),
        "{refused}"
    );
    // ... as cancel_workflow_run refuses him.
    let tool = err(&w.as_(w.bob), "cancel_workflow_run", json!({"run_id": shown, "confirm": true})).await;
    assert_eq!(refused["message"], format!("FORBIDDEN: {}", s(&tool["message"])));
    assert_eq!(status_of(&w, w.alice, &shown).await["cancel_requested_by"], Value::Null);

    // A read-only token reads tasks but cancels none; nor does a read-only server.
    let reader = w.server(Principal::Lenser { id: w.alice, scopes: Scopes::READ });
    let mut r = Wire::declaring(reader, "2026-07-28", declared(true)).await;
    assert_eq!(r.get(&shown).await["status"], "working");
    let refused = r.error("tasks/cancel", json!({"taskId": shown})).await;
    assert!(s(&refused["message"]).starts_with("PERMISSION_DENIED: tasks/cancel changes data"), "{refused}");
    let read_only = CatalogOptions { read_only: true, ..CatalogOptions::default() };
    let server = w.server_with(Principal::Lenser { id: w.alice, scopes: Scopes::READ_WRITE }, read_only);
    let mut r = Wire::declaring(server, "2026-07-28", declared(true)).await;
    assert_eq!(r.get(&shown).await["status"], "working");
    let refused = r.error("tasks/cancel", json!({"taskId": shown})).await;
    assert_eq!(refused["code"], -32600, "{refused}");
    assert!(s(&refused["message"]).contains("read-only"), "{refused}");
    assert_eq!(status_of(&w, w.alice, &shown).await["cancel_requested_by"], Value::Null);

    // Its starter cancels it.
    assert_eq!(a.result("tasks/cancel", json!({"taskId": shown})).await, json!({"resultType": "complete"}));
    assert_eq!(status_of(&w, w.alice, &shown).await["cancel_requested_by"], w.alice.to_string());
}

/// A call that may answer with a task is always rmcp's: only its request
/// context says whether the client declared the extension.
#[tokio::test]
async fn calls_that_may_answer_with_a_task_are_not_answered_directly() {
    let w = World::new();
    let server = w.as_(w.alice);
    let call = |tool: &str| {
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": {}}})
            .to_string()
    };
    let version = ProtocolVersion::V_2025_11_25;
    let direct = |tool: &str| {
        matches!(
            server.classify(call(tool).as_bytes(), server.principal(), Some(&version)),
            Classified::Direct(_)
        )
    };
    assert!(!direct("run_workflow"));
    assert!(direct("get_workflow_run_status"));
}
