//! Run races on real tasks (tokio::spawn, several worker threads), beyond
//! lf-workflow's run contract suite, which makes its calls one at a time.
//! Each race takes one or more run stores over one database (several: as
//! several server processes would have) and spreads its tasks over them.
//! Claims take every due run of a database: give each race a database (or
//! PostgreSQL schema) in which nothing else makes runs meanwhile.

#![allow(dead_code)] // Each test target uses some of these.

use std::collections::BTreeSet;
use std::sync::Arc;

use lf_core::{Clock, LenserId, PageRequest, SystemClock, Timestamp};
use lf_workflow::engine::{Limits, RunState, RunStatus};
use lf_workflow::run::{
    Caused, EventBounds, IdempotencyKey, Lease, Room, Run, RunFilter, RunId, RunOrigin, RunStore,
};
use lf_workflow::{WorkflowStore, WorkflowVersion};
use serde_json::json;

use crate::workflow_common::stored_workflow;

const LEASE_MS: u64 = 600_000;

/// A pending run of `v`, made at `at`.
fn pending_run(v: &WorkflowVersion, at: Timestamp, key: Option<&IdempotencyKey>) -> Run {
    let id = RunId::new();
    Run {
        id,
        workflow_id: v.workflow_id,
        version_id: v.id,
        version: v.number,
        workflow_owner: v.created_by,
        started_by: v.created_by,
        agent: None,
        origin: RunOrigin::Manual,
        parent_run_id: None,
        caused_by: None,
        root_run_id: id,
        tree_full_at: None,
        idempotency_key: key.cloned(),
        global_model_id: None,
        resume_from: None,
        created_at: at,
        cancel_requested_by: None,
        state: RunState::new(json!({"n": 1}), Limits::default()),
    }
}

/// Ends the runs held under `leases`.
async fn end_all(store: &dyn RunStore, leases: &[Lease]) {
    for lease in leases {
        let mut state = store.get_run(lease.run).await.unwrap().state;
        state.status = RunStatus::Completed;
        assert!(store.save(lease, &state, &[], true).await.unwrap(), "the claimer holds its runs");
    }
}

/// Twenty tasks create a run of one workflow with one idempotency key at
/// once: exactly one run is made, and every call answers it.
pub async fn racing_creates_with_one_key(stores: &[Arc<dyn RunStore>], workflows: &dyn WorkflowStore) {
    let v = stored_workflow(workflows, LenserId::new()).await;
    let key = IdempotencyKey::parse("idempotency_key", "racing-key").unwrap();
    let now = SystemClock.now();
    let tasks: Vec<_> = (0..20)
        .map(|i| {
            let store = stores[i % stores.len()].clone();
            let run = pending_run(&v, now.plus_micros(i as i64), Some(&key));
            tokio::spawn(async move { store.create_run(&run).await.unwrap() })
        })
        .collect();
    let mut made = Vec::new();
    let mut answered = BTreeSet::new();
    for task in tasks {
        let (run, new) = task.await.unwrap();
        answered.insert(run.id);
        if new {
            made.push(run.id);
        }
    }
    assert_eq!(made.len(), 1, "exactly one of the racing creations makes a run");
    assert_eq!(answered, BTreeSet::from([made[0]]), "and every one answers that run");
    let store = &stores[0];
    let of_workflow = RunFilter { workflow_id: Some(v.workflow_id), status: None, ..Default::default() };
    let listed = store.list_runs(v.created_by, &of_workflow, PageRequest::default()).await.unwrap();
    assert_eq!(listed.total, 1, "one run is stored");
    let leases = store.claim("race-cleanup", now, LEASE_MS, &Room::up_to(10_000)).await.unwrap();
    end_all(store.as_ref(), &leases).await;
}

