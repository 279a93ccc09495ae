//! The LenserFight tool catalog: every tool declared once (name, group,
//! safety class, title, description, input type, output type, handler), and
//! [`LfServer`], the rmcp `ServerHandler` both transports wrap.
//!
//! lf-tools owns the JSON shapes: it turns JSON arguments into domain values,
//! calls the domain services with the caller's [`lf_core::Principal`], and turns
//! results and [`lf_core::LfError`]s into MCP results in one place
//! ([`mcp_error`]). It knows nothing about SQL, HTTP or how the transports
//! carry messages; it receives its stores as trait objects.
//!
//! Invariants:
//! - a tool's annotations follow from its safety class and what it reaches
//!   ([`Reaches`]) and nothing else;
//! - every result is `structuredContent` plus the same JSON as text;
//! - a mistake the caller can fix is a tool result with `isError: true` and
//!   `{code, message, details}`; no panic, SQL or cause text reaches a client.

pub mod agent_calls;
mod catalog;
pub mod direct;
mod documents;
mod group;
pub mod groups;
mod hygiene;
mod json_schema;
pub mod jsonrpc;
mod mcp_error;
mod output;
mod paging;
mod resources;
mod schema;
mod server;
mod services;
mod size;
mod tasks;
mod tool;
mod toolsets;

pub use catalog::{Catalog, CatalogOptions};
pub use group::Group;
pub use hygiene::{clean_value, injection_note, sanitize_text};
pub use json_schema::JsonSchemaCheck;
pub use mcp_error::{error_result, error_value};
pub use output::ToolOutput;
pub use server::{LfServer, PrincipalSource, SERVER_NAME, ToolsetSource};
pub use services::{Ctx, Services, ServicesBuilder};
pub use size::{LISTING_BUDGET, ListingSize, ToolSize, listing_size};
pub use tool::{Called, Reaches, Safety, TOOL_ID_NAMESPACE, Tool, ToolSpec, tool_id};
