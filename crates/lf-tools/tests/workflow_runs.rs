//! The run tools of the Workflow group driven through `LfServer::call` on
//! memory stores, with no runner: runs stay as started until the test
//! records, through the run store, what a runner would have. What each
//! tool answers of a run, who may cancel and retry it, and bad input.

use lf_core::{Principal, Timestamp};
use lf_tools::LfServer;
use lf_workflow::engine::{
    Failure, LogLevel, LogLine, NodeRun, NodeStatus, RunError, RunState, RunStatus, Slot, Usage,
};
use lf_workflow::run::RunId;
use serde_json::{Value, json};

mod common;
use common::{World, err, ok};

fn at(seconds: i64) -> Timestamp {
    Timestamp::from_micros(1_767_225_600_000_000 + seconds * 1_000_000)
}

fn done(status: NodeStatus, started: i64, finished: i64, input: Value, output: Value) -> NodeRun {
    NodeRun {
        status,
        attempt: 1,
        input: Some(input),
        output: Some(output),
        started_at: Some(at(started)),
        finished_at: Some(at(finished)),
        ..NodeRun::pending()
    }
}

#[track_caller]
fn s(v: &Value) -> &str {
    v.as_str().unwrap_or_else(|| panic!("not a string: {v}"))
}

/// A workflow of `who`'s: a manual trigger, then `first` and `second`
/// (noop steps) in a row.
async fn chain(server: &LfServer, visibility: &str) -> String {
    let made = ok(
        server,
        "create_workflow",
        json!({
            "title": "Chain", "visibility": visibility,
            "steps": [
                {"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"},
                {"key": "first", "kind": "tool", "name": "First", "node_type": "noop"},
                {"key": "second", "kind": "tool", "name": "Second", "node_type": "noop"}
            ],
            "connections": [
                {"from_step": "start", "to_step": "first", "input_parameter": "input"},
                {"from_step": "first", "to_step": "second", "input_parameter": "input"}
            ]
        }),
    )
    .await;
    s(&made["id"]).to_owned()
}

#[tokio::test]
async fn a_started_run_reads_back_pending_and_a_repeated_key_replays_it() {
    let w = World::new();
    let a = w.as_(w.alice);
    let wf = chain(&a, "private").await;
    let args = json!({"workflow_id": wf, "inputs": {"topic": "tides"}, "idempotency_key": "req-1", "budget_credits": 50, "global_model_id": "local-model"});
    let started = ok(&a, "run_workflow", args.clone()).await;
    assert_eq!(
        (&started["status"], &started["workflow_id"], &started["version"], &started["replayed"]),
        (&json!("pending"), &json!(wf), &json!(1), &json!(false))
    );
    let id = s(&started["id"]).to_owned();
    let again = ok(&a, "run_workflow", args).await;
    assert_eq!((&again["id"], &again["replayed"]), (&json!(id), &json!(true)));
    assert_eq!(again["created_at"], started["created_at"]);

    let status = ok(&a, "get_workflow_run_status", json!({"run_id": id})).await;
    assert_eq!(
        status,
        json!({
            "id": id, "status": "pending", "started_at": null, "completed_at": null,
            "spent_credits": 0, "budget_credits": 50, "cost_metadata": {"model_calls": 0, "tokens_used": 0},
            "workflow_id": wf, "version": 1, "error": null, "result": null, "cancel_requested_by": null,
            "by_agent": null, "caused_by": null, "root_run_id": id, "event_tree_full_at": null
        })
    );
    let logs = ok(&a, "get_workflow_run_logs", json!({"run_id": id})).await;
    let meta = &logs["run"]["metadata"];
    assert_eq!(
        (&meta["origin"], &meta["idempotency_key"], &meta["global_model_id"], &meta["started_by"]),
        (&json!("manual"), &json!("req-1"), &json!("local-model"), &json!(w.alice.to_string()))
    );
    assert_eq!(meta["inputs"], json!({"topic": "tides"}));
    let steps: Vec<(&str, &str)> =
        logs["node_results"].as_array().unwrap().iter().map(|n| (s(&n["step"]), s(&n["status"]))).collect();
    assert_eq!(steps, [("start", "pending"), ("first", "pending"), ("second", "pending")], "plan order");
    let summary = ok(&a, "summarize_workflow", json!({"run_id": id})).await;
    assert_eq!(summary["duration_ms"], Value::Null);
    assert_eq!(
        summary["nodes"],
        json!({"total": 3, "completed": 0, "failed": 0, "skipped": 0, "cancelled": 0, "running": 0, "pending": 3})
    );

    let other = chain(&a, "private").await;
    ok(&a, "run_workflow", json!({"workflow_id": other, "idempotency_key": "req-1"})).await;
    let listed = ok(&a, "list_workflow_runs", json!({})).await;
    assert_eq!(listed["total"], 2, "one key per workflow: the second workflow got its own run");
    let mine = ok(&a, "list_workflow_runs", json!({"workflow_id": wf, "status": "pending"})).await;
    assert_eq!((&mine["total"], &mine["items"][0]["id"]), (&json!(1), &json!(id)));
    assert_eq!((&mine["items"][0]["origin"], &mine["items"][0]["version"]), (&json!("manual"), &json!(1)));
    let none = ok(&a, "list_workflow_runs", json!({"status": "completed"})).await;
    assert_eq!(none["total"], 0);
    assert_eq!(ok(&w.as_(w.bob), "list_workflow_runs", json!({})).await["total"], 0);
}

