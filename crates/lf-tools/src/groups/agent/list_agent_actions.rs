use lf_core::LfResult;

use super::shapes::{ActionOut, ai_lenser_id};
use crate::catalog::paging::{PageOut, Paged, paged_input};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

paged_input! {
    pub struct ListAgentActionsIn {
        /// The AI Lenser.
        #[schemars(extend("format" = "uuid"))]
        pub ai_lenser_id: String,
    }
}

pub struct ListAgentActions;

impl Tool for ListAgentActions {
    const NAME: &'static str = "list_agent_actions";
    const TITLE: &'static str = "List an AI Lenser's actions";
    const SAFETY: Safety = Safety::Read;
    const DESCRIPTION: &'static str = "Read an AI Lenser's action log, newest first: every tool call it made or was refused, with its outcome.";
    const DIFFERS_FROM_SPEC: &'static str = "Not in the hosted original's reference documents.";
    type Input = ListAgentActionsIn;
    type Output = PageOut<ActionOut>;

    async fn call(ctx: Ctx, i: ListAgentActionsIn) -> LfResult<PageOut<ActionOut>> {
        let id = ai_lenser_id(&i.ai_lenser_id)?;
        let page = ctx.services.agents.list_actions(&ctx.principal, id, i.page()?).await?;
        Ok(PageOut::from_page(page, |e| ActionOut::new(&e)))
    }
}
