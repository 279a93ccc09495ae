//! The steps that use the server's own services, on the in-memory stores
//! with a real runner: `sub_workflow` runs another workflow as the run's
//! starter and outputs its result, refuses to nest past `max_depth`, and
//! cannot reach a workflow its starter cannot read; `battle_create` makes
//! one battle per attempt as the workflow's owner, whatever the retries.

use std::sync::Arc;
use std::time::Duration;

use lf_core::{LenserId, Principal, Scopes, WorkflowId};
use lf_runner::Job;
use lf_workflow::WorkflowUpdate;
use lf_workflow::engine::RunStatus;
use lf_workflow::run::{Run, RunOrigin, RunStore, StartRun};
use serde_json::{Value, json};

mod support;

struct World(support::Stack);

impl std::ops::Deref for World {
    type Target = support::Stack;
    fn deref(&self) -> &support::Stack {
        &self.0
    }
}

fn lenser(id: LenserId) -> Principal {
    Principal::Lenser { id, scopes: Scopes::READ_WRITE }
}

impl World {
    fn new() -> Self {
        World(support::Stack::new())
    }

    async fn workflow(&self, owner: LenserId, visibility: &str, steps: Value) -> WorkflowId {
        support::create_workflow(
            &self.service,
            owner,
            json!({"title": "t", "visibility": visibility, "steps": steps, "connections": line(&steps)}),
        )
        .await
    }

