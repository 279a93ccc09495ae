use lf_core::LfResult;
use lf_workflow::{DescribedConnection, DescribedNode, VersionSelector};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};

use super::shapes::{WorkflowIdIn, workflow_id};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

pub struct DescribeWorkflow;

#[derive(Serialize, JsonSchema)]
pub struct DescribedWorkflowOut {
    pub id: String,
    pub title: String,
    pub description: Option<String>,
    pub visibility: &'static str,
}

#[derive(Serialize, JsonSchema)]
pub struct TriggerStepOut {
    pub key: String,
    #[serde(rename = "type")]
    pub node_type: String,
}

#[derive(Serialize, JsonSchema)]
pub struct DescribedNodeOut {
    pub key: String,
    pub name: String,
    pub kind: &'static str,
    #[serde(rename = "type")]
    pub node_type: String,
    pub lens_id: Option<String>,
    pub version_id: Option<String>,
    /// The model the step asks for, when it overrides the server's.
    pub model_id: Option<String>,
    /// Its parameter assignments.
    pub params: Map<String, Value>,
    pub connector_provider: Option<String>,
}

impl From<DescribedNode> for DescribedNodeOut {
    fn from(n: DescribedNode) -> Self {
        Self {
            key: n.key,
            name: n.name,
            kind: n.kind.as_str(),
            node_type: n.node_type,
            lens_id: n.lens_id.map(|l| l.to_string()),
            version_id: n.version_id.map(|v| v.to_string()),
            model_id: n.model,
            params: n.parameters,
            connector_provider: n.connector_provider,
        }
    }
}

#[derive(Serialize, JsonSchema)]
pub struct DescribedConnectionOut {
    pub from: String,
    pub output_key: String,
    pub to: String,
    /// The input parameter it feeds.
    pub param: String,
    pub merge_strategy: Option<&'static str>,
    /// Whether a condition decides if it carries a value.
    pub conditional: bool,
}

impl From<DescribedConnection> for DescribedConnectionOut {
    fn from(c: DescribedConnection) -> Self {
        Self {
            from: c.from,
            output_key: c.output_key,
            to: c.to,
            param: c.input_parameter,
            merge_strategy: c.merge_strategy.map(|m| m.as_str()),
            conditional: c.conditional,
        }
    }
}

#[derive(Serialize, JsonSchema)]
pub struct DescribeOut {
    pub workflow: DescribedWorkflowOut,
    /// The version described: the head.
    pub version: u32,
    pub summary: String,
    pub node_count: usize,
    pub edge_count: usize,
    pub triggers: Vec<TriggerStepOut>,
    /// In dependency order.
    pub nodes: Vec<DescribedNodeOut>,
    pub connections: Vec<DescribedConnectionOut>,
}

impl Tool for DescribeWorkflow {
    const NAME: &'static str = "describe_workflow";
    const TITLE: &'static str = "Describe a workflow";
    const SAFETY: Safety = Safety::Read;
    const DESCRIPTION: &'static str = "Explain a workflow briefly: how it starts, its lens and tool steps in dependency order with parameter assignments, and what each connection carries where.";
    type Input = WorkflowIdIn;
    type Output = DescribeOut;

    async fn call(ctx: Ctx, i: WorkflowIdIn) -> LfResult<DescribeOut> {
        let id = workflow_id(&i.workflow_id)?;
        let d = ctx.services.workflow.describe(&ctx.principal, id, VersionSelector::Head).await?;
        let w = &d.workflow;
        Ok(DescribeOut {
            workflow: DescribedWorkflowOut {
                id: w.id.to_string(),
                title: w.title.as_str().to_owned(),
                description: w.description.as_ref().map(|d| d.as_str().to_owned()),
                visibility: w.visibility.as_str(),
            },
            version: d.version,
            summary: d.summary,
            node_count: d.node_count,
            edge_count: d.edge_count,
            triggers: d
                .triggers
                .into_iter()
                .map(|(key, node_type)| TriggerStepOut { key, node_type })
                .collect(),
            nodes: d.nodes.into_iter().map(Into::into).collect(),
            connections: d.connections.into_iter().map(Into::into).collect(),
        })
    }
}
