//! The graph the validator reads: a loose view of nodes and edges, which
//! may hold what a parsed version cannot (missing ids, dangling edges,
//! unknown types), and the view of a stored version as one.

use std::borrow::Cow;
use std::collections::HashMap;

use crate::condition::Condition;
use crate::model::{Connector, EdgeId, JsonObject, LensBinding, MergeStrategy, NodeId, WorkflowVersion};

/// FNV-1a: the id index is hashed once per edge end, and SipHash is built
/// for keys an attacker may choose to collide, at a cost the validator
/// feels (docs/performance.md, "Workflows"). Graphs here come from
/// blueprints of at most 100 steps, so collisions cannot be made to cost
/// much.
#[derive(Default)]
pub(crate) struct Fnv(u64);

impl std::hash::Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 { 0xcbf2_9ce4_8422_2325 } else { self.0 };
        for b in bytes {
            h = (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = h;
    }
}

pub(crate) type FastMap<K, V> = HashMap<K, V, std::hash::BuildHasherDefault<Fnv>>;

/// Whether `s` is empty or only whitespace, without decoding it when it
/// starts with a visible ASCII character (the usual case).
pub(crate) fn blank(s: &str) -> bool {
    match s.as_bytes().first() {
        None => true,
        Some(b) if b.is_ascii_graphic() => false,
        Some(_) => s.trim().is_empty(),
    }
}

/// One node as the validator reads it. Missing parts are `None`.
#[derive(Clone, Debug, Default)]
pub struct GraphNode<'a> {
    /// The graph-local id edges refer to; empty means missing.
    pub id: Cow<'a, str>,
    /// The stored node's id, carried into the report.
    pub node_id: Option<NodeId>,
    pub key: Option<&'a str>,
    pub name: Option<&'a str>,
    pub node_type: Option<&'a str>,
    pub lens: Option<LensBinding>,
    pub parameters: Option<&'a JsonObject>,
    pub config: Option<&'a JsonObject>,
    pub connector: Option<&'a Connector>,
}

/// One edge as the validator reads it.
#[derive(Clone, Debug, Default)]
pub struct GraphEdge<'a> {
    /// Named in messages; `None`: `edge-<position>`.
    pub id: Option<Cow<'a, str>>,
    pub edge_id: Option<EdgeId>,
    pub from: Cow<'a, str>,
    pub to: Cow<'a, str>,
    /// `None` or `output`: the whole output.
    pub output_key: Option<&'a str>,
    /// The output key was parsed as a [`crate::Pick`] already (a stored version's):
    /// it is not parsed again.
    pub output_key_parsed: bool,
    pub input_parameter: &'a str,
    pub condition: Option<&'a Condition>,
    pub merge_strategy: Option<MergeStrategy>,
}

/// A graph to validate.
#[derive(Clone, Debug, Default)]
pub struct Graph<'a> {
    pub nodes: Vec<GraphNode<'a>>,
    pub edges: Vec<GraphEdge<'a>>,
}

impl<'a> Graph<'a> {
    /// A stored version as a graph: nodes by their step keys.
    pub fn of_version(v: &'a WorkflowVersion) -> Self {
        let keys: HashMap<NodeId, &'a str> = v.nodes.iter().map(|n| (n.id, n.key.as_str())).collect();
        let end =
            |id: NodeId| keys.get(&id).map_or_else(|| Cow::Owned(id.to_string()), |k| Cow::Borrowed(*k));
        Graph {
            nodes: v
                .nodes
                .iter()
                .map(|n| GraphNode {
                    id: Cow::Borrowed(n.key.as_str()),
                    node_id: Some(n.id),
                    key: Some(n.key.as_str()),
                    name: Some(n.name.as_str()),
                    node_type: Some(n.node_type.as_str()),
                    lens: n.lens,
                    parameters: Some(&n.parameters),
                    config: Some(&n.config),
                    connector: n.connector.as_ref(),
                })
                .collect(),
            edges: v
                .edges
                .iter()
                .map(|e| GraphEdge {
                    id: None,
                    edge_id: Some(e.id),
                    from: end(e.from),
                    to: end(e.to),
                    output_key: Some(e.output_key.as_str()),
                    output_key_parsed: true,
                    input_parameter: e.input_parameter.as_str(),
                    condition: e.condition.as_ref(),
                    merge_strategy: e.merge_strategy,
                })
                .collect(),
        }
    }
}
