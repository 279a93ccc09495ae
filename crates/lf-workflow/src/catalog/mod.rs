//! The node catalog: every node type a workflow may use, declared once, as
//! data. `create_workflow` and the validator check steps against it,
//! `list_workflow_node_types` and `describe_workflow_node_type` show it,
//! and `cargo xtask gen-docs` renders `docs/workflow-nodes.md` from it
//! (one `### <type>` heading per entry: [`NodeTypeSpec::docs_link`] points
//! at that anchor).
//!
//! It lists only the types this server runs (lf-runner's table of
//! executors holds every type here to the executor that runs it); a type
//! that cannot be made real here is not listed. A category is where a
//! person looks for a type:
//! - trigger: how a run starts (manual, schedule, webhook, event, form);
//! - lens: the lens step;
//! - ai_primitive: a model call through the model provider, reading JSON
//!   out of a model's answer, and an AI Lenser's tool-calling loop (with
//!   the catalog tools it was granted); not embedding, rag_retrieval,
//!   vector_search, memory_read, memory_write (no embedding model or
//!   vector store), chain (a workflow is the chain), image_analyze,
//!   audio_transcribe, video_analyze (the model provider is text chat);
//! - logic: branches, merges, loops, waits, error paths and sub-workflows;
//!   not `code` (no user code runs here; conditions are structured
//!   operators);
//! - data: pure transformations of the input, lists and text included;
//! - storage: the workflow owner's key-value store and cache; not
//!   supabase_query, sql_query, file_reader, file_writer,
//!   object_storage_upload, object_storage_download (no such backends
//!   behind this server);
//! - communication: chat messages and e-mail through saved connections;
//!   not push_notification or sms_send (no provider for either);
//! - integration: other services over HTTP (any API the egress policy
//!   allows, webhooks, GraphQL, GitHub, feeds); not github_pr_review,
//!   notion_*, google_sheets_*, calendar_create, linear_issue_create,
//!   jira_issue_create (no client for them here);
//! - battle: battles made through the Battle service, and an AI Lenser's
//!   answer as its ai_agent contender (the agent call of the action word
//!   answer_battle; a submission is seen as its battle is); not
//!   battle_execute, judge_battle, vote_collector, score_aggregator (a
//!   battle moves, is voted on and judged by lf-battle itself, by its
//!   rules and its judging mode; a step cannot stand in for it),
//!   leaderboard_update (ratings are computed from closed battles when
//!   asked for; there is nothing to update) or series_advance (no battle
//!   series here);
//! - media: none (no image, audio or video provider), the category kept;
//! - utility: logging, inspecting, rate limits and the no-op; not
//!   secret_resolver (no secret enters a workflow) or retry (every type
//!   declares its own `retry_behavior`).
//!
//! See [`catalog`].

mod check;
mod entries;
mod spec;

use std::sync::LazyLock;

pub use check::{ConfigProblem, check_config, normalize_config};
pub use spec::{
    ConfigField, ConnectorUse, ErrorBehavior, Example, FieldKind, IoType, NodeTypeSpec, OutputFields, Port,
    RetryBehavior, Rule, SideEffect,
};

lf_core::word_enum!(
    /// The catalog's categories, in the original's order.
    Category, "category", [
        Lens = "lens",
        Trigger = "trigger",
        Logic = "logic",
        Data = "data",
        AiPrimitive = "ai_primitive",
        Battle = "battle",
        Storage = "storage",
        Communication = "communication",
        Integration = "integration",
        /// Kept for the original's category list; no media type runs here.
        Media = "media",
        Utility = "utility",
    ]
);

/// The catalog: its entries in category order, and an index by type name
/// and alias.
pub struct Catalog {
    entries: Vec<NodeTypeSpec>,
    index: crate::graph::FastMap<&'static str, usize>,
    /// Every provider a connector of an entry may use, sorted, once each.
    providers: Vec<&'static str>,
}

static CATALOG: LazyLock<Catalog> = LazyLock::new(|| Catalog::new(entries::all()));

/// The node catalog of this server.
pub fn catalog() -> &'static Catalog {
    &CATALOG
}

impl Catalog {
    fn new(mut entries: Vec<NodeTypeSpec>) -> Self {
        entries.sort_by_key(|e| e.category);
        let mut index = crate::graph::FastMap::default();
        for (i, e) in entries.iter().enumerate() {
            for name in std::iter::once(&e.node_type).chain(e.aliases.iter()) {
                let clash = index.insert(*name, i);
                assert!(clash.is_none(), "node type or alias {name} is declared twice");
            }
        }
        let mut providers: Vec<&'static str> =
            entries.iter().flat_map(|e| e.connector.providers().iter().copied()).collect();
        providers.sort_unstable();
        providers.dedup();
        Catalog { entries, index, providers }
    }

