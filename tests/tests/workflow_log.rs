//! A `logger` step through the tools on one SQLite file, across a
//! restart: the run's log that get_workflow_run_logs reads shows the line
//! the step wrote, its placeholders filled from its input at its level,
//! and the next process on the file reads the same line.

use std::time::{Duration, Instant};

use lf_core::LenserId;
use lf_tests::Process;
use lf_workflow::examples::{manual_trigger, tool_step, wire};
use serde_json::{Value, json};

/// The `note` step's entry in run `id`'s log, as `p` reads it.
async fn note(p: &Process, id: &str) -> Value {
    let logs = p.ok("get_workflow_run_logs", json!({"run_id": id})).await;
    let results = logs["node_results"].as_array().expect("node results");
    results.iter().find(|n| n["step"] == "note").unwrap_or_else(|| panic!("no note in {logs}")).clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_logger_line_is_in_the_run_s_log_and_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("lf.db").display());
    let alice = LenserId::new();

    let first = Process::open(&url, alice).await;
    let task = first.runner.start();
    let logger = tool_step("note", "log", json!({"message": "[[count]] new for [[who]]", "level": "warn"}));
    let steps = json!([manual_trigger(), logger, tool_step("after", "noop", json!({}))]);
    let made = first
        .ok(
            "create_workflow",
            json!({"title": "Noted", "visibility": "private", "steps": steps,
                   "connections": [wire("start", "note"), wire("note", "after")]}),
        )
        .await;
    let inputs = json!({"count": 2, "who": "the team"});
    let started = first.ok("run_workflow", json!({"workflow_id": made["id"], "inputs": inputs})).await;
    let id = started["id"].as_str().expect("a run id").to_owned();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let status = first.ok("get_workflow_run_status", json!({"run_id": id})).await;
        if matches!(status["status"].as_str(), Some("completed" | "failed" | "cancelled")) {
            assert_eq!((&status["status"], &status["result"]), (&json!("completed"), &inputs), "{status}");
            break;
        }
        assert!(Instant::now() < deadline, "run {id} did not end: {status}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let line = json!({"level": "warn", "message": "2 new for the team"});
    let written = note(&first, &id).await;
    assert_eq!((&written["node_type"], &written["log"]), (&json!("logger"), &line), "{written}");
    assert_eq!(written["output"], inputs, "the input passed on: {written}");
    first.runner.shutdown().await;
    task.await.unwrap();
    first.db.close().await;

    // The next process on the file, whose runner never starts, reads the same line.
    let second = Process::open(&url, alice).await;
    assert_eq!(note(&second, &id).await, written);
    second.db.close().await;
}