    async fn run(&self, who: LenserId, workflow: WorkflowId, inputs: Value) -> Run {
        let s = StartRun {
            workflow_id: Some(workflow),
            inputs: inputs.as_object().unwrap().clone(),
            ..Default::default()
        };
        let id = self.starts.start(&lenser(who), s).await.expect("started").run.id;
        for _ in 0..1000 {
            let run = self.runs.load_run(id).await.unwrap();
            if run.status().is_final() {
                return run;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("run {id} did not end");
    }

    async fn children(&self, parent: &Run) -> Vec<Run> {
        let page = lf_core::PageRequest::new(Some(100), None).unwrap();
        self.runs
            .list_runs(parent.started_by, &Default::default(), page)
            .await
            .unwrap()
            .items
            .into_iter()
            .filter(|r| r.parent_run_id == Some(parent.id))
            .collect()
    }
}

/// Each step after the first wired from the one before.
fn line(steps: &Value) -> Value {
    let keys: Vec<&str> = steps.as_array().unwrap().iter().map(|s| s["key"].as_str().unwrap()).collect();
    Value::Array(
        keys.windows(2)
            .map(|p| json!({"from_step": p[0], "to_step": p[1], "input_parameter": "input"}))
            .collect(),
    )
}

fn trigger() -> Value {
    json!({"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"})
}

fn tool(key: &str, node_type: &str, config: Value) -> Value {
    json!({"key": key, "kind": "tool", "name": key, "node_type": node_type, "config": config})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sub_workflow_runs_as_the_starter_and_its_result_flows_on() {
    let w = World::new();
    let (owner, starter) = (LenserId::new(), LenserId::new());
    let shout = w
        .workflow(owner, "public", json!([trigger(), tool("pick", "extract_field", json!({"path": "text"}))]))
        .await;
    let outer = w
        .workflow(
            starter,
            "private",
            json!([
                trigger(),
                tool(
                    "call",
                    "sub_workflow",
                    json!({"workflow_id": shout.to_string(), "input_mapping": {"text": "$.message"}})
                ),
                tool("after", "noop", json!({}))
            ]),
        )
        .await;
    let run = w.run(starter, outer, json!({"message": "hello"})).await;
    assert_eq!(run.status(), RunStatus::Completed, "{:?}", run.state.error);
    assert_eq!(run.state.result, Some(json!("hello")), "the sub-run's result is the step's output");
    let children = w.children(&run).await;
    assert_eq!(children.len(), 1);
    let child = &children[0];
    assert_eq!((child.workflow_id, child.origin, child.started_by), (shout, RunOrigin::SubWorkflow, starter));
    assert_eq!(child.state.inputs, json!({"text": "hello"}));
    assert!(child.idempotency_key.as_ref().unwrap().as_str().starts_with(&run.id.to_string()));
    w.runner.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workflow_that_runs_itself_stops_at_its_max_depth() {
    let w = World::new();
    let me = LenserId::new();
    let wf = w.workflow(me, "private", json!([trigger(), tool("log", "noop", json!({}))])).await;
    let steps = json!([
        trigger(),
        tool("again", "sub_workflow", json!({"workflow_id": wf.to_string(), "max_depth": 2}))
    ]);
    let update = WorkflowUpdate {
        steps: Some(serde_json::from_value(steps.clone()).unwrap()),
        connections: Some(serde_json::from_value(line(&steps)).unwrap()),
        ..WorkflowUpdate::new(wf)
    };
    w.service.update(&lenser(me), update).await.unwrap();
    let top = w.run(me, wf, json!({})).await;
    assert_eq!(top.status(), RunStatus::Failed);
    // top → child → grandchild, whose own step is refused.
    let child = w.children(&top).await.pop().expect("a child run");
    let grandchild = w.children(&child).await.pop().expect("a grandchild run");
    assert!(w.children(&grandchild).await.is_empty(), "no third level");
    let refused = grandchild.state.error.expect("the grandchild failed");
    assert!(refused.message.contains("max_depth of 2"), "{}", refused.message);
    assert!(top.state.error.unwrap().message.contains("ended failed"));
    w.runner.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sub_workflow_cannot_reach_a_workflow_its_starter_cannot_read() {
    let w = World::new();
    let (alice, bob) = (LenserId::new(), LenserId::new());
    let secret = w.workflow(alice, "private", json!([trigger(), tool("log", "noop", json!({}))])).await;
    let outer = w
        .workflow(
            bob,
            "private",
            json!([trigger(), tool("call", "sub_workflow", json!({"workflow_id": secret.to_string()}))]),
        )
        .await;
    let run = w.run(bob, outer, json!({})).await;
    assert_eq!(run.status(), RunStatus::Failed);
    let e = run.state.error.clone().unwrap();
    assert!(e.message.contains("not found"), "{}", e.message);
    assert!(w.children(&run).await.is_empty());
    w.runner.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn battle_create_makes_a_draft_as_the_owner_with_its_templates_filled() {
    let w = World::new();
    let owner = LenserId::new();
    let wf = w
        .workflow(
            owner,
            "public",
            json!([
                trigger(),
                tool("battle", "battle_create", json!({"title": "Explain [[topic]]", "task_prompt": "Explain [[topic]] to a beginner.", "max_contenders": 3}))
            ]),
        )
        .await;
    // Someone else runs the owner's public workflow: the battle is the owner's.
    let run = w.run(LenserId::new(), wf, json!({"topic": "ownership"})).await;
    assert_eq!(run.status(), RunStatus::Completed, "{:?}", run.state.error);
    let out = run.state.result.unwrap();
    assert_eq!(out["status"], "draft");
    let id = lf_core::parse_uuid("battle_id", out["battle_id"].as_str().unwrap()).unwrap();
    let sheet = w.battles.get(&lenser(owner), lf_core::BattleId::from_uuid(id)).await.unwrap();
    assert_eq!(sheet.battle.title.as_str(), "Explain ownership");
    assert_eq!(sheet.battle.task_prompt.as_str(), "Explain ownership to a beginner.");
    assert_eq!(sheet.battle.creator, owner);
    assert_eq!(sheet.battle.max_contenders.get(), 3);

    // The same attempt run twice (a takeover runs it again with the same
    // number) makes one battle; another attempt makes another.
    let version = w
        .service
        .store()
        .get_version(lf_core::Reach::Everything, wf, lf_workflow::VersionSelector::Head)
        .await
        .unwrap();
    let plan = Arc::new(lf_workflow::engine::Plan::new(&version).unwrap());
    let node = (0..plan.nodes.len() as u32).find(|i| plan.node(*i).key == "battle").unwrap();
    let job = |attempt: u32| Job {
        run: run.id,
        workflow_id: wf,
        workflow_owner: owner,
        started_by: owner,
        agent: None,
        global_model_id: None,
        plan: plan.clone(),
        slot: lf_workflow::engine::Slot { node, item: None },
        attempt,
        input: json!({"topic": "lifetimes"}),
        idempotency_key: Some(format!("{}:battle:{attempt}", run.id)),
        saved: None,
        credits_left: None,
        saves: None,
        secrets: Default::default(),
    };
    let exec = w.executors.get("battle_create").unwrap();
    let a = exec.execute(&job(1)).await.unwrap().output;
    let b = exec.execute(&job(1)).await.unwrap().output;
    let c = exec.execute(&job(2)).await.unwrap().output;
    assert_eq!(a, b, "one battle for one attempt");
    assert_eq!(a, out, "the one the run made with that attempt");
    assert_ne!(a["battle_id"], c["battle_id"]);

    // In a run an agent started for its owner, the battle names the agent.
    let agent = LenserId::new();
    let by_agent = exec.execute(&Job { agent: Some(agent), ..job(3) }).await.unwrap().output;
    let id = lf_core::BattleId::parse("battle_id", by_agent["battle_id"].as_str().unwrap()).unwrap();
    let sheet = w.battles.get(&Principal::Service { acting_as: None }, id).await.unwrap();
    assert_eq!((sheet.battle.creator, sheet.battle.agent), (owner, Some(agent)));
    let id = lf_core::BattleId::parse("battle_id", a["battle_id"].as_str().unwrap()).unwrap();
    let sheet = w.battles.get(&Principal::Service { acting_as: None }, id).await.unwrap();
    assert_eq!(sheet.battle.agent, None, "a person's run's battle names no agent");
    w.runner.shutdown().await;
}
