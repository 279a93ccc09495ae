//! Event triggers on the in-memory stores with a real runner: a workflow
//! that follows an event runs, as its owner, for each such event its owner
//! may see, once per event; it never hears its own runs; and workflows
//! started by each other's runs run once per causal tree.

use std::sync::Arc;
use std::time::Duration;

use lf_core::{DomainEvent, EventKind, EventSink, LenserId, Principal, Scopes, WorkflowId};
use lf_lens::{LensService, MemoryLensStore};
use lf_workflow::WorkflowUpdate;
use lf_workflow::engine::RunStatus;
use lf_workflow::run::{Run, RunFilter, RunOrigin, RunStore, StartRun};
use serde_json::{Value, json};

mod support;

struct World {
    stack: support::Stack,
    lenses: LensService,
}

impl std::ops::Deref for World {
    type Target = support::Stack;
    fn deref(&self) -> &support::Stack {
        &self.stack
    }
}

fn lenser(id: LenserId) -> Principal {
    Principal::Lenser { id, scopes: Scopes::READ_WRITE }
}

impl World {
    fn new() -> Self {
        let stack = support::Stack::new();
        let lenses =
            LensService::new(Arc::new(MemoryLensStore::new())).with_events(Arc::new(stack.own.clone()));
        World { stack, lenses }
    }

    async fn workflow(&self, owner: LenserId, visibility: &str, trigger: Value) -> WorkflowId {
        support::create_workflow(
            &self.service,
            owner,
            json!({
                "title": "t", "visibility": visibility,
                "steps": [trigger, {"key": "log", "kind": "tool", "name": "Log", "node_type": "noop"}],
                "connections": [{"from_step": "start", "to_step": "log", "input_parameter": "input"}]
            }),
        )
        .await
    }

    async fn following(&self, owner: LenserId, event: &str) -> WorkflowId {
        let t = json!({"key": "start", "kind": "trigger", "name": "On", "node_type": "event_trigger", "config": {"event_type": event}});
        self.workflow(owner, "private", t).await
    }

    async fn runs_of(&self, owner: LenserId, wf: WorkflowId) -> Vec<Run> {
        let filter = RunFilter { workflow_id: Some(wf), status: None, ..Default::default() };
        let page = lf_core::PageRequest::new(Some(100), None).unwrap();
        self.runs.list_runs(owner, &filter, page).await.unwrap().items
    }

    /// Waits until every run has ended and no new one appeared for a while.
    async fn settle(&self, owner: LenserId) -> Vec<Run> {
        let mut last = usize::MAX;
        let mut calm = 0;
        for _ in 0..500 {
            tokio::time::sleep(Duration::from_millis(10)).await;
            let page = lf_core::PageRequest::new(Some(100), None).unwrap();
            let all = self.runs.list_runs(owner, &RunFilter::default(), page).await.unwrap().items;
            let ended = all.iter().all(|r| r.status().is_final());
            calm = if ended && all.len() == last { calm + 1 } else { 0 };
            last = all.len();
            if calm >= 10 {
                return all;
            }
        }
        panic!("the runs did not settle");
    }
}

fn manual() -> Value {
    json!({"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"})
}

