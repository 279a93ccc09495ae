use lf_core::LfResult;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::shapes::{GrantOut, ai_lenser_id};
use crate::agent_calls::{MCP_KEY, find_outside_tool, find_tool, mcp_tool_ref, tool_ref};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AssignAgentToolIn {
    /// The AI Lenser.
    #[schemars(extend("format" = "uuid"))]
    pub ai_lenser_id: String,
    /// A catalog tool's id or name, or mcp:<connection_ref>/<tool>; not an Agent tool.
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
        let key = i.tool_id.trim();
        let tool = if key.starts_with(MCP_KEY) {
            outside_tool(&ctx, id, key).await?
        } else {
            // A malformed name or id is a mistake; a well-formed one of no tool is not found.
            lf_agent::ToolKey::parse("tool_id", key)?;
            tool_ref(find_tool("tool_id", key)?)
        };
        let stored =
            ctx.services.agents.assign_tool(&ctx.principal, id, tool, i.confirm == Some(true)).await?;
        Ok(AssignedOut {
            ai_lenser_id: id.to_string(),
            grant: GrantOut::new(&stored.grant),
            created: stored.created,
        })
    }
}

/// The grant of the outside tool `key` (`mcp:<connection_ref>/<tool>`) of
/// a connection the agent's owner saved: NOT_FOUND when the caller cannot
/// see the agent or its owner has no such tool, INVALID_ARGUMENT when it
/// is `off`. Granting one annotated destructive needs `confirm`.
async fn outside_tool(ctx: &Ctx, id: lf_core::LenserId, key: &str) -> LfResult<lf_agent::ToolRef> {
    let owner = ctx.services.agents.get(&ctx.principal, id).await?.agent.owner;
    let (r, saved) = find_outside_tool(&ctx.services, owner, "tool_id", key).await?;
    if saved.mode == lf_workflow::connection::ToolMode::Off {
        return Err(lf_core::LfError::invalid_argument(format!(
            "The tool {} of the connection {r:?} is off, so no agent may call it. Turn it on (or to ask) with set_connection_tool_mode first.",
            lf_core::LfError::excerpt(&saved.tool.name)
        ))
        .with_field("tool_id"));
    }
    Ok(mcp_tool_ref(&format!("{MCP_KEY}{r}/{}", saved.tool.name), saved.tool.destructive()))
}
