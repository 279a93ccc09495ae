use lf_core::LfResult;
use schemars::JsonSchema;
use serde::Deserialize;

use super::shapes::ConnectionToolsOut;
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Reaches, Safety, Tool};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RefreshConnectionToolsIn {
    /// Your saved mcp connection's ref.
    pub connection_ref: String,
}

pub struct RefreshConnectionTools;

impl Tool for RefreshConnectionTools {
    const NAME: &'static str = "refresh_connection_tools";
    const TITLE: &'static str = "List an MCP server's tools again";
    const SAFETY: Safety = Safety::Write;
    const REACHES: Reaches = Reaches::Outside;
    const DESCRIPTION: &'static str = "Ask an outside MCP server saved as a connection for its tools again and save them: tools kept keep their modes, new ones start off (ask when annotated destructive), gone ones are dropped.";
    type Input = RefreshConnectionToolsIn;
    type Output = ConnectionToolsOut;

    async fn call(ctx: Ctx, i: RefreshConnectionToolsIn) -> LfResult<ConnectionToolsOut> {
        let tools = ctx.services.connections.refresh_tools(&ctx.principal, &i.connection_ref).await?;
        Ok(ConnectionToolsOut {
            connection_ref: i.connection_ref.trim().to_owned(),
            tools: tools.into_iter().map(Into::into).collect(),
        })
    }
}
