//! A workflow battle through the tools on one SQLite file, across a
//! process that stops before its runs ran: the battle's move to executing
//! makes the workflow contenders' runs durably; the next process on the
//! file runs them, submits the answer of the one that completes, and
//! records the failure of the other on its contender, where get_battle
//! shows it.

use std::time::Duration;

use lf_core::LenserId;
use lf_tests::{Process, call};
use serde_json::{Value, json};

const PROMPT: &str = "Name the largest ocean.";

fn blueprint(title: &str, path: &str) -> Value {
    json!({
        "title": title,
        "steps": [
            {"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"},
            {"key": "answer", "kind": "tool", "name": "Answer", "node_type": "extract_field", "config": {"path": path}}
        ],
        "connections": [{"from_step": "start", "to_step": "answer", "input_parameter": "input"}]
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workflow_contenders_answer_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("lf.db").display());
    let alice = LenserId::new();

    // The first process never starts its runner: it stops before any run ran.
    let first = Process::open(&url, alice).await;
    let echo = first.ok("create_workflow", blueprint("Echo", "$.task_prompt")).await["id"].clone();
    let broken = first.ok("create_workflow", blueprint("Broken", "$.no_such_field")).await["id"].clone();
    let battle = first
        .ok(
            "create_battle",
            json!({"title": "Oceans", "task_prompt": PROMPT, "battle_type": "workflow_battle", "judging_mode": "community_vote", "max_contenders": 3}),
        )
        .await["id"]
        .clone();
    let mut slots = Vec::new();
    for (name, w) in [("Echo", &echo), ("Broken", &broken)] {
        let c = first
            .ok(
                "add_battle_contender",
                json!({"battle_id": battle, "display_name": name, "contender_type": "workflow", "contender_ref_id": w}),
            )
            .await;
        slots.push(c["contender_id"].clone());
    }
    let missing = call(
        first.server.clone(),
        "add_battle_contender",
        json!({"battle_id": battle, "display_name": "Nobody's", "contender_type": "workflow", "contender_ref_id": LenserId::new().to_string()}),
    )
    .await
    .unwrap();
    assert!(missing.is_error, "an unknown workflow does not join");
    assert_eq!(missing.value["code"], "NOT_FOUND", "{}", missing.value);
    first.ok("set_battle_status", json!({"battle_id": battle, "status": "open"})).await;
    let moved = first.ok("set_battle_status", json!({"battle_id": battle, "status": "executing"})).await;
    assert!(moved["next_step"].as_str().unwrap().contains("workflow contenders"), "{moved}");
    let runs = first.ok("list_workflow_runs", json!({"workflow_id": echo})).await;
    assert_eq!(runs["items"][0]["status"], "pending", "made, not run: {runs}");
    assert_eq!(runs["items"][0]["origin"], "battle", "{runs}");
    drop(first);

    // The next process runs them and answers.
    let second = Process::open(&url, alice).await;
    let task = second.runner.start();
    let mut view = Value::Null;
    for _ in 0..500 {
        view = second.ok("get_battle", json!({"battle_id": battle})).await;
        let c = &view["contenders"];
        if c[0]["has_submitted"] == true && !c[1]["answer_error"].is_null() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let c = &view["contenders"];
    assert_eq!(c[0]["has_submitted"], true, "{view}");
    assert_eq!(view["submissions"][0]["content_text"], PROMPT, "{view}");
    assert_eq!(view["submissions"][0]["submitted_by"], alice.to_string());
    let error = &c[1]["answer_error"];
    assert!(error["message"].as_str().unwrap().contains("failed"), "{view}");
    let run_id = error["run_id"].as_str().expect("the failed run");
    let logs = second.ok("get_workflow_run_logs", json!({"run_id": run_id})).await;
    assert_eq!(logs["run"]["status"], "failed", "{logs}");
    assert_eq!(c[1]["has_submitted"], false);
    assert_eq!(view["status"], "executing", "one answer is missing");

    // Answered by hand, the battle moves to voting by itself.
    second
        .ok(
            "submit_battle_run",
            json!({"battle_id": battle, "contender_id": slots[1], "content_text": "The Atlantic."}),
        )
        .await;
    let view = second.ok("get_battle", json!({"battle_id": battle})).await;
    assert_eq!(view["status"], "voting", "{view}");
    let runs = second.ok("list_workflow_runs", json!({"workflow_id": echo})).await;
    assert_eq!(runs["total"], 1, "one run per contender: {runs}");
    second.runner.shutdown().await;
    task.await.unwrap();
}
