//! The public contract suite every [`RunStore`] runs: the in-memory store
//! here, SQLite and PostgreSQL in lf-store. Runs name workflow versions,
//! so the suite makes its workflows in the paired [`WorkflowStore`].
//!
//! ```text
//! lf_workflow::run::contract::suite(runs, workflows).await;
//! ```
//!
//! Each check uses fresh workflows and lensers and ends every run it
//! made, so the suite runs against a store that already holds data and
//! may run several times. `claim` sees every due run of the store, so the
//! checks claim generously and look only at their own runs; the store must
//! not be shared with a live runner while the suite runs (its wall-clock
//! claims would take the suite's runs).

use std::collections::BTreeMap;
use std::sync::Arc;

use lf_core::{ErrorCode, LenserId, PageRequest, Timestamp, WorkflowId};
use serde_json::json;

use super::model::{Caused, Held, IdempotencyKey, Room, Run, RunFilter, RunId, RunOrigin};
use super::store::RunStore;
use crate::contract::Fixture;
use crate::engine::{
    Failure, Limits, LogLevel, LogLine, NodeRun, NodeStatus, RunError, RunState, RunStatus, Slot, Usage,
};
use crate::model::Visibility;
use crate::store::WorkflowStore;

/// Runs every check against `runs`, making workflows in `workflows`.
pub async fn suite(runs: Arc<dyn RunStore>, workflows: Arc<dyn WorkflowStore>) {
    let (r, w) = (runs.as_ref(), workflows.as_ref());
    round_trip(r, w).await;
    agents(r, w).await;
    idempotency(r, w).await;
    caused(r, w).await;
    claims_and_leases(r, w).await;
    claims_in_turns(r, w).await;
    release_and_wake(r, w).await;
    cancel_requests(r, w).await;
    listing(r, w).await;
}

/// The checks of [`RunStore::wake`], for a store that implements it (the
/// memory store; the default, which does nothing, does not pass them).
pub async fn wake_suite(runs: Arc<dyn RunStore>, workflows: Arc<dyn WorkflowStore>) {
    wakes_waiting_steps(runs.as_ref(), workflows.as_ref()).await;
}

const LEASE_MS: u64 = 30_000;
/// Claims everything due, so that runs of other checks cannot crowd out a
/// check's own.
const ALL: u32 = 10_000;

struct Ctx {
    fx: Fixture,
}

impl Ctx {
    fn new() -> Self {
        Ctx { fx: Fixture::new() }
    }

    fn now(&mut self) -> Timestamp {
        self.fx.tick()
    }

    /// A workflow of `owner` and a pending run of it by `starter`.
    async fn workflow(
        &mut self,
        w: &dyn WorkflowStore,
        owner: LenserId,
    ) -> (WorkflowId, crate::model::WorkflowVersionId) {
        let (wf, v) = self.fx.create(w, owner, Visibility::Private).await;
        (wf.id, v.id)
    }

    fn run(
        &mut self,
        on: (WorkflowId, crate::model::WorkflowVersionId),
        owner: LenserId,
        starter: LenserId,
    ) -> Run {
        let created_at = self.now();
        let id = RunId::new();
        Run {
            id,
            workflow_id: on.0,
            version_id: on.1,
            version: 1,
            workflow_owner: owner,
            started_by: starter,
            agent: None,
            origin: RunOrigin::Manual,
            parent_run_id: None,
            caused_by: None,
            root_run_id: id,
            tree_full_at: None,
            idempotency_key: None,
            global_model_id: None,
            resume_from: None,
            created_at,
            cancel_requested_by: None,
            state: RunState::new(json!({"topic": "ünïcödé", "z": 1, "a": [1, 2.5, null]}), Limits::default()),
        }
    }
}

async fn create(r: &dyn RunStore, run: &Run) -> Run {
    let (stored, made) = r.create_run(run).await.expect("create_run");
    assert!(made, "a run without a key is always made");
    stored
}

/// Claims everything due at `now` and returns the lease of `id`, if it was due.
async fn claim_one(r: &dyn RunStore, owner: &str, now: Timestamp, id: RunId) -> Option<super::Lease> {
    r.claim(owner, now, LEASE_MS, &Room::up_to(ALL)).await.expect("claim").into_iter().find(|l| l.run == id)
}

