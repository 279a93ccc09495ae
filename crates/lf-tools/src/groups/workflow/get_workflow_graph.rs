use std::collections::HashMap;

use lf_core::LfResult;
use lf_workflow::{Edge, Node, NodeId};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};

use super::shapes::{VersionOut, WorkflowOut, WorkflowVersionIn};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

pub struct GetWorkflowGraph;

#[derive(Serialize, JsonSchema)]
pub struct ConnectorOut {
    pub provider: String,
    /// "[redacted]" unless you may change the workflow.
    pub connection_ref: String,
    pub capability: Option<String>,
}

#[derive(Serialize, JsonSchema)]
pub struct GraphNodeOut {
    pub id: String,
    pub key: String,
    pub kind: &'static str,
    pub name: String,
    pub node_type: String,
    pub lens_id: Option<String>,
    pub version_id: Option<String>,
    /// Lens parameter assignments or tool values.
    pub parameters: Map<String, Value>,
    pub config: Map<String, Value>,
    pub connector: Option<ConnectorOut>,
    pub position_x: f64,
    pub position_y: f64,
    pub ordinal: u32,
}

#[derive(Serialize, JsonSchema)]
pub struct GraphEdgeOut {
    pub id: String,
    pub from_node_id: String,
    pub from_step: String,
    pub output_key: String,
    pub to_node_id: String,
    pub to_step: String,
    pub input_parameter: String,
    pub condition: Option<Value>,
    pub merge_strategy: Option<&'static str>,
}

#[derive(Serialize, JsonSchema)]
pub struct GraphOut {
    pub workflow: WorkflowOut,
    pub version: VersionOut,
    pub nodes: Vec<GraphNodeOut>,
    pub edges: Vec<GraphEdgeOut>,
    /// Whether connection refs were redacted (you may not change the workflow).
    pub connection_refs_redacted: bool,
}

fn node_out(n: Node) -> GraphNodeOut {
    GraphNodeOut {
        id: n.id.to_string(),
        key: n.key.as_str().to_owned(),
        kind: n.kind.as_str(),
        name: n.name.as_str().to_owned(),
        node_type: n.node_type.as_str().to_owned(),
        lens_id: n.lens.map(|l| l.lens_id.to_string()),
        version_id: n.lens.and_then(|l| l.version_id).map(|v| v.to_string()),
        parameters: n.parameters,
        config: n.config,
        connector: n.connector.map(|c| ConnectorOut {
            provider: c.provider.as_str().to_owned(),
            connection_ref: c.connection_ref.as_str().to_owned(),
            capability: c.capability.map(|c| c.as_str().to_owned()),
        }),
        position_x: n.position.x,
        position_y: n.position.y,
        ordinal: n.ordinal,
    }
}

fn edge_out(e: &Edge, keys: &HashMap<NodeId, String>) -> GraphEdgeOut {
    let key = |id: NodeId| keys.get(&id).cloned().unwrap_or_default();
    GraphEdgeOut {
        id: e.id.to_string(),
        from_node_id: e.from.to_string(),
        from_step: key(e.from),
        output_key: e.output_key.as_str().to_owned(),
        to_node_id: e.to.to_string(),
        to_step: key(e.to),
        input_parameter: e.input_parameter.as_str().to_owned(),
        condition: e.condition.as_ref().map(|c| c.to_json()),
        merge_strategy: e.merge_strategy.map(|m| m.as_str()),
    }
}

impl Tool for GetWorkflowGraph {
    const NAME: &'static str = "get_workflow_graph";
    const TITLE: &'static str = "Get a workflow's graph";
    const SAFETY: Safety = Safety::Read;
    const DESCRIPTION: &'static str = "Nodes and edges of a workflow version (default: the head): each step's lens, parameter assignments, config and connector; connection refs redacted unless you may change it.";
    type Input = WorkflowVersionIn;
    type Output = GraphOut;

    async fn call(ctx: Ctx, i: WorkflowVersionIn) -> LfResult<GraphOut> {
        let (id, which) = i.parse()?;
        let view = ctx.services.workflow.graph(&ctx.principal, id, which).await?;
        let v = view.version;
        let keys: HashMap<NodeId, String> =
            v.nodes.iter().map(|n| (n.id, n.key.as_str().to_owned())).collect();
        let edges = v.edges.iter().map(|e| edge_out(e, &keys)).collect();
        Ok(GraphOut {
            workflow: WorkflowOut::from(&view.workflow),
            version: VersionOut::from(&v.summary()),
            edges,
            nodes: v.nodes.into_iter().map(node_out).collect(),
            connection_refs_redacted: view.refs_redacted,
        })
    }
}
