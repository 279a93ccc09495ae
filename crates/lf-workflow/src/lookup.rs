//! What a workflow needs to know about things it does not own: the lenses
//! its lens steps run, the saved connections its steps name, and the
//! egress policy its HTTP steps meet. The service asks through these traits
//! and hands the answers to the pure validator as [`Facts`].
//!
//! lf-workflow does not depend on lf-lens: a workflow needs three facts
//! of a lens (that the caller can read it, its title, its parameters), and
//! a trait keeps this crate usable and testable on its own, as
//! [`lf_core::ModelProvider`] does for battles. The composition root
//! implements [`LensLookup`] over `LensService` in a few lines; every
//! [`crate::ConnectionStore`] answers [`ConnectionLookup`] (one impl, in
//! `connection/store.rs`).

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use lf_core::{LensId, LenserId, LfResult, Reach, VersionId};

use lf_core::LabelName;

use crate::connection::ToolMode;
use crate::model::LensBinding;

/// A lens as a workflow sees it: one version's parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LensFacts {
    pub lens_id: LensId,
    /// The version read: the pinned one, or the head.
    pub version_id: VersionId,
    pub title: String,
    /// In the lens's order.
    pub params: Vec<LensParam>,
    /// Set when the step names a label the lens does not have (these facts
    /// are then its head's, and its parameters are not checked): the labels
    /// it has, by name.
    pub missing_label: Option<Vec<String>>,
}

/// A lens a step runs, as it names it: its head, a pinned version, or the
/// version a label points at (the key of [`Facts::lenses`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LensUse {
    pub lens_id: LensId,
    pub version_id: Option<VersionId>,
    pub label: Option<LabelName>,
}

impl From<LensBinding> for LensUse {
    fn from(b: LensBinding) -> Self {
        LensUse { lens_id: b.lens_id, version_id: b.version_id, label: None }
    }
}

/// One parameter of a lens version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LensParam {
    /// As spelled in the lens. Matched against step parameters and wired
    /// input parameters case-insensitively (lowercased), as lf-lens matches
    /// parameter values.
    pub label: String,
    /// An optional parameter (or one with a default) needs no value.
    pub optional: bool,
}

/// Reads lenses for workflows.
#[async_trait]
pub trait LensLookup: Send + Sync {
    /// The lens `lens_id` at `version` (its head when `None`), as `reach`
    /// may read it.
    ///
    /// MUST return NOT_FOUND when the lens does not exist, is deleted, is
    /// out of `reach`, or `version` is not one of its versions (the same
    /// error in every case). Other failures are INTERNAL.
    async fn lens(&self, reach: Reach, lens_id: LensId, version: Option<VersionId>) -> LfResult<LensFacts>;

    /// The labels of lens `lens_id` as `reach` may read it: each name and
    /// the version it points at. NOT_FOUND as for [`LensLookup::lens`].
    async fn labels(&self, reach: Reach, lens_id: LensId) -> LfResult<Vec<(LabelName, VersionId)>>;
}

/// A saved connection, without its settings or secret.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SavedConnection {
    pub connection_ref: String,
    pub provider: String,
}

/// Reads which connections a lenser has saved.
#[async_trait]
pub trait ConnectionLookup: Send + Sync {
    /// The connections of `owner` whose ref is one of `refs` (refs that are
    /// not saved are simply not in the answer). Never a secret.
    ///
    /// Errors: INTERNAL only.
    async fn saved(&self, owner: LenserId, refs: &[String]) -> LfResult<Vec<SavedConnection>>;

    /// The tools saved with `owner`'s connection `connection_ref` (an
    /// outside MCP server's), each name with its mode. NOT_FOUND when
    /// there is no such connection.
    async fn saved_tools(&self, owner: LenserId, connection_ref: &str) -> LfResult<Vec<(String, ToolMode)>>;
}

/// Why the egress policy refuses a URL (see [`EgressPolicy`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EgressRefusal {
    /// What the host is, in the policy's words (`loopback`, `private (RFC
    /// 1918)`, `cloud metadata`).
    pub reason: String,
    /// The operator's setting with the entry that would open the host
    /// (`LENSERFIGHT_EGRESS_ALLOW=localhost`); `None` when nothing opens it.
    pub opened_by: Option<String>,
}

/// The outbound-HTTP policy of the server a workflow runs on, as far as it
/// judges a URL without a DNS lookup. The composition root fills it from the
/// egress guard that sends the steps' requests (lf-workflow does not depend
/// on it), so that a URL the guard will refuse is named at validation and
/// not only when the run fails.
pub trait EgressPolicy: Send + Sync + fmt::Debug {
    /// Why a request to `url` (as written in a step, with no `[[...]]`
    /// placeholder) would be refused whatever DNS answers: a literal address
    /// in a refused range, `localhost`… `None` when it may be sent, or only
    /// a lookup can tell.
    fn refusal(&self, url: &str) -> Option<EgressRefusal>;
}

/// What the validator may check beyond the graph itself. A check whose
/// facts are absent is not made (and the report says so through
/// `run_ready`, for lenses and connections).
#[derive(Clone, Debug, Default)]
pub struct Facts {
    /// Per lens a step runs (and its pinned version or label): its facts,
    /// or `None` when the caller cannot read it.
    pub lenses: Option<HashMap<LensUse, Option<LensFacts>>>,
    /// The owner's saved connections among those the graph names.
    pub connections: Option<HashSet<SavedConnection>>,
    /// The egress policy HTTP steps meet when they run.
    pub egress: Option<Arc<dyn EgressPolicy>>,
    /// Per saved `mcp` connection an `mcp_tool` step names: its tools'
    /// names and modes (a connection not here is not checked).
    pub mcp_tools: HashMap<String, Vec<(String, ToolMode)>>,
}

impl Facts {
    /// No facts: only the graph and the catalog are checked.
    pub fn none() -> Self {
        Self::default()
    }
    /// Whether both lenses and connections were looked up.
    pub fn complete(&self) -> bool {
        self.lenses.is_some() && self.connections.is_some()
    }
}
