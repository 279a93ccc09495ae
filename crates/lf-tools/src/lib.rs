//! The LenserFight tool catalog: every tool declared once (name, group,
//! safety class, title, description, input type, output type, handler), and
//! [`LfServer`], the rmcp `ServerHandler` both transports wrap.
//!
//! lf-tools owns the JSON shapes: it turns JSON arguments into domain values,
//! calls the domain services with the caller's [`lf_core::Principal`], and turns
//! results and [`lf_core::LfError`]s into MCP results in one place
//! ([`error_value`]). It knows nothing about SQL, HTTP or how the transports
//! carry messages; it receives its stores as trait objects.
//!
//! Where things are:
//! - `catalog/`: the machinery of a catalog (the [`Tool`] trait and
//!   [`ToolSpec`], [`Group`], the registry [`Catalog`], [`ToolOutput`], the
//!   listed schemas, paging, hygiene, the listing's size, the error
//!   mapping), knowing no protocol;
//! - `groups/`: the tools, one folder per group (its `mod.rs` the group's
//!   declaration), one file per tool;
//! - [`mcp`]: the catalog over MCP ([`LfServer`], the direct path, JSON-RPC,
//!   tasks, resources and documents, dynamic toolsets);
//! - [`agent_calls`]: the catalog for agents, the one way an agent acts;
//! - [`markup`]: HTML and SVG that escape by default (lf-pages' too).
//!
//! Invariants:
//! - a tool's annotations follow from its safety class and what it reaches
//!   ([`Reaches`]) and nothing else;
//! - every result is `structuredContent` plus the same JSON as text;
//! - a mistake the caller can fix is a tool result with `isError: true` and
//!   `{code, message, details}`; no panic, SQL or cause text reaches a client;
//! - each incoming message is read once ([`mcp::classify`]), where the
//!   scope rule of a Lenser's token is decided, and a call's scope begins
//!   in one function ([`mcp::one_call`]);
//! - a rule about a tool (its agent gate, its action words) is declared on
//!   the tool.

pub mod agent_calls;
mod catalog;
pub mod groups;
pub mod markup;
pub mod mcp;

pub use catalog::errors::{error_result, error_value, is_rmcp_detail, is_rmcp_error_echo, log_error};
pub use catalog::hygiene::{clean_value, injection_note, sanitize_text};
pub use catalog::json_schema::JsonSchemaCheck;
pub use catalog::services::{Services, ServicesBuilder};
pub use catalog::size::{
    GROUP_BUDGET, LISTING_BUDGET, ListingSize, MEASURED_ICON_BASE, ToolSize, listing_size,
};
pub use catalog::tool::{Called, Reaches, Started, TOOL_ID_NAMESPACE, tool_id};
pub use catalog::{Catalog, CatalogOptions, Ctx, Group, Safety, Tool, ToolOutput, ToolSpec};
pub use mcp::icon::{toolset_icon_url, toolset_svg};
pub use mcp::trace::install_continuation as install_trace_continuation;
pub use mcp::{LfServer, PrincipalSource, SERVER_NAME, ToolsetSource};
