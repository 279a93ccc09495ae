use lf_core::LfResult;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};

use super::shapes::{VersionOut, WorkflowIdIn, WorkflowOut, workflow_id};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

pub struct GetWorkflow;

/// How the head version starts.
#[derive(Serialize, JsonSchema)]
pub struct TriggerOut {
    /// The trigger step's key.
    pub key: String,
    /// manual_trigger, schedule_trigger, event_trigger, form_input_trigger or webhook_trigger.
    pub node_type: String,
    /// Its settings with defaults applied (a schedule's cron and timezone).
    pub config: Map<String, Value>,
}

#[derive(Serialize, JsonSchema)]
pub struct GetWorkflowOut {
    #[serde(flatten)]
    pub workflow: WorkflowOut,
    /// Whether every reader sees every run, else only their own (update_workflow sets it).
    pub public_runs: bool,
    /// The newest version.
    pub head: VersionOut,
    /// Every version, newest first.
    pub versions: Vec<VersionOut>,
    /// The head's trigger and its scheduling configuration; null for an empty workflow.
    pub trigger: Option<TriggerOut>,
}

impl Tool for GetWorkflow {
    const NAME: &'static str = "get_workflow";
    const TITLE: &'static str = "Get a workflow";
    const SAFETY: Safety = Safety::Read;
    const DESCRIPTION: &'static str = "Get a workflow with its head version, every version and how it starts (its trigger and schedule); get_workflow_graph shows the steps.";
    const DIFFERS_FROM_SPEC: &'static str = "Adds the head version, every version and the trigger. No battle_count or fork_count: this server has no workflow forks and no battle that names a workflow, so both would always be 0.";
    type Input = WorkflowIdIn;
    type Output = GetWorkflowOut;

    async fn call(ctx: Ctx, i: WorkflowIdIn) -> LfResult<GetWorkflowOut> {
        let view = ctx.services.workflow.get(&ctx.principal, workflow_id(&i.workflow_id)?).await?;
        Ok(GetWorkflowOut {
            workflow: WorkflowOut::from(&view.workflow),
            public_runs: view.workflow.public_runs,
            head: VersionOut::from(&view.head),
            versions: view.versions.iter().map(VersionOut::from).collect(),
            trigger: view.trigger.map(|(key, node_type, mut config)| {
                lf_workflow::secrets::redact(&mut config);
                TriggerOut { key, node_type, config }
            }),
        })
    }
}