    /// The providers saved connections may have: those the entries'
    /// connectors name (`http`, `slack`, `smtp`...), sorted.
    pub fn providers(&self) -> &[&'static str] {
        &self.providers
    }

    /// Every entry, in category order, then declaration order.
    pub fn entries(&self) -> &[NodeTypeSpec] {
        &self.entries
    }

    /// The entry of `name`, a type or one of its aliases.
    pub fn get(&self, name: &str) -> Option<&NodeTypeSpec> {
        self.index.get(name).map(|i| &self.entries[*i])
    }

    /// The entries of `category` (none for a category given as an unknown
    /// word: `list_workflow_node_types` answers an empty list, not an error).
    pub fn in_category(&self, category: &str) -> impl Iterator<Item = &NodeTypeSpec> {
        let c = Category::from_word(category);
        self.entries.iter().filter(move |e| Some(e.category) == c)
    }

    /// The trigger types (the catalog's `trigger` category).
    pub fn is_trigger(&self, name: &str) -> bool {
        self.get(name).is_some_and(|e| e.category == Category::Trigger)
    }

    /// Entries whose type, display name, description, category, aliases
    /// or capabilities contain `query` (case-insensitive).
    pub fn search(&self, query: &str) -> Vec<&NodeTypeSpec> {
        let q = query.trim().to_lowercase();
        self.entries
            .iter()
            .filter(|e| {
                let hay = [e.node_type, e.display_name, e.description, e.category.as_str()];
                hay.iter()
                    .chain(e.aliases.iter())
                    .chain(e.capabilities.iter())
                    .any(|h| h.to_lowercase().contains(&q))
            })
            .collect()
    }

    /// Up to `n` type names closest to `name` (for "did you mean"): types
    /// and aliases by edit distance, a shared word counting as close; each
    /// result is a canonical type name, at most once.
    pub fn closest(&self, name: &str, n: usize) -> Vec<&'static str> {
        let name: String = name.chars().take(100).collect::<String>().to_lowercase();
        let words: Vec<&str> = name.split(['_', '-', ' ']).filter(|w| w.len() > 2).collect();
        let mut scored: Vec<(usize, usize, &'static str)> = Vec::new();
        for (i, e) in self.entries.iter().enumerate() {
            let best = std::iter::once(&e.node_type)
                .chain(e.aliases.iter())
                .map(|cand| {
                    let d = edit_distance(&name, cand);
                    let shares = cand.split('_').any(|w| words.contains(&w));
                    if shares { d.min(cand.len() / 2) } else { d }
                })
                .min()
                .unwrap_or(usize::MAX);
            scored.push((best, i, e.node_type));
        }
        scored.sort();
        let cutoff = (name.len() / 2).max(3);
        scored.into_iter().filter(|(d, _, _)| *d <= cutoff).take(n).map(|(_, _, t)| t).collect()
    }
}

/// Levenshtein distance over bytes (type names are ASCII).
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = if ca == cb { prev } else { 1 + prev.min(cur).min(row[j]) };
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookups() {
        let c = catalog();
        assert_eq!(c.get("schedule_trigger").unwrap().category, Category::Trigger);
        assert_eq!(c.in_category("trigger").count(), 5);
        assert_eq!(c.in_category("not_a_real_category").count(), 0);
        assert!(c.is_trigger("manual_trigger") && !c.is_trigger("http_request") && !c.is_trigger("nope"));
        for (q, want) in [
            ("email", "email_send"),
            ("battle", "battle_create"),
            ("transform", "data_mapper"),
            ("rss", "rss_feed"),
        ] {
            assert!(c.search(q).iter().any(|e| e.node_type == want), "{q}");
        }
    }

    #[test]
    fn closest_names_the_likely_type() {
        let c = catalog();
        assert_eq!(c.closest("slack_send", 3)[0], "slack_notify");
        assert_eq!(c.closest("http_requst", 3)[0], "http_request");
        assert!(c.closest("notion_write", 3).len() <= 3);
        assert!(c.closest("zzzzzzzzzzzzzzzzzz", 3).is_empty());
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }

    #[test]
    fn every_category_but_media_has_types() {
        for cat in Category::ALL {
            let n = catalog().in_category(cat.as_str()).count();
            assert_eq!(n == 0, *cat == Category::Media, "{cat}: {n}");
        }
    }
}
