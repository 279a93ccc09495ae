//! `bench-workflow`: validate_workflow through the catalog on 100 nodes /
//! 300 edges, 1,000 / 3,000 and 10,000 / 30,000 (its aims are in
//! docs/performance.md), next to the validator called directly on the same
//! version, and create_workflow with a 100-step blueprint on the memory
//! store and on a SQLite file.
//!
//! The graphs are those of lf-workflow's criterion bench (`cargo bench -p
//! lf-workflow --bench validate`), built the same way: a manual trigger,
//! then tool steps cycling through five catalog types with real configs;
//! every step fed by one of the eight before it and by two more earlier
//! steps, so all are reachable and every step has three inputs. A version
//! larger than a blueprint may be (100 steps) is written to the store
//! directly; validate_workflow then reads it back as it reads any.
//!
//! Printed per size: median and max over `--runs` calls (after warm-up)
//! of the tool call (arguments parsed, the store read, the lenses and
//! connections looked up, the report serialized) and of the validator
//! alone, in µs, and µs per node, which stays flat when the cost is
//! linear.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use lf_battle::rating::SplitMix64;
use lf_core::{LenserId, Principal, Timestamp, WorkflowId};
use lf_lens::{LensService, MemoryLensStore};
use lf_tools::{Catalog, CatalogOptions, LfServer, Services};
use lf_workflow::catalog::catalog;
use lf_workflow::{
    Edge, EdgeId, Facts, Graph, InputParameter, MemoryConnections, MemoryLenses, MemoryWorkflowStore, Node,
    NodeId, NodeKind, NodeTypeName, Pick, Position, StepKey, StepName, VersionSelector, Visibility, Workflow,
    WorkflowService, WorkflowStore, WorkflowVersion, WorkflowVersionId, validate,
};
use serde_json::{Map, Value, json};

use crate::bench::{arg_usize, percentile, workdir};

/// A workflow service on memory stores with no lens and no saved
/// connection (the graphs here use neither).
pub(crate) fn memory_service() -> WorkflowService {
    service(Arc::new(MemoryWorkflowStore::new()))
}

/// A connection service with no saved connection; its sealer (under the
/// data directory's key file) is never asked to seal or open.
pub(crate) fn no_connections() -> lf_workflow::ConnectionService {
    lf_workflow::ConnectionService::new(
        Arc::new(MemoryConnections::new()),
        Arc::new(lf_server::KeySealer::new(None)),
    )
}

fn service(store: Arc<dyn WorkflowStore>) -> WorkflowService {
    WorkflowService::new(store, Arc::new(MemoryLenses::new()), Arc::new(MemoryConnections::new()))
}

/// The tool types the steps cycle through: type, config, an output key.
fn kinds() -> [(&'static str, Value, &'static str); 5] {
    [
        ("noop", json!({}), "output"),
        ("data_mapper", json!({"mapping": {"title": "$.data.title", "who": "author"}}), "title"),
        ("if_condition", json!({"condition": {"path": "$.score", "op": "gte", "value": 7}}), "true"),
        ("logger", json!({"message": "seen [[count]]", "level": "info"}), "output"),
        ("sort", json!({"by": "date", "order": "desc"}), "$[0]"),
    ]
}

