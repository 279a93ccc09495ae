//! Workflow runs end to end: the run tools through `LfServer::call` over
//! memory stores, with lf-runner's `Runner` claiming from the same run
//! store and woken by the run service's signal. A run started by
//! run_workflow completes, fails, is cancelled mid-step and is retried,
//! and what the status, logs, summary and listing say agrees with it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use lf_battle::{BattleService, MemoryBattleStore};
use lf_core::{LenserId, Principal};
use lf_lens::{LensService, MemoryLensStore};
use lf_runner::{Done, Executor, Executors, Job, Runner, RunnerConfig};
use lf_tests::{Reply, call, lenser};
use lf_tools::{Catalog, CatalogOptions, LfServer, Services};
use lf_workflow::engine::Failure;
use lf_workflow::examples::{manual_trigger, tool_step, wire};
use lf_workflow::run::MemoryRunStore;
use lf_workflow::{ConnectionService, MemoryConnections, MemoryLenses, MemoryWorkflowStore, WorkflowService};
use serde_json::{Value, json};

/// The services over memory stores, and the runner that runs their runs.
struct World {
    services: Arc<Services>,
    runner: Runner,
    task: tokio::task::JoinHandle<()>,
    alice: LenserId,
    bob: LenserId,
}

impl World {
    fn start(executors: Executors) -> World {
        let workflows = Arc::new(MemoryWorkflowStore::new());
        let runs = Arc::new(MemoryRunStore::new());
        let config = RunnerConfig { grace: Duration::from_millis(500), ..RunnerConfig::default() };
        let runner = Runner::new(runs.clone(), workflows.clone(), executors, config);
        let task = runner.start();
        let connections = Arc::new(MemoryConnections::new());
        let services = Services::builder()
            .lens(LensService::new(Arc::new(MemoryLensStore::new())))
            .battle(BattleService::new(Arc::new(MemoryBattleStore::new())))
            .workflow(WorkflowService::new(workflows, Arc::new(MemoryLenses::new()), connections.clone()))
            .connections(ConnectionService::new(connections, Arc::new(lf_server::KeySealer::new(None))))
            .runs(runs, runner.signal())
            .build();
        World { services: Arc::new(services), runner, task, alice: LenserId::new(), bob: LenserId::new() }
    }

    fn as_(&self, who: LenserId) -> LfServer {
        let principal: Principal = lenser(who);
        LfServer::new(Arc::new(Catalog::new()), self.services.clone(), CatalogOptions::default(), principal)
    }

    async fn stop(self) {
        self.runner.shutdown().await;
        self.task.await.expect("the runner's task ends");
    }
}

async fn reply(server: &LfServer, tool: &str, args: Value) -> Reply {
    call(server, tool, args).await.unwrap_or_else(|e| panic!("{tool}: {e}"))
}

async fn ok(server: &LfServer, tool: &str, args: Value) -> Value {
    let r = reply(server, tool, args).await;
    assert!(!r.is_error, "{tool} failed: {}", r.value);
    r.value
}

async fn err(server: &LfServer, tool: &str, args: Value) -> Reply {
    let r = reply(server, tool, args).await;
    assert!(r.is_error, "{tool} should have failed: {}", r.value);
    r
}

#[track_caller]
fn s(v: &Value) -> &str {
    v.as_str().unwrap_or_else(|| panic!("not a string: {v}"))
}

/// Polls `tool` on `run` until `done` holds of its answer (five seconds at most).
async fn until(server: &LfServer, tool: &str, run: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let got = ok(server, tool, json!({"run_id": run})).await;
        if done(&got) {
            return got;
        }
        assert!(Instant::now() < deadline, "run {run} never got there: {got}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn until_ended(server: &LfServer, run: &str) -> Value {
    until(server, "get_workflow_run_status", run, |s| {
        matches!(s["status"].as_str(), Some("completed" | "failed" | "cancelled"))
    })
    .await
}

async fn workflow(server: &LfServer, steps: Value, connections: Value) -> String {
    let args = json!({"title": "Flow", "visibility": "public", "steps": steps, "connections": connections});
    s(&ok(server, "create_workflow", args).await["id"]).to_owned()
}

fn steps_of(logs: &Value) -> Vec<(String, String)> {
    let results = logs["node_results"].as_array().expect("node results");
    results.iter().map(|n| (s(&n["step"]).to_owned(), s(&n["status"]).to_owned())).collect()
}

/// The node result of `step` in a log.
fn step<'a>(logs: &'a Value, step: &str) -> &'a Value {
    let results = logs["node_results"].as_array().expect("node results");
    results.iter().find(|n| n["step"] == step).unwrap_or_else(|| panic!("no {step} in {logs}"))
}

fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter().map(|(a, b)| ((*a).to_owned(), (*b).to_owned())).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_completes_and_its_status_log_summary_and_listing_agree() {
    let w = World::start(Executors::pure());
    let a = w.as_(w.alice);
    let wf = workflow(
        &a,
        json!([
            manual_trigger(),
            tool_step("pick", "extract_field", json!({"path": "$.items[*].title"})),
            tool_step("tidy", "deduplicate", json!({}))
        ]),
        json!([wire("start", "pick"), wire("pick", "tidy")]),
    )
    .await;
    let args = json!({"workflow_id": wf, "inputs": {"items": [{"title": "a"}, {"title": "b"}, {"title": "a"}]}, "idempotency_key": "digest-1"});
    let started = ok(&a, "run_workflow", args.clone()).await;
    let id = s(&started["id"]).to_owned();
    let status = until_ended(&a, &id).await;
    assert_eq!((&status["status"], &status["result"]), (&json!("completed"), &json!(["a", "b"])), "{status}");
    assert!(status["completed_at"].is_string() && status["error"].is_null());

    let again = ok(&a, "run_workflow", args).await;
    assert_eq!(
        (&again["id"], &again["replayed"], &again["status"]),
        (&json!(id), &json!(true), &json!("completed"))
    );

    let logs = ok(&a, "get_workflow_run_logs", json!({"run_id": id})).await;
    assert_eq!(
        steps_of(&logs),
        pairs(&[("start", "completed"), ("pick", "completed"), ("tidy", "completed")])
    );
    let tidy = &logs["node_results"][2];
    assert_eq!((&tidy["input"]["input"], &tidy["output"]), (&json!(["a", "b", "a"]), &json!(["a", "b"])));
    assert_eq!((&tidy["attempts"], &tidy["node_type"]), (&json!(1), &json!("deduplicate")));
    assert_eq!(logs["run"]["metadata"]["idempotency_key"], "digest-1");

    let summary = ok(&a, "summarize_workflow", json!({"run_id": id})).await;
    assert_eq!(
        summary["nodes"],
        json!({"total": 3, "completed": 3, "failed": 0, "skipped": 0, "cancelled": 0, "running": 0, "pending": 0})
    );
    assert!(summary["duration_ms"].as_u64().is_some(), "{summary}");
    let listed = ok(&a, "list_workflow_runs", json!({"status": "completed"})).await;
    assert_eq!((&listed["total"], &listed["items"][0]["id"]), (&json!(1), &json!(id)));
    w.stop().await;
}

/// Waits forever once started, counting its starts.
#[derive(Default)]
struct Hang(AtomicUsize);

#[async_trait]
impl Executor for Hang {
    async fn execute(&self, _: &Job) -> Result<Done, Failure> {
        self.0.fetch_add(1, Ordering::SeqCst);
        std::future::pending().await
    }
}

