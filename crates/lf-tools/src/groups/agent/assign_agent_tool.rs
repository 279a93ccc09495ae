use lf_core::LfResult;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::shapes::{GrantOut, ai_lenser_id};
use crate::agent_calls::{find_tool, tool_ref};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AssignAgentToolIn {
    /// The AI Lenser.
    #[schemars(extend("format" = "uuid"))]
    pub ai_lenser_id: String,
    /// A catalog tool's stable id, or its name (get_lens); not an Agent tool.
    pub tool_id: String,
    /// Needed to grant a Destructive tool.
    pub confirm: Option<bool>,
}

#[derive(Serialize, JsonSchema)]
pub struct AssignedOut {
    pub ai_lenser_id: String,
    #[serde(flatten)]
    pub grant: GrantOut,
    /// false: it was granted already, nothing changed.
    pub created: bool,
}

pub struct AssignAgentTool;

impl Tool for AssignAgentTool {
    const NAME: &'static str = "assign_agent_tool";
    const TITLE: &'static str = "Grant a tool to an AI Lenser";
    const SAFETY: Safety = Safety::Write;
    const DESCRIPTION: &'static str = "Let an AI Lenser call one catalog tool (owner or co-owner). It then acts with your reach, under its policy and daily caps.";
    const DIFFERS_FROM_SPEC: &'static str =
        "tool_id names a catalog tool (id or name); no profile_id or allowed.";
    type Input = AssignAgentToolIn;
    type Output = AssignedOut;

    async fn call(ctx: Ctx, i: AssignAgentToolIn) -> LfResult<AssignedOut> {
        let id = ai_lenser_id(&i.ai_lenser_id)?;
        // A malformed name or id is a mistake; a well-formed one of no tool is not found.
        lf_agent::ToolKey::parse("tool_id", &i.tool_id)?;
        let tool = tool_ref(find_tool("tool_id", i.tool_id.trim())?);
        let stored =
            ctx.services.agents.assign_tool(&ctx.principal, id, tool, i.confirm == Some(true)).await?;
        Ok(AssignedOut {
            ai_lenser_id: id.to_string(),
            grant: GrantOut::new(&stored.grant),
            created: stored.created,
        })
    }
}
