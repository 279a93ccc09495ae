use lf_core::LfResult;
use schemars::JsonSchema;
use serde::Deserialize;

use super::shapes::{AgentOut, ai_lenser_id};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

/// An agent by id.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentIdIn {
    /// The AI Lenser.
    #[schemars(extend("format" = "uuid"))]
    pub ai_lenser_id: String,
}

pub struct GetAiLenser;

impl Tool for GetAiLenser {
    const NAME: &'static str = "get_ai_lenser";
    const TITLE: &'static str = "Get an AI Lenser";
    const SAFETY: Safety = Safety::Read;
    const DESCRIPTION: &'static str =
        "Get one AI Lenser you own, co-own or operate: profile, members, policy and today's usage.";
    type Input = AgentIdIn;
    type Output = AgentOut;

    async fn call(ctx: Ctx, i: AgentIdIn) -> LfResult<AgentOut> {
        let view = ctx.services.agents.get(&ctx.principal, ai_lenser_id(&i.ai_lenser_id)?).await?;
        Ok(AgentOut::viewed(&view))
    }
}
