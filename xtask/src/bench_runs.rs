//! `bench-runs`: workflow runs end to end through the run service and the
//! runner on a real database, the servers' wiring (lf_server::services):
//! a three-node deterministic workflow (a manual trigger, extract_field,
//! deduplicate), every run durable (its row, its three node results, its
//! lease, written as the servers write them).
//!
//! Printed, for the memory store (the runner's own cost, a yardstick in
//! the same run) and the database (`--database URL`, default a SQLite file
//! in a temporary directory), with `--runners N` runners (each with its
//! own connection pool, as processes would have; default 1):
//! - throughput: `--runs` runs (default 2,000) started back to back, runs
//!   per second from the first start to the last completion;
//! - start latency: `--probes` runs (default 200) started one at a time on
//!   an idle runner, from the call to run_workflow's service to the first
//!   data node's recorded start: p50 and p99 in ms.

use std::sync::Arc;
use std::time::{Duration, Instant};

use lf_core::{LenserId, Principal, Scopes, Spawner, Task, WorkflowId};
use lf_workflow::engine::Slot;
use lf_workflow::run::{RunId, RunService, StartRun};
use lf_workflow::{NewWorkflow, RawBlueprint};
use serde_json::json;

use crate::bench::{arg_usize, percentile, workdir};

/// Background work inline: these runs start none.
struct Inline;

impl Spawner for Inline {
    fn spawn(&self, _: &'static str, task: Task) {
        tokio::spawn(task);
    }
}

pub fn run(args: &[String]) -> Result<(), String> {
    let runs = arg_usize(args, "--runs", 2_000);
    let probes = arg_usize(args, "--probes", 200);
    let runners = arg_usize(args, "--runners", 1).max(1);
    let database = args.windows(2).find(|w| w[0] == "--database").map(|w| w[1].clone());
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().map_err(|e| e.to_string())?;
    rt.block_on(async move {
        let dir = workdir("bench-runs");
        let url = database.unwrap_or_else(|| format!("sqlite:{}", dir.join("runs.db").display()));
        println!("bench-runs: {runs} runs, {probes} probes, {runners} runner(s)");
        for (label, url) in [("memory store", None), ("database", Some(url.clone()))] {
            let (tput, p50, p99) = measure(url.as_deref(), runs, probes, runners).await?;
            println!(
                "{label:>13}: {tput:>7.0} runs/s   start latency p50 {p50:.2} ms, p99 {p99:.2} ms{}",
                url.as_deref().map(|u| format!("   ({})", lf_server::redact_url(u))).unwrap_or_default()
            );
        }
        Ok(())
    })
}

