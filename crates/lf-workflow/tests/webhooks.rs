//! Webhook secrets through the services on the memory stores: issued once
//! (creation or the first webhook version), rotated by the owner only,
//! checked in one refusal whatever is wrong, and runs started by a hook.

use std::sync::Arc;

use lf_core::{ErrorCode, LenserId, LfError, PageRequest, Principal, Scopes, WorkflowId};
use lf_workflow::hook::{IssuedWebhook, hook_path, hook_refused, is_webhook_secret};
use lf_workflow::run::{IdempotencyKey, MemoryRunStore, NoSignal, RunFilter, RunOrigin, RunService};
use lf_workflow::{
    MemoryConnections, MemoryLenses, MemoryWorkflowStore, NewWorkflow, RawBlueprint, RawStep,
    WorkflowService, WorkflowUpdate,
};
use pollster::block_on;
use serde_json::{Value, json};

struct World {
    workflows: Arc<WorkflowService>,
    runs: RunService,
    alice: LenserId,
    bob: LenserId,
}

fn as_(who: LenserId) -> Principal {
    Principal::Lenser { id: who, scopes: Scopes::READ_WRITE }
}

fn steps(trigger: &str) -> Value {
    json!([
        {"key": "start", "kind": "trigger", "name": "Start", "node_type": trigger},
        {"key": "log", "kind": "tool", "name": "Log", "node_type": "noop"}
    ])
}

fn connections() -> Value {
    json!([{"from_step": "start", "to_step": "log", "input_parameter": "input"}])
}

impl World {
    fn new() -> Self {
        let workflows = Arc::new(WorkflowService::new(
            Arc::new(MemoryWorkflowStore::new()),
            Arc::new(MemoryLenses::new()),
            Arc::new(MemoryConnections::new()),
        ));
        let runs = RunService::new(workflows.clone(), Arc::new(MemoryRunStore::new()), Arc::new(NoSignal));
        World { workflows, runs, alice: LenserId::new(), bob: LenserId::new() }
    }

    /// A public workflow of alice's with this trigger, and its webhook's
    /// secret if one was shown.
    fn create(&self, trigger: &str) -> (WorkflowId, Option<IssuedWebhook>) {
        let blueprint: RawBlueprint = serde_json::from_value(json!({
            "title": "Hooked", "visibility": "public", "steps": steps(trigger), "connections": connections()
        }))
        .unwrap();
        let c = block_on(self.workflows.create(&as_(self.alice), NewWorkflow { blueprint, owner: None }))
            .unwrap();
        (c.workflow.id, c.webhook)
    }

    fn retrigger(&self, id: WorkflowId, trigger: &str) -> Option<IssuedWebhook> {
        let mut u = WorkflowUpdate::new(id);
        u.steps = Some(serde_json::from_value::<Vec<RawStep>>(steps(trigger)).unwrap());
        u.connections = Some(serde_json::from_value(connections()).unwrap());
        block_on(self.workflows.update(&as_(self.alice), u)).unwrap().webhook
    }

    fn check(&self, id: WorkflowId, secret: Option<&str>) -> Result<(), LfError> {
        block_on(self.workflows.webhook_caller(id, secret)).map(|_| ())
    }
}

fn refused(r: Result<(), LfError>) {
    let e = r.expect_err("refused");
    assert_eq!((e.code(), e.message()), (ErrorCode::PermissionDenied, hook_refused().message()));
}

#[test]
fn a_secret_is_shown_once_when_the_workflow_first_gets_a_webhook_trigger() {
    let w = World::new();
    let (id, hook) = w.create("webhook_trigger");
    let hook = hook.expect("creation shows the secret");
    assert!(is_webhook_secret(hook.secret.expose()));
    assert_eq!((hook.workflow_id, hook.path()), (id, hook_path(id)));
    assert_eq!(w.retrigger(id, "webhook_trigger"), None, "a later version shows nothing");
    w.check(id, Some(hook.secret.expose())).expect("the secret opens the hook");

    let (manual, none) = w.create("manual_trigger");
    assert_eq!(none, None, "no webhook trigger, no secret");
    refused(w.check(manual, Some(hook.secret.expose())));
    let later = w.retrigger(manual, "webhook").expect("the first webhook version shows one");
    assert_ne!(later.secret, hook.secret);
    w.check(manual, Some(later.secret.expose())).unwrap();
    refused(w.check(manual, Some(hook.secret.expose())));
}

