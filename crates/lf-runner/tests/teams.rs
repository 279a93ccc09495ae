//! Agents' team runs run as workflow runs, on the in-memory stores with a
//! real runner: a queued team run starts its workflow as the agent's
//! owner, its steps and end come back as its events in order; an approval
//! holds it until an owner approves; cancelling it stops its workflow run;
//! a failing workflow fails it; and what nobody dispatched or heard is
//! caught up, each team run with one workflow run.

use std::time::Duration;

use lf_agent::{
    Agent, AgentHandle, DelegationPolicy, DisplayName, EventFilter, NewAgent, NewTeamRun, TeamEventKind,
    TeamInputs, TeamRun, TeamRunId, TeamRunStatus,
};
use lf_core::{ErrorCode, LenserId, PageRequest, Principal, Scopes, WorkflowId};
use lf_runner::{RunEnds, TeamsCaughtUp};
use lf_workflow::engine::RunStatus;
use lf_workflow::run::{Run, RunFilter, RunId, RunOrigin, RunStore};
use serde_json::{Value, json};

mod support;
use support::Stack;

use TeamEventKind as K;

fn lenser(id: LenserId) -> Principal {
    Principal::Lenser { id, scopes: Scopes::READ_WRITE }
}

fn service_as(id: LenserId) -> Principal {
    Principal::Service { acting_as: Some(id) }
}

/// A workflow of `owner`'s: its trigger, then `steps` one after another.
async fn workflow(s: &Stack, owner: LenserId, steps: Vec<Value>) -> WorkflowId {
    let mut all =
        vec![json!({"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"})];
    let mut connections = Vec::new();
    let mut from = "start".to_owned();
    for step in steps {
        let key = step["key"].as_str().unwrap().to_owned();
        connections.push(json!({"from_step": from, "to_step": key, "input_parameter": "input"}));
        all.push(step);
        from = key;
    }
    support::create_workflow(
        &s.service,
        owner,
        json!({
            "title": "Team work", "visibility": "private", "steps": all, "connections": connections
        }),
    )
    .await
}

fn step(key: &str, node_type: &str, config: Value) -> Value {
    json!({"key": key, "kind": "tool", "name": key, "node_type": node_type, "config": config})
}

/// Two steps that pass the topic on.
fn two_steps() -> Vec<Value> {
    vec![step("first", "noop", json!({})), step("second", "extract_field", json!({"path": "$.topic"}))]
}

async fn agent(s: &Stack, owner: LenserId, handle: &str) -> Agent {
    let new = NewAgent::new(AgentHandle::parse(handle).unwrap(), DisplayName::parse("Team lead").unwrap());
    s.agents.create(&lenser(owner), new).await.unwrap()
}

fn new_run(agent: LenserId, workflow_id: WorkflowId, policy: DelegationPolicy) -> NewTeamRun {
    let mut inputs = serde_json::Map::new();
    inputs.insert("topic".into(), json!("rust"));
    NewTeamRun { agent, workflow_id, inputs: TeamInputs::new(inputs).unwrap(), policy, parent: None }
}

async fn team_run(s: &Stack, owner: LenserId, a: &Agent, id: TeamRunId) -> TeamRun {
    s.agents.get_team_run(&lenser(owner), a.id, id).await.unwrap()
}

