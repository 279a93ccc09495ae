use lf_agent::ToolKey;
use lf_core::LfResult;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::shapes::ai_lenser_id;
use crate::agent_calls::{MCP_KEY, mcp_tool_ref};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RevokeAgentToolIn {
    /// The AI Lenser.
    #[schemars(extend("format" = "uuid"))]
    pub ai_lenser_id: String,
    /// The granted tool's id or name.
    pub tool_id: String,
}

#[derive(Serialize, JsonSchema)]
pub struct RevokedOut {
    pub ai_lenser_id: String,
    pub tool_id: String,
    /// false: it was not granted.
    pub revoked: bool,
}

pub struct RevokeAgentTool;

impl Tool for RevokeAgentTool {
    const NAME: &'static str = "revoke_agent_tool";
    const TITLE: &'static str = "Revoke an AI Lenser's tool";
    const SAFETY: Safety = Safety::Destructive;
    const DESCRIPTION: &'static str = "Take a granted tool back from an AI Lenser (owner or co-owner).";
    type Input = RevokeAgentToolIn;
    type Output = RevokedOut;

    async fn call(ctx: Ctx, i: RevokeAgentToolIn) -> LfResult<RevokedOut> {
        let id = ai_lenser_id(&i.ai_lenser_id)?;
        let key = match i.tool_id.trim() {
            k if k.starts_with(MCP_KEY) => ToolKey::Id(mcp_tool_ref(k, false).id),
            k => ToolKey::parse("tool_id", k)?,
        };
        let revoked = ctx.services.agents.revoke_tool(&ctx.principal, id, &key).await?;
        Ok(RevokedOut {
            ai_lenser_id: id.to_string(),
            tool_id: revoked.as_ref().map_or_else(|| key.to_string(), |g| g.tool.id.to_string()),
            revoked: revoked.is_some(),
        })
    }
}
