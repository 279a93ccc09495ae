//! The tools of an outside MCP server: a connection of provider
//! [`MCP_PROVIDER`] keeps what the server listed (names, descriptions,
//! input schemas, annotations) and, per tool, a [`ToolMode`] its owner
//! sets. Saving or refreshing the connection asks the server through an
//! [`McpServers`] port (the composition root hands over lf-runner's
//! client); nothing here does I/O.

use async_trait::async_trait;
use lf_core::{LfError, LfResult};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::model::{Connection, Secret};
use crate::model::JsonObject;

/// The provider of a connection to an outside MCP server.
pub const MCP_PROVIDER: &str = "mcp";
/// Most tools kept of one server (the listing stops there).
pub const MAX_TOOLS: usize = 500;
/// Most seconds one call may be given by the `timeout_secs` setting.
pub const MAX_TIMEOUT_SECS: u64 = 600;
/// Seconds one call to the server may take when `timeout_secs` is unset.
pub const DEFAULT_TIMEOUT_SECS: u64 = 30;

/// Whether a tool of an outside server may be called.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolMode {
    /// Never called: a step naming it does not validate.
    Off,
    /// An agent's call waits for its owner's approval; a workflow step
    /// (written by the owner) calls it.
    Ask,
    /// Called.
    On,
}

impl ToolMode {
    pub fn as_str(self) -> &'static str {
        match self {
            ToolMode::Off => "off",
            ToolMode::Ask => "ask",
            ToolMode::On => "on",
        }
    }

    /// `off`, `ask` or `on`; INVALID_ARGUMENT naming `field` otherwise.
    pub fn parse(field: &str, s: &str) -> LfResult<Self> {
        match s.trim() {
            "off" => Ok(ToolMode::Off),
            "ask" => Ok(ToolMode::Ask),
            "on" => Ok(ToolMode::On),
            other => Err(LfError::invalid_argument(format!(
                "{field} must be off (never called), ask (an agent's call waits for approval) or on; got {}.",
                LfError::excerpt(other)
            ))
            .with_field(field)),
        }
    }
}

/// A tool as the server listed it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ListedTool {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The JSON Schema of its arguments (an object schema).
    #[serde(default)]
    pub input_schema: JsonObject,
    /// Its annotations as the server gave them (`readOnlyHint`,
    /// `destructiveHint`, `idempotentHint`, `openWorldHint`, `title`).
    #[serde(default)]
    pub annotations: JsonObject,
}

impl ListedTool {
    fn hint(&self, key: &str) -> bool {
        self.annotations.get(key).and_then(Value::as_bool) == Some(true)
    }

    /// Annotated `destructiveHint: true` (an absent hint is not taken as
    /// destructive, though the protocol's default is).
    pub fn destructive(&self) -> bool {
        self.hint("destructiveHint")
    }

    /// Annotated read-only or idempotent: a failed call may be tried again.
    pub fn retryable(&self) -> bool {
        self.hint("readOnlyHint") || self.hint("idempotentHint")
    }
}

/// A saved tool: what the server listed and its mode.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConnectionTool {
    #[serde(flatten)]
    pub tool: ListedTool,
    pub mode: ToolMode,
}

/// The mode a tool the connection did not have starts with: `ask` when it
/// is annotated destructive, else the connection's `new_tools` setting
/// (`off` unless it says otherwise).
pub fn first_mode(tool: &ListedTool, new_tools: ToolMode) -> ToolMode {
    if tool.destructive() { ToolMode::Ask } else { new_tools }
}

/// The saved tools after a new listing: each listed tool, with the mode it
/// had if it was saved before, else its [`first_mode`]. Tools the server no
/// longer lists are dropped.
pub fn merge_tools(
    saved: &[ConnectionTool],
    listed: Vec<ListedTool>,
    new_tools: ToolMode,
) -> Vec<ConnectionTool> {
    listed
        .into_iter()
        .map(|tool| {
            let mode = saved
                .iter()
                .find(|s| s.tool.name == tool.name)
                .map_or_else(|| first_mode(&tool, new_tools), |s| s.mode);
            ConnectionTool { tool, mode }
        })
        .collect()
}

/// Where an outside MCP server is and how to speak to it, from an `mcp`
/// connection's settings and secret.
#[derive(Debug)]
pub struct McpEndpoint {
    /// The Streamable HTTP endpoint (`url` setting).
    pub url: String,
    /// The header the secret goes in (`auth_header` setting): `None` sends
    /// it as `Authorization: Bearer …`.
    pub auth_header: Option<String>,
    /// The secret, if the connection has one.
    pub secret: Option<Secret>,
    /// One call's timeout (`timeout_secs` setting).
    pub timeout_secs: u64,
}