#[tokio::test]
async fn the_run_reads_show_what_the_runner_recorded() {
    let w = World::new();
    let a = w.as_(w.alice);
    let wf = chain(&a, "public").await;
    let id = s(&ok(&a, "run_workflow", json!({"workflow_id": wf})).await["id"]).to_owned();
    let mut state = RunState::new(json!({}), Default::default());
    state.status = RunStatus::Failed;
    state.started_at = Some(at(0));
    state.finished_at = Some(at(9));
    state.error = Some(RunError {
        code: "node_failed".into(),
        message: "second failed".into(),
        node: Some("second".into()),
    });
    let mut first = done(
        NodeStatus::Completed,
        2,
        5,
        json!({"input": {"password": "hunter2"}}),
        json!([{"text": "hi", "token": "t-1"}]),
    );
    first.usage = Usage { model_calls: 2, tokens: 300, credits: 4 };
    first.log = Some(LogLine { level: LogLevel::Warn, message: "wrote 1 [[line]]".into() });
    // Started before `first` finished (a retry's timer, say): the log orders by start time.
    let mut second = done(NodeStatus::Failed, 1, 8, json!({}), Value::Null);
    second.output = None;
    second.attempt = 3;
    second.error = Some(Failure::new("status_5xx", "the hook answered 503"));
    let slots = vec![
        (Slot::top(0), done(NodeStatus::Completed, 0, 0, json!({}), json!({}))),
        (Slot::top(1), first),
        (Slot::top(2), second),
    ];
    w.record(&id, state, slots).await;

    // Another reader, of a workflow whose owner opened its runs.
    ok(&a, "update_workflow", json!({"workflow_id": wf, "public_runs": true})).await;
    let b = w.as_(w.bob);
    let status = ok(&b, "get_workflow_run_status", json!({"run_id": id})).await;
    assert_eq!(
        (&status["status"], &status["spent_credits"], &status["cost_metadata"]),
        (&json!("failed"), &json!(4), &json!({"model_calls": 2, "tokens_used": 300}))
    );
    assert_eq!(status["error"], json!({"code": "node_failed", "message": "second failed", "step": "second"}));
    assert_eq!(status["budget_credits"], Value::Null, "no budget: no limit");
    assert_eq!((s(&status["started_at"]), status["result"].clone()), ("2026-01-01T00:00:00Z", Value::Null));

    let logs = ok(&b, "get_workflow_run_logs", json!({"run_id": id})).await;
    let results = logs["node_results"].as_array().unwrap();
    let order: Vec<&str> = results.iter().map(|n| s(&n["step"])).collect();
    assert_eq!(order, ["start", "second", "first"], "by start time");
    let first = &results[2];
    assert_eq!(first["input"], json!({"input": {"password": "[redacted]"}}));
    assert_eq!(first["output"], json!([{"text": "hi", "token": "[redacted]"}]));
    assert_eq!((&first["tokens_used"], &first["cost_credits"]), (&json!(300), &json!(4)));
    assert_eq!(
        (&first["node_type"], &first["item"], &first["attempts"]),
        (&json!("noop"), &Value::Null, &json!(1))
    );
    let second = &results[1];
    assert_eq!(second["error"], json!({"code": "status_5xx", "message": "the hook answered 503"}));
    assert_eq!((&second["attempts"], &second["output"]), (&json!(3), &Value::Null));
    assert_eq!(
        first["log"],
        json!({"level": "warn", "message": "wrote 1 [[line]]"}),
        "the line a step wrote"
    );
    assert_eq!((&second["log"], &results[0]["log"]), (&Value::Null, &Value::Null), "no line: null");
    let graph = ok(&b, "get_workflow_graph", json!({"workflow_id": wf})).await;
    assert_eq!(second["node_id"], graph["nodes"][2]["id"]);
    assert!(!logs.to_string().contains("hunter2") && !logs.to_string().contains("t-1"));
    assert_eq!(logs["run"]["error"]["code"], "node_failed");

    let summary = ok(&b, "summarize_workflow", json!({"run_id": id})).await;
    assert_eq!(
        (&summary["run_id"], &summary["workflow_id"], &summary["duration_ms"]),
        (&json!(id), &json!(wf), &json!(9_000))
    );
    assert_eq!(
        summary["nodes"],
        json!({"total": 3, "completed": 2, "failed": 1, "skipped": 0, "cancelled": 0, "running": 0, "pending": 0})
    );
}

