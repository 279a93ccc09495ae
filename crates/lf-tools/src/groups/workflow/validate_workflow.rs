use lf_core::LfResult;
use schemars::JsonSchema;
use serde::Serialize;

use super::shapes::{ReportOut, WorkflowVersionIn};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

pub struct ValidateWorkflow;

#[derive(Serialize, JsonSchema)]
pub struct ValidatedOut {
    pub workflow_id: String,
    /// The version checked.
    pub version: u32,
    pub version_id: String,
    #[serde(flatten)]
    pub report: ReportOut,
}

impl Tool for ValidateWorkflow {
    const NAME: &'static str = "validate_workflow";
    const TITLE: &'static str = "Validate a workflow";
    const SAFETY: Safety = Safety::Read;
    const DESCRIPTION: &'static str = "Check a workflow version (default: the head) without running it: each error and warning with a fix hint, whether run_workflow takes it, steps in execution order, each step's configured and wired parameters.";
    type Input = WorkflowVersionIn;
    type Output = ValidatedOut;

    async fn call(ctx: Ctx, i: WorkflowVersionIn) -> LfResult<ValidatedOut> {
        let (id, which) = i.parse()?;
        let v = ctx.services.workflow.validate(&ctx.principal, id, which).await?;
        Ok(ValidatedOut {
            workflow_id: v.workflow.id.to_string(),
            version: v.version.number,
            version_id: v.version.id.to_string(),
            report: ReportOut::from(&v.report),
        })
    }
}
