use lf_core::LfResult;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::shapes::workflow_id;
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

pub struct ArchiveWorkflow;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ArchiveWorkflowIn {
    /// The workflow.
    #[schemars(extend("format" = "uuid"))]
    pub workflow_id: String,
    /// true, once the user has agreed.
    #[schemars(extend("const" = true))]
    pub confirm: Option<bool>,
}

#[derive(Serialize, JsonSchema)]
pub struct ArchivedOut {
    pub workflow_id: String,
    pub archived_at: Option<String>,
}

impl Tool for ArchiveWorkflow {
    const NAME: &'static str = "archive_workflow";
    const TITLE: &'static str = "Archive a workflow";
    const SAFETY: Safety = Safety::Destructive;
    const DESCRIPTION: &'static str = "Hide your workflow from lists (include_archived shows it); it stays readable by id with its versions and runs. Needs confirm: true.";
    const DIFFERS_FROM_SPEC: &'static str =
        "Not in the hosted original's reference documents, whose workflows have no Destructive tools.";
    type Input = ArchiveWorkflowIn;
    type Output = ArchivedOut;

    async fn call(ctx: Ctx, i: ArchiveWorkflowIn) -> LfResult<ArchivedOut> {
        let id = workflow_id(&i.workflow_id)?;
        let w = ctx.services.workflow.archive(&ctx.principal, id, i.confirm == Some(true)).await?;
        Ok(ArchivedOut { workflow_id: w.id.to_string(), archived_at: w.archived_at.map(|t| t.to_rfc3339()) })
    }
}
