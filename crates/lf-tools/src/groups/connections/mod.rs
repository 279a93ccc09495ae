//! The Connections tools: the tools of outside MCP servers saved as
//! connections of provider `mcp`, over [`lf_workflow::ConnectionService`].
//! Saving a connection (its secret on standard input) stays on the command
//! line; these list a server's tools again, show them and set their modes.
//! An opt-in group: listed when named (`--toolsets default,connections`).

mod shapes;

mod list_connection_tools;
mod refresh_connection_tools;
mod set_connection_tool_mode;

use crate::catalog::group::Group;
use crate::catalog::tool::declare;

pub static GROUP: Group = Group {
    id: "connections",
    title: "Connections",
    description: "Outside MCP servers saved as connections (provider mcp): their tools, listed again, shown and turned off, ask or on.",
    by_default: false,
    tools: |g| {
        vec![
            declare::<list_connection_tools::ListConnectionTools>(g),
            declare::<refresh_connection_tools::RefreshConnectionTools>(g),
            declare::<set_connection_tool_mode::SetConnectionToolMode>(g),
        ]
    },
};
