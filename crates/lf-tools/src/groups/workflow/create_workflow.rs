use lf_core::{LenserId, LfResult};
use lf_workflow::{NewWorkflow, RawBlueprint};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::shapes::{
    ConnectionIn, IssueOut, StepIn, VisibilityIn, WebhookOut, WorkflowOut, raw_connections, raw_steps,
    warnings,
};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

pub struct CreateWorkflow;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateWorkflowIn {
    /// Display name.
    #[schemars(length(min = 1, max = 200))]
    pub title: String,
    /// What the workflow is for.
    #[schemars(length(max = 2000))]
    pub description: Option<String>,
    /// Who may read it.
    #[schemars(extend("default" = "private"))]
    pub visibility: Option<VisibilityIn>,
    /// The owner; default: you.
    #[schemars(extend("format" = "uuid"))]
    pub lenser_id: Option<String>,
    /// The steps: exactly one trigger, then lens and tool steps. Omit for an empty container.
    #[schemars(length(max = 100))]
    pub steps: Option<Vec<StepIn>>,
    /// Output-to-input mappings by step key; every step must be reachable from the trigger.
    #[schemars(length(max = 300))]
    pub connections: Option<Vec<ConnectionIn>>,
}

#[derive(Serialize, JsonSchema)]
pub struct SummaryStepOut {
    pub key: String,
    pub name: String,
    pub kind: &'static str,
    pub node_type: String,
    /// The node the server made for the step.
    pub node_id: String,
}

#[derive(Serialize, JsonSchema)]
pub struct CreationSummaryOut {
    pub step_count: usize,
    pub connection_count: usize,
    pub steps: Vec<SummaryStepOut>,
}

#[derive(Serialize, JsonSchema)]
pub struct CreatedOut {
    #[serde(flatten)]
    pub workflow: WorkflowOut,
    pub node_count: usize,
    pub edge_count: usize,
    pub creation_summary: CreationSummaryOut,
    /// What passed but deserves a look.
    pub warnings: Vec<IssueOut>,
    /// The calls to make next.
    pub next_steps: Vec<String>,
    /// With a webhook_trigger: where to POST and the secret, shown only here.
    pub webhook: Option<WebhookOut>,
}

impl Tool for CreateWorkflow {
    const NAME: &'static str = "create_workflow";
    const TITLE: &'static str = "Create a workflow";
    const SAFETY: Safety = Safety::Write;
    const DESCRIPTION: &'static str = "Create a workflow from a full blueprint: one trigger, lens steps (lenses you can read) and tool steps (types from list_workflow_node_types), connected by step keys. Name outside services by a saved connection_ref; never put keys, tokens or passwords in config. Refused whole if anything is wrong.";
    type Input = CreateWorkflowIn;
    type Output = CreatedOut;

    async fn call(ctx: Ctx, i: CreateWorkflowIn) -> LfResult<CreatedOut> {
        let owner = i.lenser_id.as_deref().map(|s| LenserId::parse("lenser_id", s)).transpose()?;
        let blueprint = RawBlueprint {
            title: i.title,
            description: i.description,
            visibility: i.visibility.map(|v| v.as_str().to_owned()),
            steps: raw_steps(i.steps).unwrap_or_default(),
            connections: raw_connections(i.connections).unwrap_or_default(),
        };
        let c = ctx.services.workflow.create(&ctx.principal, NewWorkflow { blueprint, owner }).await?;
        let steps = c
            .summary
            .steps
            .iter()
            .zip(&c.version.nodes)
            .map(|((key, name, kind, node_type), node)| SummaryStepOut {
                key: key.clone(),
                name: name.clone(),
                kind: kind.as_str(),
                node_type: node_type.clone(),
                node_id: node.id.to_string(),
            })
            .collect();
        Ok(CreatedOut {
            workflow: WorkflowOut::from(&c.workflow),
            node_count: c.version.nodes.len(),
            edge_count: c.version.edges.len(),
            creation_summary: CreationSummaryOut {
                step_count: c.summary.step_count,
                connection_count: c.summary.connection_count,
                steps,
            },
            warnings: warnings(&c.report),
            next_steps: c.next_steps,
            webhook: c.webhook.map(WebhookOut::from),
        })
    }
}