/// Ends the runs `ids` (claiming them together: a claim takes every due
/// run) so no later check sees them.
async fn finish(r: &dyn RunStore, ids: &[RunId], now: Timestamp) {
    let late = now.plus_micros(10 * LEASE_MS as i64 * 1_000);
    let leases = r.claim("contract-cleanup", late, LEASE_MS, &Room::up_to(ALL)).await.expect("claim");
    for id in ids {
        let lease = leases.iter().find(|l| l.run == *id).expect("the run can be claimed to end it");
        let mut state = r.load_run(*id).await.expect("load_run").state;
        state.status = RunStatus::Completed;
        state.finished_at = Some(late);
        assert!(r.save(lease, &state, &[], true).await.expect("save"), "the cleanup holds the lease");
    }
}

fn node(status: NodeStatus, at: Timestamp) -> NodeRun {
    NodeRun {
        status,
        attempt: 2,
        input: Some(json!({"input": {"b": 1, "a": "x"}, "text": "ünïcödé ✓"})),
        output: Some(json!({"text": "done", "tokens": 12})),
        error: Some(Failure::new("timeout", "took 60 s")),
        wake_at: Some(at.plus_micros(5_000_123)),
        started_at: Some(at),
        finished_at: None,
        usage: Usage { model_calls: 1, tokens: 640, credits: 7 },
        log: None,
    }
}

async fn round_trip(r: &dyn RunStore, w: &dyn WorkflowStore) {
    let mut c = Ctx::new();
    let (alice, bob) = (LenserId::new(), LenserId::new());
    let wf = c.workflow(w, alice).await;
    let parent = create(r, &c.run(wf, alice, alice)).await;
    let mut run = c.run(wf, alice, bob);
    run.origin = RunOrigin::Retry;
    run.parent_run_id = Some(parent.id);
    run.resume_from = Some(parent.id);
    run.idempotency_key = Some(IdempotencyKey::parse("idempotency_key", "req-ü-1").unwrap());
    run.global_model_id = Some("gpt-test".into());
    run.state.limits =
        Limits { parallel: 2, budget_credits: Some(100), run_timeout_ms: 1_000, node_timeout_ms: 500 };
    let stored = create(r, &run).await;
    assert_eq!(stored, run, "create_run returns what it stored");
    assert_eq!(r.get_run(run.id).await.expect("get_run"), run, "every field read back as written");
    assert_eq!(r.load_run(run.id).await.expect("load_run").state.slots, BTreeMap::new());
    assert_eq!(code(r.get_run(RunId::new()).await), ErrorCode::NotFound);
    assert_eq!(code(r.load_run(RunId::new()).await), ErrorCode::NotFound);
    assert_eq!(code(r.create_run(&run).await.map(|(r, _)| r)), ErrorCode::Conflict, "a taken id");

    let now = c.now();
    let lease = claim_one(r, "contract-a", now, run.id).await.expect("a pending run is due");
    assert_eq!(
        (lease.owner.as_str(), lease.expires_at),
        ("contract-a", now.plus_micros(LEASE_MS as i64 * 1_000))
    );
    let mut state = run.state.clone();
    state.status = RunStatus::Running;
    state.started_at = Some(now);
    state.result = Some(json!({"z": [true], "a": "r"}));
    state.error = Some(RunError {
        code: "node_failed".into(),
        message: "step a failed".into(),
        node: Some("a".into()),
    });
    let top = Slot::top(1);
    let item = Slot { node: 1, item: Some(3) };
    let mut ended = node(NodeStatus::Completed, now);
    ended.error = None;
    ended.wake_at = None;
    ended.finished_at = Some(now.plus_micros(1));
    ended.log =
        Some(LogLine { level: LogLevel::Warn, message: "ünïcödé ✓ [[left]] {\"a\": 1}".into() });
    let slots = vec![(top, node(NodeStatus::Retrying, now)), (item, ended.clone())];
    assert!(r.save(&lease, &state, &slots, false).await.expect("save"));
    state.slots = slots.iter().cloned().collect();
    let loaded = r.load_run(run.id).await.expect("load_run");
    assert_eq!(loaded.state, state, "the state and every node result read back as written");
    assert!(r.get_run(run.id).await.unwrap().state.slots.is_empty(), "get_run carries no node results");
    // A later save writes only what changed, over what was there.
    let mut again = ended.clone();
    again.attempt = 3;
    assert!(r.save(&lease, &state, &[(top, again.clone())], false).await.expect("save"));
    let loaded = r.load_run(run.id).await.unwrap();
    assert_eq!((loaded.state.slots[&top].clone(), loaded.state.slots[&item].clone()), (again, ended.clone()));
    // Each level reads back as written, and a save without a line clears it.
    for level in LogLevel::ALL.iter().copied().map(Some).chain([None]) {
        let mut logged = ended.clone();
        logged.log = level.map(|level| LogLine { level, message: level.to_string() });
        assert!(r.save(&lease, &state, &[(item, logged.clone())], false).await.expect("save"));
        assert_eq!(r.load_run(run.id).await.unwrap().state.slots[&item], logged);
    }
    state.status = RunStatus::Completed;
    assert!(r.save(&lease, &state, &[], true).await.unwrap());
    finish(r, &[parent.id], now).await;
}

