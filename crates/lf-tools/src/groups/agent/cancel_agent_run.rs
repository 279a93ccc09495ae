use lf_agent::Reason;
use lf_core::LfResult;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::shapes::{ai_lenser_id, opt, team_run_id};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CancelAgentRunIn {
    /// The team run.
    #[schemars(extend("format" = "uuid"))]
    pub team_run_id: String,
    /// Its AI Lenser.
    #[schemars(extend("format" = "uuid"))]
    pub ai_lenser_id: String,
    /// Why, up to 500 characters.
    pub reason: Option<String>,
}

#[derive(Serialize, JsonSchema)]
pub struct CancelledOut {
    pub team_run_id: String,
    pub ai_lenser_id: String,
    pub cancelled: bool,
    pub status: &'static str,
}

pub struct CancelAgentRun;

impl Tool for CancelAgentRun {
    const NAME: &'static str = "cancel_agent_run";
    const TITLE: &'static str = "Cancel a team run";
    const SAFETY: Safety = Safety::Destructive;
    const DESCRIPTION: &'static str = "Stop an unfinished team run (queued, awaiting approval or running); its workflow run stops within one step. A finished run answers INVALID_TRANSITION.";
    type Input = CancelAgentRunIn;
    type Output = CancelledOut;

    async fn call(ctx: Ctx, i: CancelAgentRunIn) -> LfResult<CancelledOut> {
        let run = team_run_id("team_run_id", &i.team_run_id)?;
        let agent = ai_lenser_id(&i.ai_lenser_id)?;
        let reason = opt(i.reason, Reason::parse)?;
        let u = ctx.services.agents.cancel_team_run(&ctx.principal, agent, run, reason).await?;
        Ok(CancelledOut {
            team_run_id: run.to_string(),
            ai_lenser_id: agent.to_string(),
            cancelled: true,
            status: u.run.status.as_str(),
        })
    }
}
