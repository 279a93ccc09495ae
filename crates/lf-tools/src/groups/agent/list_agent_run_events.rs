use lf_agent::{EventFilter, TeamEventKind};
use lf_core::{LfResult, PageRequest};
use schemars::JsonSchema;
use serde::Deserialize;

use super::shapes::{EventOut, ai_lenser_id, team_run_id};
use crate::catalog::paging::PageOut;
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListAgentRunEventsIn {
    /// The AI Lenser.
    #[schemars(extend("format" = "uuid"))]
    pub ai_lenser_id: String,
    /// Only this team run's events.
    #[schemars(extend("format" = "uuid"))]
    pub run_id: Option<String>,
    /// Only events of this type (dispatch_queued, approval_requested, node_started, completed...).
    #[schemars(length(max = 64))]
    pub event_type: Option<String>,
    /// Results per page.
    #[schemars(range(min = 1, max = 500), extend("default" = 100))]
    pub limit: Option<i64>,
    /// Results to skip.
    #[schemars(range(min = 0, max = 1000000), extend("default" = 0))]
    pub offset: Option<i64>,
}

pub struct ListAgentRunEvents;

impl Tool for ListAgentRunEvents {
    const NAME: &'static str = "list_agent_run_events";
    const TITLE: &'static str = "List team-run events";
    const SAFETY: Safety = Safety::Read;
    const DESCRIPTION: &'static str = "Read the events of an AI Lenser's team runs, newest first: dispatch, approvals, steps, tool calls, the end.";
    const DIFFERS_FROM_SPEC: &'static str = "Pages with limit and offset; total counts every match.";
    type Input = ListAgentRunEventsIn;
    type Output = PageOut<EventOut>;

    async fn call(ctx: Ctx, i: ListAgentRunEventsIn) -> LfResult<PageOut<EventOut>> {
        let agent = ai_lenser_id(&i.ai_lenser_id)?;
        let filter = EventFilter {
            team_run: i.run_id.as_deref().map(|s| team_run_id("run_id", s)).transpose()?,
            kind: i.event_type.as_deref().map(TeamEventKind::parse).transpose()?,
        };
        let page = PageRequest::within(i.limit, i.offset, 100, 500)?;
        let events = ctx.services.agents.list_events(&ctx.principal, agent, &filter, page).await?;
        Ok(PageOut::from_page(events, |e| EventOut::new(&e)))
    }
}
