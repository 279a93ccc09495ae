//! MCP Apps (the `io.modelcontextprotocol/ui` extension, SEP-1865): views
//! of `get_leaderboard`, `get_battle` (with vote buttons while the battle
//! is in voting) and `get_experiment` that hosts render inline. A client
//! that declared the extension in its capabilities finds each of the three
//! tools naming its view (`_meta.ui.resourceUri`) in `tools/list`; every
//! other client's listing is unchanged, and no tool result changes.
//!
//! A view is one self-contained HTML page (`resources/read` of its `ui://`
//! URI, `text/html;profile=mcp-app`): no data of the server's, one inline
//! stylesheet and one inline script, allowed by their hashes in a strict
//! Content-Security-Policy that allows nothing else (no fetch, no frame,
//! no form). The script asks the host for the tool's result over
//! postMessage (`ui/initialize`, then `ui/notifications/tool-result`)
//! and draws its `structuredContent` with DOM calls, its text as text
//! nodes; a vote goes through the host as `tools/call cast_battle_vote`,
//! under the server's rules. It tells the host its size
//! (`ui/notifications/size-changed`) whenever its content's changes.
//! lf-mcp-http's browser test runs every view in Chromium inside a host
//! it plays, against a real server.

use std::sync::LazyLock;

use base64::Engine as _;
use rmcp::model::{ClientCapabilities, MetaObject, ResourceContents, Tool};
use serde_json::json;
use sha2::{Digest, Sha256};

/// The extension's identifier in `capabilities.extensions`.
pub(crate) const EXTENSION: &str = "io.modelcontextprotocol/ui";

/// The MIME type of a view.
pub(crate) const MIME: &str = "text/html;profile=mcp-app";

const SCRIPT: &str = include_str!("apps/view.js");
const STYLE: &str = include_str!("apps/view.css");

/// One view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum View {
    Leaderboard,
    Battle,
    Experiment,
}

impl View {
    pub(crate) const ALL: [View; 3] = [View::Leaderboard, View::Battle, View::Experiment];

    fn name(self) -> &'static str {
        match self {
            View::Leaderboard => "leaderboard",
            View::Battle => "battle",
            View::Experiment => "experiment",
        }
    }

    /// The tool whose result it shows.
    pub(crate) fn tool(self) -> &'static str {
        match self {
            View::Leaderboard => "get_leaderboard",
            View::Battle => "get_battle",
            View::Experiment => "get_experiment",
        }
    }

    fn title(self) -> &'static str {
        match self {
            View::Leaderboard => "Leaderboard",
            View::Battle => "Battle",
            View::Experiment => "Experiment",
        }
    }

    pub(crate) fn uri(self) -> String {
        format!("ui://lenserfight/{}.html", self.name())
    }

    pub(crate) fn from_uri(uri: &str) -> Option<View> {
        Self::ALL.into_iter().find(|v| v.uri() == uri)
    }
}

/// Whether `capabilities` declare the extension.
pub(crate) fn declared(capabilities: Option<&ClientCapabilities>) -> bool {
    capabilities.and_then(|c| c.extensions.as_ref()).is_some_and(|e| e.contains_key(EXTENSION))
}

/// `tools` with each view's tool naming its view.
pub(crate) fn with_views(mut tools: Vec<Tool>) -> Vec<Tool> {
    for tool in &mut tools {
        if let Some(view) = View::ALL.into_iter().find(|v| v.tool() == tool.name) {
            let meta = tool.meta.get_or_insert_with(MetaObject::default);
            meta.0.insert("ui".to_owned(), json!({ "resourceUri": view.uri() }));
        }
    }
    tools
}

/// `'sha256-…'` of `text`, as a CSP source.
fn hash(text: &str) -> String {
    format!("'sha256-{}'", base64::engine::general_purpose::STANDARD.encode(Sha256::digest(text)))
}

/// The policy of every view: its own script and stylesheet, by their
/// hashes, and SVG drawn in place; nothing else.
pub(crate) static CSP: LazyLock<String> = LazyLock::new(|| {
    format!(
        "default-src 'none'; script-src {}; style-src {}; img-src data:; base-uri 'none'; form-action 'none'",
        hash(SCRIPT),
        hash(STYLE)
    )
});

/// The page of `view`.
pub(crate) fn html(view: View) -> String {
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta http-equiv=\"Content-Security-Policy\" content=\"{csp}\">\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
<title>{title} · LenserFight</title><style>{STYLE}</style></head>\
<body><main id=\"app\" data-view=\"{name}\" aria-live=\"polite\"><p class=\"muted\">Waiting for the result…</p></main>\
<script>{SCRIPT}</script></body></html>",
        csp = *CSP,
        title = view.title(),
        name = view.name(),
    )
}

/// `resources/read` of `view`: its page, saying it needs no other origin.
pub(crate) fn contents(view: View) -> ResourceContents {
    let mut meta = MetaObject::default();
    meta.0.insert("ui".to_owned(), json!({ "csp": {}, "prefersBorder": true }));
    ResourceContents::text(html(view), view.uri()).with_mime_type(MIME).with_meta(meta)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn views_round_trip_by_uri_and_name_their_tools() {
        for v in View::ALL {
            assert_eq!(View::from_uri(&v.uri()), Some(v));
            assert!(v.uri().starts_with("ui://lenserfight/"));
        }
        assert_eq!(View::from_uri("ui://lenserfight/nope.html"), None);
        assert_eq!(View::Battle.tool(), "get_battle");
    }

    #[test]
    fn a_page_allows_only_its_own_script_and_style() {
        let page = html(View::Experiment);
        assert!(page.contains(&format!("script-src {};", hash(SCRIPT))), "{page}");
        assert!(page.contains(&format!("<script>{SCRIPT}</script>")));
        assert!(page.contains("data-view=\"experiment\""));
        // The SVG namespace is a name, not an address.
        let page = page.replace("\"http://www.w3.org/2000/svg\"", "SVG");
        for outside in ["src=", "href=", "http://", "https://", "innerHTML", "fetch(", "eval("] {
            assert!(!page.contains(outside), "{outside}");
        }
        // The script and style end only where the page ends them.
        assert!(!SCRIPT.contains("</") && !STYLE.contains("</"));
    }
}