/// The AI Lenser that started a run (DESIGN: an agent is the actor of the
/// rows it writes) reads back from every read of runs, and `None` reads
/// back `None`.
async fn agents(r: &dyn RunStore, w: &dyn WorkflowStore) {
    let mut c = Ctx::new();
    let (alice, agent) = (LenserId::new(), LenserId::new());
    let wf = c.workflow(w, alice).await;
    let key = IdempotencyKey::parse("idempotency_key", "agent-run").unwrap();
    let by_agent = Run { agent: Some(agent), idempotency_key: Some(key.clone()), ..c.run(wf, alice, alice) };
    assert_eq!(create(r, &by_agent).await.agent, Some(agent), "create_run returns the agent it stored");
    let by_person = create(r, &c.run(wf, alice, alice)).await;
    assert_eq!(by_person.agent, None);

    for (id, expected) in [(by_agent.id, Some(agent)), (by_person.id, None)] {
        assert_eq!(r.get_run(id).await.unwrap().agent, expected, "get_run reads the run's agent");
        assert_eq!(r.load_run(id).await.unwrap().agent, expected, "and so does load_run");
    }
    let found = r.find_by_key(wf.0, alice, &key, c.now()).await.unwrap().expect("the run of the key");
    assert_eq!(found.agent, Some(agent), "find_by_key reads it");
    let repeat = Run { idempotency_key: Some(key), ..c.run(wf, alice, alice) };
    let (first, made) = r.create_run(&repeat).await.unwrap();
    assert!(!made);
    assert_eq!(first.agent, Some(agent), "a repeated key answers the first run with its agent");
    let of_wf = RunFilter { workflow_id: Some(wf.0), status: None, ..Default::default() };
    let listed = r.list_runs(alice, &of_wf, PageRequest::default()).await.unwrap();
    assert_eq!(
        listed.items.iter().map(|run| (run.id, run.agent)).collect::<Vec<_>>(),
        [(by_person.id, None), (by_agent.id, Some(agent))],
        "list_runs reads each run's agent"
    );
    let now = c.now();
    let asked = r.request_cancel(by_agent.id, "alice", now).await.unwrap();
    assert_eq!(asked.agent, Some(agent), "request_cancel answers the run with its agent");
    // A claim and a save leave it as it was.
    let lease = claim_one(r, "contract-a", now, by_agent.id).await.expect("due");
    let mut state = by_agent.state.clone();
    state.status = RunStatus::Cancelled;
    state.finished_at = Some(now);
    assert!(r.save(&lease, &state, &[], true).await.unwrap());
    assert_eq!(r.get_run(by_agent.id).await.unwrap().agent, Some(agent), "a save keeps the agent");
    finish(r, &[by_person.id], now).await;

    // An agent's ended run is to be charged to it until it is marked so.
    let to_charge = r.to_charge(ALL).await.unwrap();
    assert!(to_charge.contains(&by_agent.id), "an agent's ended run is to be charged");
    assert!(!to_charge.contains(&by_person.id), "a person's run is not");
    r.mark_charged(by_agent.id, now).await.unwrap();
    r.mark_charged(by_agent.id, now.plus_micros(1)).await.unwrap();
    assert!(!r.to_charge(ALL).await.unwrap().contains(&by_agent.id), "a marked run is not");
    let missing = r.mark_charged(RunId::new(), now).await.unwrap_err();
    assert_eq!(missing.code(), lf_core::ErrorCode::NotFound);
}

