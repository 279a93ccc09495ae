//! The kv, cache and rate_limit steps over the in-memory kv store, with a
//! fixed clock: every catalog example, the owner's store and no one
//! else's, keys and values bounded, expiry, a full store, and rate limits
//! that fail or wait; then rate_limit waiting on a durable timer through
//! the `Runner`, across a restart.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use chrono::TimeDelta;
use lf_core::{FixedClock, LenserId, LfResult, Principal, Scopes, Timestamp};
use lf_runner::{Done, Executors, Job, KvSteps, Runner, RunnerConfig};
use lf_workflow::catalog::catalog;
use lf_workflow::engine::{Failure, NodeStatus, RunStatus, Slot};
use lf_workflow::kv::{Bucket, EntryId, KvKey, KvStore, KvValue, MemoryKv, Namespace, Pass, store_full};
use lf_workflow::run::{MemoryRunStore, RunId, RunService, RunStore, StartRun};
use lf_workflow::{
    MemoryConnections, MemoryLenses, MemoryWorkflowStore, NewWorkflow, RawBlueprint, WorkflowService,
    WorkflowStore,
};
use serde_json::{Value, json};

mod support;

const SECOND: i64 = 1_000_000;

/// Lensers with their workflows, the kv steps over one memory store, and
/// the clock those steps read.
struct World {
    workflows: WorkflowService,
    store: Arc<MemoryKv>,
    clock: Arc<FixedClock>,
    steps: KvSteps,
}

impl World {
    fn new() -> World {
        World::over(Arc::new(MemoryKv::new()))
    }

    fn over(store: Arc<MemoryKv>) -> World {
        let workflows = WorkflowService::new(
            Arc::new(MemoryWorkflowStore::new()),
            Arc::new(MemoryLenses::new()),
            Arc::new(MemoryConnections::new()),
        );
        let clock =
            Arc::new(FixedClock::new(Timestamp::from_micros(1_780_272_000 * SECOND), TimeDelta::zero()));
        let steps = KvSteps::with_clock(store.clone(), clock.clone());
        World { workflows, store, clock, steps }
    }

    fn now(&self) -> Timestamp {
        lf_core::Clock::now(self.clock.as_ref())
    }

    /// The first attempt of step `step` (of `node_type` with `config`) in
    /// a new workflow of `owner`, on `input` wired to its `input`.
    async fn job(&self, owner: LenserId, node_type: &str, config: Value, input: Value) -> Job {
        let step =
            json!({"key": "step", "kind": "tool", "name": "Step", "node_type": node_type, "config": config});
        support::first_attempt(&self.workflows, owner, step, json!({"input": input})).await
    }

    async fn run(&self, job: &Job) -> Result<Done, Failure> {
        let t = &job.node().node_type;
        let executor = self.steps.executor(t).unwrap_or_else(|| panic!("{t} is a kv step"));
        executor.execute(job).await
    }

    async fn output(&self, job: &Job) -> Value {
        let done = self.run(job).await.unwrap_or_else(|f| panic!("{}: {f:?}", job.node().node_type));
        assert_eq!(done.again_at, None);
        done.output
    }

    async fn fails(&self, job: &Job, code: &str) -> Failure {
        let failure = self.run(job).await.expect_err("the step fails");
        assert_eq!(failure.code, code, "{failure:?}");
        failure
    }
}

/// `job` again, as another run of the same step (a new attempt key).
fn another_run(job: &Job) -> Job {
    let mut j = job.clone();
    j.run = RunId::new();
    j.idempotency_key = Some(format!("{}:step:1", j.run));
    j
}

#[tokio::test]
async fn every_kv_example_runs_as_written() {
    let w = World::new();
    let owner = LenserId::new();
    // What the read example finds: the write example's entry.
    let entry = EntryId { owner, namespace: Namespace::Kv, key: KvKey::parse("digest:last_seen").unwrap() };
    w.store.put(&entry, &KvValue::new(&json!("2026-05-01")).unwrap(), None, w.now(), 10).await.unwrap();
    for t in KvSteps::types() {
        let e = catalog().get(t).unwrap_or_else(|| panic!("{t} is in the catalog"));
        let x = &e.example;
        let job = w.job(owner, t, x.config.clone(), x.expected_input.clone()).await;
        let out = w.output(&job).await;
        assert_eq!(out, x.expected_output, "{t}: {}", x.scenario);
        assert_eq!(out.to_string(), x.expected_output.to_string(), "{t}: field order");
    }
    let registered = KvSteps::new(w.store.clone()).register(Executors::none());
    assert!(KvSteps::types().iter().all(|t| registered.handles(t)));
}

