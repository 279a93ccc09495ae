//! A workflow's state between runs through the HTTP server on SQLite, as
//! the binaries wire it: one run writes an entry, the next reads it back
//! from the database, and another owner's workflow does not see it.

use std::time::{Duration, Instant};

use lf_core::LenserId;
use lf_tests::{Caller, StoreKind, TestStore, call, lenser};
use lf_workflow::examples::{manual_trigger, tool_step, wire};
use serde_json::{Value, json};

async fn ok(caller: &Caller, tool: &str, args: Value) -> Value {
    let r = call(caller, tool, args).await.unwrap_or_else(|e| panic!("{tool}: {e}"));
    assert!(!r.is_error, "{tool} failed: {}", r.value);
    r.value
}

/// Runs `workflow` on `inputs` to its end: the run's status.
async fn run_to_end(caller: &Caller, workflow: &str, inputs: Value) -> Value {
    let started = ok(caller, "run_workflow", json!({"workflow_id": workflow, "inputs": inputs})).await;
    let id = started["id"].as_str().expect("a run id").to_owned();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let status = ok(caller, "get_workflow_run_status", json!({"run_id": id})).await;
        if matches!(status["status"].as_str(), Some("completed" | "failed" | "cancelled")) {
            return status;
        }
        assert!(Instant::now() < deadline, "run {id} did not end: {status}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A workflow of `caller`'s: a manual trigger, then `step` (keyed `step`).
async fn create(caller: &Caller, step: Value) -> String {
    let args = json!({"title": "State", "visibility": "private", "steps": [manual_trigger(), step],
                      "connections": [wire("start", "step")]});
    ok(caller, "create_workflow", args).await["id"].as_str().expect("an id").to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_keeps_a_workflow_owner_s_entries_in_its_database() {
    let store = TestStore::open(StoreKind::Http).await;
    assert!(store.runs_itself(), "the HTTP server runs its runs");
    let (alice, bob) =
        (store.caller(lenser(LenserId::new())).await, store.caller(lenser(LenserId::new())).await);
    let write_step = tool_step(
        "step",
        "kv_store_write",
        json!({"key": "cursor:[[feed]]", "value_path": "$.seen", "ttl_seconds": 3600}),
    );
    let read_step = tool_step("step", "kv_store_read", json!({"key": "cursor:[[feed]]", "default": 0}));
    let write = create(&alice, write_step).await;
    let read = create(&alice, read_step.clone()).await;
    let seen = json!({"z": 1, "a": [true, null]});
    let wrote = run_to_end(&alice, &write, json!({"feed": "news", "seen": seen})).await;
    assert_eq!(wrote["status"], "completed", "{wrote}");
    let got = run_to_end(&alice, &read, json!({"feed": "news"})).await;
    assert_eq!(got["result"].to_string(), json!({"found": true, "value": seen}).to_string(), "{got}");
    let other = run_to_end(&alice, &read, json!({"feed": "sports"})).await;
    assert_eq!(other["result"], json!({"found": false, "value": 0}));
    let bobs = create(&bob, read_step).await;
    let not_his = run_to_end(&bob, &bobs, json!({"feed": "news"})).await;
    assert_eq!(not_his["result"], json!({"found": false, "value": 0}), "{not_his}");
}