/// `(step, type, config)` per step and `(from, output_key, to, input)` per
/// connection, by step position.
type Shape = (Vec<(usize, &'static str, Value)>, Vec<(usize, &'static str, usize, &'static str)>);

fn shape(steps: usize) -> Shape {
    let kinds = kinds();
    let mut rng = SplitMix64::new(2026);
    let nodes = (0..steps)
        .map(|i| {
            if i == 0 {
                (i, "manual_trigger", json!({}))
            } else {
                (i, kinds[i % 5].0, kinds[i % 5].1.clone())
            }
        })
        .collect();
    let mut edges = Vec::with_capacity(steps * 3);
    for to in 1..steps {
        for (k, input) in ["input", "context", "data"].into_iter().enumerate() {
            let from = if k == 0 { to - 1 - rng.below(to.min(8)) } else { rng.below(to) };
            edges.push((from, if from == 0 { "output" } else { kinds[from % 5].2 }, to, input));
        }
    }
    (nodes, edges)
}

/// The blueprint of create_workflow for `steps` steps (at most 100).
fn blueprint(steps: usize) -> Value {
    let (nodes, edges) = shape(steps);
    let steps: Vec<Value> = nodes
        .into_iter()
        .map(|(i, t, config)| {
            let kind = if i == 0 { "trigger" } else { "tool" };
            json!({"key": format!("n{i}"), "kind": kind, "name": format!("Step {i}"), "node_type": t, "config": config, "parameters": {"input": i}})
        })
        .collect();
    let connections: Vec<Value> = edges
        .into_iter()
        .map(|(f, k, t, p)| json!({"from_step": format!("n{f}"), "output_key": k, "to_step": format!("n{t}"), "input_parameter": p}))
        .collect();
    json!({"title": format!("Bench of {} steps", steps.len()), "steps": steps, "connections": connections})
}

/// A stored version of `steps` steps, of any size, as the blueprint would make it.
fn version(workflow_id: WorkflowId, owner: LenserId, steps: usize) -> WorkflowVersion {
    let (nodes, edges) = shape(steps);
    let nodes: Vec<Node> = nodes
        .into_iter()
        .map(|(i, t, config)| Node {
            id: NodeId::new(),
            key: StepKey::parse("key", &format!("n{i}")).expect("a step key"),
            kind: if i == 0 { NodeKind::Trigger } else { NodeKind::Tool },
            name: StepName::parse("name", &format!("Step {i}")).expect("a step name"),
            node_type: NodeTypeName::parse("node_type", t).expect("a node type"),
            lens: None,
            parameters: Map::from_iter([("input".to_owned(), json!(i))]),
            config: config.as_object().cloned().unwrap_or_default(),
            connector: None,
            position: Position::of_ordinal(i as u32),
            ordinal: i as u32,
        })
        .collect();
    let edges = edges
        .into_iter()
        .enumerate()
        .map(|(j, (f, k, t, p))| Edge {
            id: EdgeId::new(),
            from: nodes[f].id,
            output_key: Pick::parse("output_key", k).expect("a pick"),
            to: nodes[t].id,
            input_parameter: InputParameter::parse("input_parameter", p).expect("an input"),
            condition: None,
            merge_strategy: None,
            ordinal: j as u32,
        })
        .collect();
    WorkflowVersion {
        id: WorkflowVersionId::new(),
        workflow_id,
        number: 1,
        changelog: "Benchmark.".to_owned(),
        created_by: owner,
        agent: None,
        created_at: Timestamp::from_micros(0),
        nodes,
        edges,
    }
}

fn server(workflow: WorkflowService, owner: LenserId) -> LfServer {
    let services = Services::builder()
        .lens(LensService::new(Arc::new(MemoryLensStore::new())))
        .battle(lf_battle::BattleService::new(Arc::new(lf_battle::MemoryBattleStore::new())))
        .workflow(workflow)
        .connections(crate::bench_workflow::no_connections())
        .build();
    LfServer::new(
        Arc::new(Catalog::new()),
        Arc::new(services),
        CatalogOptions::default(),
        Principal::Service { acting_as: Some(owner) },
    )
}

/// Calls `tool` and checks it answered a success; its structured content.
async fn call(s: &LfServer, tool: &str, args: &Value) -> Result<Value, String> {
    let args = args.as_object().cloned().unwrap_or_default();
    let r = s.call(tool, args).await.map_err(|e| format!("{tool}: {}", e.message))?;
    let v = r.structured_content.unwrap_or_default();
    if r.is_error == Some(true) {
        return Err(format!("{tool} failed: {v}"));
    }
    Ok(v)
}

/// `(median, max)` of `f`'s time over `runs` runs after `runs / 10 + 1` warm-ups.
async fn time<F, Fut>(runs: usize, mut f: F) -> Result<(Duration, Duration), String>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<(), String>>,
{
    for _ in 0..runs / 10 + 1 {
        f().await?;
    }
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let t = Instant::now();
        f().await?;
        times.push(t.elapsed());
    }
    times.sort();
    Ok((percentile(&times, 0.5), *times.last().expect("at least one run")))
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

pub fn run(args: &[String]) -> Result<(), String> {
    let runs = arg_usize(args, "--runs", 50).max(1);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
    rt.block_on(async {
        let owner = LenserId::new();
        println!("validate_workflow through the catalog, and the validator alone ({runs} runs each, µs)");
        println!(
            "{:>7} {:>7} {:>11} {:>9} {:>11} {:>9} {:>9}",
            "nodes", "edges", "tool p50", "tool max", "direct p50", "max", "tool/node"
        );
        for n in [100, 1_000, 10_000] {
            let store = Arc::new(MemoryWorkflowStore::new());
            let id = WorkflowId::new();
            let v = version(id, owner, n);
            let edges = v.edges.len();
            let w = Workflow {
                id,
                owner,
                title: lf_workflow::Title::parse("Bench").expect("a title"),
                description: None,
                visibility: Visibility::Private,
                public_runs: false,
                head_version_id: v.id,
                head_version: 1,
                created_at: Timestamp::from_micros(0),
                updated_at: Timestamp::from_micros(0),
                archived_at: None,
                agent: None,
            };
            store.create_workflow(&w, &v).await.map_err(|e| e.message().to_owned())?;
            let s = server(service(store.clone()), owner);
            let a = json!({"workflow_id": id.to_string()});
            let first = call(&s, "validate_workflow", &a).await?;
            if first["valid"] != true || first["execution_order"].as_array().map(Vec::len) != Some(n) {
                return Err(format!("the {n}-node graph does not validate: {}", first["errors"]));
            }
            let (tool, tool_max) =
                time(runs, || async { call(&s, "validate_workflow", &a).await.map(drop) }).await?;
            let facts =
                Facts { lenses: Some(HashMap::new()), connections: Some(HashSet::new()), ..Facts::none() };
            let stored = store
                .get_version(lf_core::Reach::Everything, id, VersionSelector::Head)
                .await
                .map_err(|e| e.message().to_owned())?;
            let (direct, direct_max) = time(runs, || async {
                std::hint::black_box(validate(&Graph::of_version(&stored), catalog(), &facts));
                Ok(())
            })
            .await?;
            println!(
                "{n:>7} {edges:>7} {:>11.1} {:>9.1} {:>11.1} {:>9.1} {:>9.3}",
                us(tool),
                us(tool_max),
                us(direct),
                us(direct_max),
                us(tool) / n as f64
            );
        }

        println!("\ncreate_workflow with 100 steps and 297 connections ({runs} runs, ms)");
        let bp = blueprint(100);
        let s = server(memory_service(), owner);
        let (p50, max) = time(runs, || async { call(&s, "create_workflow", &bp).await.map(drop) }).await?;
        println!(
            "memory store: p50 {:.2} ms, max {:.2} ms",
            p50.as_secs_f64() * 1e3,
            max.as_secs_f64() * 1e3
        );
        let dir = workdir("bench-workflow");
        let url = format!("sqlite://{}", dir.join("bench.db").display());
        let db = lf_store::Database::connect(&url).await.map_err(|e| e.message().to_owned())?;
        let sqlite =
            WorkflowService::new(db.workflow_store(), Arc::new(MemoryLenses::new()), db.connection_lookup());
        let s = server(sqlite, owner);
        let (p50, max) = time(runs, || async { call(&s, "create_workflow", &bp).await.map(drop) }).await?;
        println!("SQLite file: p50 {:.2} ms, max {:.2} ms", p50.as_secs_f64() * 1e3, max.as_secs_f64() * 1e3);
        let _ = std::fs::remove_dir_all(&dir);
        Ok(())
    })
}
