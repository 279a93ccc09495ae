use lf_core::{LenserId, LfResult};
use lf_workflow::WorkflowFilter;

use super::shapes::{VisibilityIn, WorkflowOut};
use crate::catalog::paging::{PageOut, Paged, paged_input};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

paged_input! {
    pub struct ListWorkflowsIn {
        /// Only workflows of this visibility.
        pub visibility: Option<VisibilityIn>,
        /// Only workflows owned by this lenser.
        #[schemars(extend("format" = "uuid"))]
        pub lenser_id: Option<String>,
        /// Include archived workflows.
        #[schemars(extend("default" = false))]
        pub include_archived: Option<bool>,
    }
}

pub struct ListWorkflows;

impl Tool for ListWorkflows {
    const NAME: &'static str = "list_workflows";
    const TITLE: &'static str = "List workflows";
    const SAFETY: Safety = Safety::Read;
    const DESCRIPTION: &'static str = "List the workflows you can see (yours and public ones; unlisted ones only to their owner), newest first.";
    const DIFFERS_FROM_SPEC: &'static str = "Lists only what the caller may see (the original listed every workflow). Summaries carry head_version and archived_at and no battle_count or fork_count: this server has no workflow forks and no battle that names a workflow, so both would always be 0.";
    type Input = ListWorkflowsIn;
    type Output = PageOut<WorkflowOut>;

    async fn call(ctx: Ctx, i: ListWorkflowsIn) -> LfResult<PageOut<WorkflowOut>> {
        let filter = WorkflowFilter {
            visibility: i.visibility.map(Into::into),
            owner: i.lenser_id.as_deref().map(|s| LenserId::parse("lenser_id", s)).transpose()?,
            include_archived: i.include_archived.unwrap_or(false),
        };
        let page = ctx.services.workflow.list(&ctx.principal, &filter, i.page()?).await?;
        Ok(PageOut::from_page(page, |w| WorkflowOut::from(&w)))
    }
}