#[tokio::test]
async fn a_value_is_the_workflow_owner_s_in_its_namespace_only_and_reads_back_as_written() {
    let w = World::new();
    let (alice, bob) = (LenserId::new(), LenserId::new());
    let v = json!({"zeta": [1, {"b": 2, "a": 3}], "alpha": "ß"});
    let write = w.job(alice, "kv_store_write", json!({"key": "state"}), v.clone()).await;
    assert_eq!(w.output(&write).await, json!({"key": "state", "value": v}));
    let read = w.job(alice, "kv_store_read", json!({"key": "state"}), json!(null)).await;
    let got = w.output(&read).await;
    assert_eq!(got.to_string(), json!({"found": true, "value": v}).to_string(), "key order kept");
    // Another of alice's workflows, started by bob: still alice's store.
    let mut started_by_bob = w.job(alice, "kv_store_read", json!({"key": "state"}), json!(null)).await;
    started_by_bob.started_by = bob;
    assert_eq!(w.output(&started_by_bob).await["found"], true);
    // Bob's own workflow: his store, without alice's entry; its default.
    let bobs =
        w.job(bob, "kv_store_read", json!({"key": "state", "default": {"none": 1}}), json!(null)).await;
    assert_eq!(w.output(&bobs).await, json!({"found": false, "value": {"none": 1}}));
    // The cache is another namespace.
    let cached = w.job(alice, "cache_read", json!({"key": "state"}), json!(null)).await;
    assert_eq!(w.output(&cached).await, json!({"hit": false, "value": null}));
    let cache = w.job(alice, "cache_write", json!({"key": "state", "value_path": "alpha"}), v.clone()).await;
    assert_eq!(w.output(&cache).await, json!({"key": "state", "value": "ß"}));
    assert_eq!(w.output(&cached).await, json!({"hit": true, "value": "ß"}));
    assert_eq!(w.output(&read).await["value"], v, "the kv entry is unchanged");
}

#[tokio::test]
async fn keys_are_filled_from_the_inputs_and_keys_and_values_are_bounded() {
    let w = World::new();
    let owner = LenserId::new();
    let input = json!({"user": "ada", "n": 7, "items": [1, 2]});
    let write = w
        .job(
            owner,
            "kv_store_write",
            json!({"key": "seen:[[user]]:[[n]]", "value_path": "$.items[*]"}),
            input,
        )
        .await;
    assert_eq!(w.output(&write).await, json!({"key": "seen:ada:7", "value": [1, 2]}));
    let read = w.job(owner, "kv_store_read", json!({"key": "seen:[[user]]:7"}), json!({"user": "ada"})).await;
    assert_eq!(w.output(&read).await, json!({"found": true, "value": [1, 2]}));

    let long =
        w.job(owner, "kv_store_read", json!({"key": "k:[[text]]"}), json!({"text": "x".repeat(300)})).await;
    let f = w.fails(&long, "invalid_input").await;
    assert!(f.message.contains("302 characters") && f.message.contains("256"), "{}", f.message);
    let empty = w.job(owner, "cache_read", json!({"key": "[[name]]"}), json!({"name": ""})).await;
    assert!(w.fails(&empty, "invalid_input").await.message.contains("empty"));

    let big = json!({"text": "x".repeat(70_000)});
    let too_big = w.job(owner, "cache_write", json!({"key": "big", "value_path": "text"}), big).await;
    let f = w.fails(&too_big, "invalid_input").await;
    assert!(f.message.contains("70002 bytes") && f.message.contains("65536"), "{}", f.message);
    let nothing =
        w.job(owner, "kv_store_write", json!({"key": "k", "value_path": "$.missing"}), json!({})).await;
    assert!(w.fails(&nothing, "invalid_input").await.message.contains("$.missing selects nothing"));
    let read_big = w.job(owner, "cache_read", json!({"key": "big"}), json!(null)).await;
    assert_eq!(w.output(&read_big).await["hit"], false, "nothing was written");
}

