//! MCP resources: every lens, workflow and battle the caller may read, listed a page
//! at a time across kinds (`resources/list`), the URI templates that name
//! them (`resources/templates/list`), and each read as a Markdown
//! [`Document`] (`resources/read`). [`crate::LfServer`]'s `ServerHandler`
//! answers the three methods with these; rmcp carries them (they take no
//! direct path).
//!
//! Caching hints (`ttlMs`, `cacheScope`, MCP 2026-07-28), given to clients
//! of that era: the templates are the same for everyone and change only
//! with the server ([`TEMPLATES_HINT`]); a listing is the caller's own
//! ([`LIST_HINT`]); a read may be shared when every caller of the server
//! may read the same thing ([`read_hint`]). Listings and reads stay fresh
//! for [`FRESH_MS`] only: the server sends no change notifications that
//! could end a longer freshness, so a lens made or changed through a tool
//! shows on the next turn, while a burst of reads in one turn is served
//! once. Each listed resource also carries `annotations.lastModified`,
//! which every era reads.

use lf_battle::{BattleFilter, BattleSummary};
use lf_core::{LfResult, PageRequest, Principal};
use lf_lens::{Lens, LensFilter};
use lf_workflow::{Workflow, WorkflowFilter};
use rmcp::model::{Annotations, CacheScope, Resource, ResourceTemplate};

use crate::catalog::services::Services;
use crate::mcp::documents::{DocId, Document};

/// Resources per `resources/list` page.
pub(crate) const PAGE: u32 = 100;

/// The MIME type of every document.
pub(crate) const MIME: &str = "text/markdown";

/// How long and by whom a result may be cached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Hint {
    pub ttl_ms: u64,
    pub scope: CacheScope,
}

/// `resources/templates/list`: fixed by the server's build.
pub(crate) const TEMPLATES_HINT: Hint = Hint { ttl_ms: 3_600_000, scope: CacheScope::Public };

/// How long a listing or a read stays fresh.
pub(crate) const FRESH_MS: u64 = 5_000;

/// `resources/list`: what this caller may read, which a lens created or
/// shared a moment ago changes.
pub(crate) const LIST_HINT: Hint = Hint { ttl_ms: FRESH_MS, scope: CacheScope::Private };

/// `resources/read` of `doc`, which new versions and a battle's progress
/// change: shared only when every caller may read it.
pub(crate) fn read_hint(doc: &Document) -> Hint {
    Hint { ttl_ms: FRESH_MS, scope: if doc.shared { CacheScope::Public } else { CacheScope::Private } }
}

/// The URI templates of every kind, of the experiments' exports and of
/// the charts.
pub(crate) fn templates() -> Vec<ResourceTemplate> {
    [
        (
            "lenserfight://lenses/{lens_id}",
            "lens",
            "A lens: its head version's template, parameters and facts.",
        ),
        (
            "lenserfight://lenses/{lens_id}{?label}",
            "lens_by_label",
            "The version of a lens a label (production, staging) points at.",
        ),
        (
            "lenserfight://workflows/{workflow_id}",
            "workflow",
            "A workflow: its head version's steps in the order they run, and its connections.",
        ),
        (
            "lenserfight://battles/{battle_id}",
            "battle",
            "A battle: its task, contenders, submissions and, once closed, standings.",
        ),
    ]
    .into_iter()
    .map(|(uri, name, description)| (uri, name, description, MIME))
    .chain(crate::mcp::exports::TEMPLATES)
    .chain(crate::mcp::charts::TEMPLATES)
    .map(|(uri, name, description, mime)| {
        ResourceTemplate::new(uri, name).with_description(description).with_mime_type(mime)
    })
    .collect()
}

/// The kinds, in the order a listing goes through them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Lenses,
    Workflows,
    Battles,
}

impl Kind {
    const ALL: [Kind; 3] = [Kind::Lenses, Kind::Workflows, Kind::Battles];

    fn as_str(self) -> &'static str {
        match self {
            Kind::Lenses => "lenses",
            Kind::Workflows => "workflows",
            Kind::Battles => "battles",
        }
    }

    fn next(self) -> Option<Kind> {
        Self::ALL.iter().copied().skip_while(|k| *k != self).nth(1)
    }
}

/// Where a listing goes on: a kind and an offset in it, written
/// `lenses:100`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Cursor {
    kind: Kind,
    offset: u64,
}

impl Cursor {
    const START: Cursor = Cursor { kind: Kind::Lenses, offset: 0 };

    /// A cursor this module wrote; `None` for anything else.
    pub(crate) fn parse(s: &str) -> Option<Self> {
        let (kind, offset) = s.split_once(':')?;
        let kind = Kind::ALL.into_iter().find(|k| k.as_str() == kind)?;
        let offset = offset.parse().ok().filter(|o| *o <= PageRequest::MAX_OFFSET)?;
        Some(Self { kind, offset })
    }
}

impl std::fmt::Display for Cursor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.kind.as_str(), self.offset)
    }
}

