//! What several Lens tools share: input enums and fields, the parsing of
//! ids and values, and the lens, version and parameter shapes they answer.

use std::collections::BTreeMap;

use lf_core::{LensId, LfError, LfResult, VersionId};
use lf_lens::{
    Description, LabelMove, Lens, LensLabel, LensStatus, LensVersion, Param, ParamDeclaration, ParamValues,
    Semver, Unterminated, VersionRef, VersionSelector, VersionSummary, Visibility,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

// ---------------------------------------------------------------- inputs

/// A visibility tier: public (everyone), community (signed-in lensers) or private (the owner).
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum VisibilityIn {
    Public,
    Community,
    Private,
}

impl From<VisibilityIn> for Visibility {
    fn from(v: VisibilityIn) -> Self {
        match v {
            VisibilityIn::Public => Visibility::Public,
            VisibilityIn::Community => Visibility::Community,
            VisibilityIn::Private => Visibility::Private,
        }
    }
}

/// A publication status.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum StatusIn {
    Draft,
    Published,
    Archived,
}

impl From<StatusIn> for LensStatus {
    fn from(s: StatusIn) -> Self {
        match s {
            StatusIn::Draft => LensStatus::Draft,
            StatusIn::Published => LensStatus::Published,
            StatusIn::Archived => LensStatus::Archived,
        }
    }
}

// An author's declaration of a parameter that appears in the template.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ParamIn {
    /// The label of a [[Label]] token of the template.
    #[schemars(length(min = 1, max = 100))]
    pub label: String,
    /// Whether it may be left out (overrides the token's `!`).
    pub optional: Option<bool>,
    /// What the value should be.
    #[schemars(length(max = 500))]
    pub description: Option<String>,
    /// What an optional parameter gets when given no value.
    #[schemars(length(max = 10000))]
    pub default: Option<String>,
    /// The only values allowed (select and multiselect parameters).
    #[schemars(length(max = 100), inner(length(min = 1, max = 10000)))]
    pub options: Option<Vec<String>>,
}

impl From<ParamIn> for ParamDeclaration {
    fn from(p: ParamIn) -> Self {
        ParamDeclaration {
            label: p.label,
            optional: p.optional,
            description: p.description,
            default: p.default,
            options: p.options,
        }
    }
}

/// A lens by id.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LensIdIn {
    /// The lens.
    #[schemars(extend("format" = "uuid"))]
    pub lens_id: String,
}

pub fn lens_id(s: &str) -> LfResult<LensId> {
    LensId::parse("lens_id", s)
}

/// A version by its id, or the head.
pub fn version_selector(version_id: Option<&str>) -> LfResult<VersionSelector> {
    Ok(match version_id {
        Some(v) => VersionSelector::Id(VersionId::parse("version_id", v)?),
        None => VersionSelector::Head,
    })
}

/// A version by its id or by a label, or the head; BAD_INPUT for both.
pub fn version_or_label(version_id: Option<&str>, label: Option<&str>) -> LfResult<VersionSelector> {
    // A malformed label is INVALID_ARGUMENT whatever else is given.
    let label = label.map(|l| VersionSelector::label("label", l)).transpose()?;
    match (version_id, label) {
        (Some(_), Some(_)) => {
            Err(LfError::bad_input("Give version_id or label, not both: a label names a version by itself.")
                .with_field("label"))
        }
        (None, Some(which)) => Ok(which),
        (v, None) => version_selector(v),
    }
}

/// A version named by a semver or a version UUID.
pub fn selector_from_text(field: &str, s: &str) -> LfResult<VersionSelector> {
    if s.contains('-') {
        return VersionId::parse(field, s).map(VersionSelector::Id);
    }
    Semver::parse(s).map(VersionSelector::Semver).map_err(|_| {
        LfError::invalid_argument(format!(
            "{field} must be a semver like 1.2.0 or a version UUID, got {}",
            LfError::excerpt(s)
        ))
        .with_field(field)
    })
}

/// Whether the caller, when it is an AI Lenser, may move protected labels
/// (its policy's `can_move_protected_labels`); not read for anyone else.
pub async fn agent_may_move_protected(ctx: &crate::catalog::services::Ctx) -> LfResult<bool> {
    let policy = ctx.services.agents.policy_of(&ctx.principal).await?;
    Ok(policy.is_some_and(|p| p.can_move_protected_labels))
}

pub fn values(field: &str, map: Option<BTreeMap<String, String>>) -> LfResult<ParamValues> {
    ParamValues::parse(field, map.unwrap_or_default())
}

