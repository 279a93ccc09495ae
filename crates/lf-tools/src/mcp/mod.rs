//! The catalog served over MCP, for both transports.
//!
//! - `server.rs`: [`LfServer`], the rmcp `ServerHandler`: tools, lenses as
//!   prompts, completions, resources, tasks;
//! - [`classify`]: what an incoming message is, read once (a call to answer
//!   directly, a message for rmcp, or refused), the scope rule of a
//!   Lenser's token, and [`one_call`], where a call's scope begins;
//! - [`direct`]: the rmcp bypass, a plain `tools/call` answered as rmcp
//!   answers it; [`jsonrpc`]: what both transports answer for a message
//!   rmcp does not (too deep, unreadable, batches);
//! - `elicit.rs`: asking the person behind a client that declared
//!   elicitation (confirmations, a lens's parameters, approvals);
//! - `tasks.rs`: MCP's tasks extension over workflow runs;
//! - `resources.rs`: MCP resources over the documents the caller may read
//!   (`documents.rs`, which the Search group reads too) and an
//!   experiment's results as files (`exports.rs`), and battles' and
//!   experiments' results as SVG and PNG charts (`charts.rs`);
//! - `apps.rs`: the MCP Apps views of three tools' results;
//! - `toolsets.rs`: dynamic toolsets;
//! - [`trace`]: each tool call's span, and a request's `traceparent`.

pub(crate) mod apps;
pub(crate) mod charts;
pub mod classify;
pub mod direct;
pub(crate) mod documents;
pub(crate) mod elicit;
pub(crate) mod exports;
pub(crate) mod icon;
pub mod jsonrpc;
pub(crate) mod resources;
pub(crate) mod server;
pub(crate) mod tasks;
pub(crate) mod toolsets;
pub mod trace;

pub use self::classify::{Classified, Envelope, Refusal, one_call};
pub use self::server::{LfServer, PrincipalSource, SERVER_NAME, ToolsetSource};
