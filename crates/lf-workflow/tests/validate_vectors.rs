//! The original's validation vectors (reference §4.3, §6), and the codes
//! it never had.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use lf_core::LensId;
use lf_workflow::catalog::catalog;
use lf_workflow::{
    Facts, Graph, GraphEdge, GraphNode, IssueCode, LensBinding, LensFacts, LensParam, NodeKind, Report,
    validate,
};
use serde_json::{Map, Value, json};

fn obj(v: Value) -> Map<String, Value> {
    v.as_object().unwrap().clone()
}

fn node<'a>(id: &'a str, name: &'a str, node_type: Option<&'a str>) -> GraphNode<'a> {
    GraphNode { id: Cow::Borrowed(id), name: Some(name), node_type, ..Default::default() }
}

fn edge<'a>(from: &'a str, to: &'a str, param: &'a str) -> GraphEdge<'a> {
    GraphEdge {
        from: Cow::Borrowed(from),
        to: Cow::Borrowed(to),
        input_parameter: param,
        ..Default::default()
    }
}

fn codes(r: &Report) -> (Vec<&str>, Vec<&str>) {
    (r.errors.iter().map(|i| i.code.as_str()).collect(), r.warnings.iter().map(|i| i.code.as_str()).collect())
}

fn lens_facts(id: LensId, labels: &[(&str, bool)]) -> Facts {
    let facts = LensFacts {
        lens_id: id,
        version_id: lf_core::VersionId::new(),
        title: "Research".into(),
        params: labels
            .iter()
            .map(|(l, optional)| LensParam { label: (*l).into(), optional: *optional })
            .collect(),
    };
    let binding = LensBinding { lens_id: id, version_id: None };
    Facts { lenses: Some(HashMap::from([(binding, Some(facts))])), connections: Some(HashSet::new()) }
}

#[test]
fn trigger_then_lens_is_valid_and_ready() {
    let lens_id = LensId::new();
    let params = obj(json!({"topic": "AI robotics"}));
    let config = obj(json!({}));
    let mut lens = node("lens-1", "Research Lens", None);
    lens.lens = Some(LensBinding { lens_id, version_id: None });
    lens.parameters = Some(&params);
    let mut trigger = node("trigger-1", "Start manually", Some("manual_trigger"));
    trigger.config = Some(&config);
    let g = Graph { nodes: vec![trigger, lens], edges: vec![edge("trigger-1", "lens-1", "context")] };
    let r = validate(&g, catalog(), &lens_facts(lens_id, &[("Topic", false), ("Context", false)]));
    assert_eq!(codes(&r), (vec![], vec![]), "{r:#?}");
    assert!(r.valid && r.run_ready);
    assert_eq!(r.execution_order, vec![0, 1]);
    assert_eq!(r.root_nodes, vec![0]);
    assert_eq!(r.nodes[0].kind, Some(NodeKind::Trigger));
    assert_eq!(r.nodes[1].kind, Some(NodeKind::Lens));
    assert_eq!(r.nodes[1].configured_parameters, ["topic"]);
    assert_eq!(r.nodes[1].wired_parameters, ["context"]);
}

#[test]
fn broken_edges_and_a_cycle() {
    let a_lens = Some(LensBinding { lens_id: LensId::new(), version_id: None });
    let mut a = node("a", "A", None);
    a.lens = a_lens;
    let mut b = node("b", "B", None);
    b.lens = a_lens;
    let g = Graph {
        nodes: vec![a, b],
        edges: vec![edge("a", "b", "input"), edge("b", "a", "input"), edge("missing", "a", "")],
    };
    let r = validate(&g, catalog(), &Facts::none());
    let (errors, warnings) = codes(&r);
    for want in ["EDGE_SOURCE_MISSING", "EDGE_PARAMETER_MISSING", "WORKFLOW_CYCLE"] {
        assert!(errors.contains(&want), "{want}: {errors:?}");
    }
    assert_eq!(warnings, ["TRIGGER_MISSING"]);
    let cycle = r.errors.iter().find(|i| i.code == IssueCode::WorkflowCycle).unwrap();
    assert_eq!(cycle.message, "The workflow contains a cycle and cannot be executed in dependency order.");
    assert_eq!(cycle.cycle, vec![0, 1]);
    assert!(cycle.hint.contains("A → B → A"), "{}", cycle.hint);
    let src = r.errors.iter().find(|i| i.code == IssueCode::EdgeSourceMissing).unwrap();
    assert_eq!(src.message, "Connection edge-3 references a missing source node.");
    assert!(!r.valid && !r.run_ready);
    assert!(r.execution_order.is_empty());
}
