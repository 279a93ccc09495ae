use lf_core::LfResult;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::shapes::run_id;
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Reaches, Safety, Tool};

pub struct RetryWorkflow;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RetryWorkflowIn {
    /// The failed or cancelled run to retry.
    #[schemars(extend("format" = "uuid"))]
    pub run_id: String,
    /// Reuse completed steps' outputs instead of running them again.
    #[schemars(extend("default" = false))]
    pub resume: Option<bool>,
}

#[derive(Serialize, JsonSchema)]
pub struct NewRunOut {
    pub id: String,
    pub status: &'static str,
    pub created_at: String,
    /// The run it retries.
    pub parent_run_id: String,
    /// The AI Lenser that started it for its owner (null when a person did).
    pub by_agent: Option<String>,
}

#[derive(Serialize, JsonSchema)]
pub struct RetriedOut {
    pub new_run: NewRunOut,
    pub original_run_id: String,
}

impl Tool for RetryWorkflow {
    const NAME: &'static str = "retry_workflow";
    const TITLE: &'static str = "Retry a workflow run";
    const SAFETY: Safety = Safety::Execute;
    const REACHES: Reaches = Reaches::Outside;
    const DESCRIPTION: &'static str = "Start a new run of a failed or cancelled run's version with the same inputs, linked by parent_run_id; resume: true reuses completed steps. Poll get_workflow_run_status.";
    const DIFFERS_FROM_SPEC: &'static str = "Adds resume. Only the run's starter or the workflow's owner may retry it, and the new run really runs (the original recorded retries it never executed).";
    type Input = RetryWorkflowIn;
    type Output = RetriedOut;

    async fn call(ctx: Ctx, i: RetryWorkflowIn) -> LfResult<RetriedOut> {
        let id = run_id(&i.run_id)?;
        let run = ctx.services.runs.retry(&ctx.principal, id, i.resume.unwrap_or(false)).await?;
        Ok(RetriedOut {
            new_run: NewRunOut {
                id: run.id.to_string(),
                status: run.status().as_str(),
                created_at: run.created_at.to_rfc3339(),
                parent_run_id: id.to_string(),
                by_agent: run.agent.map(|a| a.to_string()),
            },
            original_run_id: id.to_string(),
        })
    }
}