#[test]
fn every_refusal_is_the_same() {
    let w = World::new();
    let (id, hook) = w.create("webhook_trigger");
    let secret = hook.unwrap().secret;
    refused(w.check(id, None));
    refused(w.check(id, Some("")));
    refused(w.check(id, Some("lfwh_0000000000000000000000000000000000000000000000000000000000000000")));
    refused(w.check(WorkflowId::new(), Some(secret.expose())));
    // A head whose trigger is not a webhook's: the secret no longer opens it.
    w.retrigger(id, "manual_trigger");
    refused(w.check(id, Some(secret.expose())));
    w.retrigger(id, "webhook_trigger");
    w.check(id, Some(secret.expose())).expect("the secret is the workflow's, kept across versions");
    block_on(w.workflows.archive(&as_(w.alice), id, true)).unwrap();
    refused(w.check(id, Some(secret.expose())));
}

#[test]
fn rotating_replaces_the_secret_for_its_owner_only() {
    let w = World::new();
    let (id, hook) = w.create("webhook_trigger");
    let old = hook.unwrap().secret;
    let e = block_on(w.workflows.rotate_webhook_secret(&as_(w.bob), id)).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Forbidden, "a reader of a public workflow may not: {e:?}");
    w.check(id, Some(old.expose())).expect("a refused rotation changes nothing");

    let new = block_on(w.workflows.rotate_webhook_secret(&as_(w.alice), id)).unwrap();
    assert!(is_webhook_secret(new.secret.expose()) && new.secret != old);
    refused(w.check(id, Some(old.expose())));
    w.check(id, Some(new.secret.expose())).unwrap();

    let service = Principal::Service { acting_as: None };
    let third = block_on(w.workflows.rotate_webhook_secret(&service, id)).expect("the local operator may");
    refused(w.check(id, Some(new.secret.expose())));
    w.check(id, Some(third.secret.expose())).unwrap();

    let (manual, _) = w.create("manual_trigger");
    let e = block_on(w.workflows.rotate_webhook_secret(&as_(w.alice), manual)).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument);
    assert!(e.message().contains("manual_trigger") && e.message().contains("update_workflow"), "{e:?}");
    let e = block_on(w.workflows.rotate_webhook_secret(&as_(w.alice), WorkflowId::new())).unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotFound);
}

#[test]
fn a_hook_starts_one_run_per_idempotency_key_as_the_owner() {
    let w = World::new();
    let (id, hook) = w.create("webhook_trigger");
    let secret = hook.unwrap().secret;
    let inputs = json!({"email": "ada@example.com"}).as_object().unwrap().clone();
    let key = IdempotencyKey::parse("Idempotency-Key", "delivery-1").unwrap();
    let first =
        block_on(w.runs.start_from_webhook(id, Some(secret.expose()), inputs.clone(), Some(key.clone())))
            .unwrap();
    assert!(first.created);
    let run = &first.run;
    assert_eq!((run.origin, run.started_by, run.workflow_owner), (RunOrigin::Webhook, w.alice, w.alice));
    assert_eq!(run.state.inputs, Value::Object(inputs.clone()));
    let again =
        block_on(w.runs.start_from_webhook(id, Some(secret.expose()), inputs.clone(), Some(key))).unwrap();
    assert!(!again.created && again.run.id == run.id, "the same key answers the first run");

    let e = block_on(w.runs.start_from_webhook(id, Some("lfwh_nope"), inputs.clone(), None)).unwrap_err();
    assert_eq!(e.code(), ErrorCode::PermissionDenied);
    // Bad inputs are refused by start's checks.
    let secretive = json!({"api_key": "x"}).as_object().unwrap().clone();
    let e = block_on(w.runs.start_from_webhook(id, Some(secret.expose()), secretive, None)).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument, "{e:?}");
    let filter = RunFilter { workflow_id: Some(id), status: None, ..Default::default() };
    let listed = block_on(w.runs.list(&as_(w.alice), filter, PageRequest::default())).unwrap();
    assert_eq!(listed.total, 1, "only the first call made a run");
}