#[tokio::test]
async fn entries_expire_on_the_steps_clock() {
    let w = World::new();
    let owner = LenserId::new();
    let kv = w.job(owner, "kv_store_write", json!({"key": "k", "ttl_seconds": 10}), json!(1)).await;
    let forever = w.job(owner, "kv_store_write", json!({"key": "forever"}), json!(2)).await;
    // The cache's default freshness: an hour.
    let cache = w.job(owner, "cache_write", json!({"key": "c"}), json!(3)).await;
    for j in [&kv, &forever, &cache] {
        w.output(j).await;
    }
    let read = |key: &'static str, t: &'static str| w.job(owner, t, json!({"key": key}), json!(null));
    let (read_kv, read_forever, read_cache) = (
        read("k", "kv_store_read").await,
        read("forever", "kv_store_read").await,
        read("c", "cache_read").await,
    );
    w.clock.advance(TimeDelta::seconds(9));
    assert_eq!(w.output(&read_kv).await["found"], true);
    w.clock.advance(TimeDelta::seconds(1));
    assert_eq!(w.output(&read_kv).await, json!({"found": false, "value": null}), "expired at 10 s");
    assert_eq!(w.output(&read_cache).await["hit"], true);
    w.clock.advance(TimeDelta::seconds(3_590));
    assert_eq!(w.output(&read_cache).await, json!({"hit": false, "value": null}), "stale after an hour");
    w.clock.advance(TimeDelta::days(400));
    assert_eq!(w.output(&read_forever).await, json!({"found": true, "value": 2}));
}

/// A store that is always full.
struct Full;

#[async_trait]
impl KvStore for Full {
    async fn get(&self, _: &EntryId, _: Timestamp) -> LfResult<Option<Value>> {
        Ok(None)
    }

    async fn put(
        &self,
        _: &EntryId,
        _: &KvValue,
        _: Option<Timestamp>,
        _: Timestamp,
        max: u64,
    ) -> LfResult<()> {
        Err(store_full(max))
    }

    async fn pass(&self, _: &Bucket, _: &str, _: u32, _: i64, _: Timestamp) -> LfResult<Pass> {
        Ok(Pass::Through)
    }
}

#[tokio::test]
async fn a_full_store_fails_the_write_saying_so() {
    let w = World::new();
    let job = w.job(LenserId::new(), "kv_store_write", json!({"key": "k"}), json!(1)).await;
    let f = KvSteps::new(Arc::new(Full)).executor("kv_store_write").unwrap().execute(&job).await.unwrap_err();
    assert_eq!(f.code, "store_full");
    assert!(f.message.contains("10000 entries"), "{}", f.message);
}

#[tokio::test]
async fn a_rate_limit_over_its_window_fails_with_throttled_saying_when_it_frees_up() {
    let w = World::new();
    let owner = LenserId::new();
    let config = json!({"limit": 2, "window_seconds": 60, "on_limit": "fail"});
    let first = w.job(owner, "rate_limit", config, json!({"text": "hi"})).await;
    let second = another_run(&first);
    let third = another_run(&first);
    let start = w.now();
    assert_eq!(w.output(&first).await, json!({"text": "hi"}), "a pass lets the input through");
    w.clock.advance(TimeDelta::seconds(15));
    assert_eq!(w.output(&second).await, json!({"text": "hi"}));
    w.clock.advance(TimeDelta::seconds(5));
    let f = w.fails(&third, "throttled").await;
    let frees = start.plus_micros(60 * SECOND);
    assert!(f.message.contains(&format!("frees up at {frees} (in 40 s)")), "{}", f.message);
    assert!(f.message.contains("2 through per 60 s"), "{}", f.message);
    // The first attempt again (its runner died after the pass): through,
    // and not counted twice.
    assert_eq!(w.output(&first).await, json!({"text": "hi"}));
    w.clock.advance(TimeDelta::seconds(40));
    assert_eq!(w.output(&third).await, json!({"text": "hi"}), "the first pass left the window");
    // Another step of another workflow has its own window.
    let elsewhere = w.job(owner, "rate_limit", json!({"limit": 1, "on_limit": "fail"}), json!(1)).await;
    assert_eq!(w.output(&elsewhere).await, json!(1));
}

#[tokio::test]
async fn a_waiting_rate_limit_answers_when_to_run_the_same_attempt_again() {
    let w = World::new();
    let first =
        w.job(LenserId::new(), "rate_limit", json!({"limit": 1, "window_seconds": 30}), json!(5)).await;
    let second = another_run(&first);
    let start = w.now();
    w.output(&first).await;
    w.clock.advance(TimeDelta::seconds(10));
    let later = w.run(&second).await.expect("waiting is not failing");
    assert_eq!(later.again_at, Some(start.plus_micros(30 * SECOND)));
    w.clock.advance(TimeDelta::seconds(20));
    assert_eq!(w.output(&second).await, json!(5), "run again at its time, it passes");
}

