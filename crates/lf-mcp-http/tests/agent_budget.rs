//! An AI Lenser's credit limit bounds the runs it starts: the built server,
//! its model an OpenAI-compatible service on loopback, runs a workflow of
//! five model steps for an agent. The run's budget is what the agent had
//! left, the run stops there, what it spent is counted against the agent,
//! and with nothing left the agent starts no more runs. A server restarted
//! over a run whose end was not charged (or charged and not marked so)
//! charges it at start, once.

#[path = "common/process.rs"]
mod process;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use process::{Home, Request, Service, Session};
use serde_json::{Value, json};

/// The chat requests the model was asked.
static ASKED: AtomicUsize = AtomicUsize::new(0);

/// A chat completion of a few words: one credit a step at the default price.
fn model(r: &Request) -> process::Answer {
    if !r.path.ends_with("/chat/completions") {
        return (404, vec![], String::new());
    }
    ASKED.fetch_add(1, Ordering::SeqCst);
    let body = json!({"id": "c", "object": "chat.completion", "model": "m", "choices": [
        {"index": 0, "message": {"role": "assistant", "content": "A short answer."}, "finish_reason": "stop"}
    ]});
    (200, vec![("content-type".into(), "application/json".into())], body.to_string())
}

/// A workflow of a trigger and five model steps in a row.
fn five_model_steps() -> Value {
    let mut steps =
        vec![json!({"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"})];
    let mut connections = Vec::new();
    let mut before = "start".to_owned();
    for n in 1..=5 {
        let key = format!("ask{n}");
        steps.push(
            json!({"key": key, "kind": "tool", "name": format!("Ask {n}"), "node_type": "prompt_template",
            "config": {"template": format!("Say something, step {n}.")}}),
        );
        connections.push(json!({"from_step": before, "to_step": key, "input_parameter": "input"}));
        before = key;
    }
    json!({"title": "Five asks", "steps": steps, "connections": connections})
}

/// An agent of `s`'s lenser with `limit` credits a day, granted run_workflow.
async fn agent(s: &mut Session, handle: &str, limit: u64) -> String {
    let made = s.ok("create_ai_lenser", json!({"handle": handle, "display_name": handle})).await;
    let id = made["ai_lenser_id"].as_str().unwrap().to_owned();
    s.ok("update_ai_lenser", json!({"ai_lenser_id": id, "patch": {"spending_limit_credits": limit}})).await;
    s.ok("assign_agent_tool", json!({"ai_lenser_id": id, "tool_id": "run_workflow"})).await;
    id
}