async fn idempotency(r: &dyn RunStore, w: &dyn WorkflowStore) {
    let mut c = Ctx::new();
    let alice = LenserId::new();
    let (wf, other) = (c.workflow(w, alice).await, c.workflow(w, alice).await);
    let key = IdempotencyKey::parse("idempotency_key", "nightly-2026-05-01").unwrap();
    let mut first = c.run(wf, alice, alice);
    first.idempotency_key = Some(key.clone());
    let first = create(r, &first).await;
    let mut repeat = c.run(wf, alice, alice);
    repeat.idempotency_key = Some(key.clone());
    let (got, made) = r.create_run(&repeat).await.expect("create_run");
    assert!(!made, "a repeated key makes no run");
    assert_eq!(got.id, first.id, "and returns the first");
    assert_eq!(code(r.get_run(repeat.id).await), ErrorCode::NotFound, "nothing was written");
    assert_eq!(
        r.find_by_key(wf.0, alice, &key, repeat.created_at).await.unwrap().map(|r| r.id),
        Some(first.id)
    );
    assert_eq!(r.find_by_key(other.0, alice, &key, repeat.created_at).await.unwrap(), None);
    let bob = LenserId::new();
    assert_eq!(
        r.find_by_key(wf.0, bob, &key, repeat.created_at).await.unwrap(),
        None,
        "a key is its starter's"
    );
    let mut bobs = c.run(wf, alice, bob);
    bobs.idempotency_key = Some(key.clone());
    let (got, made) = r.create_run(&bobs).await.unwrap();
    assert!(made && got.id == bobs.id, "another starter's key starts a new run, never returns alice's");

    let mut elsewhere = c.run(other, alice, alice);
    elsewhere.idempotency_key = Some(key.clone());
    let (_, made) = r.create_run(&elsewhere).await.unwrap();
    assert!(made, "keys are per workflow");

    let mut later = c.run(wf, alice, alice);
    later.idempotency_key = Some(key.clone());
    later.created_at = first.created_at.plus_micros(super::IDEMPOTENCY_WINDOW_MICROS);
    let (got, made) = r.create_run(&later).await.unwrap();
    assert!(made && got.id == later.id, "after 24 hours the key starts a new run");
    assert_eq!(
        r.find_by_key(wf.0, alice, &key, later.created_at).await.unwrap().map(|r| r.id),
        Some(later.id)
    );
    finish(r, &[first.id, bobs.id, elsewhere.id, later.id], later.created_at).await;
}

