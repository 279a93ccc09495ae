//! The `mcp_tool` step: one call of a tool of an outside MCP server, saved
//! as a connection of provider `mcp` by the run's starter.
//!
//! The tool must be saved with the connection and not `off`; its
//! arguments (`arguments` with `[[name]]` placeholders filled, else the
//! input object) are checked against its saved input schema before the
//! call. The output is the result's structured content, else its text
//! (parsed when it is JSON), cut at [`MAX_RESULT_BYTES`] and cleaned as
//! third-party content ([`ThirdParty`]). Failures are `tool_error` (the
//! server's `isError`), `protocol_error`, `timeout`, `connect_error`,
//! `unauthorized`, `invalid_input`, `tool_off`, `not_found`; for a tool
//! annotated read-only or idempotent the first four end in `_retryable`,
//! the codes the catalog's retry rule names.

use std::sync::Arc;

use async_trait::async_trait;
use lf_core::{ErrorCode, LfError, LfResult};
use lf_workflow::ConnectionService;
use lf_workflow::connection::{ConnectionTool, ListedTool, McpEndpoint, McpServers, ToolMode, mcp_endpoint};
use lf_workflow::engine::Failure;
use lf_workflow::exec::fill_placeholders;
use serde_json::{Value, json};

use super::client::{McpClient, McpFailure};
use crate::executor::{Done, Executor, Job};
use crate::outbound::common::{Config, scope};

/// Most bytes of a result's text kept; the rest is cut, and said so.
pub const MAX_RESULT_BYTES: usize = 1024 * 1024;

/// What the catalog knows and the runner does not: the hygiene of this
/// server's own results and a JSON Schema check (lf-server hands over
/// lf-tools').
pub trait ThirdParty: Send + Sync {
    /// Cleans every string of `value` in place; a note when it reads like
    /// instructions to an AI.
    fn clean(&self, value: &mut Value) -> Option<String>;
    /// Whether `instance` passes `schema`; why not otherwise.
    fn check(&self, schema: &Value, instance: &Value) -> Result<(), String>;
}

/// The `mcp_tool` executor.
pub struct McpSteps {
    client: McpClient,
    connections: Arc<ConnectionService>,
    third_party: Arc<dyn ThirdParty>,
}

impl McpSteps {
    pub fn new(
        client: McpClient,
        connections: Arc<ConnectionService>,
        third_party: Arc<dyn ThirdParty>,
    ) -> Self {
        McpSteps { client, connections, third_party }
    }
}

/// `[[name]]` filled in every string of `v`; a string that is one
/// placeholder alone takes the value itself, with its type.
fn fill(v: &mut Value, from: &Value) {
    match v {
        Value::String(s) => {
            let t = s.trim();
            let whole = t.strip_prefix("[[").and_then(|r| r.strip_suffix("]]")).map(str::trim);
            match whole.filter(|n| !n.contains("[[") && !n.contains("]]")).and_then(|n| from.get(n)) {
                Some(found) => *v = found.clone(),
                None => *s = fill_placeholders(s, from),
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| fill(x, from)),
        Value::Object(m) => m.values_mut().for_each(|x| fill(x, from)),
        _ => {}
    }
}

fn failure(code: &str, retryable: bool, message: impl Into<String>) -> Failure {
    let code = if retryable { format!("{code}_retryable") } else { code.to_owned() };
    Failure::new(code, message)
}

/// `text` cut at [`MAX_RESULT_BYTES`] on a character boundary, said so.
fn cut(text: &str) -> String {
    if text.len() <= MAX_RESULT_BYTES {
        return text.to_owned();
    }
    let mut end = MAX_RESULT_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}\n[cut by LenserFight: the result was {} bytes; the first {end} are kept]",
        &text[..end],
        text.len()
    )
}

/// The text blocks of a result, joined.
fn text_of(result: &Value) -> String {
    let blocks = result.get("content").and_then(Value::as_array).into_iter().flatten();
    blocks.filter_map(|b| b.get("text").and_then(Value::as_str)).collect::<Vec<_>>().join("\n")
}

#[async_trait]
impl Executor for McpSteps {
    async fn execute(&self, job: &Job) -> Result<Done, Failure> {
        let node = job.node();
        let Some(connector) = &node.connector else {
            return Err(Failure::new(
                "invalid_connection",
                format!("step {} names no mcp connection", node.key),
            ));
        };
        let r = connector.connection_ref.as_str();
        let c = Config::of(job);
        let name = c.required("tool")?;
        let opened = |e: lf_core::LfError| match e.code() {
            ErrorCode::NotFound => Failure::new("not_found", e.message()),
            _ => Failure::new(
                "invalid_connection",
                format!("the saved connection {r:?} could not be opened: {}", e.message()),
            ),
        };
        let (connection, secret) = self.connections.open_secret(job.started_by, r).await.map_err(opened)?;
        job.secrets.add(&connection, &secret);
        if connection.provider.as_str() != "mcp" {
            return Err(Failure::new(
                "invalid_connection",
                format!("{r:?} is a {} connection; mcp_tool takes an mcp connection", connection.provider),
            ));
        }
        let tools = self.connections.tools_of(job.started_by, r).await.map_err(opened)?;
        let Some(tool) = tools.iter().find(|t| t.tool.name == name) else {
            return Err(Failure::new(
                "not_found",
                format!(
                    "the connection {r:?} has no tool {name:?}: list its tools with list_connection_tools, or again with refresh_connection_tools"
                ),
            ));
        };
        if tool.mode == ToolMode::Off {
            return Err(Failure::new(
                "tool_off",
                format!("the tool {name:?} of {r:?} is off: turn it on with set_connection_tool_mode"),
            ));
        }
        let mut arguments = match c.get("arguments") {
            Some(a) => a.clone(),
            None => lf_workflow::engine::main_input(&job.input).clone(),
        };
        fill(&mut arguments, &scope(&job.input));
        let endpoint = mcp_endpoint(&connection, Some(secret))
            .map_err(|e| Failure::new("invalid_connection", e.message()))?;
        let output = call_saved(&self.client, self.third_party.as_ref(), &endpoint, tool, arguments).await?;
        Ok(Done::output(output))
    }
}

