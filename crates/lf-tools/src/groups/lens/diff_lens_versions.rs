use lf_core::{LfError, LfResult, VersionId};
use lf_lens::{Semver, VersionSelector};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::shapes::lens_id;
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

pub struct DiffLensVersions;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DiffVersionsIn {
    /// The lens.
    #[schemars(extend("format" = "uuid"))]
    pub lens_id: String,
    /// The older version: a semver like "1.0.0" or a version id.
    pub from: String,
    /// The newer version (default: the head).
    pub to: Option<String>,
}

#[derive(Serialize, JsonSchema)]
pub struct VersionRefOut {
    pub id: String,
    pub semver: String,
}

#[derive(Serialize, JsonSchema)]
pub struct ChangeOut {
    /// added, removed, made_required, made_optional or refined.
    pub kind: &'static str,
    pub label: String,
    pub description: String,
}

#[derive(Serialize, JsonSchema)]
pub struct DiffOut {
    pub lens_id: String,
    pub from: VersionRefOut,
    pub to: VersionRefOut,
    /// The semver bump the change calls for: major, minor, patch, or null when identical.
    pub bump: Option<&'static str>,
    pub changes: Vec<ChangeOut>,
    pub body_changed: bool,
    /// A unified diff of the templates, empty when equal.
    pub body_diff: String,
}

/// A version named by a semver or a version UUID.
fn selector_from_text(field: &str, s: &str) -> LfResult<VersionSelector> {
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

impl Tool for DiffLensVersions {
    const NAME: &'static str = "diff_lens_versions";
    const TITLE: &'static str = "Diff lens versions";
    const SAFETY: Safety = Safety::Read;
    const DESCRIPTION: &'static str = "Compare two versions of a lens: parameter changes, the semver bump they call for, and a diff of the templates.";
    type Input = DiffVersionsIn;
    type Output = DiffOut;

    async fn call(ctx: Ctx, i: DiffVersionsIn) -> LfResult<DiffOut> {
        let id = lens_id(&i.lens_id)?;
        let from = selector_from_text("from", &i.from)?;
        let to =
            i.to.as_deref()
                .map(|t| selector_from_text("to", t))
                .transpose()?
                .unwrap_or(VersionSelector::Head);
        let d = ctx.services.lens.diff(&ctx.principal, id, from, to).await?;
        Ok(DiffOut {
            lens_id: id.to_string(),
            from: VersionRefOut { id: d.from.id.to_string(), semver: d.from.semver.to_string() },
            to: VersionRefOut { id: d.to.id.to_string(), semver: d.to.semver.to_string() },
            bump: d.bump.map(|b| b.as_str()),
            changes: d
                .changes
                .iter()
                .map(|c| ChangeOut { kind: c.kind(), label: c.label().to_owned(), description: c.describe() })
                .collect(),
            body_changed: d.body_changed,
            body_diff: d.body_diff,
        })
    }
}
