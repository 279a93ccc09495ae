//! The runner on the in-memory stores: runs end to end, wake at once,
//! survive the death of their runner, stop when cancelled, and release
//! what they hold at shutdown.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use lf_core::{LenserId, Principal, Scopes, WorkflowId};
use lf_runner::{Done, Executor, Executors, Job, Runner, RunnerConfig};
use lf_workflow::engine::{Failure, LogLevel, LogLine, NodeStatus, RunStatus, Slot};
use lf_workflow::run::{MemoryRunStore, NoSignal, RunId, RunService, RunStore, StartRun};
use lf_workflow::{
    MemoryConnections, MemoryLenses, MemoryWorkflowStore, NewWorkflow, RawBlueprint, WorkflowService,
    WorkflowStore,
};
use serde_json::{Value, json};

struct World {
    runs: Arc<MemoryRunStore>,
    workflows: Arc<MemoryWorkflowStore>,
    service: Arc<WorkflowService>,
    me: Principal,
}

impl World {
    fn new() -> Self {
        let workflows = Arc::new(MemoryWorkflowStore::new());
        let service = Arc::new(WorkflowService::new(
            workflows.clone(),
            Arc::new(MemoryLenses::new()),
            Arc::new(MemoryConnections::new()),
        ));
        World {
            runs: Arc::new(MemoryRunStore::new()),
            workflows,
            service,
            me: Principal::Lenser { id: LenserId::new(), scopes: Scopes::READ_WRITE },
        }
    }

    async fn workflow(&self, steps: Value, connections: Value) -> WorkflowId {
        let blueprint: RawBlueprint =
            serde_json::from_value(json!({"title": "t", "steps": steps, "connections": connections}))
                .unwrap();
        self.service
            .create(&self.me, NewWorkflow { blueprint, owner: None })
            .await
            .expect("created")
            .workflow
            .id
    }

    fn runner(&self, executors: Executors, lease: Duration) -> Runner {
        let config = RunnerConfig { lease, grace: Duration::from_millis(500), ..RunnerConfig::default() };
        Runner::new(self.runs.clone(), self.workflows.clone() as Arc<dyn WorkflowStore>, executors, config)
    }

    /// A runner whose posts hang, and a run of it whose post has started.
    async fn hanging_post(&self) -> (Runner, tokio::task::JoinHandle<()>, RunService, RunId) {
        let sink = Arc::new(Sink::default());
        sink.hang.store(true, Ordering::SeqCst);
        let runner =
            self.runner(Executors::none().with("webhook_sender", sink.clone()), Duration::from_secs(30));
        let task = runner.start();
        let service = self.runs(Some(&runner));
        let wf = posting(self).await;
        let id = self.start(&service, wf, json!({})).await;
        while sink.started.load(Ordering::SeqCst) == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        (runner, task, service, id)
    }

    fn runs(&self, runner: Option<&Runner>) -> RunService {
        let signal = runner.map_or_else(|| Arc::new(NoSignal) as _, Runner::signal);
        RunService::new(self.service.clone(), self.runs.clone(), signal)
    }

    async fn start(&self, service: &RunService, workflow: WorkflowId, inputs: Value) -> RunId {
        let s = StartRun {
            workflow_id: Some(workflow),
            inputs: inputs.as_object().unwrap().clone(),
            ..Default::default()
        };
        service.start(&self.me, s).await.expect("started").run.id
    }

