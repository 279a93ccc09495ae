use lf_core::{LfError, LfResult, VersionId};
use lf_lens::{Semver, VersionSelector};
use schemars::JsonSchema;
use serde::Deserialize;

use super::shapes::{VersionOut, lens_id};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

pub struct GetLensVersion;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetLensVersionIn {
    /// The lens.
    #[schemars(extend("format" = "uuid"))]
    pub lens_id: String,
    /// The version; give this or semver.
    #[schemars(extend("format" = "uuid"))]
    pub version_id: Option<String>,
    /// The version's semver, e.g. "1.2.0"; give this or version_id.
    pub semver: Option<String>,
    /// Or the version a label points at (latest: the head).
    pub label: Option<String>,
}

impl Tool for GetLensVersion {
    const NAME: &'static str = "get_lens_version";
    const TITLE: &'static str = "Get a lens version";
    const SAFETY: Safety = Safety::Read;
    const DESCRIPTION: &'static str =
        "Get one version of a lens, by version_id, semver or label, with its template body and parameters.";
    type Input = GetLensVersionIn;
    type Output = VersionOut;

    async fn call(ctx: Ctx, i: GetLensVersionIn) -> LfResult<VersionOut> {
        let id = lens_id(&i.lens_id)?;
        // A malformed label is INVALID_ARGUMENT whatever else is given.
        let label = i.label.as_deref().map(|l| VersionSelector::label("label", l)).transpose()?;
        let which = match (i.version_id.as_deref(), i.semver.as_deref(), label) {
            (Some(_), _, Some(_)) | (_, Some(_), Some(_)) => {
                return Err(LfError::bad_input(
                    "Give one of version_id, semver or label: a label names a version by itself.",
                )
                .with_field("label"));
            }
            (Some(v), _, None) => VersionSelector::Id(VersionId::parse("version_id", v)?),
            (None, Some(s), None) => VersionSelector::Semver(Semver::parse(s)?),
            (None, None, Some(which)) => which,
            (None, None, None) => {
                return Err(LfError::bad_input(
                    "Provide version_id, semver or label to choose a version; list_lens_versions and list_lens_labels show them.",
                ));
            }
        };
        let view = ctx.services.lens.view(&ctx.principal, id, which).await?;
        if let (Some(_), Some(s)) = (i.version_id.as_deref(), i.semver.as_deref())
            && view.version.semver.to_string() != s
        {
            return Err(LfError::bad_input(format!(
                "version_id names version {} but semver says {}; give one of them",
                view.version.semver,
                LfError::excerpt(s)
            )));
        }
        Ok(VersionOut::from(&view.version))
    }
}
