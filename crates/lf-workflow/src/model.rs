//! Workflow types. Every value is parsed once at the edge and valid from
//! then on; a node's `parameters` and `config` are JSON objects because a
//! workflow's data is JSON.

use lf_core::{LensId, LenserId, LfError, LfResult, Timestamp, VersionId, WorkflowId, check_text};
use serde_json::{Map, Value};

use crate::condition::Condition;
use crate::path::Pick;

lf_core::id_newtype!(
    /// One immutable version of a workflow.
    WorkflowVersionId
);
lf_core::id_newtype!(
    /// One node of one workflow version (made by the server, never by the client).
    NodeId
);
lf_core::id_newtype!(
    /// One edge (connection) of one workflow version.
    EdgeId
);

/// A JSON object: a node's parameters or configuration.
pub type JsonObject = Map<String, Value>;

lf_core::word_enum!(
    /// Who may read a workflow besides its owner.
    Visibility, "visibility", [
        /// Everyone reads it, and it is listed to everyone.
        Public = "public",
        /// Anyone who has its id reads it; it is listed to its owner only.
        Unlisted = "unlisted",
        /// Its owner only.
        Private = "private",
    ]
);

impl Default for Visibility {
    /// The spec's default for `create_workflow`.
    fn default() -> Self {
        Visibility::Private
    }
}

lf_core::word_enum!(
    /// What a step is responsible for.
    NodeKind, "kind", [
        /// Starts a run; its output is the run's `inputs`.
        Trigger = "trigger",
        /// Runs a lens through the model provider.
        Lens = "lens",
        /// A deterministic or outside action of the node catalog.
        Tool = "tool",
    ]
);

lf_core::word_enum!(
    /// How several values wired into one input parameter are combined
    /// (see the crate docs, "Data flow").
    MergeStrategy, "merge_strategy", [
        /// The last wired value wins (the default).
        LastWriteWins = "last_write_wins",
        /// Texts joined by a blank line, the configured value first.
        Concat = "concat",
        /// An array of the values, the configured value first.
        Array = "array",
        /// An object keyed by the upstream step's key.
        JsonObject = "json_object",
    ]
);

/// A workflow's title, description and a version's changelog follow the
/// rules a lens's do: one definition serves both.
pub use lf_core::{Changelog, Description, Title};

/// Parses a trimmed text of `min..=max` characters for the argument `field`.
fn text(field: &str, s: &str, min: usize, max: usize) -> LfResult<String> {
    let s = s.trim();
    check_text(field, s, min, max)?;
    Ok(s.to_owned())
}