/// Runs events start: one per workflow in a causal tree, at most
/// `tree_max` besides the root (the skip recorded on the root once), at
/// most `per_minute` for one starter in any minute.
async fn caused(r: &dyn RunStore, w: &dyn WorkflowStore) {
    let mut c = Ctx::new();
    let alice = LenserId::new();
    let mut wfs = Vec::new();
    for _ in 0..5 {
        wfs.push(c.workflow(w, alice).await);
    }
    let root = create(r, &c.run(wfs[0], alice, alice)).await;
    let bounds = super::EventBounds { tree_max: 2, per_minute: 3 };
    let follower = |c: &mut Ctx, wf| {
        let mut run = c.run(wf, alice, alice);
        run.origin = RunOrigin::Event;
        (run.parent_run_id, run.caused_by, run.root_run_id) = (Some(root.id), Some(root.id), root.id);
        run
    };
    let make = |run: &Run| {
        let run = run.clone();
        async move { r.create_caused(&run, bounds).await }
    };
    assert_eq!(make(&follower(&mut c, wfs[0])).await.unwrap(), Caused::InTree, "the root's workflow");
    let one = follower(&mut c, wfs[1]);
    assert_eq!(make(&one).await.unwrap(), Caused::Made(Box::new(one.clone()), true));
    assert_eq!(r.get_run(one.id).await.unwrap(), one, "cause and root read back as written");
    let again = follower(&mut c, wfs[1]);
    assert_eq!(make(&again).await.unwrap(), Caused::InTree, "a workflow runs once per tree");
    assert_eq!(code(r.get_run(again.id).await), ErrorCode::NotFound, "nothing was written");
    let two = follower(&mut c, wfs[2]);
    assert_eq!(make(&two).await.unwrap(), Caused::Made(Box::new(two.clone()), true));
    let full = follower(&mut c, wfs[3]);
    assert_eq!(make(&full).await.unwrap(), Caused::TreeFull { first: true });
    assert_eq!(make(&follower(&mut c, wfs[4])).await.unwrap(), Caused::TreeFull { first: false });
    assert_eq!(r.get_run(root.id).await.unwrap().tree_full_at, Some(full.created_at), "recorded once");

    // Two of alice's runs were started by events; a third is her last this minute.
    let lone = |c: &mut Ctx, wf| Run { origin: RunOrigin::Event, ..c.run(wf, alice, alice) };
    let third = lone(&mut c, wfs[3]);
    assert!(matches!(make(&third).await.unwrap(), Caused::Made(_, true)), "a run that is its own root");
    assert_eq!(make(&lone(&mut c, wfs[4])).await.unwrap(), Caused::TooFast);
    let bob = LenserId::new();
    let theirs = Run { origin: RunOrigin::Event, ..c.run(wfs[4], alice, bob) };
    assert!(matches!(make(&theirs).await.unwrap(), Caused::Made(_, true)), "the bound is per starter");
    let mut later = lone(&mut c, wfs[4]);
    later.created_at = third.created_at.plus_micros(60_000_001);
    assert!(matches!(make(&later).await.unwrap(), Caused::Made(_, true)), "a minute later");
    finish(r, &[root.id, one.id, two.id, third.id, theirs.id, later.id], later.created_at).await;
}

async fn claims_and_leases(r: &dyn RunStore, w: &dyn WorkflowStore) {
    let mut c = Ctx::new();
    let alice = LenserId::new();
    let wf = c.workflow(w, alice).await;
    let a = create(r, &c.run(wf, alice, alice)).await;
    let b = create(r, &c.run(wf, alice, alice)).await;
    let now = c.now();
    let first = r.claim("contract-a", now, LEASE_MS, &Room::up_to(ALL)).await.unwrap();
    let mine: Vec<RunId> = first.iter().map(|l| l.run).filter(|id| *id == a.id || *id == b.id).collect();
    assert_eq!(mine, [a.id, b.id], "both are due, oldest first");
    let lease_a = first.iter().find(|l| l.run == a.id).unwrap().clone();
    assert!(
        r.claim("contract-b", now, LEASE_MS, &Room::up_to(ALL))
            .await
            .unwrap()
            .iter()
            .all(|l| l.run != a.id && l.run != b.id),
        "a held run is not claimed again"
    );
    assert!(
        r.claim("contract-b", now, LEASE_MS, &Room::up_to(1)).await.unwrap().len() <= 1,
        "at most the limit"
    );

    let beat = now.plus_micros(10_000_000);
    assert_eq!(r.heartbeat(&lease_a, beat, LEASE_MS).await.unwrap(), Held::Yes { cancel_requested_by: None });
    // The heartbeat moved the lease: it holds at what would have been its end.
    let end = lease_a.expires_at;
    assert!(claim_one(r, "contract-b", end, a.id).await.is_none(), "a heartbeat extends the lease");
    let after = end.plus_micros(LEASE_MS as i64 * 1_000);
    let taken = claim_one(r, "contract-b", after, a.id).await.expect("an expired lease is taken over");
    assert_ne!(taken.token, lease_a.token, "with a new token");
    let mut state = a.state.clone();
    state.status = RunStatus::Running;
    let slot = [(Slot::top(0), node(NodeStatus::Completed, now))];
    assert!(!r.save(&lease_a, &state, &slot, false).await.unwrap(), "the old holder cannot write");
    assert!(r.load_run(a.id).await.unwrap().state.slots.is_empty(), "and nothing of its write is kept");
    assert_eq!(r.heartbeat(&lease_a, after, LEASE_MS).await.unwrap(), Held::Lost);
    assert!(r.save(&taken, &state, &slot, false).await.unwrap(), "the new holder writes");
    state.status = RunStatus::Completed;
    assert!(r.save(&taken, &state, &[], true).await.unwrap());
    assert_eq!(
        r.heartbeat(&taken, after, LEASE_MS).await.unwrap(),
        Held::Lost,
        "an ended run is held by nobody"
    );
    let much_later = after.plus_micros(1_000_000_000);
    assert!(claim_one(r, "contract-c", much_later, a.id).await.is_none(), "an ended run is never due");
    finish(r, &[b.id], much_later).await;
}

