//! What the executor tests share: one step's first attempt, in a new
//! workflow of its own after a manual trigger.

use std::sync::Arc;

use lf_core::{LenserId, Principal, Scopes};
use lf_runner::Job;
use lf_workflow::engine::{Plan, Slot};
use lf_workflow::run::RunId;
use lf_workflow::{NewWorkflow, RawBlueprint, WorkflowService};
use serde_json::{Value, json};

/// The first attempt of `step` (a blueprint step whose key is `step`) in
/// a new workflow of `owner`, which also starts the run, on `input`;
/// keyed `run:step:1` when it has an outside effect.
pub async fn first_attempt(workflows: &WorkflowService, owner: LenserId, step: Value, input: Value) -> Job {
    let me = Principal::Lenser { id: owner, scopes: Scopes::READ_WRITE };
    let blueprint: RawBlueprint = serde_json::from_value(json!({
        "title": "t",
        "steps": [{"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"}, step],
        "connections": [{"from_step": "start", "to_step": "step", "input_parameter": "input"}],
    }))
    .unwrap();
    let created = workflows.create(&me, NewWorkflow { blueprint, owner: None }).await.expect("created");
    let plan = Arc::new(Plan::new(&created.version).expect("a plan"));
    let index = plan.nodes.iter().position(|n| n.key == "step").unwrap() as u32;
    let run = RunId::new();
    let keyed = plan.node(index).outside_effect;
    Job {
        run,
        workflow_id: created.workflow.id,
        workflow_owner: owner,
        started_by: owner,
        global_model_id: None,
        plan,
        slot: Slot::top(index),
        attempt: 1,
        input,
        idempotency_key: keyed.then(|| format!("{run}:step:1")),
    }
}