/// Drives `runs` until `id` ends, or fails after `secs` seconds.
async fn until_ended(runs: &MemoryRunStore, id: RunId, secs: u64) -> lf_workflow::run::Run {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
    loop {
        let run = runs.load_run(id).await.unwrap();
        if run.status().is_final() {
            return run;
        }
        assert!(tokio::time::Instant::now() < deadline, "run {id} did not end: {:?}", run.state);
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_rate_limit_is_a_durable_timer_that_survives_a_restart() {
    let workflows = Arc::new(MemoryWorkflowStore::new());
    let service = Arc::new(WorkflowService::new(
        workflows.clone(),
        Arc::new(MemoryLenses::new()),
        Arc::new(MemoryConnections::new()),
    ));
    let runs = Arc::new(MemoryRunStore::new());
    let kv = Arc::new(MemoryKv::new());
    // A lease of 2 s: a run that waits more than 1 s is given back.
    let runner = || {
        let executors = KvSteps::new(kv.clone()).register(Executors::pure());
        let config = RunnerConfig {
            lease: Duration::from_secs(2),
            grace: Duration::from_millis(200),
            ..RunnerConfig::default()
        };
        Runner::new(runs.clone(), workflows.clone() as Arc<dyn WorkflowStore>, executors, config)
    };
    let me = Principal::Lenser { id: LenserId::new(), scopes: Scopes::READ_WRITE };
    let blueprint: RawBlueprint = serde_json::from_value(json!({
        "title": "Throttled",
        "steps": [
            {"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"},
            {"key": "limit", "kind": "tool", "name": "Limit", "node_type": "rate_limit",
             "config": {"limit": 1, "window_seconds": 2}},
            {"key": "after", "kind": "tool", "name": "After", "node_type": "noop"},
        ],
        "connections": [
            {"from_step": "start", "to_step": "limit", "input_parameter": "input"},
            {"from_step": "limit", "to_step": "after", "input_parameter": "input"},
        ],
    }))
    .unwrap();
    let wf = service.create(&me, NewWorkflow { blueprint, owner: None }).await.expect("created").workflow.id;
    let first_runner = runner();
    let task = first_runner.start();
    let starts = RunService::new(service.clone(), runs.clone(), first_runner.signal());
    let start = |n: u32| {
        let s = StartRun {
            workflow_id: Some(wf),
            inputs: json!({"n": n}).as_object().unwrap().clone(),
            ..Default::default()
        };
        let (starts, me) = (&starts, &me);
        async move { starts.start(me, s).await.expect("started").run.id }
    };
    let one = start(1).await;
    let first = until_ended(&runs, one, 5).await;
    assert_eq!(first.status(), RunStatus::Completed, "{:?}", first.state.error);
    let two = start(2).await;
    // The second waits for the window: running, its attempt on a timer,
    // and given back to the store.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    let limit = |run: &lf_workflow::run::Run| run.state.slots.get(&Slot::top(1)).cloned();
    loop {
        let run = runs.load_run(two).await.unwrap();
        if let Some(n) = limit(&run)
            && n.wake_at.is_some()
            && first_runner.active() == 0
        {
            assert_eq!((n.status, n.attempt, n.error), (NodeStatus::Running, 1, None));
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "the second run never waited: {:?}", run.state);
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    first_runner.shutdown().await;
    task.await.unwrap();
    // Another process picks it up when the timer is due.
    let second_runner = runner();
    let task = second_runner.start();
    let second = until_ended(&runs, two, 10).await;
    assert_eq!(second.status(), RunStatus::Completed, "{:?}", second.state.error);
    let (a, b) = (limit(&first).unwrap(), limit(&second).unwrap());
    assert_eq!(b.attempt, 1, "waiting is not a retry");
    // The first passed after it started; the second a whole window later.
    let waited = b.finished_at.unwrap().as_micros() - a.started_at.unwrap().as_micros();
    assert!(waited >= 2 * SECOND, "passed {waited} µs after the first started, inside its window");
    assert_eq!(second.state.result, Some(json!({"n": 2})));
    second_runner.shutdown().await;
    task.await.unwrap();
}
