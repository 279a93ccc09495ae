//! The catalog machinery: what a tool is, and the registry of them.
//!
//! - `tool.rs`: the [`Tool`] trait a tool implements in one file, and
//!   [`ToolSpec`], the declaration everything else reads;
//! - `group.rs`: [`Group`], one folder of `groups/`;
//! - this module: [`Catalog`], every tool of every group in
//!   [`crate::groups::ALL`], and [`CatalogOptions`], which of them a server
//!   exposes;
//! - `services.rs`: the domain services a tool calls, and its [`Ctx`];
//! - `output.rs`: [`ToolOutput`], the one result type, cleaned by
//!   `hygiene.rs`; `errors.rs`: the one place a domain error becomes a result;
//! - `schema.rs`: the listed JSON Schemas, `size.rs` what the listing costs,
//!   `paging.rs` the paging every list shares, `json_schema.rs` the JSON
//!   Schema check of `auto_score` battles.
//!
//! Nothing here speaks a protocol: [`crate::mcp`] serves the catalog over
//! MCP, [`crate::agent_calls`] to agents.

pub(crate) mod errors;
pub(crate) mod group;
pub(crate) mod hygiene;
pub(crate) mod json_schema;
pub(crate) mod output;
pub(crate) mod paging;
pub(crate) mod schema;
pub(crate) mod services;
pub(crate) mod size;
pub(crate) mod tool;

use std::collections::HashMap;

use rmcp::model::Tool as McpTool;

use crate::mcp::icon;

pub use self::group::Group;
pub use self::output::ToolOutput;
pub use self::services::Ctx;
pub use self::tool::{Safety, Tool, ToolSpec};

/// Which tools a server exposes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CatalogOptions {
    /// Only these groups (those listed by default when `None`, see
    /// [`Group::by_default`]).
    pub toolsets: Option<Vec<&'static Group>>,
    /// Only Read tools are listed and callable.
    pub read_only: bool,
    /// Dynamic toolsets (see `toolsets`): a session lists `list_toolsets`,
    /// `enable_toolset` and the groups it enabled; `toolsets` are the ones
    /// enabled when it starts.
    pub dynamic: bool,
    /// The server's public URL, under which the toolsets' icons are served
    /// (`{icon_base}/icons/{group}.svg`, lf-mcp-http): `list_toolsets`
    /// names each toolset's and the tools of opt-in groups carry their
    /// group's in `tools/list`. `None` over stdio: no tool or toolset
    /// carries one (see `mcp/icon.rs`).
    pub icon_base: Option<String>,
}

impl CatalogOptions {
    pub fn enables(&self, tool: &ToolSpec) -> bool {
        (!self.read_only || tool.safety == Safety::Read)
            && match &self.toolsets {
                None => tool.group.by_default,
                Some(sets) => sets.contains(&tool.group),
            }
    }
}

/// Every tool, in declaration order.
pub struct Catalog {
    tools: Vec<ToolSpec>,
    /// Where each tool is in `tools`, by name and by id (a call as an
    /// agent finds its tool on every call).
    by_name: HashMap<&'static str, usize>,
    by_id: HashMap<uuid::Uuid, usize>,
    /// And by the action words that name it ([`Tool::ACTION_WORDS`]).
    by_word: HashMap<&'static str, usize>,
}

impl Catalog {
    /// The full catalog.
    pub fn new() -> Self {
        let tools: Vec<ToolSpec> = Group::all().iter().flat_map(|g| (g.tools)(g)).collect();
        let by_name = tools.iter().enumerate().map(|(i, t)| (t.name, i)).collect();
        let by_id = tools.iter().enumerate().map(|(i, t)| (t.id(), i)).collect();
        let by_word =
            tools.iter().enumerate().flat_map(|(i, t)| t.action_words.iter().map(move |w| (*w, i))).collect();
        Self { tools, by_name, by_id, by_word }
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

    /// The tool the action word `word` names ([`Tool::ACTION_WORDS`]).
    pub fn for_action_word(&self, word: &str) -> Option<&ToolSpec> {
        self.by_word.get(word).map(|&i| &self.tools[i])
    }

    /// The tools `options` enables, as `tools/list` lists them: a field
    /// description already given by an earlier tool of the listing is not
    /// given again (see `schema::drop_repeated_descriptions`).
    pub fn listing(&self, options: &CatalogOptions) -> Vec<McpTool> {
        self.listing_of(|t| options.enables(t), options.icon_base.as_deref())
    }

    /// The tools `keep` keeps, as [`Catalog::listing`] lists them, those of
    /// opt-in groups with their group's icon under `icon_base` when given.
    pub(crate) fn listing_of(
        &self,
        keep: impl Fn(&ToolSpec) -> bool,
        icon_base: Option<&str>,
    ) -> Vec<McpTool> {
        let listed = |t: &ToolSpec| match icon_base {
            Some(base) if !t.group.by_default => t.to_mcp().with_icons(icon::toolset_icons(base, t.group)),
            _ => t.to_mcp(),
        };
        let mut tools: Vec<McpTool> = self.tools.iter().filter(|t| keep(t)).map(listed).collect();
        schema::drop_repeated_descriptions(&mut tools);
        tools
    }
}

impl Default for Catalog {
    fn default() -> Self {
        Self::new()
    }
}
