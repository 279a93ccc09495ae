//! Properties of the validator and of creation.

use std::borrow::Cow;
use std::sync::Arc;

use lf_core::{LensId, LenserId, Principal, VersionId};
use lf_workflow::catalog::{ConnectorUse, catalog};
use lf_workflow::{
    Connector, Facts, Graph, GraphEdge, GraphNode, IssueCode, LensBinding, LensFacts, LensParam,
    MemoryConnections, MemoryLenses, MemoryWorkflowStore, NewWorkflow, RawBlueprint, RawConnection,
    RawConnector, RawStep, VersionSelector, WorkflowService, validate,
};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

const IDS: &[&str] = &["", "a", "b", "c", "d", "e", "f", "g", " "];
const TYPES: &[Option<&str>] = &[
    None,
    Some("manual_trigger"),
    Some("schedule_trigger"),
    Some("lens"),
    Some("http_request"),
    Some("slack_notify"),
    Some("if_condition"),
    Some("switch"),
    Some("lens_execute"),
    Some("no_such_type"),
    Some("slack_send"),
];
const KEYS: &[&str] = &["output", "text", "true", "error", "$.a[0]", "$[", "", "result"];
const PARAMS: &[&str] = &["input", "", "  ", "topic", "Topic", "context"];

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        "[a-z$.\\[\\]*]{0,8}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(("[a-z_]{1,6}", inner), 0..4)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