#[tokio::test]
async fn only_the_starter_and_the_owner_cancel_and_retry() {
    let w = World::new();
    let (a, b) = (w.as_(w.alice), w.as_(w.bob));
    let public = chain(&a, "public").await;
    let private = chain(&a, "private").await;
    let by_b = s(&ok(&b, "run_workflow", json!({"workflow_id": public})).await["id"]).to_owned();
    let by_a = s(&ok(&a, "run_workflow", json!({"workflow_id": public})).await["id"]).to_owned();
    let hidden = s(&ok(&a, "run_workflow", json!({"workflow_id": private})).await["id"]).to_owned();

    for confirm in [json!(false), Value::Null] {
        let e = err(&a, "cancel_workflow_run", json!({"run_id": by_a, "confirm": confirm})).await;
        assert_eq!(e["code"], "CONFIRMATION_REQUIRED");
    }
    // A's run of A's public workflow is A's: to B it does not exist ...
    for tool in ["get_workflow_run_status", "get_workflow_run_logs", "summarize_workflow", "retry_workflow"] {
        let e = err(&b, tool, json!({"run_id": by_a})).await;
        assert_eq!(e["code"], "NOT_FOUND", "{tool}");
    }
    let e = err(&b, "cancel_workflow_run", json!({"run_id": by_a, "confirm": true})).await;
    assert_eq!(e["code"], "NOT_FOUND");
    let listed = ok(&b, "list_workflow_runs", json!({"workflow_id": public})).await;
    assert_eq!((&listed["total"], &listed["items"][0]["id"]), (&json!(1), &json!(by_b)), "B lists B's own");
    // ... until A opens the workflow's runs: then B reads it, and still may not control it.
    ok(&a, "update_workflow", json!({"workflow_id": public, "public_runs": true})).await;
    assert_eq!(ok(&b, "get_workflow", json!({"workflow_id": public})).await["public_runs"], true);
    ok(&b, "get_workflow_run_logs", json!({"run_id": by_a})).await;
    assert_eq!(ok(&b, "list_workflow_runs", json!({"workflow_id": public})).await["total"], 2);
    let e = err(&b, "cancel_workflow_run", json!({"run_id": by_a, "confirm": true})).await;
    assert_eq!(e["code"], "FORBIDDEN");
    let e = err(&b, "retry_workflow", json!({"run_id": by_a})).await;
    assert_eq!(e["code"], "FORBIDDEN");
    for tool in ["get_workflow_run_status", "get_workflow_run_logs", "summarize_workflow", "retry_workflow"] {
        let e = err(&b, tool, json!({"run_id": hidden})).await;
        assert_eq!(e["code"], "NOT_FOUND", "{tool}");
    }
    let e = err(&b, "cancel_workflow_run", json!({"run_id": hidden, "confirm": true})).await;
    assert_eq!(e["code"], "NOT_FOUND");
    let e = err(&b, "list_workflow_runs", json!({"workflow_id": private})).await;
    assert_eq!(e["code"], "NOT_FOUND");

    // B started it, A owns the workflow: both may.
    let asked = ok(&a, "cancel_workflow_run", json!({"run_id": by_b, "confirm": true})).await;
    assert_eq!(
        asked,
        json!({"run_id": by_b, "status": "pending", "cancel_requested_by": w.alice.to_string()}),
        "cancelled once a runner stops it"
    );
    let e = err(&b, "retry_workflow", json!({"run_id": by_b})).await;
    assert_eq!(e["code"], "INVALID_TRANSITION", "only a failed or cancelled run: {e}");
    let mut state = RunState::new(json!({}), Default::default());
    state.status = RunStatus::Cancelled;
    w.record(&by_b, state, vec![]).await;
    let e = err(&b, "cancel_workflow_run", json!({"run_id": by_b, "confirm": true})).await;
    assert_eq!(e["code"], "INVALID_TRANSITION");
    let retried = ok(&b, "retry_workflow", json!({"run_id": by_b, "resume": true})).await;
    assert_eq!(
        (&retried["original_run_id"], &retried["new_run"]["parent_run_id"], &retried["new_run"]["status"]),
        (&json!(by_b), &json!(by_b), &json!("pending"))
    );
    let new_id = s(&retried["new_run"]["id"]).to_owned();
    let logs = ok(&a, "get_workflow_run_logs", json!({"run_id": new_id})).await;
    let meta = &logs["run"]["metadata"];
    assert_eq!(
        (&meta["origin"], &meta["parent_run_id"], &meta["resume_from"], &meta["started_by"]),
        (&json!("retry"), &json!(by_b), &json!(by_b), &json!(w.bob.to_string()))
    );
    let listed = ok(&b, "list_workflow_runs", json!({"status": "cancelled"})).await;
    assert_eq!((&listed["total"], &listed["items"][0]["id"]), (&json!(1), &json!(by_b)));
}