pub fn optional_description(d: Option<String>) -> LfResult<Option<Description>> {
    d.map(Description::parse).transpose()
}

/// Names `field` on an INVALID_ARGUMENT that names none (a value outside a
/// parameter's options is about one entry of that argument).
pub fn in_field(field: &'static str) -> impl Fn(LfError) -> LfError {
    move |e| {
        if e.code() == lf_core::ErrorCode::InvalidArgument && !e.details().iter().any(|(k, _)| k == "field") {
            e.with_field(field)
        } else {
            e
        }
    }
}

/// What a model does with a resolved prompt.
pub const RUN_NEXT_STEP: &str = "Execute the resolved_prompt above and return the output to the user.";

// ---------------------------------------------------------------- outputs

/// A lens without its template.
#[derive(Serialize, JsonSchema)]
pub struct LensOut {
    /// The lens id.
    pub id: String,
    /// The owning lenser.
    pub lenser_id: String,
    /// The AI Lenser that created it for its owner (null when a person did).
    pub by_agent: Option<String>,
    pub title: String,
    pub description: Option<String>,
    /// public, community or private.
    pub visibility: &'static str,
    /// draft, published or archived.
    pub status: &'static str,
    /// The lens this one was forked from, if any.
    pub parent_lens_id: Option<String>,
    /// The newest version.
    pub head_version_id: String,
    /// The newest version's semver.
    pub head_semver: String,
    /// RFC 3339, UTC.
    pub created_at: String,
    pub updated_at: String,
    pub archived_at: Option<String>,
}

impl From<&Lens> for LensOut {
    fn from(l: &Lens) -> Self {
        Self {
            id: l.id.to_string(),
            lenser_id: l.owner.to_string(),
            by_agent: l.agent.map(|a| a.to_string()),
            title: l.title.to_string(),
            description: l.description.as_ref().map(|d| d.to_string()),
            visibility: l.visibility.as_str(),
            status: l.status.as_str(),
            parent_lens_id: l.parent_lens_id.map(|p| p.to_string()),
            head_version_id: l.head_version_id.to_string(),
            head_semver: l.head_semver.to_string(),
            created_at: l.created_at.to_rfc3339(),
            updated_at: l.updated_at.to_rfc3339(),
            archived_at: l.archived_at.map(|t| t.to_rfc3339()),
        }
    }
}

/// One parameter of a version.
#[derive(Serialize, JsonSchema)]
pub struct ParamOut {
    pub id: String,
    /// The label as first written in the template.
    pub label: String,
    /// Optional parameters may be left out of param_values.
    pub optional: bool,
    /// The token's type hint ([[Label:type]]), if any.
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_hint: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Used when an optional parameter gets no value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// The allowed values, when restricted.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<String>,
}

impl From<&Param> for ParamOut {
    fn from(p: &Param) -> Self {
        Self {
            id: p.id.to_string(),
            label: p.label.clone(),
            optional: p.optional,
            type_hint: p.type_hint.map(|t| t.as_str()),
            description: p.description.clone(),
            default: p.default.clone(),
            options: p.options.clone(),
        }
    }
}

pub fn params_out(params: &[Param]) -> Vec<ParamOut> {
    params.iter().map(ParamOut::from).collect()
}

/// One immutable version of a lens, with its template and its parameters.
#[derive(Serialize, JsonSchema)]
pub struct VersionOut {
    #[serde(flatten)]
    pub body: VersionBodyOut,
    /// In order of first appearance in the template.
    pub version_parameters: Vec<ParamOut>,
}

impl From<&LensVersion> for VersionOut {
    fn from(v: &LensVersion) -> Self {
        Self { body: VersionBodyOut::from(v), version_parameters: params_out(&v.params) }
    }
}

/// A version with its template, its parameters aside.
#[derive(Serialize, JsonSchema)]
pub struct VersionBodyOut {
    pub id: String,
    pub lens_id: String,
    pub semver: String,
    /// The template as written, with its [[Parameter]] tokens.
    pub template_body: String,
    pub changelog: String,
    /// The AI Lenser that wrote it for the lens's owner (null when a person did).
    pub by_agent: Option<String>,
    pub created_at: String,
}

impl From<&LensVersion> for VersionBodyOut {
    fn from(v: &LensVersion) -> Self {
        Self {
            id: v.id.to_string(),
            lens_id: v.lens_id.to_string(),
            semver: v.semver.to_string(),
            template_body: v.body.as_str().to_owned(),
            changelog: v.changelog.clone(),
            by_agent: v.agent.map(|a| a.to_string()),
            created_at: v.created_at.to_rfc3339(),
        }
    }
}