/// Reads an `mcp` connection's settings: `url` (required, http or https),
/// `auth_header`, `timeout_secs` (1 to [`MAX_TIMEOUT_SECS`]), `new_tools`
/// (`off`, `ask` or `on`). INVALID_ARGUMENT naming the setting.
pub fn mcp_settings(settings: &JsonObject) -> LfResult<(String, Option<String>, u64, ToolMode)> {
    let bad = |key: &str, m: &str| {
        LfError::invalid_argument(format!("the mcp setting {key} {m}")).with_field("settings")
    };
    let url = match settings.get("url").and_then(Value::as_str).map(str::trim) {
        Some(u) if u.starts_with("http://") || u.starts_with("https://") => u.to_owned(),
        _ => {
            return Err(bad(
                "url",
                "is required: the server's Streamable HTTP endpoint, such as https://mcp.example.com/mcp (--setting url=…).",
            ));
        }
    };
    let auth_header = match settings.get("auth_header") {
        None => None,
        Some(Value::String(h)) if !h.trim().is_empty() => Some(h.trim().to_owned()),
        Some(_) => {
            return Err(bad("auth_header", "must name the header the secret goes in, such as X-Api-Key."));
        }
    };
    let timeout_secs = match settings.get("timeout_secs") {
        None => DEFAULT_TIMEOUT_SECS,
        Some(v) => match v.as_u64() {
            Some(n @ 1..=MAX_TIMEOUT_SECS) => n,
            _ => {
                return Err(bad(
                    "timeout_secs",
                    &format!("must be a number of seconds from 1 to {MAX_TIMEOUT_SECS}."),
                ));
            }
        },
    };
    let new_tools = match settings.get("new_tools") {
        None => ToolMode::Off,
        Some(v) => ToolMode::parse("settings.new_tools", v.as_str().unwrap_or_default())?,
    };
    Ok((url, auth_header, timeout_secs, new_tools))
}

/// An `mcp` connection's endpoint, its secret given with it (an empty
/// secret is none).
pub fn mcp_endpoint(connection: &Connection, secret: Option<Secret>) -> LfResult<McpEndpoint> {
    let (url, auth_header, timeout_secs, _) = mcp_settings(&connection.settings)?;
    let secret = secret.filter(|s| !s.expose().is_empty());
    Ok(McpEndpoint { url, auth_header, secret, timeout_secs })
}

/// Outside MCP servers, as the connection service asks them: lf-runner's
/// client implements it, through the egress guard.
#[async_trait]
pub trait McpServers: Send + Sync {
    /// Connects, agrees on a protocol version and lists the server's tools
    /// (at most [`MAX_TOOLS`]). An error says what went wrong (no answer,
    /// not MCP, refused credentials) and never holds the secret.
    async fn list_tools(&self, endpoint: &McpEndpoint) -> LfResult<Vec<ListedTool>>;

    /// Calls `tool` (as saved) with `arguments`, checked against its saved
    /// input schema first: what an `mcp_tool` step outputs (the structured
    /// content, else the text, cut at 1 MB and cleaned as third-party
    /// content). The server's `isError`, no answer in the connection's
    /// timeout, refused credentials and protocol errors are errors saying
    /// so, never holding the secret.
    async fn call_tool(
        &self,
        endpoint: &McpEndpoint,
        tool: &ConnectionTool,
        arguments: Value,
    ) -> LfResult<Value>;
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn listed(name: &str, annotations: Value) -> ListedTool {
        ListedTool {
            name: name.into(),
            description: None,
            input_schema: JsonObject::new(),
            annotations: annotations.as_object().unwrap().clone(),
        }
    }

    #[test]
    fn new_tools_start_off_destructive_ones_ask_and_modes_are_kept() {
        let saved = vec![ConnectionTool { tool: listed("echo", json!({})), mode: ToolMode::On }];
        let listed = vec![
            listed("echo", json!({})),
            listed("add", json!({"readOnlyHint": true})),
            listed("drop", json!({"destructiveHint": true})),
        ];
        let merged = merge_tools(&saved, listed.clone(), ToolMode::Off);
        let modes: Vec<_> = merged.iter().map(|t| (t.tool.name.as_str(), t.mode)).collect();
        assert_eq!(modes, [("echo", ToolMode::On), ("add", ToolMode::Off), ("drop", ToolMode::Ask)]);
        let merged = merge_tools(&[], listed, ToolMode::On);
        let modes: Vec<_> = merged.iter().map(|t| t.mode).collect();
        assert_eq!(modes, [ToolMode::On, ToolMode::On, ToolMode::Ask]);
        assert!(merged[1].tool.retryable() && !merged[0].tool.retryable());
    }

    #[test]
    fn settings_need_a_url_and_bound_the_timeout() {
        let s = |v: Value| v.as_object().unwrap().clone();
        let (url, h, t, m) = mcp_settings(&s(json!({"url": "http://127.0.0.1:9/mcp"}))).unwrap();
        assert_eq!((url.as_str(), h, t, m), ("http://127.0.0.1:9/mcp", None, 30, ToolMode::Off));
        assert!(mcp_settings(&s(json!({}))).unwrap_err().message().contains("url is required"));
        assert!(mcp_settings(&s(json!({"url": "ftp://x"}))).is_err());
        assert!(mcp_settings(&s(json!({"url": "https://x", "timeout_secs": 0}))).is_err());
        assert!(mcp_settings(&s(json!({"url": "https://x", "new_tools": "maybe"}))).is_err());
        let t = ConnectionTool { tool: listed("a", json!({})), mode: ToolMode::Ask };
        let v = serde_json::to_value(&t).unwrap();
        assert_eq!(v, json!({"name": "a", "input_schema": {}, "annotations": {}, "mode": "ask"}));
        assert_eq!(serde_json::from_value::<ConnectionTool>(v).unwrap(), t);
    }
}
