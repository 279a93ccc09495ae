//! `bench-experiment`: an experiment's cells on the servers' wiring
//! (lf_server::services over SQLite in a temporary directory, the runner's
//! cells, the real resolver), through the catalog's tools, against a
//! scripted OpenAI-compatible server on loopback answering each request in
//! `--answer-ms` (default 20) ms. `--cases` (default 2,500) cases over
//! `--contenders` (default 4) model profiles on one `[[models]]` endpoint
//! (concurrency 64), the experiment's concurrency `--concurrency` (default
//! 32): 10,000 cells by default. Printed: the wall time from
//! run_experiment to completed next to the ideal (cells × answer time /
//! concurrency), the process's resident memory before the run, at a
//! tenth, half and all of the cells (flat: nothing holds the matrix) and
//! its peak; then get_experiment's latency (p50, max of `--reads`, default
//! 20) on an experiment of `--seeded` (default 100,000) cells whose
//! results are written straight into the SQLite file.

use std::time::{Duration, Instant};

use crate::bench_battle::fake_models::{FakeModels, Step};
use crate::bench_battle::{call, wired};
use lf_core::{Clock, LenserId, SystemClock};
use lf_eval::dataset::{DatasetId, Visibility};
use lf_eval::experiment::{Contender, Experiment, ExperimentId, ExperimentStatus};
use lf_tools::LfServer;
use serde_json::{Value, json};

use crate::bench::{arg_usize, workdir};

/// Contenders of the seeded experiment (the most an experiment has).
const SEEDED_CONTENDERS: u32 = 10;

