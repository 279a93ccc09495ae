//! The original's validation vectors (reference §4.3, §6), and the codes
//! it never had.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use lf_core::{LabelName, LensId};
use lf_workflow::catalog::catalog;
use lf_workflow::connection::ToolMode;
use lf_workflow::{
    EgressPolicy, EgressRefusal, Facts, Graph, GraphEdge, GraphNode, IssueCode, LensBinding, LensFacts,
    LensParam, LensUse, NodeKind, Report, validate,
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

/// `start → n` with input `input`.
fn after_start<'a>(start: GraphNode<'a>, n: GraphNode<'a>) -> Graph<'a> {
    let to = n.id.clone();
    Graph { nodes: vec![start, n], edges: vec![GraphEdge { to, ..edge("start", "", "input") }] }
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
        missing_label: None,
    };
    let binding = LensBinding { lens_id: id, version_id: None }.into();
    Facts {
        lenses: Some(HashMap::from([(binding, Some(facts))])),
        connections: Some(HashSet::new()),
        ..Facts::none()
    }
}

/// A policy that refuses `localhost` (openable) and `metadata.test` (not).
#[derive(Debug)]
struct NoLocalhost;

impl EgressPolicy for NoLocalhost {
    fn refusal(&self, url: &str) -> Option<EgressRefusal> {
        let host = url.split("://").nth(1)?.split(['/', ':']).next()?;
        match host {
            "localhost" => Some(EgressRefusal {
                reason: "loopback".into(),
                opened_by: Some("LENSERFIGHT_EGRESS_ALLOW=localhost".into()),
            }),
            "metadata.test" => Some(EgressRefusal { reason: "cloud metadata".into(), opened_by: None }),
            _ => None,
        }
    }
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

/// One graph per code: the code is reported, about the right node or
/// edge, with a message and a hint.
#[test]
fn every_code_has_its_case() {
    let lens_id = LensId::new();
    let hidden = LensId::new();
    let empty = obj(json!({}));
    let bad_http = obj(json!({"url": "ftp://x", "method": "FETCH", "retries": 3}));
    let local_http = obj(json!({"url": "http://localhost:8080/x"}));
    let production = obj(json!({"label": "production"}));
    let slack_cfg = obj(json!({"text": "hi"}));
    let slack = lf_workflow::Connector {
        provider: lf_workflow::Provider::parse("p", "slack").unwrap(),
        connection_ref: lf_workflow::ConnectionRef::parse("r", "unsaved").unwrap(),
        capability: None,
    };
    let start = || GraphNode { config: Some(&empty), ..node("start", "Start", Some("manual_trigger")) };
    let tool = |id: &'static str, t: &'static str| node(id, id, Some(t));
    type Case<'a> = (Graph<'a>, IssueCode, Option<usize>);
    let cases: Vec<Case> = vec![
        (Graph::default(), IssueCode::WorkflowEmpty, None),
        (
            Graph { nodes: vec![start(), node("", "Nameless", Some("noop"))], edges: vec![] },
            IssueCode::NodeIdMissing,
            Some(1),
        ),
        (
            Graph { nodes: vec![start(), tool("start", "noop")], edges: vec![] },
            IssueCode::NodeIdDuplicate,
            Some(1),
        ),
        (after_start(start(), node("x", "X", None)), IssueCode::NodeKindUnknown, Some(1)),
        (after_start(start(), tool("x", "notion_write")), IssueCode::NodeTypeUnknown, Some(1)),
        (
            after_start(start(), GraphNode { config: Some(&bad_http), ..tool("x", "http_request") }),
            IssueCode::ConfigInvalid,
            Some(1),
        ),
        (
            after_start(start(), GraphNode { config: Some(&bad_http), ..tool("x", "http_request") }),
            IssueCode::ConfigFieldUnknown,
            Some(1),
        ),
        (after_start(start(), tool("x", "slack_notify")), IssueCode::ConfigInvalid, Some(1)),
        (
            Graph { nodes: vec![start()], edges: vec![edge("start", "gone", "input")] },
            IssueCode::EdgeTargetMissing,
            None,
        ),
        (
            Graph {
                nodes: vec![start(), tool("x", "noop")],
                edges: vec![edge("start", "x", "input"), edge("x", "start", "input")],
            },
            IssueCode::EdgeIntoTrigger,
            Some(0),
        ),
        (
            Graph {
                nodes: vec![start(), tool("x", "noop")],
                edges: vec![GraphEdge { output_key: Some("$["), ..edge("start", "x", "input") }],
            },
            IssueCode::EdgeOutputKeyInvalid,
            None,
        ),
        (
            Graph {
                nodes: vec![start(), tool("x", "noop"), tool("y", "noop")],
                edges: vec![
                    edge("start", "x", "input"),
                    edge("start", "y", "input"),
                    GraphEdge {
                        merge_strategy: Some(lf_workflow::MergeStrategy::Concat),
                        ..edge("x", "y", "v")
                    },
                    GraphEdge {
                        merge_strategy: Some(lf_workflow::MergeStrategy::Array),
                        ..edge("start", "y", "v")
                    },
                ],
            },
            IssueCode::MergeStrategyConflict,
            Some(2),
        ),
        (
            Graph { nodes: vec![start(), tool("x", "noop")], edges: vec![] },
            IssueCode::UnreachableNode,
            Some(1),
        ),
        (
            Graph {
                nodes: vec![
                    start(),
                    GraphNode {
                        lens: Some(LensBinding { lens_id: hidden, version_id: None }),
                        ..node("l", "L", None)
                    },
                ],
                edges: vec![edge("start", "l", "topic")],
            },
            IssueCode::LensNotFound,
            Some(1),
        ),
        (
            Graph {
                nodes: vec![
                    start(),
                    GraphNode {
                        lens: Some(LensBinding { lens_id, version_id: None }),
                        ..node("l", "L", None)
                    },
                ],
                edges: vec![edge("start", "l", "context")],
            },
            IssueCode::LensParamUnbound,
            Some(1),
        ),
        (
            after_start(
                start(),
                GraphNode { config: Some(&slack_cfg), connector: Some(&slack), ..tool("x", "slack_notify") },
            ),
            IssueCode::ConnectionUnknown,
            Some(1),
        ),
        (Graph { nodes: vec![tool("x", "noop")], edges: vec![] }, IssueCode::TriggerMissing, None),
        (
            Graph { nodes: vec![start(), node("b", "B", Some("webhook_trigger"))], edges: vec![] },
            IssueCode::MultipleTriggers,
            None,
        ),
        (
            Graph {
                nodes: vec![
                    start(),
                    GraphNode {
                        lens: Some(LensBinding { lens_id, version_id: None }),
                        ..node("l", "L", None)
                    },
                ],
                edges: vec![edge("start", "l", "topic"), edge("start", "l", "mood")],
            },
            IssueCode::LensParamUnknown,
            Some(1),
        ),
        (
            after_start(start(), GraphNode { connector: Some(&slack), ..tool("x", "noop") }),
            IssueCode::ConnectorUnused,
            Some(1),
        ),
        (
            Graph {
                nodes: vec![start(), tool("x", "classifier")],
                edges: vec![
                    edge("start", "x", "input"),
                    GraphEdge { output_key: Some("result"), ..edge("x", "x", "input") },
                ],
            },
            IssueCode::OutputKeyUnknown,
            Some(1),
        ),
        (
            after_start(start(), GraphNode { config: Some(&local_http), ..tool("x", "http_request") }),
            IssueCode::EgressRefused,
            Some(1),
        ),
        (
            Graph {
                nodes: vec![
                    start(),
                    GraphNode {
                        lens: Some(LensBinding { lens_id, version_id: None }),
                        config: Some(&production),
                        ..node("l", "L", None)
                    },
                ],
                edges: vec![edge("start", "l", "topic")],
            },
            IssueCode::LensLabelMissing,
            Some(1),
        ),
        (
            Graph { nodes: vec![start()], edges: vec![edge("gone", "start", "input")] },
            IssueCode::EdgeSourceMissing,
            None,
        ),
        (
            Graph { nodes: vec![start(), tool("x", "noop")], edges: vec![edge("start", "x", " ")] },
            IssueCode::EdgeParameterMissing,
            None,
        ),
        (
            Graph {
                nodes: vec![start(), tool("x", "noop"), tool("y", "noop")],
                edges: vec![edge("start", "x", "input"), edge("x", "y", "input"), edge("y", "x", "input")],
            },
            IssueCode::WorkflowCycle,
            Some(1),
        ),
    ];
    let mut facts = lens_facts(lens_id, &[("Topic", false)]);
    facts.lenses.as_mut().unwrap().insert(LensBinding { lens_id: hidden, version_id: None }.into(), None);
    let head = facts.lenses.as_ref().unwrap().values().flatten().next().unwrap().clone();
    let labelled = LensUse {
        label: Some(LabelName::parse("label", "production").unwrap()),
        ..LensBinding { lens_id, version_id: None }.into()
    };
    facts.lenses.as_mut().unwrap().insert(labelled, Some(LensFacts { missing_label: Some(vec![]), ..head }));
    facts.egress = Some(Arc::new(NoLocalhost));
    let seen: HashSet<IssueCode> = cases.iter().map(|c| c.1).collect();
    for code in IssueCode::ALL {
        assert!(seen.contains(code), "no case for {code}");
    }
    for (g, code, node) in &cases {
        let r = validate(g, catalog(), &facts);
        let all: Vec<_> = r.errors.iter().chain(&r.warnings).collect();
        let hit = all.iter().find(|i| i.code == *code).unwrap_or_else(|| panic!("{code}: got {all:#?}"));
        assert_eq!(hit.node, *node, "{code}: {hit:?}");
        assert!(!hit.message.is_empty() && !hit.hint.is_empty());
        assert_eq!(code.is_warning(), r.warnings.contains(hit), "{code}");
    }
    let unknown = validate(&cases[4].0, catalog(), &facts);
    assert!(unknown.errors[0].hint.contains("Did you mean"), "{:?}", unknown.errors[0]);
    let dup = validate(&cases[2].0, catalog(), &facts);
    assert_eq!(dup.errors[0].message, "Node id start is duplicated.");
    let missing = validate(&cases[1].0, catalog(), &facts);
    assert_eq!(missing.errors[0].message, "Step 2 has no node id.");
    let kind = validate(&cases[3].0, catalog(), &facts);
    assert_eq!(kind.errors[0].message, "Node X has neither a Lens nor a supported node type.");
    let multi = validate(&cases[17].0, catalog(), &facts);
    assert_eq!(
        multi.warnings[0].message,
        "The workflow has 2 trigger nodes. Confirm that every trigger is intentional."
    );
    assert!(!multi.run_ready && multi.valid, "valid, but a run starts from one trigger");
}

