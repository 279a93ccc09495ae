//! Who reads a run, over a real server on loopback with two accounts and
//! their bearer tokens: a run is its starter's and its workflow owner's.
//! Bob reads Alice's public workflow, and none of her runs of it (their
//! inputs, their logs), until she opens its runs with `public_runs`.

mod common;

use std::time::{Duration, Instant};

use common::{Options, Server, call_tool};
use lf_core::Scopes;
use serde_json::{Value, json};

/// A tool's structured content and whether it is an error.
async fn call(s: &Server, token: &str, tool: &str, args: Value) -> (bool, Value) {
    let r = call_tool(s, Some(token), tool, args).await;
    (r["isError"] == json!(true), r["structuredContent"].clone())
}

async fn ok(s: &Server, token: &str, tool: &str, args: Value) -> Value {
    let (failed, out) = call(s, token, tool, args).await;
    assert!(!failed, "{tool}: {out}");
    out
}

/// The error code of a call that must fail, after checking that its answer
/// does not show `marker`.
async fn refused(s: &Server, token: &str, tool: &str, args: Value, marker: &str) -> String {
    let (failed, out) = call(s, token, tool, args).await;
    assert!(failed, "{tool} answered: {out}");
    assert!(!out.to_string().contains(marker), "{tool} shows the hidden run: {out}");
    out["code"].as_str().unwrap_or_default().to_owned()
}

/// Waits for run `id` to end, as its starter `token` reads it.
async fn ended(s: &Server, token: &str, id: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let status = ok(s, token, "get_workflow_run_status", json!({"run_id": id})).await;
        if matches!(status["status"].as_str(), Some("completed" | "failed" | "cancelled")) {
            return status;
        }
        assert!(Instant::now() < deadline, "run {id} did not end: {status}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn ids(listing: &Value) -> Vec<String> {
    let items = listing["items"].as_array().unwrap_or_else(|| panic!("not a listing: {listing}"));
    items.iter().map(|r| r["id"].as_str().unwrap().to_owned()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_of_a_public_workflow_reads_only_their_own_runs_until_the_owner_opens_them() {
    let s = Server::with(Options { lensers: vec!["alice", "bob"], ..Options::default() }).await;
    let alice = s.token("alice", Scopes::READ_WRITE).await;
    let bob = s.token("bob", Scopes::READ_WRITE).await;
    let marker = "alice-private-note-5e1f";

    let steps = json!([
        {"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"},
        {"key": "note", "kind": "tool", "name": "Note", "node_type": "logger",
         "config": {"message": "noted [[note]]"}}
    ]);
    let connections = json!([{"from_step": "start", "to_step": "note", "input_parameter": "input"}]);
    let made = ok(
        &s,
        &alice,
        "create_workflow",
        json!({"title": "Shared", "visibility": "public", "steps": steps, "connections": connections}),
    )
    .await;
    let wf = made["id"].as_str().unwrap().to_owned();
    let start =
        |note: &str| json!({"workflow_id": wf, "inputs": {"note": note}, "idempotency_key": "nightly"});
    let hers = ok(&s, &alice, "run_workflow", start(marker)).await["id"].as_str().unwrap().to_owned();
    let done = ended(&s, &alice, &hers).await;
    assert_eq!(done["status"], "completed", "{done}");
    let logs = ok(&s, &alice, "get_workflow_run_logs", json!({"run_id": hers})).await;
    assert!(logs.to_string().contains(&format!("noted {marker}")), "her log has her line: {logs}");

    // Bob reads the workflow, and none of her runs: each is as unknown as
    // no run at all.
    ok(&s, &bob, "get_workflow", json!({"workflow_id": wf})).await;
    for tool in ["get_workflow_run_status", "get_workflow_run_logs", "summarize_workflow", "retry_workflow"] {
        let code = refused(&s, &bob, tool, json!({"run_id": hers}), marker).await;
        assert_eq!(code, "NOT_FOUND", "{tool}");
    }
    let read = ok(&s, &bob, "get_workflow", json!({"workflow_id": wf})).await;
    assert_eq!(read["public_runs"], false, "{read}");
    let code =
        refused(&s, &bob, "cancel_workflow_run", json!({"run_id": hers, "confirm": true}), marker).await;
    assert_eq!(code, "NOT_FOUND");
    // Her idempotency key is hers: his repeat of it starts his own run.
    let his = ok(&s, &bob, "run_workflow", start("bob's note")).await;
    let his = his["id"].as_str().unwrap().to_owned();
    assert_ne!(his, hers, "a repeated key never answers another's run");
    ended(&s, &bob, &his).await;
    let listed = ok(&s, &bob, "list_workflow_runs", json!({"workflow_id": wf})).await;
    assert_eq!((ids(&listed), &listed["total"]), (vec![his.clone()], &json!(1)), "his own only: {listed}");
    assert!(!listed.to_string().contains(marker));
    // She reads both: the runs of her workflow are hers to read.
    let all = ok(&s, &alice, "list_workflow_runs", json!({"workflow_id": wf})).await;
    assert_eq!(ids(&all), [his.clone(), hers.clone()]);
    ok(&s, &alice, "get_workflow_run_logs", json!({"run_id": his})).await;

    // Only she opens them; then he reads hers, and still may not control it.
    let code =
        refused(&s, &bob, "update_workflow", json!({"workflow_id": wf, "public_runs": true}), marker).await;
    assert_eq!(code, "FORBIDDEN");
    ok(&s, &alice, "update_workflow", json!({"workflow_id": wf, "public_runs": true})).await;
    assert_eq!(ok(&s, &bob, "get_workflow", json!({"workflow_id": wf})).await["public_runs"], true);
    let logs = ok(&s, &bob, "get_workflow_run_logs", json!({"run_id": hers})).await;
    assert!(logs.to_string().contains(&format!("noted {marker}")), "{logs}");
    let listed = ok(&s, &bob, "list_workflow_runs", json!({"workflow_id": wf})).await;
    assert_eq!(ids(&listed), [his, hers.clone()]);
    let (failed, out) = call(&s, &bob, "retry_workflow", json!({"run_id": hers})).await;
    assert!(failed && out["code"] == "FORBIDDEN", "{out}");
    s.stop().await;
}
