//! Saved connections: what a workflow step names by `connection_ref`
//! instead of holding a secret. A connection belongs to one lenser and has
//! a ref (unique per owner), a provider (one the node catalog names), non-
//! secret settings and a secret.
//!
//! The secret is sealed before it reaches a store and opened only for the
//! runner: lf-workflow never encrypts anything itself. It hands the secret
//! to a [`SecretSealer`], which the composition root implements with an
//! AEAD cipher and the server's key, bound to the connection's owner and
//! ref ([`SealBinding`]), so a sealed secret copied to another row does not
//! open. Stores keep the sealed bytes only; listings never carry them.
//!
//! - `model.rs`: [`Connection`], [`Secret`], [`SealedSecret`], the checks
//!   of a new connection's provider and settings;
//! - `store.rs`: [`ConnectionStore`], its contract, and the one
//!   [`crate::ConnectionLookup`] every store serves;
//! - `service.rs`: [`ConnectionService`], the use cases for a principal;
//! - `redaction.rs`: [`Redaction`], what the connections a step opened
//!   must not leave in anything the step gives back;
//! - `tools.rs`: an outside MCP server's tools and their modes, kept
//!   with a connection of provider `mcp`, and the [`McpServers`] port;
//! - `contract.rs`: the suite every store runs.
//!
//! Invariants: a [`Secret`] is never printed (its `Debug` is redacted, it
//! has no `Display` and no serde); nothing a listing returns holds one; a
//! connection is its owner's alone (no other lenser lists, uses or removes
//! it).

pub mod contract;
mod model;
mod redaction;
mod service;
mod store;
mod tools;

pub use model::{
    Connection, MAX_SECRET_BYTES, MAX_SETTINGS_BYTES, MAX_SETTINGS_DEPTH, SealBinding, SealedSecret, Secret,
    SecretSealer, connection_not_found, connection_taken, parse_provider, parse_settings,
};
pub use redaction::{MIN_SECRET_CHARS, REDACTION_RULE, Redaction};
pub use service::{ConnectionService, NewConnection};
pub use store::ConnectionStore;
pub use tools::{
    ConnectionTool, DEFAULT_TIMEOUT_SECS, ListedTool, MAX_TIMEOUT_SECS, MAX_TOOLS, MCP_PROVIDER, McpEndpoint,
    McpServers, ToolMode, first_mode, mcp_endpoint, mcp_settings, merge_tools,
};