/// Declares a text newtype parsed with a field path (`steps[3].name`),
/// since the same type appears at many places of one blueprint.
macro_rules! field_text {
    ($(#[$doc:meta])* $name:ident, $min:expr, $max:expr) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(String);

        impl $name {
            /// Most characters allowed.
            pub const MAX_CHARS: usize = $max;
            /// Trims, then checks length, blankness and NUL; `field` names the argument.
            pub fn parse(field: &str, s: &str) -> LfResult<Self> {
                text(field, s, $min, $max).map(Self)
            }
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

field_text!(
    /// A step's human-readable canvas label: 1 to 200 characters.
    StepName, 1, 200
);
field_text!(
    /// The input parameter a connection feeds: 1 to 200 characters. For a
    /// lens step it is one of the lens's parameter labels (matched
    /// case-insensitively); a tool takes inputs under any name.
    InputParameter, 1, 200
);
field_text!(
    /// What a connector is used for (`database`, `issues`): 1 to 100 characters.
    Capability, 1, 100
);
field_text!(
    /// The name of a saved connection of the workflow's owner: 1 to 200 characters.
    ConnectionRef, 1, 200
);

/// Declares a lowercase identifier: 1 to `$max` bytes that `$ok` accepts.
/// The error says `{field} must be {what}; got "…".{hint}`.
macro_rules! ident_text {
    ($(#[$doc:meta])* $name:ident, $max:expr, $ok:expr, $what:literal, $hint:literal) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(String);

        impl $name {
            pub const MAX_CHARS: usize = $max;

            pub fn parse(field: &str, s: &str) -> LfResult<Self> {
                let ok: fn(&[u8]) -> bool = $ok;
                if s.is_empty() || s.len() > Self::MAX_CHARS || !ok(s.as_bytes()) {
                    return Err(LfError::invalid_argument(format!(
                        concat!("{field} must be ", $what, "; got {}.", $hint),
                        LfError::excerpt(s),
                        field = field,
                        max = Self::MAX_CHARS
                    ))
                    .with_field(field));
                }
                Ok(Self(s.to_owned()))
            }
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

fn lower_word(b: &u8, dash: bool) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'_' || (dash && *b == b'-')
}

ident_text!(
    /// A step's readable local reference: `^[a-z][a-z0-9_-]*$`, 1 to 64 characters.
    StepKey, 64,
    |b| b[0].is_ascii_lowercase() && b.iter().all(|c| lower_word(c, true)),
    "1 to {max} characters of a-z, 0-9, _ and -, starting with a letter",
    " Use a readable lowercase key such as start or research_step."
);
ident_text!(
    /// A node type's name as stored: 1 to 100 characters of `a-z`, `0-9`
    /// and `_`. Whether the catalog knows it is the validator's question,
    /// not the parser's: a stored version keeps its types even if a later
    /// server drops one.
    NodeTypeName, 100,
    |b| b.iter().all(|c| lower_word(c, false)),
    "a node type of the catalog such as manual_trigger or http_request (1 to {max} characters of a-z, 0-9 and _)",
    " Call list_workflow_node_types to see them."
);
ident_text!(
    /// The kind of service a connector talks to: 1 to 64 characters of
    /// `a-z`, `0-9`, `_` and `-` (`http`, `slack`, `smtp`, `github`).
    Provider, 64,
    |b| b.iter().all(|c| lower_word(c, true)),
    "a provider name such as slack, smtp or http (1 to {max} characters of a-z, 0-9, _ and -)",
    ""
);

/// A saved connection a step uses, named, never a secret.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Connector {
    pub provider: Provider,
    pub connection_ref: ConnectionRef,
    pub capability: Option<Capability>,
}

/// A lens a step runs: its head version at run time, or the pinned one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LensBinding {
    pub lens_id: LensId,
    pub version_id: Option<VersionId>,
}

/// Where the canvas draws a node.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Position {
    pub x: f64,
    pub y: f64,
}

impl Position {
    /// The layout of the original builder: a row, every other step lower.
    pub fn of_ordinal(i: u32) -> Self {
        Position { x: 120.0 + f64::from(i) * 260.0, y: 160.0 + f64::from(i % 2) * 120.0 }
    }
}

/// One step of a workflow version.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    pub id: NodeId,
    /// Unique within the version.
    pub key: StepKey,
    pub kind: NodeKind,
    pub name: StepName,
    /// The catalog type, canonical (never an alias): a trigger type for
    /// triggers, `lens` for lens steps.
    pub node_type: NodeTypeName,
    /// Set for lens steps only.
    pub lens: Option<LensBinding>,
    /// User-filled lens parameters or tool values, merged with wired inputs.
    pub parameters: JsonObject,
    /// Non-secret configuration of the node type.
    pub config: JsonObject,
    pub connector: Option<Connector>,
    pub position: Position,
    /// The step's place in the blueprint, from 0.
    pub ordinal: u32,
}

/// One connection: a pick of an upstream output fed into a downstream input.
#[derive(Clone, Debug, PartialEq)]
pub struct Edge {
    pub id: EdgeId,
    pub from: NodeId,
    /// Which part of the upstream output flows (`output`: all of it).
    pub output_key: Pick,
    pub to: NodeId,
    pub input_parameter: InputParameter,
    /// When set, the connection carries a value only when it holds on the
    /// upstream output.
    pub condition: Option<Condition>,
    /// How values wired into the same parameter combine; `None`: the default.
    pub merge_strategy: Option<MergeStrategy>,
    /// The connection's place in the blueprint, from 0.
    pub ordinal: u32,
}

/// A workflow: metadata, and the number of its newest version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Workflow {
    pub id: WorkflowId,
    pub owner: LenserId,
    pub title: Title,
    pub description: Option<Description>,
    pub visibility: Visibility,
    /// Whether every reader of the workflow reads every run of it; when
    /// false (the default) a run is its starter's and the owner's alone
    /// ([`crate::run::RunScope`]).
    pub public_runs: bool,
    /// The newest version.
    pub head_version_id: WorkflowVersionId,
    pub head_version: u32,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    /// Archived workflows are left out of lists; runs and versions are kept.
    pub archived_at: Option<Timestamp>,
    /// The AI Lenser that created it for `owner`; `None` when a person or
    /// the service did.
    pub agent: Option<LenserId>,
}

/// One immutable version: its nodes in ordinal order and its edges in
/// ordinal order.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkflowVersion {
    pub id: WorkflowVersionId,
    pub workflow_id: WorkflowId,
    /// 1, 2, 3… in the order they were made.
    pub number: u32,
    pub changelog: String,
    pub created_by: LenserId,
    /// The AI Lenser that wrote it for `created_by`; `None` when a person
    /// or the service did.
    pub agent: Option<LenserId>,
    pub created_at: Timestamp,
    pub nodes: Vec<Node>,
    pub edges: Vec<Edge>,
}

impl WorkflowVersion {
    pub fn node(&self, id: NodeId) -> Option<&Node> {
        self.nodes.iter().find(|n| n.id == id)
    }
    pub fn summary(&self) -> VersionSummary {
        VersionSummary {
            id: self.id,
            number: self.number,
            changelog: self.changelog.clone(),
            created_by: self.created_by,
            agent: self.agent,
            created_at: self.created_at,
            node_count: self.nodes.len() as u32,
            edge_count: self.edges.len() as u32,
        }
    }
}

/// A version without its graph, as listed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VersionSummary {
    pub id: WorkflowVersionId,
    pub number: u32,
    pub changelog: String,
    pub created_by: LenserId,
    /// The AI Lenser that wrote it, as [`WorkflowVersion::agent`].
    pub agent: Option<LenserId>,
    pub created_at: Timestamp,
    pub node_count: u32,
    pub edge_count: u32,
}