/// One page of everything `p` may read, from `cursor` (the start when
/// `None`): at most [`PAGE`] resources and where the next page starts. A
/// page that ends a kind goes on with the next, so only the last page
/// of all is short.
pub(crate) async fn list(
    services: &Services,
    p: &Principal,
    cursor: Option<Cursor>,
) -> LfResult<(Vec<Resource>, Option<Cursor>)> {
    let mut at = cursor.unwrap_or(Cursor::START);
    let mut resources = Vec::new();
    loop {
        let room = PAGE - resources.len() as u32;
        let page = PageRequest::new(Some(i64::from(room)), Some(at.offset as i64))?;
        let (items, has_more) = page_of(services, p, at.kind, page).await?;
        let got = items.len() as u64;
        resources.extend(items);
        if has_more {
            return Ok((resources, Some(Cursor { kind: at.kind, offset: at.offset + got })));
        }
        let Some(kind) = at.kind.next() else { return Ok((resources, None)) };
        at = Cursor { kind, offset: 0 };
        if resources.len() as u32 == PAGE {
            return Ok((resources, Some(at)));
        }
    }
}

/// A page of one kind, as resources, and whether that kind has more.
async fn page_of(
    services: &Services,
    p: &Principal,
    kind: Kind,
    page: PageRequest,
) -> LfResult<(Vec<Resource>, bool)> {
    Ok(match kind {
        Kind::Lenses => {
            let found = services.lens.list(p, &LensFilter::default(), page).await?;
            (found.items.iter().map(lens_resource).collect(), found.has_more())
        }
        Kind::Workflows => {
            let found = services.workflow.list(p, &WorkflowFilter::default(), page).await?;
            (found.items.iter().map(workflow_resource).collect(), found.has_more())
        }
        Kind::Battles => {
            let found = services.battle.list(p, &BattleFilter::default(), page).await?;
            (found.items.iter().map(battle_resource).collect(), found.has_more())
        }
    })
}

fn resource(id: DocId, name: &str, description: String, updated: lf_core::Timestamp) -> Resource {
    let mut annotations = Annotations::default();
    annotations.last_modified = Some(updated.to_rfc3339());
    Resource::new(id.uri(), name)
        .with_description(description)
        .with_mime_type(MIME)
        .with_annotations(annotations)
}

fn lens_resource(l: &Lens) -> Resource {
    let description = match &l.description {
        Some(d) => format!("Lens {}: {d}", l.head_semver),
        None => format!("Lens {}, {}", l.head_semver, l.visibility.as_str()),
    };
    resource(DocId::Lens(l.id), l.title.as_str(), description, l.updated_at)
}

fn workflow_resource(w: &Workflow) -> Resource {
    let description = match &w.description {
        Some(d) => format!("Workflow v{}: {d}", w.head_version),
        None => format!("Workflow v{}, {}", w.head_version, w.visibility.as_str()),
    };
    resource(DocId::Workflow(w.id), w.title.as_str(), description, w.updated_at)
}

fn battle_resource(s: &BattleSummary) -> Resource {
    let b = &s.battle;
    let description = format!(
        "Battle, {}, judged by {}, {} contenders",
        b.status.as_str(),
        b.judging_mode.as_str(),
        s.contenders
    );
    resource(DocId::Battle(b.id), b.title.as_str(), description, b.updated_at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_refuse_the_rest() {
        let some = [
            Cursor::START,
            Cursor { kind: Kind::Workflows, offset: 7 },
            Cursor { kind: Kind::Battles, offset: 200 },
        ];
        for c in some {
            assert_eq!(Cursor::parse(&c.to_string()), Some(c));
        }
        for bad in ["", "100", "lenses", "lenses:", "lenses:-1", "lenses:x", "spells:0", "battles:1000001"] {
            assert_eq!(Cursor::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn kinds_follow_one_another_once() {
        assert_eq!(Kind::Lenses.next(), Some(Kind::Workflows));
        assert_eq!(Kind::Workflows.next(), Some(Kind::Battles));
        assert_eq!(Kind::Battles.next(), None);
    }

    #[test]
    fn templates_name_every_kind_by_its_uri() {
        let uris: Vec<String> = templates().into_iter().map(|t| t.uri_template).collect();
        assert_eq!(
            uris,
            [
                "lenserfight://lenses/{lens_id}",
                "lenserfight://lenses/{lens_id}{?label}",
                "lenserfight://workflows/{workflow_id}",
                "lenserfight://battles/{battle_id}",
                "lenserfight://experiments/{experiment_id}/results.jsonl",
                "lenserfight://experiments/{experiment_id}/results.csv",
                "lenserfight://battles/{battle_id}/chart.svg",
                "lenserfight://experiments/{experiment_id}/chart.svg",
                "lenserfight://battles/{battle_id}/chart.png",
                "lenserfight://experiments/{experiment_id}/chart.png",
            ]
        );
    }
}
