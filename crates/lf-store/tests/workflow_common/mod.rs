//! Workflow races on real tasks (tokio::spawn, several worker threads),
//! beyond lf-workflow's contract suite, which runs its calls one at a time.
//! Each race takes one or more stores over one database (several stores:
//! as several server processes would have) and spreads its tasks over them.

#![allow(dead_code)] // Each test target uses some of these.

use std::sync::Arc;

use lf_core::{Clock, ErrorCode, LenserId, Reach, SystemClock, WorkflowId};
use lf_workflow::catalog::catalog;
use lf_workflow::{
    GraphDraft, RawConnection, RawStep, Title, VersionSelector, Visibility, Workflow, WorkflowPatch,
    WorkflowStore, WorkflowVersion,
};

/// A trigger and `n` no-op steps it feeds.
fn graph(n: usize) -> GraphDraft {
    let step = |key: &str, kind: &str, node_type: &str| RawStep {
        key: key.into(),
        kind: kind.into(),
        name: key.into(),
        node_type: Some(node_type.into()),
        ..Default::default()
    };
    let mut steps = vec![step("start", "trigger", "manual_trigger")];
    let mut connections = Vec::new();
    for i in 0..n {
        let key = format!("step-{i}");
        steps.push(step(&key, "tool", "noop"));
        connections.push(RawConnection {
            from_step: "start".into(),
            to_step: key,
            input_parameter: "input".into(),
            ..Default::default()
        });
    }
    GraphDraft::parse(steps, connections, catalog()).expect("the graph parses")
}

fn version_of(id: WorkflowId, number: u32, owner: LenserId, n: usize) -> WorkflowVersion {
    graph(n).into_version(id, number, format!("Version {number}."), owner, SystemClock.now())
}

/// The workflow whose first version is `v1`.
fn workflow_of(v1: &WorkflowVersion, visibility: Visibility) -> Workflow {
    let now = SystemClock.now();
    Workflow {
        id: v1.workflow_id,
        owner: v1.created_by,
        title: Title::parse("Stored whole").unwrap(),
        description: None,
        visibility,
        public_runs: false,
        head_version_id: v1.id,
        head_version: 1,
        created_at: now,
        updated_at: now,
        archived_at: None,
        agent: None,
    }
}

/// A new private workflow of `owner` with two steps, stored: for tests of
/// what is stored beside workflows (runs).
pub async fn stored_workflow(store: &dyn WorkflowStore, owner: LenserId) -> WorkflowVersion {
    let v1 = version_of(WorkflowId::new(), 1, owner, 2);
    store.create_workflow(&workflow_of(&v1, Visibility::Private), &v1).await.unwrap();
    v1
}

/// Many tasks append a version to the same head at once: exactly one wins,
/// every other one gets CONFLICT, and the workflow ends with two versions,
/// the winner's its head.
pub async fn racing_appends(stores: &[Arc<dyn WorkflowStore>]) {
    let owner = LenserId::new();
    let id = WorkflowId::new();
    let v1 = version_of(id, 1, owner, 2);
    stores[0].create_workflow(&workflow_of(&v1, Visibility::Private), &v1).await.unwrap();
    let tasks: Vec<_> = (0..16)
        .map(|i| {
            let store = stores[i % stores.len()].clone();
            let version = version_of(id, 2, owner, i % 5);
            let expected = v1.id;
            tokio::spawn(async move {
                let done = store.append_version(id, expected, &version, &WorkflowPatch::default()).await;
                done.map(|()| version)
            })
        })
        .collect();
    let mut winners = Vec::new();
    for task in tasks {
        match task.await.unwrap() {
            Ok(v) => winners.push(v),
            Err(e) => assert_eq!(e.code(), ErrorCode::Conflict, "{e:?}"),
        }
    }
    assert_eq!(winners.len(), 1, "exactly one append wins the race");
    let s = &stores[0];
    assert_eq!(s.list_versions(Reach::Everything, id).await.unwrap().len(), 2);
    let head = s.get_version(Reach::Everything, id, VersionSelector::Head).await.unwrap();
    assert_eq!(head, winners[0], "the winner's version is the head, whole");
}

/// A version as large as a blueprint may be (100 steps, 300 connections)
/// is written and read back whole.
pub async fn the_largest_version(store: Arc<dyn WorkflowStore>) {
    let owner = LenserId::new();
    let id = WorkflowId::new();
    let mut v1 = version_of(id, 1, owner, 99);
    // 201 more edges between the 99 tool steps, for 300 in all.
    let extra: Vec<_> = (0..201)
        .map(|i| {
            let mut e = v1.edges[i % 99].clone();
            e.id = lf_workflow::EdgeId::new();
            e.from = v1.nodes[1 + i % 99].id;
            e.to = v1.nodes[1 + (i + 1) % 99].id;
            e.ordinal = 99 + i as u32;
            e
        })
        .collect();
    v1.edges.extend(extra);
    store.create_workflow(&workflow_of(&v1, Visibility::Public), &v1).await.unwrap();
    let got = store.get_version(Reach::Lenser(LenserId::new()), id, VersionSelector::Head).await.unwrap();
    assert_eq!((got.nodes.len(), got.edges.len()), (100, 300));
    assert_eq!(got, v1);
}
