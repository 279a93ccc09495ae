//! Experiments read and run by AI Lensers, on the server's own wiring
//! against a scripted OpenAI-compatible server on loopback: an owner's AI
//! Lenser reaches the owner's private experiment and its results through
//! its grants, and starts one as its owner; another lenser's AI Lenser
//! finds neither, as its owner does not.

#[path = "support/fake_models.rs"]
mod fake_models;

#[path = "support/calls.rs"]
mod calls;

#[path = "support/world.rs"]
mod world;

use std::time::Duration;

use calls::{err, ok, until};
use fake_models::{FakeModels, Step};
use lf_core::LenserId;
use lf_tools::LfServer;
use serde_json::{Value, json};
use world::{World, endpoint};

/// An AI Lenser of `s`'s granted `tools`: its id.
async fn agent(s: &LfServer, handle: &str, tools: &[&str]) -> String {
    let made = ok(s, "create_ai_lenser", json!({"handle": handle, "display_name": handle})).await;
    let id = made["ai_lenser_id"].as_str().unwrap().to_owned();
    for tool in tools {
        ok(s, "assign_agent_tool", json!({"ai_lenser_id": id, "tool_id": tool})).await;
    }
    id
}

/// `agent` of `s` calls `tool` with `args`: the action's answer or error.
async fn act(s: &LfServer, agent: &str, tool: &str, args: Value) -> Result<Value, Value> {
    let call = json!({"ai_lenser_id": agent, "action_type": tool, "metadata": args});
    match calls::call(s, "run_agent_action", call).await {
        (false, v) => Ok(v["result"].clone()),
        (true, e) => Err(e),
    }
}

/// Reads experiment `id` as `s` until it is completed.
async fn completed(s: &LfServer, id: &str) -> Value {
    until(s, id, "completed", |e| e["experiment"]["status"] == "completed").await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_agent_reads_and_runs_as_its_owner_and_no_further() {
    let fake = FakeModels::start();
    fake.by_prompt("m", |prompt| Step::answer(&format!("echo {prompt}")));
    let w = World::start(vec![endpoint(&fake, "one", 4, 5)], Duration::from_secs(3)).await;
    let (alice, bob) = (w.server(LenserId::new()), w.server(LenserId::new()));
    ok(&alice, "create_model_profile", json!({"name": "echo", "endpoint": "one", "model": "m"})).await;
    let cases = json!([{"prompt": "one"}, {"prompt": "two"}, {"prompt": "three"}]);
    let data = ok(&alice, "create_dataset", json!({"name": "few", "cases": cases})).await;
    let data = data["dataset"]["dataset_id"].as_str().unwrap().to_owned();
    let run = json!({"dataset_id": data, "contenders": ["echo"],
                     "assertions": [{"type": "starts_with", "value": "echo "}]});
    let private = ok(&alice, "run_experiment", run.clone()).await;
    let private = private["experiment_id"].as_str().unwrap().to_owned();
    completed(&alice, &private).await;

    let reads = ["get_experiment", "list_experiment_results"];
    let ada = agent(&alice, "ada_evaluates", &[reads[0], reads[1], "run_experiment"]).await;
    let seen = act(&alice, &ada, "get_experiment", json!({"experiment_id": private})).await.unwrap();
    assert_eq!(seen["contenders"][0]["passed"], 3, "{seen}");
    let cells =
        act(&alice, &ada, "list_experiment_results", json!({"experiment_id": private})).await.unwrap();
    assert_eq!(cells["items"].as_array().map(Vec::len), Some(3), "{cells}");
    let denied = act(&alice, &ada, "cancel_experiment", json!({"experiment_id": private})).await;
    assert_eq!(denied.unwrap_err()["code"], "PERMISSION_DENIED", "not granted");

    // Started by the agent, the experiment is its owner's: she reads it,
    // Bob does not.
    let started = act(&alice, &ada, "run_experiment", run).await.unwrap();
    let theirs = started["experiment_id"].as_str().unwrap().to_owned();
    let done = completed(&alice, &theirs).await;
    assert_eq!(done["contenders"][0]["passed"], 3, "{done}");
    assert_eq!(err(&bob, "get_experiment", json!({"experiment_id": theirs})).await["code"], "NOT_FOUND");

    // Bob's agent reaches what Bob reaches: neither private experiment.
    let bo = agent(&bob, "bo_reads", &reads).await;
    for id in [&private, &theirs] {
        for tool in reads {
            let e = act(&bob, &bo, tool, json!({"experiment_id": id})).await.unwrap_err();
            assert_eq!(e["code"], "NOT_FOUND", "{tool}: {e}");
        }
    }
}
