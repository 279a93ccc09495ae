//! Dynamic toolsets (`--dynamic-toolsets`), as github-mcp-server has them:
//! a session starts with two tools, `list_toolsets` and `enable_toolset`
//! (and the groups named by `--toolsets`, or by a stateless HTTP caller's
//! `X-MCP-Toolsets` header), and lists a group's tools once it enables it.
//! An assistant that needs only lenses never pays for the rest of the
//! catalog in its context. Enabling a group sends
//! `notifications/tools/list_changed` where the session can receive it.

use std::sync::RwLock;

use lf_core::{LfError, LfResult};
use rmcp::model::{JsonObject, Tool as McpTool, ToolAnnotations};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::catalog::group::Group;
use crate::catalog::{Catalog, CatalogOptions};
use crate::mcp::icon;

pub(crate) const LIST_TOOLSETS: &str = "list_toolsets";
pub(crate) const ENABLE_TOOLSET: &str = "enable_toolset";

/// Whether `name` is one of the two tools of dynamic toolsets.
pub(crate) fn is_meta(name: &str) -> bool {
    name == LIST_TOOLSETS || name == ENABLE_TOOLSET
}

/// The groups one session has enabled, in the order it enabled them.
#[derive(Debug, Default)]
pub(crate) struct Enabled(RwLock<Vec<&'static Group>>);

impl Enabled {
    pub(crate) fn new(initial: &[&'static Group]) -> Self {
        Self(RwLock::new(initial.to_vec()))
    }

    pub(crate) fn groups(&self) -> Vec<&'static Group> {
        self.0.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Enables `group`; false when it was enabled already.
    fn enable(&self, group: &'static Group) -> bool {
        let mut groups = self.0.write().unwrap_or_else(|e| e.into_inner());
        if groups.contains(&group) {
            return false;
        }
        groups.push(group);
        true
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListIn {}

#[derive(Serialize, JsonSchema)]
struct ToolsetOut {
    id: &'static str,
    title: &'static str,
    description: &'static str,
    /// Its icon's URL (an SVG), when the server has one to name.
    #[serde(skip_serializing_if = "Option::is_none")]
    icon: Option<String>,
    /// Whether its tools are listed in this session.
    enabled: bool,
    tools: Vec<&'static str>,
}

#[derive(Serialize, JsonSchema)]
struct ListOut {
    toolsets: Vec<ToolsetOut>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct EnableIn {
    /// The toolset to enable (list_toolsets names them).
    toolset: String,
}

#[derive(Serialize, JsonSchema)]
struct EnableOut {
    toolset: &'static str,
    /// False when it was enabled already.
    newly_enabled: bool,
    /// The tools it adds to tools/list.
    tools: Vec<&'static str>,
    next_step: &'static str,
}

/// The two tools as `tools/list` lists them.
pub(crate) fn listed() -> Vec<McpTool> {
    let tool = |name: &'static str, title: &'static str, description: &'static str, input, output| {
        McpTool::new(name, description, input)
            .with_raw_output_schema(output)
            .with_annotations(ToolAnnotations::with_title(title).read_only(true).open_world(false))
    };
    let mut enable_in = crate::catalog::schema::input::<EnableIn>();
    if let Some(Value::Object(toolset)) =
        std::sync::Arc::make_mut(&mut enable_in).get_mut("properties").and_then(|p| p.get_mut("toolset"))
    {
        toolset.insert("enum".to_owned(), Value::from(Group::ids()));
    }
    vec![
        tool(
            LIST_TOOLSETS,
            "List toolsets",
            "List the groups of tools this server has, which are enabled in this session, and the tools each holds.",
            crate::catalog::schema::input::<ListIn>(),
            crate::catalog::schema::output::<ListOut>(),
        ),
        tool(
            ENABLE_TOOLSET,
            "Enable a toolset",
            "Enable a group of tools (see list_toolsets) for this session: its tools are listed from then on.",
            enable_in,
            crate::catalog::schema::output::<EnableOut>(),
        ),
    ]
}

/// What a call of one of the two tools answers. `enabled` is this
/// session's, `also` the groups the request itself names. The second value
/// says whether the session's groups changed (so the client is told).
pub(crate) fn call(
    catalog: &Catalog,
    options: &CatalogOptions,
    enabled: &Enabled,
    also: &[&'static Group],
    name: &str,
    args: JsonObject,
) -> LfResult<(Value, bool)> {
    let tools_of = |g: &Group| catalog.tools().iter().filter(|t| t.group == g).map(|t| t.name).collect();
    if name == LIST_TOOLSETS {
        let ListIn {} = crate::catalog::tool::parse_args(args)?;
        let on = enabled.groups();
        let toolsets = Group::all()
            .iter()
            .map(|g| ToolsetOut {
                id: g.id,
                title: g.title,
                description: g.description,
                icon: options.icon_base.as_deref().map(|base| icon::toolset_icon_url(base, g)),
                enabled: on.contains(g) || also.contains(g),
                tools: tools_of(g),
            })
            .collect();
        return Ok((serde_json::to_value(ListOut { toolsets }).map_err(LfError::internal)?, false));
    }
    let EnableIn { toolset } = crate::catalog::tool::parse_args(args)?;
    let group = Group::parse(&toolset).map_err(|e| LfError::invalid_argument(e).with_field("toolset"))?;
    let newly = enabled.enable(group);
    let out = EnableOut {
        toolset: group.id,
        newly_enabled: newly,
        tools: tools_of(group),
        next_step: "Its tools are listed now: call tools/list again if your client did not refresh it.",
    };
    Ok((serde_json::to_value(out).map_err(LfError::internal)?, newly))
}