/// The agent's credits spent today.
async fn spent(s: &mut Session, agent: &str) -> u64 {
    let got = s.ok("get_ai_lenser", json!({"ai_lenser_id": agent})).await;
    got["usage"]["credits_spent"].as_u64().unwrap_or_else(|| panic!("{got}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agents_credit_limit_bounds_its_runs() {
    let home = Home::new();
    let model = Service::start(model);
    let mut log = Vec::new();
    home.admin(&["create-lenser", "--handle", "ops"], "a long password here\n", &[], &mut log);
    let token = home.admin(&["issue-token", "--handle", "ops", "--scope", "write"], "", &[], &mut log);
    let base_url = model.url("/v1");
    let served = home.serve(
        &["--sessions"],
        &[("LENSERFIGHT_MODEL_BASE_URL", base_url.as_str()), ("LENSERFIGHT_MODEL_NAME", "m")],
    );
    let mut s = Session::open(&served.base, token.trim()).await;
    let workflow = s.ok("create_workflow", five_model_steps()).await;
    let workflow = workflow["workflow_id"].as_str().or(workflow["id"].as_str()).unwrap().to_owned();

    // Four credits: the call takes one, the run may spend the three left.
    let scout = agent(&mut s, "budget_scout", 4).await;
    let act =
        json!({"ai_lenser_id": scout, "action_type": "run_workflow", "metadata": {"workflow_id": workflow}});
    let started = s.ok("run_agent_action", act.clone()).await;
    let run = started["result"]["id"].as_str().unwrap_or_else(|| panic!("{started}")).to_owned();
    let status = ended(&mut s, &run).await;
    assert_eq!(status["budget_credits"], 3, "the budget is what the agent had left: {status}");
    assert_eq!(status["status"], "failed", "the run stops at its budget: {status}");
    assert_eq!(status["error"]["code"], "budget_exceeded", "{status}");
    assert_eq!(status["spent_credits"], 3, "{status}");
    assert_eq!(ASKED.load(Ordering::SeqCst), 3, "three steps asked the model, two were not started");
    // The run's spend is counted against the agent once the run ended.
    let deadline = Instant::now() + Duration::from_secs(20);
    while spent(&mut s, &scout).await != 4 {
        assert!(
            Instant::now() < deadline,
            "the run's 3 credits are charged to the agent: {}",
            spent(&mut s, &scout).await
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // With nothing left, the agent starts no more runs.
    let again = s.call("run_agent_action", act).await;
    assert_eq!(again["isError"], true, "{again}");
    assert_eq!(again["structuredContent"]["code"], "BUDGET_EXCEEDED", "{again}");

    // One credit, as the call costs: the run is refused, naming the limit,
    // and the model is not asked.
    let tight = agent(&mut s, "tight_scout", 1).await;
    let act =
        json!({"ai_lenser_id": tight, "action_type": "run_workflow", "metadata": {"workflow_id": workflow}});
    let refused = s.call("run_agent_action", act).await;
    assert_eq!(refused["isError"], true, "{refused}");
    assert_eq!(refused["structuredContent"]["code"], "BUDGET_EXCEEDED", "{refused}");
    let message = refused["structuredContent"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("spending_limit_credits of 1"), "{message}");
    let runs = s.ok("list_workflow_runs", json!({"workflow_id": workflow})).await;
    assert_eq!(runs["total"], 1, "no run was started for it: {runs}");
    assert_eq!(ASKED.load(Ordering::SeqCst), 3);
    assert_eq!(spent(&mut s, &tight).await, 1, "the call itself is counted");
    drop(served.stop());

    // A server killed between a run's end and its charge: the next one
    // charges it at start, and never twice. First, charged but not marked.
    let db = sqlx::SqlitePool::connect(&format!("sqlite://{}", home.database().display())).await.unwrap();
    let hex = |id: &str| id.replace('-', "").to_uppercase();
    let unmark = "UPDATE workflow_runs SET agent_charged_at = NULL WHERE hex(id) = $1";
    let marked = async |db: &sqlx::SqlitePool| -> bool {
        let q = "SELECT agent_charged_at IS NOT NULL FROM workflow_runs WHERE hex(id) = $1";
        sqlx::query_scalar(q).bind(hex(&run)).fetch_one(db).await.unwrap()
    };
    sqlx::query(unmark).bind(hex(&run)).execute(&db).await.unwrap();
    assert!(!marked(&db).await);
    for uncharged in [false, true] {
        if uncharged {
            // Then ended and not charged at all.
            sqlx::query(unmark).bind(hex(&run)).execute(&db).await.unwrap();
            sqlx::query("DELETE FROM agent_run_charges WHERE hex(run_id) = $1")
                .bind(hex(&run))
                .execute(&db)
                .await
                .unwrap();
            sqlx::query("UPDATE agent_usage SET credits = credits - 3 WHERE hex(agent_id) = $1")
                .bind(hex(&scout))
                .execute(&db)
                .await
                .unwrap();
        }
        let served = home.serve(
            &["--sessions"],
            &[("LENSERFIGHT_MODEL_BASE_URL", base_url.as_str()), ("LENSERFIGHT_MODEL_NAME", "m")],
        );
        let deadline = Instant::now() + Duration::from_secs(20);
        while !marked(&db).await {
            assert!(Instant::now() < deadline, "the restarted server charges the run it was not told of");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let mut s = Session::open(&served.base, token.trim()).await;
        assert_eq!(spent(&mut s, &scout).await, 4, "the run's spend counted once (uncharged: {uncharged})");
        drop(served.stop());
    }
}

/// Waits for run `id` to end: its status.
async fn ended(s: &mut Session, id: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let status = s.ok("get_workflow_run_status", json!({"run_id": id})).await;
        if ["completed", "failed", "cancelled"].contains(&status["status"].as_str().unwrap_or("")) {
            return status;
        }
        assert!(Instant::now() < deadline, "the run ends within 60 s: {status}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
