//! What the caller may read, as documents: a lens, a workflow or a battle
//! named by one id ([`DocId`]), read through its domain service with the caller's
//! principal (so visibility is the store's, as everywhere) and written as one
//! Markdown text with its metadata ([`Document`]). MCP resources
//! (`resources/read`) and the `fetch` tool serve the same documents.

use std::fmt;

use lf_battle::BattleView;
use lf_core::{BattleId, LensId, LfError, LfResult, Principal, WorkflowId};
use lf_lens::{LabelName, LensView, Visibility};
use lf_workflow::{Described, VersionSelector};
use serde_json::{Map, Value, json};

use crate::catalog::services::Services;

/// The scheme of every resource URI.
pub(crate) const SCHEME: &str = "lenserfight://";

/// One readable thing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DocId {
    Lens(LensId),
    /// The version of a lens a label points at (`latest`: the head).
    LensAt(LensId, LabelName),
    Workflow(WorkflowId),
    Battle(BattleId),
}

impl DocId {
    /// `kind:<uuid>`, as `search` names it.
    pub(crate) fn short(self) -> String {
        match self {
            DocId::Lens(id) | DocId::LensAt(id, _) => format!("lens:{id}"),
            DocId::Workflow(id) => format!("workflow:{id}"),
            DocId::Battle(id) => format!("battle:{id}"),
        }
    }

    /// The resource URI, `lenserfight://lenses/<uuid>`.
    pub(crate) fn uri(self) -> String {
        self.to_string()
    }

    /// A resource URI, exactly as [`DocId::uri`] writes it.
    pub(crate) fn from_uri(uri: &str) -> Option<Self> {
        let (kind, id) = uri.strip_prefix(SCHEME)?.split_once('/')?;
        if let Some((id, query)) = id.split_once('?') {
            let label = query.strip_prefix("label=")?;
            return match kind {
                "lenses" => Some(DocId::LensAt(
                    LensId::parse("uri", id).ok()?,
                    LabelName::parse("label", label).ok()?,
                )),
                _ => None,
            };
        }
        match kind {
            "lenses" => LensId::parse("uri", id).ok().map(DocId::Lens),
            "workflows" => WorkflowId::parse("uri", id).ok().map(DocId::Workflow),
            "battles" => BattleId::parse("uri", id).ok().map(DocId::Battle),
            _ => None,
        }
    }

    /// A short id or a resource URI. INVALID_ARGUMENT naming `field` for
    /// anything else.
    pub(crate) fn parse(field: &str, s: &str) -> LfResult<Self> {
        let short = s.split_once(':').and_then(|(kind, id)| match kind {
            "lens" => LensId::parse(field, id).ok().map(DocId::Lens),
            "workflow" => WorkflowId::parse(field, id).ok().map(DocId::Workflow),
            "battle" => BattleId::parse(field, id).ok().map(DocId::Battle),
            _ => None,
        });
        short.or_else(|| Self::from_uri(s)).ok_or_else(|| {
            LfError::invalid_argument(format!(
                "{field} must be an id that search returned, like lens:<uuid>, workflow:<uuid> or battle:<uuid>, or a {SCHEME} resource URI; got {}",
                lf_core::clip(s, 80)
            ))
            .with_field(field)
        })
    }
}

impl fmt::Display for DocId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DocId::Lens(id) => write!(f, "{SCHEME}lenses/{id}"),
            DocId::LensAt(id, label) => write!(f, "{SCHEME}lenses/{id}?label={label}"),
            DocId::Workflow(id) => write!(f, "{SCHEME}workflows/{id}"),
            DocId::Battle(id) => write!(f, "{SCHEME}battles/{id}"),
        }
    }
}

/// One readable thing as text.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Document {
    pub title: String,
    /// Markdown: a heading, the facts, then the content in fenced blocks.
    pub text: String,
    /// The facts as JSON (`kind` first).
    pub metadata: Map<String, Value>,
    /// Whether every caller of this server may read it (a public or
    /// community lens, a public or unlisted workflow (whose id is in the
    /// cache key), a battle past its draft): a cache may share it.
    pub shared: bool,
}

/// The document `id` names, as `p` may read it: NOT_FOUND when it does not
/// exist or is out of `p`'s reach, alike.
pub(crate) async fn read(services: &Services, p: &Principal, id: DocId) -> LfResult<Document> {
    Ok(match id {
        DocId::Lens(lens) => lens_document(&services.lens.get(p, lens).await?, None),
        DocId::LensAt(lens, label) => {
            let which = lf_lens::VersionSelector::label("label", label.as_str())?;
            lens_document(&services.lens.view(p, lens, which).await?, Some(label))
        }
        DocId::Workflow(w) => {
            workflow_document(&services.workflow.describe(p, w, VersionSelector::Head).await?)
        }
        DocId::Battle(battle) => battle_document(&services.battle.view(p, battle).await?),
    })
}