/// Due runs are taken in turns by starter, after the runs of theirs the
/// claimer holds, and no more of one starter's than its share (but the
/// runs `sub_workflow` steps started).
async fn claims_in_turns(r: &dyn RunStore, w: &dyn WorkflowStore) {
    let mut c = Ctx::new();
    let (alice, bob, carol, dave) = (LenserId::new(), LenserId::new(), LenserId::new(), LenserId::new());
    let wf = c.workflow(w, alice).await;
    let mut runs = Vec::new();
    for starter in [alice, alice, alice, bob, bob, carol, dave] {
        runs.push(create(r, &c.run(wf, alice, starter)).await.id);
    }
    let [a1, a2, a3, b1, b2, k1, d1] = runs[..] else { unreachable!() };
    let mut sub = c.run(wf, alice, dave);
    sub.origin = RunOrigin::SubWorkflow;
    sub.parent_run_id = Some(d1);
    let d2 = create(r, &sub).await.id;
    let now = c.now();
    let room = Room { limit: ALL, share: 2, held: BTreeMap::from([(bob, 1), (dave, 2)]) };
    let mine = |leases: Vec<super::Lease>| -> Vec<(RunId, LenserId)> {
        leases
            .into_iter()
            .filter(|l| runs.contains(&l.run) || l.run == d2)
            .map(|l| (l.run, l.starter))
            .collect()
    };
    let first = mine(r.claim("contract-a", now, LEASE_MS, &room).await.unwrap());
    assert_eq!(
        first,
        [(a1, alice), (k1, carol), (a2, alice), (b1, bob), (d2, dave)],
        "first turns oldest first, then second turns (bob holds one: his first run is his second turn); \
         dave, at his share, only the run his sub-workflow step started, in its turn"
    );
    let rest = mine(r.claim("contract-b", now, LEASE_MS, &Room::up_to(ALL)).await.unwrap());
    assert_eq!(rest, [(a3, alice), (b2, bob), (d1, dave)], "the runs past their starter's share wait");
    finish(r, &[a1, a2, a3, b1, b2, k1, d2, d1], now).await;
}

/// A new run of a new workflow, claimed at `now` and running (an hour's
/// timeout, so timers a minute out fire before it): the run, its lease,
/// its state to save, and `now`.
async fn running(r: &dyn RunStore, w: &dyn WorkflowStore) -> (Run, super::Lease, RunState, Timestamp) {
    let mut c = Ctx::new();
    let alice = LenserId::new();
    let wf = c.workflow(w, alice).await;
    let run = create(r, &c.run(wf, alice, alice)).await;
    let now = c.now();
    let lease = claim_one(r, "contract-a", now, run.id).await.unwrap();
    let mut state = run.state.clone();
    state.status = RunStatus::Running;
    state.started_at = Some(now);
    state.limits.run_timeout_ms = 3_600_000;
    (run, lease, state, now)
}

