use lf_core::LfResult;
use lf_workflow::connection::ToolMode;
use schemars::JsonSchema;
use serde::Deserialize;

use super::shapes::ConnectionToolOut;
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetConnectionToolModeIn {
    /// Your saved mcp connection's ref.
    pub connection_ref: String,
    /// The tool's name, as list_connection_tools shows it.
    pub tool: String,
    /// off (never called), ask (an agent's call waits for approval) or on.
    pub mode: String,
}

pub struct SetConnectionToolMode;

impl Tool for SetConnectionToolMode {
    const NAME: &'static str = "set_connection_tool_mode";
    const TITLE: &'static str = "Set an MCP tool's mode";
    const SAFETY: Safety = Safety::Write;
    const DESCRIPTION: &'static str = "Turn one tool of an outside MCP server you saved as a connection off (never called), ask (an agent's call waits for your approval) or on.";
    type Input = SetConnectionToolModeIn;
    type Output = ConnectionToolOut;

    async fn call(ctx: Ctx, i: SetConnectionToolModeIn) -> LfResult<ConnectionToolOut> {
        let mode = ToolMode::parse("mode", &i.mode)?;
        let t =
            ctx.services.connections.set_tool_mode(&ctx.principal, &i.connection_ref, &i.tool, mode).await?;
        Ok(t.into())
    }
}