/// A lens: its head version's template and parameters, or those of the
/// version `label` points at.
fn lens_document(view: &LensView, label: Option<LabelName>) -> Document {
    let (l, v) = (&view.lens, &view.version);
    let id = DocId::Lens(l.id);
    let params: Vec<String> = v
        .params
        .iter()
        .map(|p| format!("{} ({})", p.label, if p.optional { "optional" } else { "required" }))
        .collect();
    let mut text = heading(l.title.as_str(), l.description.as_ref().map(|d| d.as_str()));
    text.push_str(&format!(
        "- Lens {}, version {}{}, {}, {}\n- Parameters: {}\n- Updated {}\n\n## Template\n\n{}",
        id.short(),
        v.semver,
        label.map_or_else(String::new, |l| format!(" (label {l})")),
        l.visibility.as_str(),
        l.status.as_str(),
        if params.is_empty() { "none".to_owned() } else { params.join(", ") },
        l.updated_at.to_rfc3339(),
        fenced(v.body.as_str()),
    ));
    let mut metadata = json!({
        "kind": "lens",
        "lens_id": l.id.to_string(),
        "lenser_id": l.owner.to_string(),
        "by_agent": l.agent.map(|a| a.to_string()),
        "visibility": l.visibility.as_str(),
        "status": l.status.as_str(),
        "semver": v.semver.to_string(),
        "version_id": v.id.to_string(),
        "parameters": v.params.iter().map(|p| p.label.as_str()).collect::<Vec<_>>(),
        "parent_lens_id": l.parent_lens_id.map(|p| p.to_string()),
        "created_at": l.created_at.to_rfc3339(),
        "updated_at": l.updated_at.to_rfc3339(),
    });
    if let Some(label) = label {
        metadata["label"] = Value::from(label.as_str());
    }
    Document {
        title: l.title.to_string(),
        text,
        metadata: object(metadata),
        shared: matches!(l.visibility, Visibility::Public | Visibility::Community),
    }
}

/// A workflow: its head version described, steps in the order they run and
/// connections by step key (no config, and no saved connection's ref: a
/// step shows the provider it uses).
fn workflow_document(d: &Described) -> Document {
    let w = &d.workflow;
    let id = DocId::Workflow(w.id);
    let mut text = heading(w.title.as_str(), w.description.as_ref().map(|d| d.as_str()));
    let archived = if w.archived_at.is_some() { ", archived" } else { "" };
    text.push_str(&format!(
        "- Workflow {}, version {}, {}{archived}\n- Updated {}\n\n{}\n",
        id.short(),
        d.version,
        w.visibility.as_str(),
        w.updated_at.to_rfc3339(),
        d.summary,
    ));
    if !d.nodes.is_empty() {
        text.push_str("\n## Steps\n\n");
        for (i, n) in d.nodes.iter().enumerate() {
            let mut facts = vec![n.kind.as_str().to_owned(), n.node_type.clone()];
            facts.extend(n.lens_id.map(|l| format!("lens {}", DocId::Lens(l).short())));
            facts.extend(n.model.as_ref().map(|m| format!("model {m}")));
            facts.extend(n.connector_provider.as_ref().map(|p| format!("through a saved {p} connection")));
            text.push_str(&format!("{}. `{}` {} ({})\n", i + 1, n.key, n.name, facts.join(", ")));
        }
    }
    if !d.connections.is_empty() {
        text.push_str("\n## Connections\n\n");
        for c in &d.connections {
            let when = if c.conditional { " when its condition holds" } else { "" };
            text.push_str(&format!(
                "- `{}` {} → `{}` {}{when}\n",
                c.from, c.output_key, c.to, c.input_parameter
            ));
        }
    }
    let metadata = json!({
        "kind": "workflow",
        "workflow_id": w.id.to_string(),
        "lenser_id": w.owner.to_string(),
        "by_agent": w.agent.map(|a| a.to_string()),
        "visibility": w.visibility.as_str(),
        "version": d.version,
        "steps": d.node_count,
        "connections": d.edge_count,
        "triggers": d.triggers.iter().map(|(_, t)| t.as_str()).collect::<Vec<_>>(),
        "created_at": w.created_at.to_rfc3339(),
        "updated_at": w.updated_at.to_rfc3339(),
        "archived_at": w.archived_at.map(|t| t.to_rfc3339()),
    });
    Document {
        title: w.title.to_string(),
        text,
        metadata: object(metadata),
        shared: w.visibility != lf_workflow::Visibility::Private,
    }
}