#[test]
fn each_step_url_the_egress_policy_refuses_is_warned_about() {
    let start_cfg = obj(json!({}));
    let local = obj(json!({"url": "http://localhost:9/items", "method": "GET"}));
    let feed = obj(json!({"feedUrl": "http://localhost/feed.xml"}));
    let templated = obj(json!({"url": "http://localhost/[[path]]"}));
    let public = obj(json!({"url": "https://example.com/graphql", "query": "{ viewer { login } }"}));
    let metadata = obj(json!({"url": "http://metadata.test/latest"}));
    let start = GraphNode { config: Some(&start_cfg), ..node("start", "Start", Some("manual_trigger")) };
    let step = |id: &'static str, t: &'static str, config| GraphNode {
        config: Some(config),
        ..node(id, id, Some(t))
    };
    let g = Graph {
        nodes: vec![
            start,
            step("fetch", "http_request", &local),
            step("news", "rss_feed", &feed),
            step("later", "http_request", &templated),
            step("public", "graphql_request", &public),
            step("meta", "webhook_sender", &metadata),
        ],
        edges: ["fetch", "news", "later", "public", "meta"].map(|to| edge("start", to, "input")).to_vec(),
    };
    let facts = Facts { egress: Some(Arc::new(NoLocalhost)), ..lens_facts(LensId::new(), &[]) };
    let r = validate(&g, catalog(), &facts);
    let refused: Vec<(Option<usize>, Option<&str>)> = r
        .warnings
        .iter()
        .filter(|i| i.code == IssueCode::EgressRefused)
        .map(|i| (i.node, i.field.as_deref()))
        .collect();
    assert_eq!(refused, [(Some(1), Some("url")), (Some(2), Some("url")), (Some(5), Some("url"))], "{r:#?}");
    assert!(r.valid && r.run_ready, "a warning: the workflow still validates: {:?}", r.errors);
    let fetch = &r.warnings[0];
    assert_eq!(
        fetch.message,
        "Step \"fetch\" (http_request) sends to http://localhost:9/items, which this server's egress policy refuses (loopback): the step will fail when it runs."
    );
    assert!(fetch.hint.contains("LENSERFIGHT_EGRESS_ALLOW=localhost"), "{}", fetch.hint);
    let meta = r.warnings.iter().find(|i| i.node == Some(5)).unwrap();
    assert_eq!(meta.hint, "Nothing opens a cloud metadata address; use another URL.");

    let unjudged = validate(&g, catalog(), &lens_facts(LensId::new(), &[]));
    assert!(unjudged.warnings.iter().all(|i| i.code != IssueCode::EgressRefused), "no policy, no judgement");
}

