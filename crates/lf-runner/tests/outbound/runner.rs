//! A run end to end through the Runner on the memory stores: its last
//! step posts a webhook to the loopback sink.

use std::sync::Arc;
use std::time::Duration;

use lf_core::{LenserId, Principal, Scopes};
use lf_runner::outbound::Outbound;
use lf_runner::{Executors, Runner, RunnerConfig};
use lf_workflow::engine::{NodeStatus, RunStatus};
use lf_workflow::run::{MemoryRunStore, RunService, RunStore, StartRun};
use lf_workflow::{
    ConnectionService, MemoryConnections, MemoryLenses, MemoryWorkflowStore, NewWorkflow, RawBlueprint,
    WorkflowService, WorkflowStore,
};
use serde_json::json;

use super::fakes::{HttpFake, Reply};
use super::{TestSealer, loopback_egress};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_three_step_run_posts_its_webhook_once_with_the_runs_key() {
    let sink = HttpFake::start().await;
    sink.answer(Reply::text(202, ""));
    let connections = Arc::new(MemoryConnections::new());
    let workflows = Arc::new(MemoryWorkflowStore::new());
    let service =
        Arc::new(WorkflowService::new(workflows.clone(), Arc::new(MemoryLenses::new()), connections.clone()));
    let runs = Arc::new(MemoryRunStore::new());
    let outbound =
        Outbound::new(loopback_egress(), Arc::new(ConnectionService::new(connections, Arc::new(TestSealer))));
    let executors = outbound.register(Executors::pure());
    let config = RunnerConfig { grace: Duration::from_millis(500), ..RunnerConfig::default() };
    let runner = Runner::new(runs.clone(), workflows.clone() as Arc<dyn WorkflowStore>, executors, config);
    let task = runner.start();

    let me = Principal::Lenser { id: LenserId::new(), scopes: Scopes::READ_WRITE };
    let blueprint: RawBlueprint = serde_json::from_value(json!({
        "title": "Digest hook",
        "steps": [
            {"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"},
            {"key": "titles", "kind": "tool", "name": "Titles", "node_type": "extract_field",
             "config": {"path": "$.items[*].title", "all": true}},
            {"key": "send", "kind": "tool", "name": "Send", "node_type": "webhook_sender",
             "config": {"url": sink.url("/hook")}},
        ],
        "connections": [
            {"from_step": "start", "to_step": "titles", "input_parameter": "input"},
            {"from_step": "titles", "to_step": "send", "input_parameter": "input"},
        ],
    }))
    .unwrap();
    let wf = service.create(&me, NewWorkflow { blueprint, owner: None }).await.expect("created").workflow.id;
    let starts = RunService::new(service.clone(), runs.clone(), runner.signal());
    let inputs = json!({"items": [{"title": "a"}, {"title": "b"}]});
    let start =
        StartRun { workflow_id: Some(wf), inputs: inputs.as_object().unwrap().clone(), ..Default::default() };
    let id = starts.start(&me, start).await.expect("started").run.id;

    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let run = loop {
        let run = runs.load_run(id).await.unwrap();
        if run.status().is_final() {
            break run;
        }
        assert!(tokio::time::Instant::now() < deadline, "the run did not end: {:?}", run.state);
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    assert_eq!(run.status(), RunStatus::Completed, "{:?}", run.state.error);
    assert!(run.state.slots.values().all(|n| n.status == NodeStatus::Completed));
    let post = sink.one();
    assert_eq!((post.method.as_str(), post.path.as_str()), ("POST", "/hook"));
    assert_eq!(post.json(), json!(["a", "b"]));
    assert_eq!(post.header("idempotency-key"), Some(format!("{id}:send:1").as_str()));
    assert_eq!(run.state.result.as_ref().map(|r| r["status"].clone()), Some(json!(202)));
    runner.shutdown().await;
    task.await.unwrap();
}