fn posting() -> (Value, Value) {
    let steps = json!([
        manual_trigger(),
        tool_step("pick", "extract_field", json!({"path": "n"})),
        tool_step("post", "webhook_sender", json!({"url": "https://hooks.example.com/x"}))
    ]);
    (steps, json!([wire("start", "pick"), wire("pick", "post")]))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_stops_the_running_step_and_only_the_run_s_controllers_may() {
    let hang = Arc::new(Hang::default());
    let w = World::start(Executors::pure().with("webhook_sender", hang.clone()));
    let (a, b) = (w.as_(w.alice), w.as_(w.bob));
    let (steps, connections) = posting();
    let wf = workflow(&a, steps, connections).await;
    let id =
        s(&ok(&a, "run_workflow", json!({"workflow_id": wf, "inputs": {"n": 5}})).await["id"]).to_owned();
    let running =
        until(&a, "get_workflow_run_logs", &id, |l| l["node_results"][2]["status"] == "running").await;
    assert_eq!(steps_of(&running)[..2], pairs(&[("start", "completed"), ("pick", "completed")]));

    let refused = err(&a, "cancel_workflow_run", json!({"run_id": id})).await;
    assert_eq!(refused.code(), Some("CONFIRMATION_REQUIRED"));
    // Alice's run is hers: to Bob it does not exist.
    let refused = err(&b, "cancel_workflow_run", json!({"run_id": id, "confirm": true})).await;
    assert_eq!(refused.code(), Some("NOT_FOUND"));
    let asked = ok(&a, "cancel_workflow_run", json!({"run_id": id, "confirm": true})).await;
    assert_eq!(asked["cancel_requested_by"], json!(w.alice.to_string()));
    let status = until_ended(&a, &id).await;
    assert_eq!(status["status"], "cancelled", "{status}");
    assert_eq!(status["cancel_requested_by"], json!(w.alice.to_string()));
    assert_eq!(status["error"]["code"], "cancelled");

    let logs = ok(&a, "get_workflow_run_logs", json!({"run_id": id})).await;
    assert_eq!(steps_of(&logs)[2], ("post".to_owned(), "cancelled".to_owned()));
    let summary = ok(&a, "summarize_workflow", json!({"run_id": id})).await;
    assert_eq!((&summary["nodes"]["completed"], &summary["nodes"]["cancelled"]), (&json!(2), &json!(1)));
    let again = err(&a, "cancel_workflow_run", json!({"run_id": id, "confirm": true})).await;
    assert_eq!(again.code(), Some("INVALID_TRANSITION"));
    assert_eq!(hang.0.load(Ordering::SeqCst), 1, "the post started once");
    w.stop().await;
}

/// Refuses the first post with an error no retry rule names, then posts.
#[derive(Default)]
struct RefusesOnce(AtomicBool);

#[async_trait]
impl Executor for RefusesOnce {
    async fn execute(&self, _: &Job) -> Result<Done, Failure> {
        if self.0.swap(true, Ordering::SeqCst) {
            Ok(Done::output(json!({"posted": true})))
        } else {
            Err(Failure::new("status_4xx", "the hook refused the post (400)"))
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_run_is_retried_and_resume_reuses_what_completed() {
    let w = World::start(Executors::pure().with("webhook_sender", Arc::new(RefusesOnce::default())));
    let (a, b) = (w.as_(w.alice), w.as_(w.bob));
    let (steps, connections) = posting();
    let wf = workflow(&a, steps, connections).await;
    let id =
        s(&ok(&a, "run_workflow", json!({"workflow_id": wf, "inputs": {"n": 5}})).await["id"]).to_owned();
    let failed = until_ended(&a, &id).await;
    assert_eq!(failed["status"], "failed");
    assert_eq!((&failed["error"]["code"], &failed["error"]["step"]), (&json!("node_failed"), &json!("post")));
    let logs = ok(&a, "get_workflow_run_logs", json!({"run_id": id})).await;
    let post = step(&logs, "post");
    assert_eq!((&post["status"], &post["error"]["code"]), (&json!("failed"), &json!("status_4xx")));

    assert_eq!(err(&b, "retry_workflow", json!({"run_id": id})).await.code(), Some("NOT_FOUND"));
    let retried = ok(&a, "retry_workflow", json!({"run_id": id, "resume": true})).await;
    assert_eq!((&retried["original_run_id"], &retried["new_run"]["parent_run_id"]), (&json!(id), &json!(id)));
    let new_id = s(&retried["new_run"]["id"]).to_owned();
    let done = until_ended(&a, &new_id).await;
    assert_eq!(done["status"], "completed", "{done}");
    let new_logs = ok(&a, "get_workflow_run_logs", json!({"run_id": new_id})).await;
    let pick_at = |l: &Value| step(l, "pick")["started_at"].clone();
    assert_eq!(pick_at(&new_logs), pick_at(&logs), "pick's output was reused, not made again");
    let meta = &new_logs["run"]["metadata"];
    assert_eq!((&meta["origin"], &meta["resume_from"]), (&json!("retry"), &json!(id)));

    let fresh = ok(&a, "retry_workflow", json!({"run_id": id})).await;
    let fresh_id = s(&fresh["new_run"]["id"]).to_owned();
    assert_eq!(until_ended(&a, &fresh_id).await["status"], "completed");
    let fresh_logs = ok(&a, "get_workflow_run_logs", json!({"run_id": fresh_id})).await;
    assert_ne!(pick_at(&fresh_logs), pick_at(&logs), "without resume every step runs again");
    assert_eq!(fresh_logs["run"]["metadata"]["resume_from"], Value::Null);
    let retries = ok(&a, "list_workflow_runs", json!({"workflow_id": wf})).await;
    assert_eq!(retries["total"], 3);
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn form_inputs_are_checked_field_by_field() {
    let w = World::start(Executors::pure());
    let a = w.as_(w.alice);
    let form = json!({"key": "start", "kind": "trigger", "name": "Form", "node_type": "form_input_trigger",
    "config": {"fields": [
        {"name": "topic", "kind": "string"},
        {"name": "tone", "kind": "select", "options": ["formal", "casual"], "required": false},
        {"name": "count", "kind": "integer", "default": 3}
    ]}});
    let wf =
        workflow(&a, json!([form, tool_step("log", "noop", json!({}))]), json!([wire("start", "log")])).await;
    let run = |inputs: Value| json!({"workflow_id": wf, "inputs": inputs});

    let one = err(&a, "run_workflow", run(json!({"topic": 5}))).await;
    assert_eq!((one.code(), one.field()), (Some("INVALID_ARGUMENT"), Some("inputs.topic")), "{}", one.value);
    let all = err(&a, "run_workflow", run(json!({"tone": "angry", "count": 2.5, "extra": 1}))).await;
    let fields: Vec<&str> =
        all.value["details"]["fields"].as_array().expect("every field").iter().map(|f| s(f)).collect();
    for want in [
        "inputs.topic: is required",
        "inputs.tone: must be one of formal, casual",
        "inputs.count: must be an integer",
        "inputs.extra: is not a field",
    ] {
        assert!(fields.iter().any(|f| f.starts_with(want)), "{want} in {fields:?}");
    }
    assert_eq!(ok(&a, "list_workflow_runs", json!({"workflow_id": wf})).await["total"], 0, "nothing started");

    let id = s(&ok(&a, "run_workflow", run(json!({"topic": "tides"}))).await["id"]).to_owned();
    assert_eq!(until_ended(&a, &id).await["status"], "completed");
    let logs = ok(&a, "get_workflow_run_logs", json!({"run_id": id})).await;
    assert_eq!(
        logs["run"]["metadata"]["inputs"],
        json!({"topic": "tides", "count": 3}),
        "the default filled in"
    );
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workflow_that_does_not_validate_does_not_start() {
    let w = World::start(Executors::pure());
    let a = w.as_(w.alice);
    let empty = s(&ok(&a, "create_workflow", json!({"title": "Later"})).await["id"]).to_owned();
    let refused = err(&a, "run_workflow", json!({"workflow_id": empty})).await;
    assert_eq!(refused.code(), Some("INVALID_ARGUMENT"));
    assert!(refused.message().contains("does not validate"), "{}", refused.value);
    assert!(!refused.value["details"]["errors"].as_array().expect("every error").is_empty());
    assert_eq!(ok(&a, "list_workflow_runs", json!({})).await["total"], 0);
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_takes_a_budget_and_a_version() {
    let w = World::start(Executors::pure());
    let a = w.as_(w.alice);
    let wf = workflow(
        &a,
        json!([manual_trigger(), tool_step("log", "noop", json!({}))]),
        json!([wire("start", "log")]),
    )
    .await;
    let started = ok(&a, "run_workflow", json!({"workflow_id": wf, "budget_credits": 0, "version": 1})).await;
    assert_eq!(started["version"], 1);
    let id = s(&started["id"]).to_owned();
    let status = until_ended(&a, &id).await;
    assert_eq!(
        (&status["status"], &status["budget_credits"], &status["spent_credits"]),
        (&json!("completed"), &json!(0), &json!(0))
    );
    let e = err(&a, "run_workflow", json!({"workflow_id": wf, "version": 2})).await;
    assert_eq!(e.code(), Some("NOT_FOUND"));
    w.stop().await;
}

/// The kv steps over one memory store, beside the pure ones.
fn with_kv() -> Executors {
    lf_runner::KvSteps::new(Arc::new(lf_workflow::kv::MemoryKv::new())).register(Executors::pure())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_value_written_by_one_run_is_read_by_the_next_of_the_same_owner_only() {
    let w = World::start(with_kv());
    let (a, b) = (w.as_(w.alice), w.as_(w.bob));
    let write = workflow(
        &a,
        json!([
            manual_trigger(),
            tool_step("save", "kv_store_write", json!({"key": "cursor:[[feed]]", "value_path": "$.seen"}))
        ]),
        json!([wire("start", "save")]),
    )
    .await;
    let read_steps =
        json!([manual_trigger(), tool_step("load", "kv_store_read", json!({"key": "cursor:[[feed]]"}))]);
    let read = workflow(&a, read_steps.clone(), json!([wire("start", "load")])).await;
    let run = |server: &LfServer, wf: &str, inputs: Value| {
        let args = json!({"workflow_id": wf, "inputs": inputs});
        let server = server.clone();
        async move {
            let id = s(&ok(&server, "run_workflow", args).await["id"]).to_owned();
            until_ended(&server, &id).await
        }
    };
    let before = run(&a, &read, json!({"feed": "news"})).await;
    assert_eq!(before["result"], json!({"found": false, "value": null}), "{before}");
    let seen = json!({"date": "2026-05-01", "ids": [3, 1, 2]});
    let wrote = run(&a, &write, json!({"feed": "news", "seen": seen})).await;
    assert_eq!(wrote["result"], json!({"key": "cursor:news", "value": seen}), "{wrote}");
    let after = run(&a, &read, json!({"feed": "news"})).await;
    assert_eq!(after["status"], "completed", "{after}");
    assert_eq!(after["result"].to_string(), json!({"found": true, "value": seen}).to_string());
    // Bob runs alice's (public) workflow: it reads alice's store, its owner's.
    let bobs_run_of_alices = run(&b, &read, json!({"feed": "news"})).await;
    assert_eq!(bobs_run_of_alices["result"]["found"], true, "{bobs_run_of_alices}");
    // Bob's own copy of the workflow reads bob's store: nothing there.
    let bobs = workflow(&b, read_steps, json!([wire("start", "load")])).await;
    let bobs_run = run(&b, &bobs, json!({"feed": "news"})).await;
    assert_eq!(bobs_run["result"], json!({"found": false, "value": null}), "{bobs_run}");
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rate_limit_fails_the_run_past_its_limit_or_waits_for_the_window() {
    let w = World::start(with_kv());
    let a = w.as_(w.alice);
    let limited = |on_limit: &str, window: u64| {
        json!([
            manual_trigger(),
            tool_step(
                "limit",
                "rate_limit",
                json!({"limit": 1, "window_seconds": window, "on_limit": on_limit})
            ),
            tool_step("after", "noop", json!({}))
        ])
    };
    let failing =
        workflow(&a, limited("fail", 3_600), json!([wire("start", "limit"), wire("limit", "after")])).await;
    let waiting =
        workflow(&a, limited("wait", 1), json!([wire("start", "limit"), wire("limit", "after")])).await;
    let start = |wf: &str| {
        let args = json!({"workflow_id": wf, "inputs": {"x": 1}});
        let a = a.clone();
        async move { s(&ok(&a, "run_workflow", args).await["id"]).to_owned() }
    };
    let first = until_ended(&a, &start(&failing).await).await;
    assert_eq!(first["status"], "completed", "{first}");
    let id = start(&failing).await;
    let second = until_ended(&a, &id).await;
    assert_eq!(second["status"], "failed", "{second}");
    let logs = ok(&a, "get_workflow_run_logs", json!({"run_id": id})).await;
    let limit = step(&logs, "limit");
    assert_eq!(limit["status"], "failed", "{limit}");
    assert!(limit["error"].to_string().contains("throttled"), "{limit}");
    assert!(limit["error"].to_string().contains("frees up at"), "{limit}");
    assert_eq!(step(&logs, "after")["status"], "skipped");

    // Waiting: both runs complete, the second once the window let it through.
    let (one, two) = (start(&waiting).await, start(&waiting).await);
    let (first, second) = (until_ended(&a, &one).await, until_ended(&a, &two).await);
    assert_eq!((&first["status"], &second["status"]), (&json!("completed"), &json!("completed")));
    assert_eq!((&first["result"], &second["result"]), (&json!({"x": 1}), &json!({"x": 1})));
    let passed = |run: String| {
        let a = a.clone();
        async move {
            let logs = ok(&a, "get_workflow_run_logs", json!({"run_id": run})).await;
            let limit = step(&logs, "limit").clone();
            assert_eq!(limit["attempts"], 1, "waiting is not retrying: {limit}");
            let at = |f: &str| chrono::DateTime::parse_from_rfc3339(s(&limit[f])).unwrap();
            (at("started_at"), at("completed_at"))
        }
    };
    let ((one_started, one_done), (two_started, two_done)) = (passed(one).await, passed(two).await);
    let (early, late) = if one_done < two_done { (one_started, two_done) } else { (two_started, one_done) };
    assert!(late - early >= chrono::TimeDelta::seconds(1), "the later pass came a window after the first");
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_lens_with_a_workflow_records_a_completed_run_in_the_run_tables() {
    let w = World::start(Executors::pure());
    let (a, b) = (w.as_(w.alice), w.as_(w.bob));
    let private = json!({"title": "Mine", "visibility": "private", "steps": [manual_trigger(), tool_step("log", "noop", json!({}))], "connections": [wire("start", "log")]});
    let wf = s(&ok(&a, "create_workflow", private).await["id"]).to_owned();
    let body = "Write three short, friendly sentences that explain [[Topic]] to a beginner.";
    let lens =
        ok(&a, "create_lens", json!({"title": "Explainer", "template_body": body, "visibility": "public"}))
            .await;
    let args = json!({"lens_id": lens["id"], "param_values": {"Topic": "ownership"}, "workflow_id": wf});
    let ran = ok(&a, "run_lens", args.clone()).await;
    assert_eq!(ran["persisted"], true);
    let run = s(&ran["run_id"]).to_owned();
    let status = ok(&a, "get_workflow_run_status", json!({"run_id": run})).await;
    assert_eq!(
        (status["status"].as_str(), status["workflow_id"].as_str()),
        (Some("completed"), Some(wf.as_str()))
    );
    let logs = ok(&a, "get_workflow_run_logs", json!({"run_id": run})).await;
    assert_eq!(logs["run"]["metadata"]["origin"], "lens");
    assert_eq!(logs["run"]["metadata"]["inputs"]["params_used"], json!(["Topic"]));
    let listed = ok(&a, "list_workflow_runs", json!({"workflow_id": wf})).await;
    assert_eq!(listed["total"], 1);
    // Bob may run the public lens, but not record it against Alice's private workflow.
    let refused = err(&b, "run_lens", args).await;
    assert_eq!(refused.code(), Some("NOT_FOUND"), "{}", refused.value);
    let without =
        ok(&b, "run_lens", json!({"lens_id": lens["id"], "param_values": {"Topic": "ownership"}})).await;
    assert_eq!((without["persisted"].as_bool(), without["run_id"].is_null()), (Some(false), true));
    assert_eq!(
        ok(&a, "list_workflow_runs", json!({"workflow_id": wf})).await["total"],
        1,
        "nothing more recorded"
    );
    w.stop().await;
}
