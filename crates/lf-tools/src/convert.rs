//! Output shapes shared by several tools, and their conversions from the domain.

use lf_lens::{Lens, LensVersion, Param, VersionSummary};
use schemars::JsonSchema;
use serde::Serialize;

/// A lens without its template.
#[derive(Serialize, JsonSchema)]
pub struct LensOut {
    /// The lens id.
    pub id: String,
    /// The owning lenser.
    pub lenser_id: String,
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

/// One immutable version of a lens, with its template.
#[derive(Serialize, JsonSchema)]
pub struct VersionOut {
    pub id: String,
    pub lens_id: String,
    pub semver: String,
    /// The template as written, with its [[Parameter]] tokens.
    pub template_body: String,
    pub changelog: String,
    pub created_at: String,
    /// In order of first appearance in the template.
    pub version_parameters: Vec<ParamOut>,
}

impl From<&LensVersion> for VersionOut {
    fn from(v: &LensVersion) -> Self {
        Self {
            id: v.id.to_string(),
            lens_id: v.lens_id.to_string(),
            semver: v.semver.to_string(),
            template_body: v.body.as_str().to_owned(),
            changelog: v.changelog.clone(),
            created_at: v.created_at.to_rfc3339(),
            version_parameters: params_out(&v.params),
        }
    }
}

/// A version without its template.
#[derive(Serialize, JsonSchema)]
pub struct VersionSummaryOut {
    pub id: String,
    pub semver: String,
    pub changelog: String,
    pub created_at: String,
    pub parameters: Vec<ParamOut>,
}

impl From<&VersionSummary> for VersionSummaryOut {
    fn from(v: &VersionSummary) -> Self {
        Self {
            id: v.id.to_string(),
            semver: v.semver.to_string(),
            changelog: v.changelog.clone(),
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
}

/// One page of a listing.
#[derive(Serialize, JsonSchema)]
pub struct PageOut<T> {
    pub items: Vec<T>,
    /// How many items the whole listing has.
    pub total: u64,
    pub limit: u32,
    pub offset: u64,
    /// Whether a later page has more items.
    pub has_more: bool,
}

impl<T> PageOut<T> {
    pub fn from_page<U>(page: lf_core::Page<U>, f: impl FnMut(U) -> T) -> Self {
        let has_more = page.has_more();
        let page = page.map(f);
        Self { items: page.items, total: page.total, limit: page.limit, offset: page.offset, has_more }
    }
}