async fn release_and_wake(r: &dyn RunStore, w: &dyn WorkflowStore) {
    let (run, lease, mut state, now) = running(r, w).await;
    let mut waiting = node(NodeStatus::Running, now);
    let wake = now.plus_micros(60_000_000);
    waiting.wake_at = Some(wake);
    state.slots.insert(Slot::top(1), waiting.clone());
    assert_eq!(state.next_wake(), Some(wake));
    assert!(r.save(&lease, &state, &[(Slot::top(1), waiting)], true).await.unwrap());
    assert!(r.next_due(&[]).await.unwrap().is_some_and(|d| d <= wake), "the runner knows when to wake");
    assert!(
        claim_one(r, "contract-b", now.plus_micros(1_000), run.id).await.is_none(),
        "not due before its timer"
    );
    let again = claim_one(r, "contract-b", wake, run.id).await.expect("due when its timer fires");
    assert_eq!(r.heartbeat(&lease, wake, LEASE_MS).await.unwrap(), Held::Lost, "a released lease is gone");
    // Held past its lease with a timer far off: taken over when the lease ends, timers or not.
    let far = wake.plus_micros(86_400_000_000);
    let mut later = state.slots[&Slot::top(1)].clone();
    later.wake_at = Some(far);
    state.slots.insert(Slot::top(1), later.clone());
    assert!(r.save(&again, &state, &[(Slot::top(1), later)], false).await.unwrap());
    let expired = again.expires_at;
    let third = claim_one(r, "contract-c", expired, run.id)
        .await
        .expect("an expired lease is taken over before its timer");
    // Given back with an attempt left running: due at once, to run it again.
    let mut left = node(NodeStatus::Running, expired);
    left.wake_at = None;
    state.slots.insert(Slot::top(2), left.clone());
    assert_eq!(state.resume_at(), Some(expired));
    assert!(r.save(&third, &state, &[(Slot::top(2), left)], true).await.unwrap());
    let fourth = claim_one(r, "contract-d", expired.plus_micros(1), run.id)
        .await
        .expect("a run given back mid-attempt is due at once");
    state.status = RunStatus::Completed;
    assert!(r.save(&fourth, &state, &[], true).await.unwrap());
}

async fn wakes_waiting_steps(r: &dyn RunStore, w: &dyn WorkflowStore) {
    let (run, lease, mut state, now) = running(r, w).await;
    let wake = now.plus_micros(60_000_000);
    let mut waiting = node(NodeStatus::Running, now);
    waiting.wake_at = Some(wake);
    waiting.output = Some(json!({"checkpoint": {"turn": 3}, "waiting_for": "approval of delete_lens"}));
    // A deferred step (no waiting_for) keeps its timer.
    let mut deferred = node(NodeStatus::Running, now);
    deferred.wake_at = Some(wake);
    deferred.output = None;
    state.slots.insert(Slot::top(1), waiting.clone());
    state.slots.insert(Slot::top(2), deferred.clone());
    let slots = [(Slot::top(1), waiting), (Slot::top(2), deferred)];
    assert!(r.save(&lease, &state, &slots, true).await.unwrap());
    let soon = now.plus_micros(1_000);
    assert!(claim_one(r, "contract-b", soon, run.id).await.is_none(), "not due before its timer");

    r.wake(run.id, soon).await.expect("wake");
    let loaded = r.load_run(run.id).await.unwrap();
    assert_eq!(loaded.state.slots[&Slot::top(1)].wake_at, Some(soon), "the waiting step is due");
    assert_eq!(loaded.state.slots[&Slot::top(2)].wake_at, Some(wake), "the deferred one is not");
    assert_eq!(loaded.state.waiting().collect::<Vec<_>>(), [(Slot::top(1), "approval of delete_lens")]);
    let again = claim_one(r, "contract-b", soon, run.id).await.expect("woken, the run is due");
    state.status = RunStatus::Completed;
    assert!(r.save(&again, &state, &[], true).await.unwrap());
    r.wake(run.id, soon).await.expect("an ended run is left as it is");
    assert!(claim_one(r, "contract-c", soon, run.id).await.is_none());
}

