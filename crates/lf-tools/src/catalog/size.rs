//! What listing the catalog costs a connected assistant: the bytes of the
//! `tools/list` answer, per tool and in all. `cargo xtask catalog-size`
//! prints it, a snapshot keeps it in review, and the catalog's lint test
//! fails when the default listing grows past [`LISTING_BUDGET`] or an
//! opt-in group's own listing past [`GROUP_BUDGET`].

use std::fmt;

use rmcp::model::ListToolsResult;

use crate::catalog::{Catalog, CatalogOptions};

/// Most bytes the full `tools/list` answer may take, paid in every
/// conversation's context (about 4 bytes make a token). What each group
/// takes of it is in docs/performance.md; `cargo xtask catalog-size`
/// prints it as it is.
pub const LISTING_BUDGET: usize = 98_000;

/// Most bytes the `tools/list` answer of one opt-in group alone may take
/// (`--toolsets <group>`): what naming it adds to a conversation. The
/// default listing is held to [`LISTING_BUDGET`] without it.
pub const GROUP_BUDGET: usize = 13_000;

/// The public URL the listing is measured under (`cargo xtask
/// catalog-size`, the budget test): an HTTP server names its toolsets'
/// icons under its own, and the tools of opt-in groups carry their
/// group's (`mcp/icon.rs`). A URL of a common length; each tool of an
/// opt-in group costs 43 bytes and this URL's length.
pub const MEASURED_ICON_BASE: &str = "https://mcp.lenserfight.example";

/// One tool's share of the listing, in bytes of JSON.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolSize {
    pub name: &'static str,
    /// The tool as listed, all of it.
    pub bytes: usize,
    pub input_schema: usize,
    pub output_schema: usize,
    pub description: usize,
}

/// The listing's size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListingSize {
    pub tools: Vec<ToolSize>,
    /// The whole JSON-RPC answer to `tools/list`, as sent.
    pub listed: usize,
}

/// What listing `catalog` with `options` costs.
pub fn listing_size(catalog: &Catalog, options: &CatalogOptions) -> ListingSize {
    let listing = catalog.listing(options);
    let tools = listing
        .iter()
        .map(|t| ToolSize {
            name: catalog.get(&t.name).map_or("", |spec| spec.name),
            bytes: json_len(t),
            input_schema: json_len(&*t.input_schema),
            output_schema: t.output_schema.as_deref().map_or(0, json_len),
            description: t.description.as_deref().map_or(0, str::len),
        })
        .collect();
    let result = ListToolsResult::with_all_items(listing);
    let answer = serde_json::json!({"jsonrpc": "2.0", "id": 1, "result": result});
    ListingSize { tools, listed: json_len(&answer) }
}

/// The length of `v` as compact JSON.
fn json_len(v: &impl serde::Serialize) -> usize {
    serde_json::to_vec(v).map_or(0, |v| v.len())
}

impl fmt::Display for ListingSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{:<24} {:>7} {:>7} {:>7} {:>7}", "tool", "bytes", "input", "output", "descr")?;
        for t in &self.tools {
            writeln!(
                f,
                "{:<24} {:>7} {:>7} {:>7} {:>7}",
                t.name, t.bytes, t.input_schema, t.output_schema, t.description
            )?;
        }
        let sum = |g: fn(&ToolSize) -> usize| self.tools.iter().map(g).sum::<usize>();
        writeln!(
            f,
            "{:<24} {:>7} {:>7} {:>7} {:>7}",
            format!("{} tools", self.tools.len()),
            sum(|t| t.bytes),
            sum(|t| t.input_schema),
            sum(|t| t.output_schema),
            sum(|t| t.description)
        )?;
        writeln!(f, "tools/list answer: {} bytes (about {} tokens)", self.listed, self.listed.div_ceil(4),)
    }
}
