use lf_core::LfResult;
use schemars::JsonSchema;
use serde::Deserialize;

use super::shapes::ConnectionToolsOut;
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListConnectionToolsIn {
    /// Your saved mcp connection's ref.
    pub connection_ref: String,
}

pub struct ListConnectionTools;

impl Tool for ListConnectionTools {
    const NAME: &'static str = "list_connection_tools";
    const TITLE: &'static str = "List an MCP connection's tools";
    const SAFETY: Safety = Safety::Read;
    const DESCRIPTION: &'static str = "List the tools of an outside MCP server you saved as a connection (provider mcp), as it listed them, each with its mode (off, ask, on): what an mcp_tool step may call.";
    type Input = ListConnectionToolsIn;
    type Output = ConnectionToolsOut;

    async fn call(ctx: Ctx, i: ListConnectionToolsIn) -> LfResult<ConnectionToolsOut> {
        let tools = ctx.services.connections.tools(&ctx.principal, &i.connection_ref).await?;
        Ok(ConnectionToolsOut {
            connection_ref: i.connection_ref.trim().to_owned(),
            tools: tools.into_iter().map(Into::into).collect(),
        })
    }
}