/// A version without its template.
#[derive(Serialize, JsonSchema)]
pub struct VersionSummaryOut {
    pub id: String,
    pub semver: String,
    pub changelog: String,
    /// The AI Lenser that wrote it for the lens's owner (null when a person did).
    pub by_agent: Option<String>,
    pub created_at: String,
    pub parameters: Vec<ParamOut>,
}

impl From<&VersionSummary> for VersionSummaryOut {
    fn from(v: &VersionSummary) -> Self {
        Self {
            id: v.id.to_string(),
            semver: v.semver.to_string(),
            changelog: v.changelog.clone(),
            by_agent: v.agent.map(|a| a.to_string()),
            created_at: v.created_at.to_rfc3339(),
            parameters: params_out(&v.params),
        }
    }
}

/// A lens with its head version.
#[derive(Serialize, JsonSchema)]
pub struct LensWithVersionOut {
    #[serde(flatten)]
    pub lens: LensOut,
    /// The head version (or the version asked for), with its template and parameters.
    pub head_version: VersionOut,
    /// Each `[[` of the template left unclosed, so text and not a parameter.
    pub warnings: Vec<TemplateWarningOut>,
}

impl LensWithVersionOut {
    pub fn of(view: &lf_lens::LensView) -> Self {
        Self {
            lens: LensOut::from(&view.lens),
            head_version: VersionOut::from(&view.version),
            warnings: template_warnings(&lf_lens::template::lint(view.version.body.as_str())),
        }
    }
}

/// An unclosed `[[` of a template: where it is and the token it likely meant.
#[derive(Serialize, JsonSchema)]
pub struct TemplateWarningOut {
    /// UNTERMINATED_TOKEN.
    pub code: &'static str,
    pub message: String,
    /// Characters before the `[[`.
    pub offset: usize,
    pub line: usize,
    pub column: usize,
    /// The `[[` and the word after it, as written.
    pub token: String,
}

pub fn template_warnings(warnings: &[Unterminated]) -> Vec<TemplateWarningOut> {
    warnings
        .iter()
        .map(|w| TemplateWarningOut {
            code: Unterminated::CODE,
            message: w.message(),
            offset: w.offset,
            line: w.line,
            column: w.column,
            token: w.token.clone(),
        })
        .collect()
}

/// A lens's status after archiving or restoring it.
#[derive(Serialize, JsonSchema)]
pub struct StatusOut {
    pub lens_id: String,
    pub status: &'static str,
    pub archived_at: Option<String>,
}

/// A version as a diff or a label names it.
#[derive(Serialize, JsonSchema)]
pub struct VersionRefOut {
    pub id: String,
    pub semver: String,
}

impl From<VersionRef> for VersionRefOut {
    fn from(v: VersionRef) -> Self {
        Self { id: v.id.to_string(), semver: v.semver.to_string() }
    }
}

/// A label of a lens and the version it points at.
#[derive(Serialize, JsonSchema)]
pub struct LabelOut {
    pub name: String,
    pub version_id: String,
    pub semver: String,
    /// Only the owner moves it.
    pub protected: bool,
    pub moved_by: Option<String>,
    /// The AI Lenser that moved it for moved_by.
    pub moved_by_agent: Option<String>,
    pub moved_at: String,
}

impl From<&LensLabel> for LabelOut {
    fn from(l: &LensLabel) -> Self {
        Self {
            name: l.name.to_string(),
            version_id: l.version.id.to_string(),
            semver: l.version.semver.to_string(),
            protected: l.protected,
            moved_by: l.moved_by.map(|b| b.to_string()),
            moved_by_agent: l.moved_by_agent.map(|b| b.to_string()),
            moved_at: l.moved_at.to_rfc3339(),
        }
    }
}

/// One recorded move of a label.
#[derive(Serialize, JsonSchema)]
pub struct LabelMoveOut {
    pub label: String,
    /// Null when the label was new.
    pub from: Option<VersionRefOut>,
    /// Null when it was removed.
    pub to: Option<VersionRefOut>,
    pub by: Option<String>,
    pub by_agent: Option<String>,
    pub at: String,
}

impl From<&LabelMove> for LabelMoveOut {
    fn from(m: &LabelMove) -> Self {
        Self {
            label: m.label.to_string(),
            from: m.from.map(Into::into),
            to: m.to.map(Into::into),
            by: m.by.map(|b| b.to_string()),
            by_agent: m.by_agent.map(|b| b.to_string()),
            at: m.at.to_rfc3339(),
        }
    }
}
