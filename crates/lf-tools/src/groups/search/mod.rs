//! The Search tools: `search` and `fetch` in the shape ChatGPT's connectors
//! and deep research ask of a server (`search` {query} → `results` of
//! `{id, title, url}`; `fetch` {id} → `{id, title, text, url, metadata}`),
//! over every kind the caller may read. They read what MCP resources read
//! ([`crate::mcp::documents`]): an id is `lens:<uuid>`, `workflow:<uuid>` or
//! `battle:<uuid>`, its url the `lenserfight://` resource URI. A group of their own, so
//! `--toolsets search` serves exactly the pair such a client wants.

mod fetch;
// Named by its tool, as every tool's file is.
#[allow(clippy::module_inception)]
mod search;

use crate::catalog::group::Group;
use crate::catalog::tool::declare;

pub static GROUP: Group = Group {
    id: "search",
    title: "Search",
    description: "Search and fetch across lenses, workflows and battles, as ChatGPT connectors and deep research expect.",
    by_default: true,
    tools: |g| vec![declare::<search::Search>(g), declare::<fetch::Fetch>(g)],
};
