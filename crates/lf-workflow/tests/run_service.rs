//! Who may control a run, and what a start refuses before it looks
//! anything up, on the in-memory stores with nothing running the runs.

use std::sync::Arc;

use lf_core::{ErrorCode, LenserId, PageRequest, Principal, Scopes};
use lf_workflow::run::{IdempotencyKey, MemoryRunStore, NoSignal, RunFilter, RunService, StartRun};
use lf_workflow::{
    MemoryConnections, MemoryLenses, MemoryWorkflowStore, NewWorkflow, RawBlueprint, WorkflowService,
    WorkflowUpdate,
};
use serde_json::json;

fn lenser(id: LenserId) -> Principal {
    Principal::Lenser { id, scopes: Scopes::READ_WRITE }
}

fn services() -> (Arc<WorkflowService>, RunService) {
    let workflows = Arc::new(WorkflowService::new(
        Arc::new(MemoryWorkflowStore::new()),
        Arc::new(MemoryLenses::new()),
        Arc::new(MemoryConnections::new()),
    ));
    let runs = RunService::new(workflows.clone(), Arc::new(MemoryRunStore::new()), Arc::new(NoSignal));
    (workflows, runs)
}

async fn public_workflow(workflows: &WorkflowService, owner: &Principal) -> lf_core::WorkflowId {
    workflow_of(workflows, owner, "public").await
}

async fn workflow_of(
    workflows: &WorkflowService,
    owner: &Principal,
    visibility: &str,
) -> lf_core::WorkflowId {
    let blueprint: RawBlueprint = serde_json::from_value(json!({
        "title": "Log it", "visibility": visibility,
        "steps": [
            {"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"},
            {"key": "log", "kind": "tool", "name": "Log", "node_type": "noop"}
        ],
        "connections": [{"from_step": "start", "to_step": "log", "input_parameter": "input"}]
    }))
    .unwrap();
    workflows.create(owner, NewWorkflow { blueprint, owner: None }).await.unwrap().workflow.id
}

#[test]
fn the_starter_the_owner_and_the_operator_control_a_run_and_nobody_else() {
    pollster::block_on(async {
        let (workflows, runs) = services();
        let (owner, starter, other) = (LenserId::new(), LenserId::new(), LenserId::new());
        let workflow = public_workflow(&workflows, &lenser(owner)).await;
        let start = || StartRun { workflow_id: Some(workflow), ..Default::default() };
        let run = runs.start(&lenser(starter), start()).await.unwrap().run;

        // Another reader of the workflow does not see the run at all.
        let e = runs.cancel(&lenser(other), run.id).await.unwrap_err();
        assert_eq!(e.code(), ErrorCode::NotFound, "{}", e.message());
        let e = runs.retry(&lenser(other), run.id, false).await.unwrap_err();
        assert_eq!(e.code(), ErrorCode::NotFound, "{}", e.message());
        // With public runs they read it, and still may not control it.
        let mut open = WorkflowUpdate::new(workflow);
        open.public_runs = Some(true);
        workflows.update(&lenser(owner), open).await.unwrap();
        let e = runs.cancel(&lenser(other), run.id).await.unwrap_err();
        assert_eq!(e.code(), ErrorCode::Forbidden, "{}", e.message());
        let e = runs.retry(&lenser(other), run.id, false).await.unwrap_err();
        assert_eq!(e.code(), ErrorCode::Forbidden, "{}", e.message());
        for who in [lenser(starter), lenser(owner), Principal::Service { acting_as: Some(other) }] {
            let run = runs.start(&lenser(starter), start()).await.unwrap().run;
            let asked = runs.cancel(&who, run.id).await.unwrap();
            assert_eq!(asked.cancel_requested_by, who.lenser().map(|l| l.to_string()), "{who:?}");
            // Still pending: nothing runs it. Only a failed or cancelled run is retried.
            let e = runs.retry(&who, run.id, true).await.unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidTransition, "{who:?}: {}", e.message());
        }
    });
}

#[test]
fn a_reader_of_a_public_workflow_reads_only_the_runs_they_started() {
    pollster::block_on(async {
        let (workflows, runs) = services();
        let (owner, a, b) = (LenserId::new(), LenserId::new(), LenserId::new());
        let workflow = public_workflow(&workflows, &lenser(owner)).await;
        let key = IdempotencyKey::parse("idempotency_key", "nightly").unwrap();
        let start = || StartRun {
            workflow_id: Some(workflow),
            idempotency_key: Some(key.clone()),
            ..Default::default()
        };
        let by_owner = runs.start(&lenser(owner), start()).await.unwrap().run;
        let by_a = runs.start(&lenser(a), start()).await.unwrap();
        assert!(by_a.created, "another starter's key is not the owner's");
        let by_a = by_a.run;
        let of = RunFilter { workflow_id: Some(workflow), ..Default::default() };
        let page = PageRequest::default();
        let listed = |p: Principal| {
            let (runs, of) = (&runs, of.clone());
            async move {
                runs.list(&p, of, page).await.unwrap().items.into_iter().map(|r| r.id).collect::<Vec<_>>()
            }
        };
        assert_eq!(listed(lenser(owner)).await, [by_a.id, by_owner.id], "the owner reads every run");
        assert_eq!(listed(lenser(a)).await, [by_a.id], "a starter reads theirs");
        assert!(listed(lenser(b)).await.is_empty(), "another reader none");
        let agent = Principal::Agent { agent_id: LenserId::new(), owner: a };
        assert_eq!(listed(agent.clone()).await, [by_a.id], "an agent reads as its owner");
        for (who, run, readable) in [
            (lenser(owner), by_a.id, true),
            (lenser(a), by_a.id, true),
            (agent, by_a.id, true),
            (lenser(a), by_owner.id, false),
            (lenser(b), by_a.id, false),
            (Principal::Service { acting_as: Some(b) }, by_a.id, true),
        ] {
            let got = runs.get(&who, run).await.map(|_| ());
            let log = runs.log(&who, run).await.map(|_| ());
            for r in [got, log] {
                match readable {
                    true => assert!(r.is_ok(), "{who:?} reads {run}"),
                    false => assert_eq!(r.unwrap_err().code(), ErrorCode::NotFound, "{who:?} on {run}"),
                }
            }
        }
        let again = runs.start(&lenser(b), start()).await.unwrap();
        assert!(again.created && again.run.started_by == b, "a repeated key never hands over another's run");

        let mut open = WorkflowUpdate::new(workflow);
        open.public_runs = Some(true);
        workflows.update(&lenser(owner), open).await.unwrap();
        assert_eq!(listed(lenser(b)).await.len(), 3, "with public runs every reader reads every run");
        assert!(runs.log(&lenser(b), by_owner.id).await.is_ok());
        let mut a_try = WorkflowUpdate::new(workflow);
        a_try.public_runs = Some(false);
        let e = workflows.update(&lenser(a), a_try).await.unwrap_err();
        assert_eq!(e.code(), ErrorCode::Forbidden, "only the owner sets it: {}", e.message());
    });
}