/// A battle: its settings, task, contenders, submissions and, once closed,
/// its standings.
fn battle_document(view: &BattleView) -> Document {
    let s = &view.sheet;
    let b = &s.battle;
    let id = DocId::Battle(b.id);
    let name = |contender| {
        s.contenders
            .iter()
            .find(|c| c.id == contender)
            .map_or_else(|| "?".to_owned(), |c| format!("{}: {}", c.slot, c.display_name))
    };
    let mut text = format!(
        "# {}\n\n- Battle {}: {}, {}, judged by {}, {} of {} contenders\n",
        b.title,
        id.short(),
        b.status.as_str(),
        b.battle_type.as_str(),
        b.judging_mode.as_str(),
        s.contenders.len(),
        b.max_contenders.get(),
    );
    if let Some(w) = b.winner {
        text.push_str(&format!("- Winner: {}\n", name(w)));
    }
    text.push_str(&format!(
        "- Updated {}\n\n## Task\n\n{}",
        b.updated_at.to_rfc3339(),
        fenced(b.task_prompt.as_str())
    ));
    if !s.contenders.is_empty() {
        text.push_str("\n## Contenders\n\n");
        for c in &s.contenders {
            let state = if s.submission_of(c.id).is_some() { "submitted" } else { "not submitted" };
            text.push_str(&format!(
                "- {}: {} ({}), {state}\n",
                c.slot,
                c.display_name,
                c.contender_type.as_str()
            ));
        }
    }
    for sub in &s.submissions {
        text.push_str(&format!(
            "\n## Submission of {}\n\n{}",
            name(sub.contender_id),
            fenced(sub.text.as_str())
        ));
    }
    if !s.standings.is_empty() {
        text.push_str("\n## Standings\n\n");
        for st in &s.standings {
            let score = st.score.map(|x| format!(", score {x}")).unwrap_or_default();
            text.push_str(&format!(
                "{}. {} (rank {}{score}, {} votes)\n",
                st.position,
                name(st.contender_id),
                st.rank,
                st.votes
            ));
        }
    }
    let metadata = json!({
        "kind": "battle",
        "battle_id": b.id.to_string(),
        "creator_id": b.creator.to_string(),
        "by_agent": b.agent.map(|a| a.to_string()),
        "status": b.status.as_str(),
        "battle_type": b.battle_type.as_str(),
        "judging_mode": b.judging_mode.as_str(),
        "contenders": s.contenders.len(),
        "submissions": s.submissions.len(),
        "winner_id": b.winner.map(|w| w.to_string()),
        "created_at": b.created_at.to_rfc3339(),
        "updated_at": b.updated_at.to_rfc3339(),
    });
    Document {
        title: b.title.to_string(),
        text,
        metadata: object(metadata),
        shared: b.status != lf_battle::BattleStatus::Draft,
    }
}

/// A document's title as its heading, and its description under it.
fn heading(title: &str, description: Option<&str>) -> String {
    match description {
        Some(d) => format!("# {title}\n\n{d}\n\n"),
        None => format!("# {title}\n\n"),
    }
}

fn object(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// `body` in a fenced block whose fence is longer than any run of
/// backticks inside it, so the block ends where it should.
fn fenced(body: &str) -> String {
    let longest = body.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    let newline = if body.ends_with('\n') { "" } else { "\n" };
    format!("{fence}text\n{body}{newline}{fence}\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_uris_round_trip() {
        let lens = DocId::Lens(LensId::new());
        let battle = DocId::Battle(BattleId::new());
        let workflow = DocId::Workflow(WorkflowId::new());
        assert!(
            workflow.uri().starts_with("lenserfight://workflows/")
                && workflow.short().starts_with("workflow:")
        );
        for id in [lens, workflow, battle] {
            assert_eq!(DocId::parse("id", &id.short()).unwrap(), id);
            assert_eq!(DocId::parse("id", &id.uri()).unwrap(), id);
            assert_eq!(DocId::from_uri(&id.uri()), Some(id));
        }
        assert!(lens.uri().starts_with("lenserfight://lenses/"));
        assert!(battle.short().starts_with("battle:"));
        let DocId::Lens(id) = lens else { unreachable!() };
        let at = DocId::LensAt(id, LabelName::parse("label", "production").unwrap());
        assert_eq!(at.uri(), format!("lenserfight://lenses/{id}?label=production"));
        assert_eq!(DocId::from_uri(&at.uri()), Some(at));
        assert_eq!(DocId::parse("id", &at.uri()).unwrap(), at);
    }

    #[test]
    fn anything_else_is_not_an_id() {
        let uuid = LensId::new().to_string();
        for bad in [
            String::new(),
            uuid.clone(),
            format!("spell:{uuid}"),
            format!("lens:{uuid}x"),
            format!("lens: {uuid}"),
            format!("lenserfight://lenses/{uuid}/versions"),
            format!("lenserfight://lenses/{uuid}?label="),
            format!("lenserfight://lenses/{uuid}?label=Prod"),
            format!("lenserfight://lenses/{uuid}?version=1.0.0"),
            format!("lenserfight://workflows/{uuid}?label=production"),
            format!("lenserfight://lens/{uuid}"),
            format!("https://lenserfight/lenses/{uuid}"),
            "test://static-text".to_owned(),
        ] {
            let err = DocId::parse("id", &bad).unwrap_err();
            assert_eq!(err.code(), lf_core::ErrorCode::InvalidArgument, "{bad}");
            assert!(DocId::from_uri(&bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn a_fence_outlasts_the_backticks_inside() {
        assert_eq!(fenced("plain"), "```text\nplain\n```\n");
        assert_eq!(fenced("a ```` b\n"), "`````text\na ```` b\n`````\n");
    }
}