#[tokio::test]
async fn bad_run_arguments_are_refused_naming_the_field() {
    let w = World::new();
    let a = w.as_(w.alice);
    let wf = chain(&a, "private").await;
    for (tool, args, field) in [
        ("run_workflow", json!({"workflow_id": "nope"}), "workflow_id"),
        ("run_workflow", json!({"workflow_id": wf, "budget_credits": -1}), "budget_credits"),
        ("run_workflow", json!({"workflow_id": wf, "version": 0}), "version"),
        ("run_workflow", json!({"workflow_id": wf, "idempotency_key": ""}), "idempotency_key"),
        ("run_workflow", json!({"workflow_id": wf, "idempotency_key": "k".repeat(129)}), "idempotency_key"),
        ("run_workflow", json!({"workflow_id": wf, "global_model_id": " "}), "global_model_id"),
        ("run_workflow", json!({"workflow_id": wf, "inputs": {"api_key": "sk-1"}}), "inputs"),
        ("get_workflow_run_status", json!({"run_id": "not-a-uuid"}), "run_id"),
        ("cancel_workflow_run", json!({"run_id": "not-a-uuid", "confirm": true}), "run_id"),
        ("list_workflow_runs", json!({"status": "done"}), "status"),
    ] {
        let e = err(&a, tool, args).await;
        assert_eq!((s(&e["code"]), s(&e["details"]["field"])), ("INVALID_ARGUMENT", field), "{tool}: {e}");
    }
    let unknown = RunId::new().to_string();
    assert_eq!(err(&a, "summarize_workflow", json!({"run_id": unknown})).await["code"], "NOT_FOUND");
    let e = err(&a, "run_workflow", json!({"workflow_id": wf, "version": 2})).await;
    assert_eq!(e["code"], "NOT_FOUND");

    let empty = s(&ok(&a, "create_workflow", json!({"title": "Empty"})).await["id"]).to_owned();
    let e = err(&a, "run_workflow", json!({"workflow_id": empty})).await;
    assert_eq!(e["code"], "INVALID_ARGUMENT");
    assert!(s(&e["message"]).contains("does not validate"), "{e}");
    ok(&a, "archive_workflow", json!({"workflow_id": wf, "confirm": true})).await;
    assert_eq!(err(&a, "run_workflow", json!({"workflow_id": wf})).await["code"], "INVALID_TRANSITION");

    let nobody = w.server(Principal::Service { acting_as: None });
    for (tool, args) in [("run_workflow", json!({"workflow_id": empty})), ("list_workflow_runs", json!({}))] {
        assert_eq!(err(&nobody, tool, args).await["code"], "MISSING_LENSER", "{tool}");
    }
    assert_eq!(ok(&a, "list_workflow_runs", json!({})).await["total"], 0, "nothing was started");
}