#[test]
fn a_start_refuses_oversized_deep_or_secret_inputs_first() {
    pollster::block_on(async {
        let (workflows, runs) = services();
        let me = lenser(LenserId::new());
        let workflow = public_workflow(&workflows, &me).await;
        let with = |inputs: serde_json::Value, model: Option<&str>| StartRun {
            workflow_id: Some(workflow),
            inputs: inputs.as_object().unwrap().clone(),
            global_model_id: model.map(str::to_owned),
            ..Default::default()
        };
        for (s, field) in [
            (with(json!({"token": "abc"}), None), "inputs"),
            (with(json!({"text": "x".repeat(lf_workflow::run::MAX_INPUT_BYTES)}), None), "inputs"),
            (with(json!({}), Some(" ")), "global_model_id"),
        ] {
            let e = runs.start(&me, s).await.unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidArgument);
            assert!(format!("{:?}", e.details()).contains(field), "{}", e.message());
        }
        let ok = runs.start(&me, with(json!({"topic": "tides"}), Some("local-model"))).await.unwrap();
        assert_eq!(ok.run.global_model_id.as_deref(), Some("local-model"));
    });
}

#[test]
fn a_run_of_someone_elses_workflow_uses_the_starters_connections() {
    pollster::block_on(async {
        let connections = Arc::new(MemoryConnections::new());
        let workflows = Arc::new(WorkflowService::new(
            Arc::new(MemoryWorkflowStore::new()),
            Arc::new(MemoryLenses::new()),
            connections.clone(),
        ));
        let runs = RunService::new(workflows.clone(), Arc::new(MemoryRunStore::new()), Arc::new(NoSignal));
        let (owner, other) = (LenserId::new(), LenserId::new());
        connections.insert(owner, "slack", "team-slack");
        let blueprint: RawBlueprint = serde_json::from_value(json!({
            "title": "Post it", "visibility": "public",
            "steps": [
                {"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"},
                {"key": "post", "kind": "tool", "name": "Post", "node_type": "slack_notify", "config": {"text": "hi"},
                 "connector": {"provider": "slack", "connection_ref": "team-slack"}}
            ],
            "connections": [{"from_step": "start", "to_step": "post", "input_parameter": "input"}]
        }))
        .unwrap();
        let workflow = workflows
            .create(&lenser(owner), NewWorkflow { blueprint, owner: None })
            .await
            .unwrap()
            .workflow
            .id;
        let start = || StartRun { workflow_id: Some(workflow), ..Default::default() };
        assert!(runs.start(&lenser(owner), start()).await.is_ok(), "the owner runs it with their connection");
        let e = runs.start(&lenser(other), start()).await.unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument);
        assert!(e.message().contains("team-slack"), "the missing connection is named: {}", e.message());
        connections.insert(other, "slack", "team-slack");
        assert!(
            runs.start(&lenser(other), start()).await.is_ok(),
            "with a connection of their own of that ref"
        );
    });
}

#[test]
fn a_trigger_starts_a_private_workflow_as_its_owner() {
    pollster::block_on(async {
        let (workflows, runs) = services();
        let owner = LenserId::new();
        let workflow = workflow_of(&workflows, &lenser(owner), "private").await;
        // Someone else cannot even see it...
        let e = runs
            .start(&lenser(LenserId::new()), StartRun { workflow_id: Some(workflow), ..Default::default() })
            .await
            .unwrap_err();
        assert_eq!(e.code(), ErrorCode::NotFound, "{}", e.message());
        // ...but its own trigger starts it, as its owner.
        let started = runs
            .start_triggered(
                lf_workflow::run::RunOrigin::Schedule,
                owner,
                None,
                StartRun { workflow_id: Some(workflow), ..Default::default() },
            )
            .await
            .unwrap();
        assert!(started.created);
        assert_eq!(started.run.started_by, owner);
        assert_eq!(started.run.origin, lf_workflow::run::RunOrigin::Schedule);
        let e = runs
            .start_triggered(lf_workflow::run::RunOrigin::Webhook, owner, None, StartRun::default())
            .await
            .unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument);
    })
}
