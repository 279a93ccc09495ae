//! Outside MCP servers: `client.rs` speaks to them (through the egress
//! guard), for the connection service (listing a server's tools when a
//! connection of provider `mcp` is saved) and for the `mcp_tool` step.

pub mod client;
mod step;

pub use client::McpClient;
pub use step::{MAX_RESULT_BYTES, McpCalls, McpSteps, ThirdParty};