/// Calls the saved `tool` with `arguments` (null is `{}`), checked
/// against its input schema: the output (structured content, else the
/// text, cut and cleaned), or the failure, `_retryable` for a tool
/// annotated read-only or idempotent.
async fn call_saved(
    client: &McpClient,
    third_party: &dyn ThirdParty,
    endpoint: &McpEndpoint,
    tool: &ConnectionTool,
    mut arguments: Value,
) -> Result<Value, Failure> {
    let name = tool.tool.name.as_str();
    let retryable = tool.tool.retryable();
    if arguments.is_null() {
        arguments = json!({});
    }
    if !arguments.is_object() {
        return Err(Failure::new("invalid_input", format!("the arguments of {name:?} must be an object")));
    }
    if !tool.tool.input_schema.is_empty() {
        let schema = Value::Object(tool.tool.input_schema.clone());
        third_party.check(&schema, &arguments).map_err(|why| {
            Failure::new("invalid_input", format!("the arguments do not fit {name:?}'s input schema: {why}"))
        })?;
    }
    let result = client.call(endpoint, name, arguments).await.map_err(|f| match f {
        McpFailure::Timeout(m) => failure("timeout", retryable, m),
        McpFailure::Unreachable(m) => failure("connect_error", retryable, m),
        McpFailure::Unauthorized(m) => Failure::new("unauthorized", m),
        McpFailure::Protocol(m) => failure("protocol_error", retryable, m),
    })?;
    let text = cut(&text_of(&result));
    if result.get("isError").and_then(Value::as_bool) == Some(true) {
        let mut said = Value::String(lf_core::clip(&text, 2000).into_owned());
        third_party.clean(&mut said);
        return Err(failure(
            "tool_error",
            retryable,
            format!("{name} failed: {}", said.as_str().unwrap_or_default()),
        ));
    }
    let mut output = match result.get("structuredContent") {
        Some(s) if !s.is_null() && serde_json::to_vec(s).map_or(0, |b| b.len()) <= MAX_RESULT_BYTES => {
            s.clone()
        }
        _ => {
            serde_json::from_str::<Value>(&text).ok().filter(Value::is_object).unwrap_or(Value::String(text))
        }
    };
    if let Some(note) = third_party.clean(&mut output) {
        output = json!({"output": output, "note": note});
    }
    Ok(output)
}

/// Outside MCP servers as the connection service asks them (listing a
/// server's tools, and an agent's call of one): [`McpClient`] with the
/// catalog's hygiene and schema check, answering as an `mcp_tool` step.
pub struct McpCalls {
    client: McpClient,
    third_party: Arc<dyn ThirdParty>,
}

impl McpCalls {
    pub fn new(client: McpClient, third_party: Arc<dyn ThirdParty>) -> Self {
        McpCalls { client, third_party }
    }
}

#[async_trait]
impl McpServers for McpCalls {
    async fn list_tools(&self, endpoint: &McpEndpoint) -> LfResult<Vec<ListedTool>> {
        self.client.tools(endpoint).await.map_err(|f| {
            LfError::invalid_argument(format!("The MCP server was not saved: {}.", f.message()))
                .with_field("settings")
        })
    }

    async fn call_tool(
        &self,
        endpoint: &McpEndpoint,
        tool: &ConnectionTool,
        arguments: Value,
    ) -> LfResult<Value> {
        let done = call_saved(&self.client, self.third_party.as_ref(), endpoint, tool, arguments).await;
        done.map_err(|f| {
            let code = match f.code.as_str() {
                "invalid_input" => ErrorCode::InvalidArgument,
                "unauthorized" => ErrorCode::PermissionDenied,
                _ => ErrorCode::BadInput,
            };
            let e = LfError::new(
                code,
                format!("The outside tool {} gave no result: {}", tool.tool.name, f.message),
            );
            let e = e.with_detail("failure", lf_core::Detail::Str(f.code.clone()));
            if code == ErrorCode::InvalidArgument { e.with_field("arguments") } else { e }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lone_placeholder_keeps_its_type() {
        let mut v = json!({"a": "[[x]]", "b": "n=[[x]]", "c": ["[[t]]"]});
        fill(&mut v, &json!({"x": 3, "t": "hi"}));
        assert_eq!(v, json!({"a": 3, "b": "n=3", "c": ["hi"]}));
    }

    #[test]
    fn long_results_are_cut_and_say_so() {
        let long = "é".repeat(MAX_RESULT_BYTES);
        let c = cut(&long);
        assert!(c.len() < MAX_RESULT_BYTES + 200 && c.contains("cut by LenserFight"), "{}", c.len());
        assert_eq!(cut("short"), "short");
    }
}