#[test]
fn an_mcp_tool_step_names_a_tool_its_connection_has_and_has_not_off() {
    let outside = lf_workflow::Connector {
        provider: lf_workflow::Provider::parse("p", "mcp").unwrap(),
        connection_ref: lf_workflow::ConnectionRef::parse("r", "outside").unwrap(),
        capability: None,
    };
    let saved = lf_workflow::SavedConnection { connection_ref: "outside".into(), provider: "mcp".into() };
    let tools = vec![("echo".to_owned(), ToolMode::On), ("add".to_owned(), ToolMode::Off)];
    let facts = Facts {
        lenses: Some(HashMap::new()),
        connections: Some(HashSet::from([saved])),
        mcp_tools: HashMap::from([("outside".to_owned(), tools)]),
        ..Facts::none()
    };
    let start = || node("start", "Start", Some("manual_trigger"));
    for (tool, says) in [("echo", None), ("add", Some("which is off")), ("nope", Some("does not have"))] {
        let config = obj(json!({"tool": tool}));
        let call = GraphNode {
            config: Some(&config),
            connector: Some(&outside),
            ..node("call", "Call", Some("mcp_tool"))
        };
        let r = validate(&after_start(start(), call), catalog(), &facts);
        match says {
            None => assert!(r.valid, "{tool}: {:?}", r.errors),
            Some(says) => {
                let e = &r.errors[0];
                assert_eq!(
                    (e.code, e.field.as_deref(), e.node),
                    (IssueCode::ConfigInvalid, Some("tool"), Some(1))
                );
                assert!(e.message.contains(says), "{tool}: {}", e.message);
                assert!(
                    e.hint.contains("set_connection_tool_mode") || e.hint.contains("echo, add"),
                    "{}",
                    e.hint
                );
            }
        }
    }
}
