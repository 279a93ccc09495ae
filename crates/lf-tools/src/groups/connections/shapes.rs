//! What the Connections tools answer: a saved tool of an outside server.

use lf_workflow::connection::ConnectionTool;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};

/// A tool of an outside MCP server, as its connection keeps it.
#[derive(Serialize, JsonSchema)]
pub struct ConnectionToolOut {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// off (never called), ask (an agent's call waits for approval) or on.
    pub mode: String,
    /// The JSON Schema of its arguments.
    pub input_schema: Map<String, Value>,
    /// As the server gave them (readOnlyHint, destructiveHint, idempotentHint…).
    pub annotations: Map<String, Value>,
}

impl From<ConnectionTool> for ConnectionToolOut {
    fn from(t: ConnectionTool) -> Self {
        ConnectionToolOut {
            name: t.tool.name,
            description: t.tool.description,
            mode: t.mode.as_str().to_owned(),
            input_schema: t.tool.input_schema,
            annotations: t.tool.annotations,
        }
    }
}

/// A connection's tools.
#[derive(Serialize, JsonSchema)]
pub struct ConnectionToolsOut {
    pub connection_ref: String,
    pub tools: Vec<ConnectionToolOut>,
}
