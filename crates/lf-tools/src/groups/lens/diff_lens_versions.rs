use lf_core::{LfError, LfResult};
use lf_lens::VersionSelector;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::shapes::{VersionRefOut, lens_id, selector_from_text};
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
    pub from: Option<String>,
    /// Or the version of this label (instead of from).
    pub from_label: Option<String>,
    /// The newer version (default: the head).
    pub to: Option<String>,
    /// Or the version of this label (instead of to).
    pub to_label: Option<String>,
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

/// The version `text` (a semver or id) or `label` names, `default` when
/// neither is given.
fn side(
    (field, text): (&str, Option<&str>),
    (label_field, label): (&str, Option<&str>),
    default: Option<VersionSelector>,
) -> LfResult<VersionSelector> {
    // Each argument given is read first, so a malformed one is
    // INVALID_ARGUMENT naming it whatever else is given.
    let text = text.map(|t| selector_from_text(field, t)).transpose()?;
    let label = label.map(|l| VersionSelector::label(label_field, l)).transpose()?;
    match (text, label, default) {
        (Some(which), None, _) | (None, Some(which), _) | (None, None, Some(which)) => Ok(which),
        (Some(_), Some(_), _) => {
            Err(LfError::bad_input(format!("Give {field} or {label_field}, not both.")).with_field(label_field))
        }
        (None, None, None) => Err(LfError::bad_input(format!(
            "Give {field} (a semver or version id) or {label_field}; list_lens_versions and list_lens_labels show them."
        ))
        .with_field(field)),
    }
}

impl Tool for DiffLensVersions {
    const NAME: &'static str = "diff_lens_versions";
    const TITLE: &'static str = "Diff lens versions";
    const SAFETY: Safety = Safety::Read;
    const DESCRIPTION: &'static str = "Compare two versions of a lens (by semver, id or label): parameter changes, the semver bump they call for, and a diff of the templates.";
    type Input = DiffVersionsIn;
    type Output = DiffOut;

    async fn call(ctx: Ctx, i: DiffVersionsIn) -> LfResult<DiffOut> {
        let id = lens_id(&i.lens_id)?;
        let from = side(("from", i.from.as_deref()), ("from_label", i.from_label.as_deref()), None)?;
        let to =
            side(("to", i.to.as_deref()), ("to_label", i.to_label.as_deref()), Some(VersionSelector::Head))?;
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
