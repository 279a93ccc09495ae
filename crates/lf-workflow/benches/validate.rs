//! The validator on 100 nodes / 300 edges, 1,000 / 3,000 and 10,000 / 30,000,
//! to show it grows linearly (its aims are in docs/performance.md).
//!
//! ```text
//! cargo bench -p lf-workflow --bench validate -- --warm-up-time 1 --measurement-time 5
//! ```
//!
//! The graph is a random DAG with a deterministic generator: a manual
//! trigger, then nodes cycling through six catalog types with real
//! configs (noop, data_mapper, if_condition, logger, sort, http_request);
//! every node is linked from an earlier one (so all are reachable) and
//! gets two more links from earlier nodes, output keys included. Cases:
//! - `graph/N`: [`validate`] on a prepared [`Graph`], no lens or
//!   connection facts;
//! - `version/N`: a stored version viewed as a graph ([`Graph::of_version`])
//!   and validated with facts, as `validate_workflow` does after reading it.

use std::collections::{HashMap, HashSet};
use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use lf_core::{LenserId, Timestamp, WorkflowId};
use lf_workflow::catalog::catalog;
use lf_workflow::{
    Edge, EdgeId, Facts, Graph, InputParameter, Node, NodeId, NodeKind, NodeTypeName, Pick, Position,
    StepKey, StepName, WorkflowVersion, WorkflowVersionId, validate,
};
use serde_json::{Map, Value, json};

struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        // SplitMix64.
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) % n as u64) as usize
    }
}

fn obj(v: Value) -> Map<String, Value> {
    v.as_object().unwrap().clone()
}

fn version(nodes: usize) -> WorkflowVersion {
    let kinds: [(&str, Map<String, Value>, &str); 6] = [
        ("noop", obj(json!({})), "output"),
        ("data_mapper", obj(json!({"mapping": {"title": "$.data.title", "who": "author"}})), "title"),
        ("if_condition", obj(json!({"condition": {"path": "$.score", "op": "gte", "value": 7}})), "true"),
        ("logger", obj(json!({"message": "seen [[count]]", "level": "info"})), "output"),
        ("sort", obj(json!({"by": "date", "order": "desc"})), "$[0]"),
        ("http_request", obj(json!({"url": "https://api.example.com/items", "method": "GET"})), "body"),
    ];
    let mut rng = Rng(2026);
    let mut ns = Vec::with_capacity(nodes);
    for i in 0..nodes {
        let (t, config, _) =
            if i == 0 { ("manual_trigger", Map::new(), "output") } else { kinds[i % 6].clone() };
        ns.push(Node {
            id: NodeId::new(),
            key: StepKey::parse("key", &format!("n{i}")).unwrap(),
            kind: if i == 0 { NodeKind::Trigger } else { NodeKind::Tool },
            name: StepName::parse("name", &format!("Step {i}")).unwrap(),
            node_type: NodeTypeName::parse("node_type", t).unwrap(),
            lens: None,
            parameters: obj(json!({"input": i})),
            config,
            connector: None,
            position: Position::of_ordinal(i as u32),
            ordinal: i as u32,
        });
    }
    let mut es = Vec::with_capacity(nodes * 3);
    for to in 1..nodes {
        for k in 0..3 {
            let from = if k == 0 { to - 1 - rng.below(to.min(8)) } else { rng.below(to) };
            let key = if from == 0 { "output" } else { kinds[from % 6].2 };
            es.push(Edge {
                id: EdgeId::new(),
                from: ns[from].id,
                output_key: Pick::parse("output_key", key).unwrap(),
                to: ns[to].id,
                input_parameter: InputParameter::parse("p", ["input", "context", "data"][k]).unwrap(),
                condition: None,
                merge_strategy: None,
                ordinal: es.len() as u32,
            });
        }
    }
    WorkflowVersion {
        id: WorkflowVersionId::new(),
        workflow_id: WorkflowId::new(),
        number: 1,
        changelog: String::new(),
        created_by: LenserId::new(),
        agent: None,
        created_at: Timestamp::from_micros(0),
        nodes: ns,
        edges: es,
    }
}

fn bench(c: &mut Criterion) {
    let facts = Facts { lenses: Some(HashMap::new()), connections: Some(HashSet::new()), ..Facts::none() };
    for n in [100, 1_000, 10_000] {
        let v = version(n);
        let graph = Graph::of_version(&v);
        let r = validate(&graph, catalog(), &facts);
        assert!(r.valid && r.execution_order.len() == n, "{:?}", r.errors.first());
        let mut g = c.benchmark_group("validate");
        if n > 1_000 {
            g.sample_size(20);
        }
        let label = format!("{n}_nodes_{}_edges", v.edges.len());
        g.bench_function(format!("graph/{label}"), |b| {
            b.iter(|| validate(black_box(&graph), catalog(), &Facts::none()))
        });
        g.bench_function(format!("version/{label}"), |b| {
            b.iter(|| validate(&Graph::of_version(black_box(&v)), catalog(), &facts))
        });
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