pub fn run(args: &[String]) -> Result<(), String> {
    let cases = arg_usize(args, "--cases", 2_500).clamp(1, 10_000);
    let contenders = arg_usize(args, "--contenders", 4).clamp(1, 10);
    let answer_ms = arg_usize(args, "--answer-ms", 20) as u64;
    let concurrency = arg_usize(args, "--concurrency", 32).clamp(1, 64);
    let seeded = arg_usize(args, "--seeded", 100_000).clamp(10, 100_000);
    let reads = arg_usize(args, "--reads", 20).max(1);
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().map_err(|e| e.to_string())?;
    rt.block_on(async move {
        let fake = FakeModels::start();
        fake.forget_bodies();
        let dir = workdir("bench-experiment");
        let db = lf_server::Database::connect(&format!("sqlite:{}", dir.join("experiments.db").display()))
            .await
            .map_err(|e| e.message().to_owned())?;
        let (s, lenser, _runner) = wired(&fake, &db, 64)?;
        let mut profiles = Vec::new();
        for i in 0..contenders {
            let model = format!("bench-{i}");
            fake.script(&model, vec![Step::slow("An answer.", answer_ms)]);
            call(&s, "create_model_profile", json!({"name": model, "endpoint": "fake", "model": model})).await?;
            profiles.push(model);
        }
        let data = dataset(&s, cases).await?;
        let cells = (cases * contenders) as u64;
        let ideal = Duration::from_millis(cells * answer_ms / concurrency as u64);
        println!(
            "bench-experiment: {cases} cases x {contenders} contenders = {cells} cells, one endpoint answering in {answer_ms} ms, concurrency {concurrency}, SQLite"
        );
        let (rss, peak) = memory();
        println!("  before the run: rss {rss} KiB, peak {peak} KiB");

        let start = Instant::now();
        let e = call(
            &s,
            "run_experiment",
            json!({"dataset_id": data, "contenders": profiles, "concurrency": concurrency, "assertions": [{"type": "equals"}]}),
        )
        .await?;
        let id = e["experiment_id"].as_str().unwrap_or_default().to_owned();
        let mut marks = vec![(cells / 10, "a tenth"), (cells / 2, "half")];
        marks.reverse();
        let view = loop {
            let view = call(&s, "get_experiment", json!({"experiment_id": id})).await?;
            let done = view["done"].as_u64().unwrap_or(0);
            while marks.last().is_some_and(|(at, _)| done >= *at) {
                let (_, what) = marks.pop().unwrap_or_default();
                let (rss, _) = memory();
                println!("  {what} of the cells ({done}) at {:.2} s: rss {rss} KiB", start.elapsed().as_secs_f64());
            }
            if view["experiment"]["status"] != "running" {
                break view;
            }
            if start.elapsed() > Duration::from_secs(600) {
                return Err(format!("experiment {id} never completed: {view}"));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        let took = start.elapsed();
        let (rss, peak) = memory();
        println!("  all the cells ({}): rss {rss} KiB, peak {peak} KiB", view["done"]);
        if view["experiment"]["status"] != "completed" || view["done"].as_u64() != Some(cells) {
            return Err(format!("the experiment did not complete every cell: {view}"));
        }
        let asked: usize = profiles.iter().map(|m| fake.asked(m)).sum();
        println!(
            "wall time: {:.2} s for {cells} cells = {:.2}x the ideal {:.2} s ({asked} requests)",
            took.as_secs_f64(),
            took.as_secs_f64() / ideal.as_secs_f64(),
            ideal.as_secs_f64()
        );

        // get_experiment on an experiment of `seeded` cells.
        let positions = seeded.div_ceil(SEEDED_CONTENDERS as usize);
        let big = dataset(&s, positions).await?;
        let big = lf_eval::dataset::DatasetId::parse("dataset_id", big.as_str().unwrap_or_default())
            .map_err(|e| e.message().to_owned())?;
        let id = seed(&db, lenser, big, positions as u32, seeded as u32).await?;
        let mut times = Vec::new();
        let mut view = Value::Null;
        for _ in 0..reads {
            let start = Instant::now();
            view = call(&s, "get_experiment", json!({"experiment_id": id.to_string()})).await?;
            times.push(start.elapsed());
        }
        times.sort();
        if view["done"].as_u64() != Some(seeded as u64) {
            return Err(format!("the seeded experiment reads {} cells, not {seeded}", view["done"]));
        }
        println!(
            "get_experiment at {seeded} cells ({SEEDED_CONTENDERS} contenders): p50 {:.1} ms, max {:.1} ms over {reads} reads",
            times[times.len() / 2].as_secs_f64() * 1e3,
            times[times.len() - 1].as_secs_f64() * 1e3
        );
        db.close().await;
        let _ = std::fs::remove_dir_all(&dir);
        Ok(())
    })
}

/// A dataset of `n` cases expecting "An answer.": its id.
async fn dataset(s: &LfServer, n: usize) -> Result<Value, String> {
    let cases: Vec<Value> = (1..=n)
        .map(|i| json!({"prompt": format!("Question {i}?"), "expected": "An answer.", "tags": [if i % 2 == 0 { "even" } else { "odd" }]}))
        .collect();
    let made = call(s, "create_dataset", json!({"name": format!("bench {n}"), "cases": cases})).await?;
    Ok(made["dataset"]["dataset_id"].clone())
}

/// A completed experiment of `owner`'s over `positions` cases of `dataset`
/// and [`SEEDED_CONTENDERS`] contenders, `cells` of its results written
/// straight into the file in one statement (a third failing, one in 97 an
/// error, latencies spread over 20..520 ms).
async fn seed(
    db: &lf_server::Database,
    owner: LenserId,
    dataset: DatasetId,
    positions: u32,
    cells: u32,
) -> Result<ExperimentId, String> {
    let now = SystemClock.now();
    let experiment = Experiment {
        id: ExperimentId::new(),
        owner,
        visibility: Visibility::Private,
        dataset,
        dataset_version: 1,
        case_count: positions,
        contenders: (0..SEEDED_CONTENDERS).map(|i| Contender::model(&format!("bench-{i}"))).collect(),
        assertions: Vec::new(),
        repeats: 1,
        concurrency: 32,
        budget_credits: None,
        status: ExperimentStatus::Completed,
        created_at: now,
        updated_at: now,
        created_by: owner,
        agent: None,
        judge: None,
    };
    db.experiment_store().add_experiment(&experiment).await.map_err(|e| e.message().to_owned())?;
    let pool = db.sqlite_pool().ok_or("bench-experiment runs on SQLite")?;
    sqlx::query(
        "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < $2) \
         INSERT INTO experiment_results (experiment_id, position, contender, rep, tags, answer, outcomes, \
         passed, score, error, input_tokens, output_tokens, cost_usd, credits, latency_ms, attempts, created_at) \
         SELECT $1, i / $3 + 1, i % $3, 1, '[\"odd\"]', 'An answer of a few words, as a model would give it.', \
         '[{\"type\":\"equals\",\"from\":\"experiment\",\"passed\":true,\"reason\":\"It is equal.\"}]', \
         i % 3 <> 0, CASE WHEN i % 3 <> 0 THEN 1.0 ELSE 0.0 END, \
         CASE WHEN i % 97 = 0 THEN 'The model could not be asked: 500' ELSE NULL END, \
         10, 5, 0.0001, 1, 20 + (i * 7919) % 500, 1, $4 FROM n",
    )
    .bind(experiment.id.as_uuid())
    .bind(i64::from(cells))
    .bind(i64::from(SEEDED_CONTENDERS))
    .bind(now.as_micros())
    .execute(pool)
    .await
    .map_err(|e| e.to_string())?;
    Ok(experiment.id)
}

/// This process's resident memory and its peak, in KiB (Linux).
fn memory() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}
