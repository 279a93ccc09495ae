use lf_core::{LfError, LfResult};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::shapes::run_id;
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

pub struct CancelWorkflowRun;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CancelWorkflowRunIn {
    /// The pending or running run to stop.
    #[schemars(extend("format" = "uuid"))]
    pub run_id: String,
    /// true, once the user has agreed.
    #[schemars(extend("const" = true))]
    pub confirm: Option<bool>,
}

#[derive(Serialize, JsonSchema)]
pub struct CancelOut {
    pub run_id: String,
    /// Its status now: it turns cancelled once its runner stops it.
    pub status: &'static str,
    /// Who asked (the first to ask, if several did).
    pub cancel_requested_by: Option<String>,
}

impl Tool for CancelWorkflowRun {
    const NAME: &'static str = "cancel_workflow_run";
    const TITLE: &'static str = "Cancel a workflow run";
    const SAFETY: Safety = Safety::Destructive;
    const DESCRIPTION: &'static str = "Stop a pending or running run you started or whose workflow you own: it ends cancelled within one step, keeping what completed. Needs confirm: true.";
    const DIFFERS_FROM_SPEC: &'static str =
        "Not in the hosted original's reference documents, which say runs are immutable once started.";
    type Input = CancelWorkflowRunIn;
    type Output = CancelOut;

    async fn call(ctx: Ctx, i: CancelWorkflowRunIn) -> LfResult<CancelOut> {
        let id = run_id(&i.run_id)?;
        if i.confirm != Some(true) {
            return Err(LfError::confirmation_required("Cancelling a workflow run"));
        }
        let run = ctx.services.runs.cancel(&ctx.principal, id).await?;
        Ok(CancelOut {
            run_id: run.id.to_string(),
            status: run.status().as_str(),
            cancel_requested_by: run.cancel_requested_by,
        })
    }
}