async fn cancel_requests(r: &dyn RunStore, w: &dyn WorkflowStore) {
    let mut c = Ctx::new();
    let alice = LenserId::new();
    let wf = c.workflow(w, alice).await;
    // Held: the holder learns of it at its heartbeat.
    let held = create(r, &c.run(wf, alice, alice)).await;
    let now = c.now();
    let lease = claim_one(r, "contract-a", now, held.id).await.unwrap();
    let asked = r.request_cancel(held.id, "alice", now).await.unwrap();
    assert_eq!(asked.cancel_requested_by.as_deref(), Some("alice"));
    assert_eq!(asked.status(), RunStatus::Pending, "the store does not end a run itself");
    assert_eq!(
        r.heartbeat(&lease, now, LEASE_MS).await.unwrap(),
        Held::Yes { cancel_requested_by: Some("alice".into()) }
    );
    // Released and waiting a day: due at once.
    let waiting = create(r, &c.run(wf, alice, alice)).await;
    let lease_w = claim_one(r, "contract-a", now, waiting.id).await.unwrap();
    let mut state = waiting.state.clone();
    state.status = RunStatus::Running;
    state.started_at = Some(now);
    state.limits.run_timeout_ms = 86_400_000;
    let mut timer = node(NodeStatus::Running, now);
    timer.wake_at = Some(now.plus_micros(86_400_000_000));
    assert!(r.save(&lease_w, &state, &[(Slot::top(1), timer)], true).await.unwrap());
    let later = now.plus_micros(1_000);
    assert!(claim_one(r, "contract-b", later, waiting.id).await.is_none());
    r.request_cancel(waiting.id, "bob", later).await.unwrap();
    let lease_c = claim_one(r, "contract-b", later, waiting.id)
        .await
        .expect("a cancel request makes a released run due");
    assert_eq!(r.get_run(waiting.id).await.unwrap().cancel_requested_by.as_deref(), Some("bob"));
    state.status = RunStatus::Cancelled;
    assert!(r.save(&lease_c, &state, &[], true).await.unwrap());
    let ended = r.request_cancel(waiting.id, "carol", later).await.unwrap();
    assert_eq!(
        (ended.status(), ended.cancel_requested_by.as_deref()),
        (RunStatus::Cancelled, Some("bob")),
        "an ended run is unchanged"
    );
    assert_eq!(code(r.request_cancel(RunId::new(), "x", later).await), ErrorCode::NotFound);
    let mut s = held.state.clone();
    s.status = RunStatus::Cancelled;
    assert!(r.save(&lease, &s, &[], true).await.unwrap());
}

async fn listing(r: &dyn RunStore, w: &dyn WorkflowStore) {
    let mut c = Ctx::new();
    let (alice, bob, carol) = (LenserId::new(), LenserId::new(), LenserId::new());
    let wf = c.workflow(w, alice).await;
    let by_alice = create(r, &c.run(wf, alice, alice)).await;
    let by_bob = create(r, &c.run(wf, alice, bob)).await;
    let page = PageRequest::new(Some(20), Some(0)).unwrap();
    let ids = |p: lf_core::Page<Run>| p.items.into_iter().map(|r| r.id).collect::<Vec<_>>();
    let of_wf = RunFilter { workflow_id: Some(wf.0), status: None, ..Default::default() };
    assert_eq!(
        ids(r.list_runs(carol, &of_wf, page).await.unwrap()),
        [by_bob.id, by_alice.id],
        "a workflow's runs, newest first"
    );
    let mine = RunFilter::default();
    assert_eq!(ids(r.list_runs(bob, &mine, page).await.unwrap()), [by_bob.id], "what bob started");
    assert_eq!(
        ids(r.list_runs(alice, &mine, page).await.unwrap()),
        [by_bob.id, by_alice.id],
        "and the runs of alice's workflow"
    );
    assert!(r.list_runs(carol, &mine, page).await.unwrap().items.is_empty());
    let bobs = RunFilter { started_by: Some(bob), ..of_wf.clone() };
    assert_eq!(ids(r.list_runs(carol, &bobs, page).await.unwrap()), [by_bob.id], "of one starter");
    let carols = RunFilter { started_by: Some(carol), ..of_wf.clone() };
    let none = r.list_runs(carol, &carols, page).await.unwrap();
    assert_eq!((none.items.len(), none.total), (0, 0), "none of carol's, counted so");
    let one = PageRequest::new(Some(1), Some(1)).unwrap();
    let p = r.list_runs(alice, &mine, one).await.unwrap();
    let total = p.total;
    assert_eq!((ids(p), total), (vec![by_alice.id], 2), "paged, with the total");
    let now = c.now();
    let lease = claim_one(r, "contract-a", now, by_bob.id).await.unwrap();
    let mut state = by_bob.state.clone();
    state.status = RunStatus::Running;
    assert!(r.save(&lease, &state, &[], false).await.unwrap());
    let running =
        RunFilter { workflow_id: Some(wf.0), status: Some(RunStatus::Running), ..Default::default() };
    assert_eq!(ids(r.list_runs(alice, &running, page).await.unwrap()), [by_bob.id], "by status");
    finish(r, &[by_alice.id, by_bob.id], now).await;
}

fn code<T: std::fmt::Debug>(r: lf_core::LfResult<T>) -> ErrorCode {
    match r {
        Ok(v) => panic!("expected an error, got {v:?}"),
        Err(e) => e.code(),
    }
}
