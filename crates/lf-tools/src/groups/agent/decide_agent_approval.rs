use lf_agent::Reason;
use lf_core::LfResult;
use schemars::JsonSchema;
use serde::Deserialize;

use super::shapes::{ai_lenser_id, opt, team_run_id};
use super::start_agent_team_run::TeamRunOut;
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

#[derive(Clone, Copy, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DecisionIn {
    Approve,
    Reject,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DecideAgentApprovalIn {
    /// The team run awaiting approval.
    #[schemars(extend("format" = "uuid"))]
    pub team_run_id: String,
    /// Its AI Lenser.
    #[schemars(extend("format" = "uuid"))]
    pub ai_lenser_id: String,
    /// approve: it runs; reject: it never runs.
    pub decision: DecisionIn,
    /// Why, up to 500 characters.
    pub reason: Option<String>,
}

pub struct DecideAgentApproval;

impl Tool for DecideAgentApproval {
    const NAME: &'static str = "decide_agent_approval";
    const TITLE: &'static str = "Approve or reject a team run";
    const SAFETY: Safety = Safety::Write;
    const DESCRIPTION: &'static str = "Approve or reject a team run awaiting approval (owner or co-owner): a new one then runs or never does; a tool call its agent step holds runs once, or the agent is told no.";
    const DIFFERS_FROM_SPEC: &'static str = "Not in the hosted original's reference documents.";
    type Input = DecideAgentApprovalIn;
    type Output = TeamRunOut;

    async fn call(ctx: Ctx, i: DecideAgentApprovalIn) -> LfResult<TeamRunOut> {
        let run = team_run_id("team_run_id", &i.team_run_id)?;
        let agent = ai_lenser_id(&i.ai_lenser_id)?;
        let reason = opt(i.reason, Reason::parse)?;
        let approve = matches!(i.decision, DecisionIn::Approve);
        let u = ctx.services.agents.decide_approval(&ctx.principal, agent, run, approve, reason).await?;
        Ok(TeamRunOut::new(&u.run))
    }
}
