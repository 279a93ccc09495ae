//! The catalog served over MCP, for both transports.
//!
//! - [`server`]: [`LfServer`], the rmcp `ServerHandler`: tools, lenses as
//!   prompts, completions, resources, tasks;
//! - [`direct`]: the rmcp bypass, a plain `tools/call` answered as rmcp
//!   answers it; [`jsonrpc`]: what both transports answer for a message
//!   rmcp does not (too deep, unreadable, batches);
//! - [`tasks`]: MCP's tasks extension over workflow runs;
//! - [`resources`]: MCP resources over the [`documents`] the caller may
//!   read (the Search group reads the same documents);
//! - [`toolsets`]: dynamic toolsets.

pub mod direct;
pub(crate) mod documents;
pub mod jsonrpc;
pub(crate) mod resources;
pub(crate) mod server;
pub(crate) mod tasks;
pub(crate) mod toolsets;

pub use self::server::{LfServer, PrincipalSource, SERVER_NAME, ToolsetSource};
