use lf_agent::AgentFilter;
use lf_core::{LenserId, LfResult};

use super::shapes::AgentOut;
use crate::catalog::paging::{PageOut, Paged, paged_input};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

paged_input! {
    pub struct ListAiLensersIn {
        /// Only agents this lenser owns or co-runs (default: all you can see).
        #[schemars(extend("format" = "uuid"))]
        pub owner_lenser_id: Option<String>,
        /// Archived agents too.
        pub include_archived: Option<bool>,
    }
}

pub struct ListAiLensers;

impl Tool for ListAiLensers {
    const NAME: &'static str = "list_ai_lensers";
    const TITLE: &'static str = "List AI Lensers";
    const SAFETY: Safety = Safety::Read;
    const DESCRIPTION: &'static str =
        "List the AI Lensers (agents) you own, co-own or operate, newest first.";
    const DIFFERS_FROM_SPEC: &'static str =
        "Pages with limit and offset; archived agents only with include_archived.";
    type Input = ListAiLensersIn;
    type Output = PageOut<AgentOut>;

    async fn call(ctx: Ctx, i: ListAiLensersIn) -> LfResult<PageOut<AgentOut>> {
        let filter = AgentFilter {
            lenser: i
                .owner_lenser_id
                .as_deref()
                .map(|s| LenserId::parse("owner_lenser_id", s))
                .transpose()?,
            role: None,
            include_archived: i.include_archived == Some(true),
        };
        let page = ctx.services.agents.list(&ctx.principal, &filter, i.page()?).await?;
        Ok(PageOut::from_page(page, |a| AgentOut::new(&a)))
    }
}
