//! The catalog: every tool of every group in [`crate::groups::ALL`], and
//! which of them a server exposes.

use std::collections::HashMap;

use rmcp::model::Tool as McpTool;

use crate::group::Group;
use crate::tool::{Safety, ToolSpec};

/// Which tools a server exposes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CatalogOptions {
    /// Only these groups (all when `None`).
    pub toolsets: Option<Vec<&'static Group>>,
    /// Only Read tools are listed and callable.
    pub read_only: bool,
    /// Dynamic toolsets (see `toolsets`): a session lists `list_toolsets`,
    /// `enable_toolset` and the groups it enabled; `toolsets` are the ones
    /// enabled when it starts.
    pub dynamic: bool,
}

impl CatalogOptions {
    pub fn enables(&self, tool: &ToolSpec) -> bool {
        (!self.read_only || tool.safety == Safety::Read)
            && self.toolsets.as_ref().is_none_or(|sets| sets.contains(&tool.group))
    }
}

/// Every tool, in declaration order.
pub struct Catalog {
    tools: Vec<ToolSpec>,
    /// Where each tool is in `tools`, by name and by id (a call as an
    /// agent finds its tool on every call).
    by_name: HashMap<&'static str, usize>,
    by_id: HashMap<uuid::Uuid, usize>,
}

impl Catalog {
    /// The full catalog.
    pub fn new() -> Self {
        let tools: Vec<ToolSpec> = Group::all().iter().flat_map(|g| (g.tools)(g)).collect();
        let by_name = tools.iter().enumerate().map(|(i, t)| (t.name, i)).collect();
        let by_id = tools.iter().enumerate().map(|(i, t)| (t.id(), i)).collect();
        Self { tools, by_name, by_id }
    }

    pub fn tools(&self) -> &[ToolSpec] {
        &self.tools
    }

    pub fn get(&self, name: &str) -> Option<&ToolSpec> {
        self.by_name.get(name).map(|&i| &self.tools[i])
    }

    /// The tool `tool` names: its stable id ([`ToolSpec::id`], any case) or
    /// its name.
    pub fn find(&self, tool: &str) -> Option<&ToolSpec> {
        match uuid::Uuid::parse_str(tool.trim()) {
            Ok(id) => self.by_id.get(&id).map(|&i| &self.tools[i]),
            Err(_) => self.get(tool),
        }
    }

    /// The tools `options` enables, as `tools/list` lists them: a field
    /// description already given by an earlier tool of the listing is not
    /// given again (see [`crate::schema::drop_repeated_descriptions`]).
    pub fn listing(&self, options: &CatalogOptions) -> Vec<McpTool> {
        self.listing_of(|t| options.enables(t))
    }

    /// The tools `keep` keeps, as [`Catalog::listing`] lists them.
    pub(crate) fn listing_of(&self, keep: impl Fn(&ToolSpec) -> bool) -> Vec<McpTool> {
        let mut tools: Vec<McpTool> = self.tools.iter().filter(|t| keep(t)).map(ToolSpec::to_mcp).collect();
        crate::schema::drop_repeated_descriptions(&mut tools);
        tools
    }
}

impl Default for Catalog {
    fn default() -> Self {
        Self::new()
    }
}
