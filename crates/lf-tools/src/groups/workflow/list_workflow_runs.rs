use lf_core::LfResult;
use lf_workflow::run::RunFilter;

use super::run_shapes::{RunStatusIn, RunSummaryOut};
use super::shapes::workflow_id;
use crate::catalog::paging::{PageOut, Paged, paged_input};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

paged_input! {
    pub struct ListWorkflowRunsIn {
        /// Only the runs of this workflow (one you can read).
        #[schemars(extend("format" = "uuid"))]
        pub workflow_id: Option<String>,
        /// Only runs in this status.
        pub status: Option<RunStatusIn>,
    }
}

pub struct ListWorkflowRuns;

impl Tool for ListWorkflowRuns {
    const NAME: &'static str = "list_workflow_runs";
    const TITLE: &'static str = "List workflow runs";
    const SAFETY: Safety = Safety::Read;
    const DESCRIPTION: &'static str = "List runs newest first: of a workflow, yours (all if you own it or its runs are public); without workflow_id, those you started or whose workflow you own.";
    const DIFFERS_FROM_SPEC: &'static str = "Not in the hosted original's reference documents.";
    type Input = ListWorkflowRunsIn;
    type Output = PageOut<RunSummaryOut>;

    async fn call(ctx: Ctx, i: ListWorkflowRunsIn) -> LfResult<PageOut<RunSummaryOut>> {
        let filter = RunFilter {
            workflow_id: i.workflow_id.as_deref().map(workflow_id).transpose()?,
            status: i.status.map(Into::into),
            started_by: None,
        };
        let page = ctx.services.runs.list(&ctx.principal, filter, i.page()?).await?;
        Ok(PageOut::from_page(page, |r| RunSummaryOut::from(&r)))
    }
}