/// Twenty tasks each make a run that an event starts in one tree (tree
/// bound 5), then twenty more each a run that is its own root for one
/// starter (5 a minute): each bound holds exactly, and the full tree is
/// recorded on its root once.
pub async fn racing_caused(stores: &[Arc<dyn RunStore>], workflows: &dyn WorkflowStore) {
    let bounds = EventBounds { tree_max: 5, per_minute: 5 };
    let now = SystemClock.now();
    let root_v = stored_workflow(workflows, LenserId::new()).await;
    let root = pending_run(&root_v, now, None);
    stores[0].create_run(&root).await.unwrap();
    let race = |runs: Vec<Run>| {
        let tasks: Vec<_> = runs
            .into_iter()
            .enumerate()
            .map(|(i, run)| {
                let store = stores[i % stores.len()].clone();
                tokio::spawn(async move { store.create_caused(&run, bounds).await.unwrap() })
            })
            .collect();
        async move {
            let mut out = Vec::new();
            for t in tasks {
                out.push(t.await.unwrap());
            }
            out
        }
    };
    let mut followers = Vec::new();
    for i in 0..20 {
        let v = stored_workflow(workflows, LenserId::new()).await;
        let mut run = pending_run(&v, now.plus_micros(i + 1), None);
        run.origin = RunOrigin::Event;
        (run.caused_by, run.root_run_id) = (Some(root.id), root.id);
        followers.push(run);
    }
    let got = race(followers).await;
    let made = got.iter().filter(|c| matches!(c, Caused::Made(_, true))).count();
    let first = got.iter().filter(|c| **c == Caused::TreeFull { first: true }).count();
    assert_eq!((made, first), (5, 1), "five runs in the tree, the skip recorded once: {got:?}");
    assert!(stores[0].get_run(root.id).await.unwrap().tree_full_at.is_some());

    let owner = LenserId::new();
    let mut lone = Vec::new();
    for i in 0..20 {
        let v = stored_workflow(workflows, owner).await;
        lone.push(Run { origin: RunOrigin::Event, ..pending_run(&v, now.plus_micros(100 + i), None) });
    }
    let got = race(lone).await;
    let made = got.iter().filter(|c| matches!(c, Caused::Made(_, true))).count();
    let fast = got.iter().filter(|c| **c == Caused::TooFast).count();
    assert_eq!((made, fast), (5, 15), "five a minute for one starter: {got:?}");
    let leases = stores[0]
        .claim("race-cleanup", now.plus_micros(1_000), LEASE_MS, &Room::up_to(10_000))
        .await
        .unwrap();
    end_all(stores[0].as_ref(), &leases).await;
}

/// Claim loops, two tasks on each store, over 200 pending runs: every run
/// is claimed exactly once, and none is left due.
pub async fn racing_claims(stores: &[Arc<dyn RunStore>], workflows: &dyn WorkflowStore) {
    let v = stored_workflow(workflows, LenserId::new()).await;
    let now = SystemClock.now();
    let mut ours = BTreeSet::new();
    for i in 0..200 {
        let run = pending_run(&v, now.plus_micros(i - 1_000_000), None);
        ours.insert(stores[0].create_run(&run).await.unwrap().0.id);
    }
    let loops = 2 * stores.len();
    let start = Arc::new(tokio::sync::Barrier::new(loops));
    let tasks: Vec<_> = (0..loops)
        .map(|i| {
            let (store, start) = (stores[i % stores.len()].clone(), start.clone());
            tokio::spawn(async move {
                let owner = format!("race-{i}");
                start.wait().await;
                let mut leases = Vec::new();
                // A claim that finds nothing ends the loop: what another
                // claim locked meanwhile, that claim takes.
                loop {
                    let got = store.claim(&owner, now, LEASE_MS, &Room::up_to(7)).await.unwrap();
                    if got.is_empty() {
                        return leases;
                    }
                    assert!(got.iter().all(|l| l.owner == owner));
                    leases.extend(got);
                }
            })
        })
        .collect();
    let mut leases = Vec::new();
    for task in tasks {
        leases.extend(task.await.unwrap());
    }
    let claimed: Vec<RunId> = leases.iter().map(|l| l.run).collect();
    let distinct: BTreeSet<RunId> = claimed.iter().copied().collect();
    assert_eq!(distinct.len(), claimed.len(), "no run is claimed twice");
    assert!(ours.is_subset(&distinct), "every run is claimed");
    assert!(
        stores[0].claim("race-late", now, LEASE_MS, &Room::up_to(10_000)).await.unwrap().is_empty(),
        "none is left due"
    );
    end_all(stores[0].as_ref(), &leases).await;
}
