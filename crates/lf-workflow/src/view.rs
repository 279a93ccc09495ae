//! Read views of a version: the redacted graph and the compact description.

use lf_core::{LensId, VersionId};
use serde_json::Value;

use crate::catalog::catalog;
use crate::lookup::Facts;
use crate::model::{ConnectionRef, MergeStrategy, NodeKind, Workflow, WorkflowVersion};
use crate::secrets::{REDACTED, redact, redact_credential_names};
use crate::validate::{Graph, validate};

/// A version's graph as `get_workflow_graph` shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct GraphView {
    pub workflow: Workflow,
    /// Secret-named fields of config and parameters redacted; connection
    /// refs too when `refs_redacted`.
    pub version: WorkflowVersion,
    pub refs_redacted: bool,
}

pub(crate) fn redacted(workflow: Workflow, mut version: WorkflowVersion, hide_refs: bool) -> GraphView {
    for n in &mut version.nodes {
        redact(&mut n.config);
        redact_credential_names(&mut n.config);
        redact(&mut n.parameters);
        if hide_refs && let Some(c) = &mut n.connector {
            c.connection_ref =
                ConnectionRef::parse("connection_ref", REDACTED).expect("the redaction mark is a valid ref");
        }
    }
    GraphView { workflow, version, refs_redacted: hide_refs }
}

/// One step, described.
#[derive(Clone, Debug, PartialEq)]
pub struct DescribedNode {
    pub key: String,
    pub name: String,
    pub kind: NodeKind,
    pub node_type: String,
    pub lens_id: Option<LensId>,
    pub version_id: Option<VersionId>,
    /// `config.model`, when the step overrides the model.
    pub model: Option<String>,
    /// Its parameter assignments, as written.
    pub parameters: serde_json::Map<String, Value>,
    /// The provider of the connection it uses.
    pub connector_provider: Option<String>,
}

/// One connection, described by step keys.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DescribedConnection {
    pub from: String,
    pub output_key: String,
    pub to: String,
    pub input_parameter: String,
    pub merge_strategy: Option<MergeStrategy>,
    pub conditional: bool,
}

/// `describe_workflow`'s answer.
#[derive(Clone, Debug, PartialEq)]
pub struct Described {
    pub workflow: Workflow,
    pub version: u32,
    pub summary: String,
    pub node_count: usize,
    pub edge_count: usize,
    /// `(key, node_type)` of each trigger.
    pub triggers: Vec<(String, String)>,
    /// In dependency order where there is one, then the rest in step order.
    pub nodes: Vec<DescribedNode>,
    pub connections: Vec<DescribedConnection>,
}

pub(crate) fn describe(workflow: Workflow, v: &WorkflowVersion) -> Described {
    let report = validate(&Graph::of_version(v), catalog(), &Facts::none());
    let mut order = report.execution_order.clone();
    let placed: std::collections::HashSet<usize> = order.iter().copied().collect();
    order.extend((0..v.nodes.len()).filter(|i| !placed.contains(i)));
    let nodes: Vec<DescribedNode> = order
        .iter()
        .map(|&i| {
            let n = &v.nodes[i];
            DescribedNode {
                key: n.key.as_str().to_owned(),
                name: n.name.as_str().to_owned(),
                kind: n.kind,
                node_type: n.node_type.as_str().to_owned(),
                lens_id: n.lens.map(|l| l.lens_id),
                version_id: n.lens.and_then(|l| l.version_id),
                model: n
                    .config
                    .get("model")
                    .or_else(|| n.config.get("model_id"))
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                parameters: n.parameters.clone(),
                connector_provider: n.connector.as_ref().map(|c| c.provider.as_str().to_owned()),
            }
        })
        .collect();
    let key_of = |id| v.node(id).map_or_else(|| id.to_string(), |n| n.key.as_str().to_owned());
    let connections = v
        .edges
        .iter()
        .map(|e| DescribedConnection {
            from: key_of(e.from),
            output_key: e.output_key.as_str().to_owned(),
            to: key_of(e.to),
            input_parameter: e.input_parameter.as_str().to_owned(),
            merge_strategy: e.merge_strategy,
            conditional: e.condition.is_some(),
        })
        .collect();
    let triggers: Vec<(String, String)> = v
        .nodes
        .iter()
        .filter(|n| n.kind == NodeKind::Trigger)
        .map(|n| (n.key.as_str().to_owned(), n.node_type.as_str().to_owned()))
        .collect();
    let starts = if triggers.is_empty() {
        "no explicit trigger node".to_owned()
    } else {
        triggers.iter().map(|(_, t)| t.as_str()).collect::<Vec<_>>().join(", ")
    };
    let chain: Vec<String> = nodes.iter().map(|n| format!("{} ({})", n.key, n.node_type)).collect();
    let summary = format!(
        "Workflow \"{}\" has {} node(s) and {} connection(s). It starts from {starts}. {}Each connection carries a part of one step's output (output_key) into an input of the next (input_parameter); a lens step's inputs are its lens's parameters.",
        workflow.title,
        v.nodes.len(),
        v.edges.len(),
        if chain.is_empty() { String::new() } else { format!("Steps in order: {}. ", chain.join(" → ")) },
    );
    Described {
        version: v.number,
        summary,
        node_count: v.nodes.len(),
        edge_count: v.edges.len(),
        triggers,
        nodes,
        connections,
        workflow,
    }
}