fn new_lens(title: &str, visibility: lf_lens::Visibility) -> lf_lens::NewLens {
    lf_lens::NewLens {
        title: lf_lens::Title::parse(title).unwrap(),
        description: None,
        body: lf_lens::TemplateBody::parse(
            "Write three short, friendly sentences that explain [[Topic]] to a beginner.",
        )
        .unwrap(),
        visibility,
        params: Vec::new(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lens_event_starts_the_workflows_whose_owner_may_see_it() {
    let w = World::new();
    let (alice, bob) = (LenserId::new(), LenserId::new());
    let wf = w.following(alice, "lens.created").await;
    let updates = w.following(alice, "lens.updated").await;

    let mine = w.lenses.create(&lenser(alice), new_lens("Mine", lf_lens::Visibility::Private)).await.unwrap();
    w.lenses.create(&lenser(bob), new_lens("Bob's secret", lf_lens::Visibility::Private)).await.unwrap();
    let public =
        w.lenses.create(&lenser(bob), new_lens("Bob's public", lf_lens::Visibility::Public)).await.unwrap();
    w.settle(alice).await;
    let runs = w.runs_of(alice, wf).await;
    let mut heard: Vec<String> =
        runs.iter().map(|r| r.state.inputs["lens_id"].as_str().unwrap().to_owned()).collect();
    heard.sort();
    let mut expected = vec![mine.lens.id.to_string(), public.lens.id.to_string()];
    expected.sort();
    assert_eq!(heard, expected, "her own lens and Bob's public one, not his private one");
    for r in &runs {
        assert_eq!((r.origin, r.started_by, r.status()), (RunOrigin::Event, alice, RunStatus::Completed));
        assert_eq!(r.state.inputs["event"], "lens.created");
        assert!(r.idempotency_key.as_ref().unwrap().as_str().starts_with("event:"));
    }
    assert!(w.runs_of(alice, updates).await.is_empty(), "no lens was updated");

    // A new title alone makes no version; a new body does.
    let title = lf_lens::LensUpdate {
        title: Some(lf_lens::Title::parse("Renamed").unwrap()),
        ..lf_lens::LensUpdate::new(mine.lens.id)
    };
    w.lenses.update(&lenser(alice), title).await.unwrap();
    let body = lf_lens::TemplateBody::parse(
        "Write four short, friendly sentences that explain [[Topic]] to a beginner.",
    )
    .unwrap();
    let update = lf_lens::LensUpdate { body: Some(body), ..lf_lens::LensUpdate::new(mine.lens.id) };
    w.lenses.update(&lenser(alice), update).await.unwrap();
    w.settle(alice).await;
    let runs = w.runs_of(alice, updates).await;
    assert_eq!(runs.len(), 1, "one new version");
    assert_eq!(runs[0].state.inputs["event"], "lens.updated");
    assert_eq!(runs[0].state.inputs["title"], "Renamed");
    assert_eq!(runs[0].state.inputs["semver"], "1.0.1");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_event_heard_twice_starts_one_run() {
    let w = World::new();
    let alice = LenserId::new();
    let wf = w.following(alice, "battle.closed").await;
    let event = DomainEvent::new(EventKind::BattleClosed, LenserId::new(), true).with("battle_id", "b-1");
    w.own.publish(event.clone());
    w.own.publish(event);
    w.settle(alice).await;
    let runs = w.runs_of(alice, wf).await;
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].state.inputs, json!({"event": "battle.closed", "battle_id": "b-1"}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_that_ends_starts_its_followers_but_never_itself() {
    let w = World::new();
    let (alice, bob) = (LenserId::new(), LenserId::new());
    let work = w.workflow(alice, "private", manual()).await;
    let after = w.following(alice, "workflow.run.completed").await;
    let bobs = w.workflow(bob, "private", manual()).await;

    let s = StartRun { workflow_id: Some(work), ..Default::default() };
    let first = w.starts.start(&lenser(alice), s).await.unwrap().run.id;
    let s = StartRun { workflow_id: Some(bobs), ..Default::default() };
    w.starts.start(&lenser(bob), s).await.unwrap();
    w.settle(alice).await;
    w.settle(bob).await;
    let heard = w.runs_of(alice, after).await;
    assert_eq!(heard.len(), 1, "one run for her run; none for Bob's private one, none for its own end");
    let r = heard[0].clone();
    assert_eq!(r.parent_run_id, Some(first), "linked to the run whose end it heard");
    assert_eq!(r.state.inputs["run_id"], first.to_string());
    assert_eq!(r.state.inputs["status"], "completed");
    assert_eq!(r.state.inputs["workflow_id"], work.to_string());

    // Bob's run of Bob's public workflow is Bob's: she does not hear its end ...
    let open = w.workflow(bob, "public", manual()).await;
    let s = StartRun { workflow_id: Some(open), ..Default::default() };
    let bobs_run = w.starts.start(&lenser(bob), s.clone()).await.unwrap().run.id;
    w.settle(bob).await;
    w.settle(alice).await;
    assert_eq!(w.runs_of(alice, after).await.len(), 1, "a run she may not read is not heard");
    // ... but she hears the end of her own run of it ...
    let hers = w.starts.start(&lenser(alice), s.clone()).await.unwrap().run.id;
    w.settle(alice).await;
    w.settle(bob).await;
    let heard = w.runs_of(alice, after).await;
    assert_eq!(heard.len(), 2);
    assert!(heard.iter().any(|r| r.state.inputs["run_id"] == hers.to_string()));
    // ... and of Bob's, once he opens its runs.
    let mut public_runs = WorkflowUpdate::new(open);
    public_runs.public_runs = Some(true);
    w.service.update(&lenser(bob), public_runs).await.unwrap();
    w.starts.start(&lenser(bob), s).await.unwrap();
    w.settle(bob).await;
    w.settle(alice).await;
    let heard = w.runs_of(alice, after).await;
    assert_eq!(heard.len(), 3);
    assert!(heard.iter().all(|r| r.state.inputs["run_id"] != bobs_run.to_string()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workflows_that_follow_each_other_run_once_per_tree() {
    let w = World::new();
    let alice = LenserId::new();
    let work = w.workflow(alice, "private", manual()).await;
    let ping = w.following(alice, "workflow.run.completed").await;
    let pong = w.following(alice, "workflow.run.completed").await;
    let s = StartRun { workflow_id: Some(work), ..Default::default() };
    let root = w.starts.start(&lenser(alice), s).await.unwrap().run;
    assert_eq!((root.root_run_id, root.caused_by), (root.id, None), "a manual run is its own root");
    let all = w.settle(alice).await;
    // The first run, then one run of each follower: each hears the other's
    // end, but already has its run in that tree.
    assert_eq!(all.len(), 3, "{} runs", all.len());
    for f in [ping, pong] {
        let runs = w.runs_of(alice, f).await;
        assert_eq!(runs.len(), 1);
        assert_eq!((runs[0].caused_by, runs[0].root_run_id), (Some(root.id), root.id));
    }
    w.runner.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_label_move_starts_its_followers_once_per_move_with_the_move_as_inputs() {
    let w = World::new();
    let alice = LenserId::new();
    let moves = w.following(alice, "lens.label_moved").await;
    let created = w.following(alice, "lens.created").await;
    let me = lenser(alice);
    let lens = w.lenses.create(&me, new_lens("Explainer", lf_lens::Visibility::Private)).await.unwrap();
    let body = lf_lens::TemplateBody::parse(
        "Write four short, friendly sentences that explain [[Topic]] to a beginner.",
    )
    .unwrap();
    let update = lf_lens::LensUpdate { body: Some(body), ..lf_lens::LensUpdate::new(lens.lens.id) };
    w.lenses.update(&me, update).await.unwrap();
    let set = |semver: &str| lf_lens::SetLabel {
        lens_id: lens.lens.id,
        label: lf_lens::LabelName::parse("label", "production").unwrap(),
        version: lf_lens::VersionSelector::Semver(lf_lens::Semver::parse(semver).unwrap()),
        protect: None,
    };
    let first = w.lenses.set_label(&me, set("1.0.0"), false).await.unwrap();
    w.settle(alice).await;
    let second = w.lenses.set_label(&me, set("1.0.1"), false).await.unwrap();
    // Pointing it where it points is no move.
    w.lenses.set_label(&me, set("1.0.1"), false).await.unwrap();
    w.settle(alice).await;

    let mut runs = w.runs_of(alice, moves).await;
    runs.sort_by_key(|r| r.created_at);
    assert_eq!(runs.len(), 2, "one run per move");
    let v = |l: &lf_lens::LabelSet| l.label.version;
    let (v1, v2) = (v(&first), v(&second));
    assert_eq!(
        runs[0].state.inputs,
        json!({"event": "lens.label_moved", "lens_id": lens.lens.id.to_string(), "title": "Explainer",
               "label": "production", "from_version_id": "", "from_semver": "",
               "to_version_id": v1.id.to_string(), "to_semver": "1.0.0"})
    );
    assert_eq!(runs[1].state.inputs["from_version_id"], v1.id.to_string());
    assert_eq!(runs[1].state.inputs["from_semver"], "1.0.0");
    assert_eq!(runs[1].state.inputs["to_version_id"], v2.id.to_string());
    assert_eq!(runs[1].state.inputs["to_semver"], "1.0.1");
    for r in &runs {
        assert_eq!((r.origin, r.started_by, r.status()), (RunOrigin::Event, alice, RunStatus::Completed));
    }
    assert_eq!(w.runs_of(alice, created).await.len(), 1, "the other followers hear only their event");
}