async fn measure(
    url: Option<&str>,
    runs: usize,
    probes: usize,
    runners: usize,
) -> Result<(f64, f64, f64), String> {
    let me = Principal::Lenser { id: LenserId::new(), scopes: Scopes::READ_WRITE };
    let model: Arc<dyn lf_core::ModelProvider> = Arc::new(lf_model::OfflineProvider);
    let sealer = || lf_server::KeySealer::new(None);
    let (service, mut started) = match url {
        Some(url) => {
            let mut out = Vec::new();
            let mut first: Option<Arc<RunService>> = None;
            for _ in 0..runners {
                let db = lf_server::Database::connect(url).await.map_err(|e| e.message().to_owned())?;
                let (services, runner) = lf_server::services(
                    &db,
                    model.clone(),
                    Arc::new(Inline),
                    sealer(),
                    &lf_server::RunSettings::default(),
                );
                first.get_or_insert(services.runs.clone());
                out.push((runner, Some(db), services));
            }
            (first.expect("one runner"), out)
        }
        None => {
            let db =
                lf_server::Database::connect("sqlite::memory:").await.map_err(|e| e.message().to_owned())?;
            let (services, _servers_runner) = lf_server::services(
                &db,
                model.clone(),
                Arc::new(Inline),
                sealer(),
                &lf_server::RunSettings::default(),
            );
            // The same wiring with the runs in memory: the runner's own cost.
            let store = Arc::new(lf_workflow::run::MemoryRunStore::new());
            let runner = lf_server::Runner::new(
                store.clone(),
                db.workflow_store(),
                lf_runner::Executors::pure(),
                lf_runner::RunnerConfig::default(),
            );
            let runs = Arc::new(RunService::new(services.workflow.clone(), store, runner.signal()));
            (runs, vec![(runner, Some(db), services)])
        }
    };
    let (_, _, services) = &started[0];
    let blueprint: RawBlueprint = serde_json::from_value(json!({
        "title": "Bench: three deterministic steps",
        "steps": [
            {"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"},
            {"key": "pick", "kind": "tool", "name": "Pick titles", "node_type": "extract_field", "config": {"path": "$.items[*].title"}},
            {"key": "tidy", "kind": "tool", "name": "Drop repeats", "node_type": "deduplicate"},
        ],
        "connections": [
            {"from_step": "start", "to_step": "pick", "input_parameter": "input"},
            {"from_step": "pick", "to_step": "tidy", "input_parameter": "input"},
        ]
    }))
    .map_err(|e| e.to_string())?;
    let workflow = services
        .workflow
        .create(&me, NewWorkflow { blueprint, owner: None })
        .await
        .map_err(|e| e.message().to_owned())?;
    let wf = workflow.workflow.id;
    let tasks: Vec<_> = started.iter().map(|(r, _, _)| r.start()).collect();
    let inputs = json!({"items": [{"title": "a"}, {"title": "b"}, {"title": "a"}]});

    // Warm up.
    for _ in 0..20 {
        let id = start(&service, &me, wf, &inputs).await?;
        wait(&service, &me, id).await?;
    }
    let done_before = completed(&service, &me, wf).await?;
    let t = Instant::now();
    for _ in 0..runs {
        start(&service, &me, wf, &inputs).await?;
    }
    let deadline = Instant::now() + Duration::from_secs(600);
    while completed(&service, &me, wf).await? < done_before + runs as u64 {
        if Instant::now() > deadline {
            return Err("the runs did not complete within 10 minutes".into());
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let tput = runs as f64 / t.elapsed().as_secs_f64();

    let mut lat = Vec::with_capacity(probes);
    for _ in 0..probes {
        let before = lf_core::Clock::now(&lf_core::SystemClock);
        let id = start(&service, &me, wf, &inputs).await?;
        let log = wait(&service, &me, id).await?;
        let first =
            log.state.slots.get(&Slot::top(1)).and_then(|n| n.started_at).ok_or("no start recorded")?;
        lat.push(Duration::from_micros((first.as_micros() - before.as_micros()).max(0) as u64));
    }
    lat.sort();
    for (r, _, _) in &started {
        r.shutdown().await;
    }
    for t in tasks {
        let _ = t.await;
    }
    for (_, db, _) in started.iter_mut() {
        if let Some(db) = db.take() {
            db.close().await;
        }
    }
    let ms = |d: Duration| d.as_secs_f64() * 1_000.0;
    Ok((tput, ms(percentile(&lat, 0.50)), ms(percentile(&lat, 0.99))))
}

/// How many runs of `wf` have completed (a failed one stops the bench).
async fn completed(service: &RunService, me: &Principal, wf: WorkflowId) -> Result<u64, String> {
    let page = lf_core::PageRequest::new(Some(1), Some(0)).map_err(|e| e.message().to_owned())?;
    let of = |status| lf_workflow::run::RunFilter {
        workflow_id: Some(wf),
        status: Some(status),
        ..Default::default()
    };
    let failed = service
        .list(me, of(lf_workflow::engine::RunStatus::Failed), page)
        .await
        .map_err(|e| e.message().to_owned())?;
    if failed.total > 0 {
        return Err(format!("{} runs failed", failed.total));
    }
    let done = service
        .list(me, of(lf_workflow::engine::RunStatus::Completed), page)
        .await
        .map_err(|e| e.message().to_owned())?;
    Ok(done.total)
}

async fn start(
    service: &RunService,
    me: &Principal,
    wf: WorkflowId,
    inputs: &serde_json::Value,
) -> Result<RunId, String> {
    let s = StartRun {
        workflow_id: Some(wf),
        inputs: inputs.as_object().cloned().unwrap_or_default(),
        ..Default::default()
    };
    service.start(me, s).await.map(|s| s.run.id).map_err(|e| e.message().to_owned())
}

async fn wait(service: &RunService, me: &Principal, id: RunId) -> Result<lf_workflow::run::Run, String> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let run = service.get(me, id).await.map_err(|e| e.message().to_owned())?;
        if run.status().is_final() {
            if run.status() != lf_workflow::engine::RunStatus::Completed {
                return Err(format!("run {id} ended {}: {:?}", run.status(), run.state.error));
            }
            return service.log(me, id).await.map(|l| l.run).map_err(|e| e.message().to_owned());
        }
        if Instant::now() > deadline {
            return Err(format!("run {id} did not end within 60 s"));
        }
        tokio::time::sleep(Duration::from_micros(200)).await;
    }
}