/// Which version of a workflow to read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VersionSelector {
    Head,
    Number(u32),
    Id(WorkflowVersionId),
}

impl VersionSelector {
    /// `None`: the head.
    pub fn from_number(n: Option<u32>) -> Self {
        n.map_or(VersionSelector::Head, VersionSelector::Number)
    }
}

/// Filters of `list_workflows`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WorkflowFilter {
    pub visibility: Option<Visibility>,
    pub owner: Option<LenserId>,
    pub include_archived: bool,
}

/// A partial change to a workflow's metadata. `None` leaves a field as it is.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WorkflowPatch {
    pub title: Option<Title>,
    pub description: Option<Option<Description>>,
    pub visibility: Option<Visibility>,
    pub public_runs: Option<bool>,
    pub archived_at: Option<Option<Timestamp>>,
    pub updated_at: Option<Timestamp>,
}

impl WorkflowPatch {
    pub fn is_noop(&self) -> bool {
        self.title.is_none()
            && self.description.is_none()
            && self.visibility.is_none()
            && self.public_runs.is_none()
            && self.archived_at.is_none()
            && self.updated_at.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_keys() {
        for ok in ["start", "research_step", "a", "b-2", &"x".repeat(64)] {
            assert!(StepKey::parse("key", ok).is_ok(), "{ok}");
        }
        for bad in ["", "Start", "1st", "_a", "with space", "é", &"x".repeat(65), "a.b"] {
            let e = StepKey::parse("steps[0].key", bad).unwrap_err();
            assert!(e.message().contains("Use a readable lowercase key such as start or research_step."));
        }
    }

    #[test]
    fn words_parse_and_list() {
        assert_eq!(Visibility::parse("unlisted").unwrap(), Visibility::Unlisted);
        assert_eq!(Visibility::default(), Visibility::Private);
        let e = Visibility::parse("community").unwrap_err();
        assert_eq!(e.message(), "visibility must be one of public, unlisted, private; got \"community\"");
        assert_eq!(MergeStrategy::parse("concat").unwrap(), MergeStrategy::Concat);
    }

    #[test]
    fn texts_trim_and_bound() {
        assert_eq!(StepName::parse("name", "  Research  ").unwrap().as_str(), "Research");
        assert!(StepName::parse("name", "  ").is_err());
        assert!(InputParameter::parse("p", &"x".repeat(201)).is_err());
        assert!(NodeTypeName::parse("t", "HTTP").is_err());
        assert!(Provider::parse("p", "slack").is_ok());
    }

    #[test]
    fn layout() {
        assert_eq!(Position::of_ordinal(0), Position { x: 120.0, y: 160.0 });
        assert_eq!(Position::of_ordinal(1), Position { x: 380.0, y: 280.0 });
    }
}
