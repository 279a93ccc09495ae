//! What a graph names that the validator's [`Facts`] must be looked up
//! for: the lenses its steps run, the connections they use and the
//! outside MCP servers whose tools they call.

use lf_core::{LabelName, LensId};
use serde_json::Value;

use super::{Graph, GraphNode, MCP_TOOL, NodeSummary, kind_of, summary};
use crate::catalog::Catalog;
#[cfg(doc)]
use crate::lookup::Facts;
use crate::lookup::LensUse;
use crate::model::NodeKind;

/// The distinct lenses `graph`'s steps run (lens steps, and `lens_execute`
/// and `prompt_template` steps by their config), with the version or label each names, for
/// looking up [`Facts`].
pub fn lens_uses(graph: &Graph<'_>, catalog: &Catalog) -> Vec<LensUse> {
    let mut out: Vec<LensUse> = Vec::new();
    for (i, node) in graph.nodes.iter().enumerate() {
        let s = summary(node, i, kind_of(node, catalog), catalog);
        if let Some(b) = lens_of(node, &s)
            && !out.contains(&b)
        {
            out.push(b);
        }
    }
    out
}

/// The distinct saved connections `graph`'s steps name.
pub fn connection_refs(graph: &Graph<'_>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in graph.nodes.iter().filter_map(|n| n.connector) {
        if !out.iter().any(|r| r == c.connection_ref.as_str()) {
            out.push(c.connection_ref.as_str().to_owned());
        }
    }
    out
}

/// The refs of the connections `graph`'s `mcp_tool` steps name, once
/// each (their saved tools are looked up for [`Facts::mcp_tools`]).
pub fn mcp_tool_refs(graph: &Graph<'_>, catalog: &Catalog) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (i, node) in graph.nodes.iter().enumerate() {
        let Some(c) = node.connector else { continue };
        let s = summary(node, i, kind_of(node, catalog), catalog);
        if s.node_type.as_deref() == Some(MCP_TOOL) && !out.iter().any(|r| r == c.connection_ref.as_str()) {
            out.push(c.connection_ref.as_str().to_owned());
        }
    }
    out
}

/// The lens a node runs: a lens step's, or the config's of `lens_execute`
/// (or of a `prompt_template` that names one); and
/// the label its config names (`None` for a label of bad syntax, which
/// the config check reports).
pub(super) fn lens_of(node: &GraphNode<'_>, s: &NodeSummary) -> Option<LensUse> {
    let config = node.config;
    let label = config.and_then(|c| c.get("label")).and_then(Value::as_str);
    let label = match label.map(|l| LabelName::parse("label", l)) {
        Some(Ok(l)) => Some(l),
        Some(Err(_)) => return None,
        None => None,
    };
    if s.kind == Some(NodeKind::Lens) {
        return node.lens.map(|b| LensUse { label, ..b.into() });
    }
    if !matches!(s.node_type.as_deref(), Some("lens_execute" | "prompt_template")) {
        return None;
    }
    let config = config?;
    let uuid = |keys: [&str; 2]| -> Option<Option<lf_core::VersionId>> {
        match keys.iter().find_map(|k| config.get(*k)) {
            None => Some(None),
            Some(Value::String(s)) => lf_core::VersionId::parse("version_id", s).ok().map(Some),
            Some(_) => None,
        }
    };
    let lens_id = match ["lens_id", "lensId"].iter().find_map(|k| config.get(*k))? {
        Value::String(s) => LensId::parse("lens_id", s).ok()?,
        _ => return None,
    };
    Some(LensUse { lens_id, version_id: uuid(["version_id", "versionId"])?, label })
}
