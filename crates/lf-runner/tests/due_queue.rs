//! The due queue as a scrape shows it: a runner whose one slot holds a run
//! reports, in `lenserfight_runner_due_seconds`, how long the oldest run
//! left waiting has waited. A test binary of its own: the process's meter
//! is one for every test in it.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use chrono::TimeDelta;
use lf_core::{FixedClock, LenserId, Principal, Scopes, Timestamp};
use lf_runner::{Done, Executor, Executors, Job, Runner, RunnerConfig};
use lf_workflow::engine::Failure;
use lf_workflow::run::{MemoryRunStore, RunService, StartRun};
use lf_workflow::{
    MemoryConnections, MemoryLenses, MemoryWorkflowStore, NewWorkflow, RawBlueprint, WorkflowService,
    WorkflowStore,
};
use serde_json::json;

/// Posts that never answer: the run holding the slot stays.
struct Hang;

#[async_trait]
impl Executor for Hang {
    async fn execute(&self, _: &Job) -> Result<Done, Failure> {
        std::future::pending().await
    }
}

/// The value of the sample `series` in `scrape`.
fn sample(scrape: &str, series: &str) -> Option<f64> {
    scrape.lines().find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_runner_reports_how_long_its_oldest_waiting_run_has_waited() {
    lf_metrics::install();
    let clock = Arc::new(FixedClock::new(Timestamp::from_micros(1_777_593_600_000_000), TimeDelta::zero()));
    let workflows = Arc::new(MemoryWorkflowStore::new());
    let service = Arc::new(WorkflowService::new(
        workflows.clone(),
        Arc::new(MemoryLenses::new()),
        Arc::new(MemoryConnections::new()),
    ));
    let me = Principal::Lenser { id: LenserId::new(), scopes: Scopes::READ_WRITE };
    let blueprint: RawBlueprint = serde_json::from_value(json!({"title": "t", "steps": [
        {"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"},
        {"key": "post", "kind": "tool", "name": "post", "node_type": "webhook_sender",
         "config": {"url": "https://hooks.example.com/x"}}
    ], "connections": [{"from_step": "start", "to_step": "post", "input_parameter": "input"}]}))
    .unwrap();
    let workflow = service.create(&me, NewWorkflow { blueprint, owner: None }).await.unwrap().workflow.id;

    // One slot; three runs made 0, 10 and 20 seconds after the start, all
    // before the runner starts.
    let runs = Arc::new(MemoryRunStore::new());
    let config = RunnerConfig {
        max_runs: 1,
        per_starter: 1,
        grace: Duration::from_millis(100),
        ..RunnerConfig::default()
    };
    let runner = Runner::with_clock(
        runs.clone(),
        workflows.clone() as Arc<dyn WorkflowStore>,
        Executors::none().with("webhook_sender", Arc::new(Hang)),
        config,
        clock.clone(),
    );
    let starts = RunService::new(service, runs, runner.signal()).with_clock(clock.clone());
    for _ in 0..3 {
        let start = StartRun { workflow_id: Some(workflow), ..Default::default() };
        starts.start(&me, start).await.unwrap();
        clock.advance(TimeDelta::seconds(10));
    }
    // 100 seconds after the first: the runner claims it, and the two
    // others wait, the older for 90 seconds.
    clock.advance(TimeDelta::seconds(70));
    let task = runner.start();
    let scrape = loop {
        let scrape = lf_metrics::metrics().render();
        if sample(&scrape, "lenserfight_runner_active_runs") == Some(1.0) {
            break scrape;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    assert_eq!(sample(&scrape, "lenserfight_runner_slots"), Some(1.0), "{scrape}");
    assert_eq!(sample(&scrape, "lenserfight_runner_due_seconds"), Some(90.0), "{scrape}");
    assert_eq!(sample(&scrape, "lenserfight_workflow_runs_started_total"), Some(1.0), "{scrape}");
    assert_eq!(
        sample(&scrape, "lenserfight_workflow_run_claim_wait_seconds_sum"),
        Some(100.0),
        "the claimed run waited from its creation: {scrape}"
    );
    runner.shutdown().await;
    let _ = task.await;
}
