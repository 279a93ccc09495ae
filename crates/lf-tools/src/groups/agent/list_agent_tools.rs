use lf_core::{LfResult, PageRequest};
use schemars::JsonSchema;
use serde::Deserialize;

use super::shapes::{GrantOut, ai_lenser_id};
use crate::catalog::paging::PageOut;
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListAgentToolsIn {
    /// The AI Lenser.
    #[schemars(extend("format" = "uuid"))]
    pub ai_lenser_id: String,
    /// Results per page.
    #[schemars(range(min = 1, max = 200), extend("default" = 50))]
    pub limit: Option<i64>,
    /// Results to skip.
    #[schemars(range(min = 0, max = 1000000), extend("default" = 0))]
    pub offset: Option<i64>,
}

pub struct ListAgentTools;

impl Tool for ListAgentTools {
    const NAME: &'static str = "list_agent_tools";
    const TITLE: &'static str = "List an AI Lenser's tools";
    const SAFETY: Safety = Safety::Read;
    const DESCRIPTION: &'static str = "List the catalog tools granted to an AI Lenser, by name, each with its stable tool_id, group and safety class.";
    const DIFFERS_FROM_SPEC: &'static str =
        "Lists grants (the original listed invocations); pages with limit and offset.";
    type Input = ListAgentToolsIn;
    type Output = PageOut<GrantOut>;

    async fn call(ctx: Ctx, i: ListAgentToolsIn) -> LfResult<PageOut<GrantOut>> {
        let id = ai_lenser_id(&i.ai_lenser_id)?;
        let page = PageRequest::within(i.limit, i.offset, 50, 200)?;
        let grants = ctx.services.agents.list_tools(&ctx.principal, id, page).await?;
        Ok(PageOut::from_page(grants, |g| GrantOut::new(&g)))
    }
}