    async fn until_ended(&self, id: RunId) -> lf_workflow::run::Run {
        for _ in 0..500 {
            let run = self.runs.load_run(id).await.unwrap();
            if run.status().is_final() {
                return run;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("run {id} did not end: {:?}", self.runs.load_run(id).await.unwrap().state);
    }
}

fn trigger() -> Value {
    json!({"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"})
}

fn tool(key: &str, node_type: &str, config: Value) -> Value {
    json!({"key": key, "kind": "tool", "name": key, "node_type": node_type, "config": config})
}

fn wire(from: &str, to: &str) -> Value {
    json!({"from_step": from, "to_step": to, "input_parameter": "input"})
}

/// Three nodes: a trigger and two data steps.
async fn three(w: &World) -> WorkflowId {
    w.workflow(
        json!([
            trigger(),
            tool("pick", "extract_field", json!({"path": "$.items[*].title"})),
            tool("tidy", "deduplicate", json!({})),
        ]),
        json!([wire("start", "pick"), wire("pick", "tidy")]),
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_of_pure_steps_completes_with_every_result_on_record() {
    let w = World::new();
    let runner = w.runner(Executors::pure(), Duration::from_secs(30));
    let task = runner.start();
    let service = w.runs(Some(&runner));
    let wf = three(&w).await;
    let id = w.start(&service, wf, json!({"items": [{"title": "a"}, {"title": "b"}, {"title": "a"}]})).await;
    let run = w.until_ended(id).await;
    assert_eq!(run.status(), RunStatus::Completed, "{:?}", run.state.error);
    assert_eq!(run.state.result, Some(json!(["a", "b"])));
    assert!(run.state.slots.values().all(|n| n.status == NodeStatus::Completed));
    assert_eq!(run.state.slots.len(), 3);
    runner.shutdown().await;
    task.await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_runner_is_alive_from_its_start_until_shutdown() {
    let w = World::new();
    let runner = w.runner(Executors::pure(), Duration::from_secs(30));
    assert!(!runner.alive(), "not before it starts");
    let task = runner.start();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !runner.alive() {
        assert!(std::time::Instant::now() < deadline, "alive once its claim loop runs");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    runner.shutdown().await;
    assert!(!runner.alive(), "not once it stops");
    task.await.unwrap();
    assert!(!runner.alive());
}

/// An event of the server's log: its level, and its fields as text
/// (`message` the formatted message).
type Traced = (tracing::Level, BTreeMap<String, String>);

/// The server's log as a test reads it: every event.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<Traced>>>);

struct Fields(BTreeMap<String, String>);

impl tracing::field::Visit for Fields {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }

    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

impl tracing::Subscriber for Capture {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }

    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}

    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}

    fn event(&self, event: &tracing::Event<'_>) {
        let mut fields = Fields(BTreeMap::new());
        event.record(&mut fields);
        self.0.lock().unwrap().push((*event.metadata().level(), fields.0));
    }

    fn enter(&self, _: &tracing::span::Id) {}

    fn exit(&self, _: &tracing::span::Id) {}
}

// On one thread, so that the runner's tasks log to this test's subscriber.
#[tokio::test(flavor = "current_thread")]
async fn a_logger_step_writes_its_line_to_the_run_and_to_the_server_log() {
    let capture = Capture::default();
    let _logs = tracing::subscriber::set_default(capture.clone());
    let w = World::new();
    let runner = w.runner(Executors::pure(), Duration::from_secs(30));
    let task = runner.start();
    let service = w.runs(Some(&runner));
    let wf = w
        .workflow(
            json!([
                trigger(),
                tool(
                    "note",
                    "logger",
                    json!({"message": "got [[count]] items\nfor [[who]]", "level": "warn"})
                ),
            ]),
            json!([wire("start", "note")]),
        )
        .await;
    let inputs = json!({"count": 3, "who": "ada"});
    let id = w.start(&service, wf, inputs.clone()).await;
    let run = w.until_ended(id).await;
    assert_eq!(run.status(), RunStatus::Completed, "{:?}", run.state.error);

    // The run's log, as any server reading the run sees it.
    let log = service.log(&w.me, id).await.expect("the run's log");
    let note = log.version.nodes.iter().position(|n| n.key.as_str() == "note").unwrap() as u32;
    let step = &log.run.state.slots[&Slot::top(note)];
    assert_eq!(step.status, NodeStatus::Completed);
    assert_eq!(step.output, Some(inputs.clone()), "the step's output is its input");
    assert_eq!(log.run.state.result, Some(inputs), "and so the run's result");
    let line = LogLine { level: LogLevel::Warn, message: "got 3 items\nfor ada".into() };
    assert_eq!(step.log, Some(line));
    assert!(
        log.run.state.slots.iter().all(|(s, n)| s.node == note || n.log.is_none()),
        "only the logger writes"
    );
    runner.shutdown().await;
    task.await.unwrap();

    // The server's log: once, at the step's level, naming the run, its workflow and the step.
    let events = capture.0.lock().unwrap().clone();
    let lines: Vec<_> =
        events.iter().filter(|(_, f)| f.get("step").map(String::as_str) == Some("note")).collect();
    assert_eq!(lines.len(), 1, "{events:?}");
    let (level, fields) = lines[0];
    assert_eq!(*level, tracing::Level::WARN);
    assert_eq!(fields["message"], "got 3 items\\nfor ada", "a control character is escaped");
    assert_eq!(
        (fields["run_id"].as_str(), fields["workflow_id"].as_str()),
        (id.to_string().as_str(), wf.to_string().as_str())
    );
    assert!(!fields.contains_key("item"), "outside a loop, no item");
}

/// Counts attempts by idempotency key; waits forever while told to.
#[derive(Default)]
struct Sink {
    keys: Mutex<Vec<String>>,
    hang: std::sync::atomic::AtomicBool,
    started: AtomicUsize,
}

#[async_trait]
impl Executor for Sink {
    async fn execute(&self, job: &Job) -> Result<Done, Failure> {
        self.started.fetch_add(1, Ordering::SeqCst);
        if self.hang.load(Ordering::SeqCst) {
            std::future::pending::<()>().await;
        }
        self.keys.lock().unwrap().push(job.idempotency_key.clone().unwrap_or_default());
        Ok(Done::output(json!({"posted": true})))
    }
}

async fn posting(w: &World) -> WorkflowId {
    w.workflow(
        json!([trigger(), tool("post", "webhook_sender", json!({"url": "https://hooks.example.com/x"}))]),
        json!([wire("start", "post")]),
    )
    .await
}

#[test]
fn a_run_whose_runner_died_is_taken_over_and_its_effect_keyed_the_same() {
    let w = Arc::new(World::new());
    let dead = Arc::new(Sink::default());
    dead.hang.store(true, Ordering::SeqCst);
    let (id, first_key) = {
        // A runner on a runtime of its own, dropped mid-node: its tasks die without cleaning up.
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        let w = w.clone();
        let dead = dead.clone();
        rt.block_on(async move {
            let runner =
                w.runner(Executors::none().with("webhook_sender", dead.clone()), Duration::from_millis(300));
            runner.start();
            let service = w.runs(Some(&runner));
            let wf = posting(&w).await;
            let id = w.start(&service, wf, json!({})).await;
            while dead.started.load(Ordering::SeqCst) == 0 {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            let run = w.runs.load_run(id).await.unwrap();
            let post = run
                .state
                .slots
                .values()
                .find(|n| n.status == NodeStatus::Running)
                .expect("the post is running");
            assert_eq!(post.attempt, 1);
            (id, format!("{id}:post:1"))
        })
    };
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    rt.block_on(async move {
        let live = Arc::new(Sink::default());
        let runner =
            w.runner(Executors::none().with("webhook_sender", live.clone()), Duration::from_millis(300));
        let task = runner.start();
        let run = w.until_ended(id).await;
        assert_eq!(run.status(), RunStatus::Completed);
        assert_eq!(*live.keys.lock().unwrap(), [first_key], "the same attempt, the same key");
        runner.shutdown().await;
        task.await.unwrap();
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_stops_a_running_node_at_once() {
    let w = World::new();
    let (runner, task, service, id) = w.hanging_post().await;
    service.cancel(&w.me, id).await.expect("cancel");
    let run = w.until_ended(id).await;
    assert_eq!(run.status(), RunStatus::Cancelled);
    assert!(run.state.slots.values().any(|n| n.status == NodeStatus::Cancelled));
    let again = service.cancel(&w.me, id).await.unwrap_err();
    assert_eq!(again.code(), lf_core::ErrorCode::InvalidTransition, "{}", again.message());
    runner.shutdown().await;
    task.await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_run_retried_with_resume_reuses_what_completed() {
    let w = World::new();
    let sink = Arc::new(Sink::default());
    let flaky = Arc::new(Flaky(AtomicUsize::new(0)));
    let executors = Executors::pure().with("webhook_sender", flaky.clone());
    let runner = w.runner(executors, Duration::from_secs(30));
    let task = runner.start();
    let service = w.runs(Some(&runner));
    let wf = w
        .workflow(
            json!([
                trigger(),
                tool("pick", "extract_field", json!({"path": "n"})),
                tool("post", "webhook_sender", json!({"url": "https://hooks.example.com/x"}))
            ]),
            json!([wire("start", "pick"), wire("pick", "post")]),
        )
        .await;
    let id = w.start(&service, wf, json!({"n": 5})).await;
    let failed = w.until_ended(id).await;
    assert_eq!(failed.status(), RunStatus::Failed);
    assert!(failed.state.error.clone().unwrap().message.contains("refused"));
    let retry = service.retry(&w.me, id, true).await.expect("retry");
    assert_eq!(retry.parent_run_id, Some(id));
    let done = w.until_ended(retry.id).await;
    assert_eq!(done.status(), RunStatus::Completed, "{:?}", done.state.error);
    let pick = done.state.slots.values().find(|n| n.output == Some(json!(5))).expect("pick's output");
    let old_pick = failed.state.slots.values().find(|n| n.output == Some(json!(5))).unwrap();
    assert_eq!(pick.started_at, old_pick.started_at, "pick was reused, not run again");
    assert_eq!(
        service.retry(&w.me, retry.id, false).await.unwrap_err().code(),
        lf_core::ErrorCode::InvalidTransition
    );
    drop(sink);
    runner.shutdown().await;
    task.await.unwrap();
}

/// Fails with a non-retried error the first time, then posts.
struct Flaky(AtomicUsize);

#[async_trait]
impl Executor for Flaky {
    async fn execute(&self, _: &Job) -> Result<Done, Failure> {
        if self.0.fetch_add(1, Ordering::SeqCst) == 0 {
            Err(Failure::new("status_4xx", "the hook refused the post (400)"))
        } else {
            Ok(Done::output(json!({"posted": true})))
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_lets_running_nodes_finish_then_releases_the_rest() {
    let w = World::new();
    let (runner, task, _service, id) = w.hanging_post().await;
    runner.shutdown().await;
    task.await.unwrap();
    assert_eq!(runner.active(), 0);
    // Released: another runner claims it at once, without waiting for the lease.
    let live = Arc::new(Sink::default());
    let next = w.runner(Executors::none().with("webhook_sender", live.clone()), Duration::from_secs(30));
    let task = next.start();
    let run = w.until_ended(id).await;
    assert_eq!(run.status(), RunStatus::Completed);
    assert_eq!(*live.keys.lock().unwrap(), [format!("{id}:post:1")]);
    next.shutdown().await;
    task.await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repeated_idempotency_key_returns_the_first_run() {
    let w = World::new();
    let service = w.runs(None);
    let wf = three(&w).await;
    let key = lf_workflow::run::IdempotencyKey::parse("idempotency_key", "once").unwrap();
    let s = StartRun { workflow_id: Some(wf), idempotency_key: Some(key), ..Default::default() };
    let first = service.start(&w.me, s.clone()).await.unwrap();
    let again = service.start(&w.me, s).await.unwrap();
    assert!(first.created && !again.created);
    assert_eq!(first.run.id, again.run.id);
}
