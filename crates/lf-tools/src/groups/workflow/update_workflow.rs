use lf_core::LfResult;
use lf_workflow::{Changelog, Description, Title, WorkflowUpdate};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::shapes::{
    ConnectionIn, IssueOut, StepIn, VersionOut, VisibilityIn, WebhookOut, WorkflowOut, raw_connections,
    raw_steps, warnings, workflow_id,
};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

pub struct UpdateWorkflow;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateWorkflowIn {
    /// The workflow.
    #[schemars(extend("format" = "uuid"))]
    pub workflow_id: String,
    /// The new version's full list of steps, as create_workflow's.
    // Listed as plain objects: create_workflow's schema, in the same
    // listing, spells out a step, and saying it twice costs every
    // conversation. They are parsed as strictly.
    #[schemars(with = "Option<Vec<Map<String, Value>>>", length(max = 100))]
    pub steps: Option<Vec<StepIn>>,
    /// The new version's connections, each as create_workflow's connections.
    #[schemars(with = "Option<Vec<Map<String, Value>>>", length(max = 300))]
    pub connections: Option<Vec<ConnectionIn>>,
    /// A new title.
    #[schemars(length(min = 1, max = 200))]
    pub title: Option<String>,
    /// A new description ("" clears it).
    #[schemars(length(max = 2000))]
    pub description: Option<String>,
    /// A new visibility.
    pub visibility: Option<VisibilityIn>,
    /// true: every reader of it sees every run; false (default): a run is its starter's and yours.
    pub public_runs: Option<bool>,
    /// What the new version changes (default: made from the change). Only with steps.
    #[schemars(length(min = 1, max = 2000))]
    pub changelog: Option<String>,
}

#[derive(Serialize, JsonSchema)]
pub struct UpdatedOut {
    pub workflow: WorkflowOut,
    /// The head after the update.
    pub head: VersionOut,
    /// Whether a new version was made (steps were given).
    pub version_created: bool,
    /// What passed but deserves a look, in the new version.
    pub warnings: Vec<IssueOut>,
    /// When this version first gives it a webhook_trigger: where to POST and the secret, shown only here.
    pub webhook: Option<WebhookOut>,
}

impl Tool for UpdateWorkflow {
    const NAME: &'static str = "update_workflow";
    const TITLE: &'static str = "Update a workflow";
    const SAFETY: Safety = Safety::Write;
    const DESCRIPTION: &'static str = "Change your workflow: steps and connections make a new immutable version from a full blueprint (checked like create_workflow); title, description, visibility and public_runs change the record.";
    const DIFFERS_FROM_SPEC: &'static str =
        "Not in the hosted original's reference documents, which cannot change a workflow after creating it.";
    type Input = UpdateWorkflowIn;
    type Output = UpdatedOut;

    async fn call(ctx: Ctx, i: UpdateWorkflowIn) -> LfResult<UpdatedOut> {
        let mut u = WorkflowUpdate::new(workflow_id(&i.workflow_id)?);
        u.steps = raw_steps(i.steps);
        u.connections = raw_connections(i.connections);
        u.title = i.title.map(Title::parse).transpose()?;
        u.description = i.description.map(Description::parse).transpose()?;
        u.visibility = i.visibility.map(Into::into);
        u.public_runs = i.public_runs;
        u.changelog = i.changelog.map(Changelog::parse).transpose()?;
        let up = ctx.services.workflow.update(&ctx.principal, u).await?;
        Ok(UpdatedOut {
            workflow: WorkflowOut::from(&up.workflow),
            head: VersionOut::from(&up.head),
            version_created: up.report.is_some(),
            warnings: up.report.as_ref().map(warnings).unwrap_or_default(),
            webhook: up.webhook.map(WebhookOut::from),
        })
    }
}
