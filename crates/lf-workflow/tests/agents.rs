//! DESIGN: an AI Lenser acting for its owner (`Principal::Agent`) is
//! recorded as the `agent` of every workflow, version and run it writes;
//! its owner still owns them. A person's rows record none. Through the
//! services on the in-memory stores, with nothing running the runs.

use std::sync::Arc;

use lf_core::{Clock, LenserId, Principal, Scopes, SystemClock, WorkflowId};
use lf_workflow::engine::RunStatus;
use lf_workflow::run::{MemoryRunStore, NoSignal, RunId, RunOrigin, RunService, StartRun};
use lf_workflow::{
    Created, MemoryConnections, MemoryLenses, MemoryWorkflowStore, NewWorkflow, RawBlueprint,
    WorkflowService, WorkflowUpdate,
};
use serde_json::json;

fn services() -> (Arc<WorkflowService>, RunService) {
    let workflows = Arc::new(WorkflowService::new(
        Arc::new(MemoryWorkflowStore::new()),
        Arc::new(MemoryLenses::new()),
        Arc::new(MemoryConnections::new()),
    ));
    let runs = RunService::new(workflows.clone(), Arc::new(MemoryRunStore::new()), Arc::new(NoSignal));
    (workflows, runs)
}

/// A private workflow that runs: a manual trigger and one step.
async fn create(workflows: &WorkflowService, p: &Principal) -> Created {
    let blueprint: RawBlueprint = serde_json::from_value(json!({
        "title": "Log it", "visibility": "private",
        "steps": [
            {"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"},
            {"key": "log", "kind": "tool", "name": "Log", "node_type": "noop"}
        ],
        "connections": [{"from_step": "start", "to_step": "log", "input_parameter": "input"}]
    }))
    .unwrap();
    workflows.create(p, NewWorkflow { blueprint, owner: None }).await.unwrap()
}

/// A new version of `id` with a second step.
fn two_steps(id: WorkflowId) -> WorkflowUpdate {
    let steps = json!([
        {"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"},
        {"key": "log", "kind": "tool", "name": "Log", "node_type": "noop"},
        {"key": "again", "kind": "tool", "name": "Again", "node_type": "noop"}
    ]);
    let connections = json!([
        {"from_step": "start", "to_step": "log", "input_parameter": "input"},
        {"from_step": "log", "to_step": "again", "input_parameter": "input"}
    ]);
    WorkflowUpdate {
        steps: Some(serde_json::from_value(steps).unwrap()),
        connections: Some(serde_json::from_value(connections).unwrap()),
        ..WorkflowUpdate::new(id)
    }
}

fn start(id: WorkflowId) -> StartRun {
    StartRun { workflow_id: Some(id), ..Default::default() }
}

/// Ends `ids` as cancelled, as a runner would (only an ended run is retried).
async fn cancel_all(runs: &RunService, ids: &[RunId]) {
    let store = runs.store();
    let leases =
        store.claim("test", SystemClock.now(), 60_000, &lf_workflow::run::Room::up_to(1_000)).await.unwrap();
    for id in ids {
        let lease = leases.iter().find(|l| l.run == *id).expect("a pending run is due");
        let mut state = store.get_run(*id).await.unwrap().state;
        state.status = RunStatus::Cancelled;
        assert!(store.save(lease, &state, &[], true).await.unwrap());
    }
}

#[test]
fn workflows_and_versions_record_the_agent_that_wrote_them() {
    pollster::block_on(async {
        let (workflows, _) = services();
        let (owner, agent_id) = (LenserId::new(), LenserId::new());
        let agent = Principal::Agent { agent_id, owner };
        let person = Principal::Lenser { id: owner, scopes: Scopes::READ_WRITE };

        let by_agent = create(&workflows, &agent).await;
        assert_eq!((by_agent.workflow.owner, by_agent.workflow.agent), (owner, Some(agent_id)));
        assert_eq!((by_agent.version.created_by, by_agent.version.agent), (owner, Some(agent_id)));
        let by_person = create(&workflows, &person).await;
        assert_eq!((by_person.workflow.agent, by_person.version.agent), (None, None));

        // The owner writes version 2 of the agent's workflow, the agent
        // version 2 of the owner's.
        let up = workflows.update(&person, two_steps(by_agent.workflow.id)).await.unwrap();
        assert_eq!(up.head.agent, None, "the owner wrote this version");
        assert_eq!(up.workflow.agent, Some(agent_id), "the workflow keeps the agent that created it");
        let up = workflows.update(&agent, two_steps(by_person.workflow.id)).await.unwrap();
        assert_eq!((up.head.created_by, up.head.agent), (owner, Some(agent_id)));
        assert_eq!(up.workflow.agent, None);

        let view = workflows.get(&person, by_agent.workflow.id).await.unwrap();
        assert_eq!(view.workflow.agent, Some(agent_id));
        assert_eq!(view.versions.iter().map(|v| v.agent).collect::<Vec<_>>(), [None, Some(agent_id)]);
        let view = workflows.get(&agent, by_person.workflow.id).await.unwrap();
        assert_eq!((view.workflow.agent, view.head.agent), (None, Some(agent_id)));
    });
}

#[test]
fn runs_record_the_agent_that_started_them() {
    pollster::block_on(async {
        let (workflows, runs) = services();
        let (owner, agent_id) = (LenserId::new(), LenserId::new());
        let agent = Principal::Agent { agent_id, owner };
        let person = Principal::Lenser { id: owner, scopes: Scopes::READ_WRITE };
        let w = create(&workflows, &person).await.workflow.id;

        let by_agent = runs.start(&agent, start(w)).await.unwrap().run;
        assert_eq!(
            (by_agent.started_by, by_agent.agent),
            (owner, Some(agent_id)),
            "its owner is its starter"
        );
        let by_person = runs.start(&person, start(w)).await.unwrap().run;
        assert_eq!(by_person.agent, None);
        assert_eq!(runs.get(&person, by_agent.id).await.unwrap().agent, Some(agent_id), "read back");

        cancel_all(&runs, &[by_agent.id, by_person.id]).await;
        let retried = runs.retry(&person, by_agent.id, false).await.unwrap();
        assert_eq!(retried.agent, None, "the owner's retry of the agent's run is the owner's");
        let retried = runs.retry(&agent, by_person.id, true).await.unwrap();
        assert_eq!((retried.started_by, retried.agent), (owner, Some(agent_id)));

        // A step of the agent's run starts its child for the agent too.
        let child = runs.start_child(&by_agent, start(w)).await.unwrap().run;
        assert_eq!(
            (child.origin, child.started_by, child.agent, child.parent_run_id),
            (RunOrigin::SubWorkflow, owner, Some(agent_id), Some(by_agent.id))
        );
        assert_eq!(runs.start_child(&by_person, start(w)).await.unwrap().run.agent, None);

        let team = runs.start_team(agent_id, owner, None, start(w)).await.unwrap().run;
        assert_eq!((team.origin, team.started_by, team.agent), (RunOrigin::Team, owner, Some(agent_id)));

        let recorded = runs.record_lens(&agent, w, json!({"lens_id": "l"})).await.unwrap();
        assert_eq!((recorded.origin, recorded.agent), (RunOrigin::Lens, Some(agent_id)));
        assert_eq!(runs.record_lens(&person, w, json!({})).await.unwrap().agent, None);
    });
}