/// Waits until the team run is in `status`.
async fn until(s: &Stack, owner: LenserId, a: &Agent, id: TeamRunId, status: TeamRunStatus) -> TeamRun {
    for _ in 0..500 {
        let t = team_run(s, owner, a, id).await;
        if t.status == status {
            return t;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("not {status}: {:#?}", team_run(s, owner, a, id).await);
}

/// The team run's events, oldest first: kind, node, note.
async fn events(s: &Stack, owner: LenserId, a: &Agent, id: TeamRunId) -> Vec<(K, Option<String>)> {
    let filter = EventFilter { team_run: Some(id), kind: None };
    let page = PageRequest::new(Some(100), None).unwrap();
    let listed = s.agents.list_events(&lenser(owner), a.id, &filter, page).await.unwrap();
    listed.items.iter().rev().map(|e| (e.kind, e.detail.node.clone())).collect()
}

async fn runs_of(s: &Stack, starter: LenserId, w: WorkflowId) -> Vec<Run> {
    let filter = RunFilter { workflow_id: Some(w), status: None, ..Default::default() };
    let page = PageRequest::new(Some(100), None).unwrap();
    s.runs.list_runs(starter, &filter, page).await.unwrap().items
}

async fn run_until(s: &Stack, id: RunId, done: impl Fn(&Run) -> bool) -> Run {
    for _ in 0..500 {
        let r = s.runs.get_run(id).await.unwrap();
        if done(&r) {
            return r;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("{:#?}", s.runs.get_run(id).await.unwrap());
}

fn wf_run(id: lf_core::RunId) -> RunId {
    RunId::from_uuid(id.as_uuid())
}

fn node(k: K, n: &str) -> (K, Option<String>) {
    (k, Some(n.to_owned()))
}

#[tokio::test]
async fn an_auto_team_run_runs_its_workflow_and_tells_its_steps_in_order() {
    let s = Stack::new();
    let owner = LenserId::new();
    let a = agent(&s, owner, "team_lead").await;
    let w = workflow(&s, owner, two_steps()).await;
    let started = s.agents.start_team_run(&service_as(owner), new_run(a.id, w, DelegationPolicy::Auto)).await;
    let id = started.unwrap().run.id;

    let done = until(&s, owner, &a, id, TeamRunStatus::Completed).await;
    let runs = runs_of(&s, owner, w).await;
    assert_eq!(runs.len(), 1, "one workflow run");
    let r = &runs[0];
    assert_eq!(done.workflow_run.map(wf_run), Some(r.id), "the team run names its workflow run");
    assert_eq!((r.origin, r.started_by, r.status()), (RunOrigin::Team, owner, RunStatus::Completed));
    assert_eq!(r.agent, Some(a.id), "started by the agent for its owner");
    assert_eq!(r.state.inputs["topic"], "rust", "the team run's inputs");
    assert_eq!(r.idempotency_key.as_ref().unwrap().as_str(), format!("team:{}:{id}", a.id));
    assert_eq!(
        events(&s, owner, &a, id).await,
        [
            (K::DispatchQueued, None),
            (K::DispatchStarted, None),
            node(K::NodeStarted, "first"),
            node(K::NodeCompleted, "first"),
            node(K::NodeStarted, "second"),
            node(K::NodeCompleted, "second"),
            (K::Completed, None),
        ]
    );

    // A catch-up finds nothing to do and doubles nothing.
    assert_eq!(s.own.catch_up_teams().await.unwrap(), TeamsCaughtUp::default());
    assert_eq!(events(&s, owner, &a, id).await.len(), 7);
    assert_eq!(runs_of(&s, owner, w).await.len(), 1);
}

#[tokio::test]
async fn an_approval_holds_the_run_and_a_rejection_never_starts_one() {
    let s = Stack::new();
    let owner = LenserId::new();
    let a = agent(&s, owner, "careful_lead").await;
    let w = workflow(&s, owner, two_steps()).await;
    let svc = service_as(owner);
    let held = s.agents.start_team_run(&svc, new_run(a.id, w, DelegationPolicy::ApprovalRequired)).await;
    let held = held.unwrap().run.id;
    let refused = s.agents.start_team_run(&svc, new_run(a.id, w, DelegationPolicy::ApprovalRequired)).await;
    let refused = refused.unwrap().run.id;

    tokio::time::sleep(Duration::from_millis(50)).await;
    s.own.catch_up_teams().await.unwrap();
    assert!(runs_of(&s, owner, w).await.is_empty(), "nothing runs before approval");
    assert_eq!(team_run(&s, owner, &a, held).await.status, TeamRunStatus::AwaitingApproval);

    s.agents.decide_approval(&lenser(owner), a.id, refused, false, None).await.unwrap();
    s.agents.decide_approval(&lenser(owner), a.id, held, true, None).await.unwrap();
    let done = until(&s, owner, &a, held, TeamRunStatus::Completed).await;
    let runs = runs_of(&s, owner, w).await;
    assert_eq!(runs.len(), 1, "only the approved one ran");
    assert_eq!(done.workflow_run.map(wf_run), Some(runs[0].id));
    let kinds: Vec<K> = events(&s, owner, &a, held).await.into_iter().map(|e| e.0).collect();
    assert_eq!(
        &kinds[..4],
        [K::ApprovalRequested, K::ApprovalGranted, K::DispatchQueued, K::DispatchStarted]
    );
    assert_eq!(kinds.last(), Some(&K::Completed));

    s.own.catch_up_teams().await.unwrap();
    let rejected = team_run(&s, owner, &a, refused).await;
    assert_eq!((rejected.status, rejected.workflow_run), (TeamRunStatus::Rejected, None));
    assert_eq!(runs_of(&s, owner, w).await.len(), 1, "the rejected one never starts");
}

#[tokio::test]
async fn cancelling_a_running_team_run_cancels_its_workflow_run() {
    let s = Stack::new();
    let owner = LenserId::new();
    let a = agent(&s, owner, "patient_lead").await;
    let wait = step("wait", "wait_delay", json!({"delay_ms": 3_600_000}));
    let w = workflow(&s, owner, vec![wait, step("after", "noop", json!({}))]).await;
    let started = s.agents.start_team_run(&service_as(owner), new_run(a.id, w, DelegationPolicy::Auto)).await;
    let id = started.unwrap().run.id;
    let running = until(&s, owner, &a, id, TeamRunStatus::Running).await;
    let run_id = wf_run(running.workflow_run.unwrap());
    run_until(&s, run_id, |r| r.status() == RunStatus::Running).await;

    let cancelled = s.agents.cancel_team_run(&lenser(owner), a.id, id, None).await.unwrap();
    assert_eq!(cancelled.run.status, TeamRunStatus::Cancelled);
    let stopped = run_until(&s, run_id, |r| r.status().is_final()).await;
    assert_eq!(stopped.status(), RunStatus::Cancelled, "its workflow run stops");
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(
        events(&s, owner, &a, id).await,
        [(K::DispatchQueued, None), (K::DispatchStarted, None), (K::RunCancelled, None)],
        "the workflow run's end adds nothing to a cancelled team run"
    );
    let again = s.agents.cancel_team_run(&lenser(owner), a.id, id, None).await.unwrap_err();
    assert_eq!(again.code(), ErrorCode::InvalidTransition);

    // A workflow run cancelled from outside cancels its team run.
    let started = s.agents.start_team_run(&service_as(owner), new_run(a.id, w, DelegationPolicy::Auto)).await;
    let id = started.unwrap().run.id;
    let run_id = wf_run(until(&s, owner, &a, id, TeamRunStatus::Running).await.workflow_run.unwrap());
    s.starts.cancel(&lenser(owner), run_id).await.unwrap();
    let t = until(&s, owner, &a, id, TeamRunStatus::Cancelled).await;
    assert!(t.error.unwrap().contains("was cancelled"));
}

#[tokio::test]
async fn a_failing_workflow_fails_the_team_run_with_its_error() {
    let s = Stack::new();
    let owner = LenserId::new();
    let a = agent(&s, owner, "unlucky_lead").await;
    let broken = step("broken", "extract_field", json!({"path": "$.nothing_here"}));
    let w = workflow(&s, owner, vec![step("first", "noop", json!({})), broken]).await;
    let started = s.agents.start_team_run(&service_as(owner), new_run(a.id, w, DelegationPolicy::Auto)).await;
    let id = started.unwrap().run.id;
    let failed = until(&s, owner, &a, id, TeamRunStatus::Failed).await;
    let run = &runs_of(&s, owner, w).await[0];
    assert_eq!(run.status(), RunStatus::Failed);
    let error = run.state.error.as_ref().unwrap().message.clone();
    assert_eq!(failed.error.as_deref(), Some(error.as_str()), "the workflow run's error");
    let seen = events(&s, owner, &a, id).await;
    assert_eq!(
        seen.iter().map(|e| e.0).collect::<Vec<_>>(),
        [
            K::DispatchQueued,
            K::DispatchStarted,
            K::NodeStarted,
            K::NodeCompleted,
            K::NodeStarted,
            K::NodeFailed,
            K::Failed
        ]
    );
    assert_eq!(seen[5].1.as_deref(), Some("broken"));

    // A workflow the agent's owner cannot read does not start: failed at once.
    let other = workflow(&s, LenserId::new(), two_steps()).await;
    let svc = service_as(owner);
    let t = s.agents.start_team_run(&svc, new_run(a.id, other, DelegationPolicy::Auto)).await.unwrap().run.id;
    let t = team_run(&s, owner, &a, t).await;
    assert_eq!((t.status, t.workflow_run), (TeamRunStatus::Failed, None));
    assert!(t.error.unwrap().contains("did not start"));
}

#[tokio::test]
async fn what_nobody_dispatched_or_heard_is_caught_up_once() {
    // No dispatch hook, no hearing of ends: as if every process died.
    let s = Stack::build_with(false, false);
    let owner = LenserId::new();
    let a = agent(&s, owner, "lonely_lead").await;
    let w = workflow(&s, owner, two_steps()).await;
    let svc = service_as(owner);
    let mut ids = Vec::new();
    for _ in 0..2 {
        ids.push(
            s.agents.start_team_run(&svc, new_run(a.id, w, DelegationPolicy::Auto)).await.unwrap().run.id,
        );
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(runs_of(&s, owner, w).await.is_empty(), "nobody dispatched them");

    let first = s.own.catch_up_teams().await.unwrap();
    assert_eq!(first.dispatched, 2);
    let runs = runs_of(&s, owner, w).await;
    assert_eq!(runs.len(), 2);
    for r in &runs {
        run_until(&s, r.id, |r| r.status().is_final()).await;
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    for id in &ids {
        assert_eq!(team_run(&s, owner, &a, *id).await.status, TeamRunStatus::Running, "nobody heard the end");
    }

    // The runner's own catch-up (battles and team runs) records both ends.
    s.own.catch_up().await;
    for id in &ids {
        let t = team_run(&s, owner, &a, *id).await;
        assert_eq!(t.status, TeamRunStatus::Completed);
        assert_eq!(events(&s, owner, &a, *id).await.len(), 7, "dispatch, two steps, completed");
    }
    assert_eq!(s.own.catch_up_teams().await.unwrap(), TeamsCaughtUp::default(), "then nothing waits");
    let runs = runs_of(&s, owner, w).await;
    assert_eq!(runs.len(), 2, "each team run has exactly one workflow run");
    let mut named: Vec<_> = Vec::new();
    for id in &ids {
        named.push(team_run(&s, owner, &a, *id).await.workflow_run.map(wf_run).unwrap());
    }
    let mut ran: Vec<_> = runs.iter().map(|r| r.id).collect();
    named.sort();
    ran.sort();
    assert_eq!(named, ran);
}