fn config() -> impl Strategy<Value = Map<String, Value>> {
    prop::collection::vec(
        (
            prop::sample::select(vec![
                "url",
                "cron",
                "text",
                "condition",
                "cases",
                "lens_id",
                "method",
                "zzz",
            ]),
            json_value(),
        ),
        0..4,
    )
    .prop_map(|kv| kv.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
}

#[derive(Debug, Clone)]
struct LooseNode {
    id: &'static str,
    node_type: Option<&'static str>,
    lens: bool,
    config: Map<String, Value>,
    params: Map<String, Value>,
    connector: Option<&'static str>,
}

#[derive(Debug, Clone)]
struct LooseEdge {
    from: &'static str,
    to: &'static str,
    key: Option<&'static str>,
    param: &'static str,
    merge: Option<lf_workflow::MergeStrategy>,
}

fn loose_node() -> impl Strategy<Value = LooseNode> {
    (
        prop::sample::select(IDS),
        prop::sample::select(TYPES),
        any::<bool>(),
        config(),
        config(),
        prop::option::of(prop::sample::select(vec!["slack", "http", "smtp"])),
    )
        .prop_map(|(id, node_type, lens, config, params, connector)| LooseNode {
            id,
            node_type,
            lens,
            config,
            params,
            connector,
        })
}

fn loose_edge() -> impl Strategy<Value = LooseEdge> {
    (
        prop::sample::select(IDS),
        prop::sample::select(IDS),
        prop::option::of(prop::sample::select(KEYS)),
        prop::sample::select(PARAMS),
        prop::option::of(prop::sample::select(lf_workflow::MergeStrategy::ALL.to_vec())),
    )
        .prop_map(|(from, to, key, param, merge)| LooseEdge { from, to, key, param, merge })
}

fn facts(lens: LensId) -> Facts {
    let f = LensFacts {
        lens_id: lens,
        version_id: VersionId::new(),
        title: "L".into(),
        params: vec![LensParam { label: "Topic".into(), optional: false }],
        missing_label: None,
    };
    Facts {
        lenses: Some(
            [(LensBinding { lens_id: lens, version_id: None }.into(), Some(f))].into_iter().collect(),
        ),
        connections: Some(
            [lf_workflow::SavedConnection { connection_ref: "saved".into(), provider: "slack".into() }]
                .into_iter()
                .collect(),
        ),
        egress: Some(Arc::new(RefusesEvery)),
        ..Facts::none()
    }
}

/// An egress policy that refuses every URL: each one a step gives outright
/// is warned about.
#[derive(Debug)]
struct RefusesEvery;

impl lf_workflow::EgressPolicy for RefusesEvery {
    fn refusal(&self, _url: &str) -> Option<lf_workflow::EgressRefusal> {
        Some(lf_workflow::EgressRefusal { reason: "test".into(), opened_by: None })
    }
}

/// Whether some node reaches itself (reachability by repeated squaring of
/// an adjacency matrix: independent of the validator's algorithm).
fn has_cycle(n: usize, edges: &[(usize, usize)]) -> bool {
    let mut r = vec![vec![false; n]; n];
    for &(a, b) in edges {
        r[a][b] = true;
    }
    for k in 0..n {
        let via = r[k].clone();
        for row in r.iter_mut() {
            if row[k] {
                for (cell, reach) in row.iter_mut().zip(&via) {
                    *cell |= *reach;
                }
            }
        }
    }
    (0..n).any(|i| r[i][i])
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn never_panics_and_stays_consistent(nodes in prop::collection::vec(loose_node(), 0..9), edges in prop::collection::vec(loose_edge(), 0..14)) {
        let lens = LensId::new();
        let connectors: Vec<Option<Connector>> = nodes.iter().map(|n| n.connector.map(|p| Connector {
            provider: lf_workflow::Provider::parse("p", p).unwrap(),
            connection_ref: lf_workflow::ConnectionRef::parse("r", "saved").unwrap(),
            capability: None,
        })).collect();
        let graph = Graph {
            nodes: nodes.iter().zip(&connectors).map(|(n, c)| GraphNode {
                id: Cow::Borrowed(n.id),
                node_type: n.node_type,
                lens: n.lens.then_some(LensBinding { lens_id: lens, version_id: None }),
                config: Some(&n.config),
                parameters: Some(&n.params),
                connector: c.as_ref(),
                ..Default::default()
            }).collect(),
            edges: edges.iter().map(|e| GraphEdge {
                from: Cow::Borrowed(e.from),
                to: Cow::Borrowed(e.to),
                output_key: e.key,
                input_parameter: e.param,
                merge_strategy: e.merge,
                ..Default::default()
            }).collect(),
        };
        for f in [Facts::none(), facts(lens)] {
            let r = validate(&graph, catalog(), &f);
            prop_assert_eq!(r.valid, r.errors.is_empty());
            prop_assert!(!r.run_ready || r.valid);
            prop_assert_eq!(r.nodes.len(), nodes.len());
            prop_assert!(r.errors.iter().all(|i| !i.code.is_warning()));
            prop_assert!(r.warnings.iter().all(|i| i.code.is_warning()));
            for i in r.errors.iter().chain(&r.warnings) {
                prop_assert!(i.node.is_none_or(|n| n < nodes.len()));
                prop_assert!(!i.message.is_empty() && !i.hint.is_empty());
                if i.code == IssueCode::EgressRefused {
                    let url = i.node.and_then(|n| nodes[n].config.get("url")).and_then(Value::as_str);
                    prop_assert!(f.egress.is_some() && url.is_some_and(|u| !u.contains("[[")), "{:?}", i);
                }
            }
            let mut seen = std::collections::HashSet::new();
            prop_assert!(r.execution_order.iter().all(|i| seen.insert(*i)), "each node once");
            prop_assert_eq!(validate(&graph, catalog(), &f), r, "deterministic");
        }
    }

    #[test]
    fn cycles_exactly_when_there_are_some(n in 1usize..24, raw in prop::collection::vec((0usize..24, 0usize..24), 0..48)) {
        let edges: Vec<(usize, usize)> = raw.into_iter().map(|(a, b)| (a % n, b % n)).collect();
        let ids: Vec<String> = (0..n).map(|i| format!("n{i}")).collect();
        let graph = Graph {
            nodes: ids.iter().map(|id| GraphNode { id: Cow::Borrowed(id), node_type: Some("noop"), ..Default::default() }).collect(),
            edges: edges.iter().map(|(a, b)| GraphEdge {
                from: Cow::Borrowed(&ids[*a]), to: Cow::Borrowed(&ids[*b]), input_parameter: "input", ..Default::default()
            }).collect(),
        };
        let r = validate(&graph, catalog(), &Facts::none());
        let cyclic = has_cycle(n, &edges);
        let reported: Vec<_> = r.errors.iter().filter(|i| i.code == IssueCode::WorkflowCycle).collect();
        prop_assert_eq!(!reported.is_empty(), cyclic);
        for c in &reported {
            // The nodes named are a cycle: each links to the next, the last to the first.
            for (k, v) in c.cycle.iter().enumerate() {
                let w = c.cycle[(k + 1) % c.cycle.len()];
                prop_assert!(edges.contains(&(*v, w)), "{:?} is not a cycle of {:?}", c.cycle, edges);
            }
        }
        if !cyclic {
            let order = &r.execution_order;
            prop_assert_eq!(order.len(), n, "every node once");
            let mut pos = vec![usize::MAX; n];
            for (p, v) in order.iter().enumerate() {
                pos[*v] = p;
            }
            prop_assert!(pos.iter().all(|p| *p != usize::MAX));
            for (a, b) in &edges {
                prop_assert!(pos[*a] < pos[*b], "{a} before {b}");
            }
            prop_assert!(r.root_nodes.iter().all(|v| !edges.iter().any(|(_, b)| b == v)));
        }
    }

    #[test]
    fn what_creation_accepts_validates_cleanly(
        picks in prop::collection::vec((0usize..1000, any::<bool>()), 1..8),
        links in prop::collection::vec((0usize..9, 0usize..9, 0usize..4), 0..14),
        trigger in 0usize..5,
    ) {
        let lenses = Arc::new(MemoryLenses::new());
        let connections = Arc::new(MemoryConnections::new());
        let service = WorkflowService::new(Arc::new(MemoryWorkflowStore::new()), lenses.clone(), connections.clone());
        let me = LenserId::new();
        let lens = LensId::new();
        lenses.insert(me, true, LensFacts {
            lens_id: lens, version_id: VersionId::new(), title: "L".into(),
            params: vec![LensParam { label: "Topic".into(), optional: false }, LensParam { label: "Tone".into(), optional: true }],
            missing_label: None,
        });
        let tools: Vec<_> = catalog().entries().iter().filter(|e| e.category.as_str() != "trigger" && e.node_type != "lens").collect();
        let triggers: Vec<_> = catalog().in_category("trigger").collect();
        let t = triggers[trigger % triggers.len()];
        let mut steps = vec![RawStep {
            key: "start".into(), kind: "trigger".into(), name: "Start".into(), node_type: Some(t.node_type.into()),
            config: t.example.config.as_object().cloned(), ..Default::default()
        }];
        for (i, (pick, saved)) in picks.iter().enumerate() {
            let key = format!("s{i}");
            if pick % 5 == 0 {
                steps.push(RawStep { key, kind: "lens".into(), name: "Lens".into(), lens_id: Some(lens.to_string()),
                    parameters: Some(json!({"topic": "x"}).as_object().unwrap().clone()), ..Default::default() });
                continue;
            }
            let e = tools[pick % tools.len()];
            let connector = match e.connector {
                ConnectorUse::None => None,
                ConnectorUse::Optional(p) | ConnectorUse::Required(p) => {
                    let r = format!("c{i}");
                    if *saved { connections.insert(me, p[0], &r); }
                    Some(RawConnector { provider: p[0].into(), connection_ref: r, capability: None })
                }
            };
            let mut config = e.example.config.as_object().cloned().unwrap_or_default();
            if e.node_type == "lens_execute" { config.insert("lens_id".into(), json!(lens.to_string())); }
            steps.push(RawStep { key, kind: "tool".into(), name: e.display_name.into(), node_type: Some(e.node_type.into()),
                config: Some(config), connector, ..Default::default() });
        }
        let n = steps.len();
        let mut connections_raw: Vec<RawConnection> = (1..n).map(|i| RawConnection {
            from_step: steps[i - 1].key.clone(), to_step: steps[i].key.clone(), input_parameter: "input".into(), ..Default::default()
        }).collect();
        for (a, b, k) in links {
            // Mostly forward links (creation refuses self-links and cycles,
            // which the other properties cover); one kind in four as drawn.
            let (a, b) = (a % n, b % n);
            if a == b {
                continue;
            }
            let (a, b) = if k == 3 { (a, b) } else { (a.min(b), a.max(b)) };
            connections_raw.push(RawConnection {
                from_step: steps[a].key.clone(), to_step: steps[b].key.clone(),
                output_key: ["output", "text", "$.items[0]", "error"][k].to_owned().into(),
                input_parameter: ["input", "topic", "Tone", "extra"][k].into(), ..Default::default()
            });
        }
        let blueprint = RawBlueprint { title: "P".into(), steps, connections: connections_raw, ..Default::default() };
        let p = Principal::Service { acting_as: Some(me) };
        if let Ok(created) = pollster::block_on(service.create(&p, NewWorkflow { blueprint, owner: None })) {
            prop_assert!(created.report.errors.is_empty());
            let again = pollster::block_on(service.validate(&p, created.workflow.id, VersionSelector::Head)).unwrap();
            prop_assert!(again.report.errors.is_empty(), "{:?}", again.report.errors);
            prop_assert!(again.report.valid && again.report.run_ready);
            prop_assert_eq!(again.report.execution_order.len(), n);
        }
    }
}
