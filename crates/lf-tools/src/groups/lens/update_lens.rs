use lf_core::LfResult;
use lf_lens::{Changelog, LensUpdate, TemplateBody, Title};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::shapes::{
    LensOut, ParamIn, TemplateWarningOut, VersionOut, VisibilityIn, lens_id, optional_description,
    template_warnings,
};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

pub struct UpdateLens;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateLensIn {
    /// The lens to update.
    #[schemars(extend("format" = "uuid"))]
    pub lens_id: String,
    /// A new template; the current one when left out.
    #[schemars(length(min = 50, max = 100000))]
    pub template_body: Option<String>,
    /// A new visibility tier.
    pub visibility: Option<VisibilityIn>,
    /// Parameter refinements; those of unchanged parameters carry over.
    #[schemars(length(max = 500))]
    pub params: Option<Vec<ParamIn>>,
    /// A new title.
    #[schemars(length(min = 1, max = 200))]
    pub title: Option<String>,
    /// A new description.
    #[schemars(length(max = 2000))]
    pub description: Option<String>,
    /// What changed (generated when left out).
    #[schemars(length(min = 1, max = 2000))]
    pub changelog: Option<String>,
}

#[derive(Serialize, JsonSchema)]
pub struct UpdateOut {
    /// The head version after the update.
    #[serde(flatten)]
    pub version: VersionOut,
    /// False when template and parameters were unchanged (only metadata changed).
    pub version_created: bool,
    pub previous_semver: String,
    /// major, minor or patch; null when no version was made.
    pub bump: Option<&'static str>,
    pub head_version_id: String,
    pub lens: LensOut,
    /// Each `[[` of the head's template left unclosed, so text and not a parameter.
    pub warnings: Vec<TemplateWarningOut>,
}

impl Tool for UpdateLens {
    const NAME: &'static str = "update_lens";
    const TITLE: &'static str = "Update a lens";
    const SAFETY: Safety = Safety::Write;
    const DESCRIPTION: &'static str = "Make a new immutable version of your lens (and change its title, description or visibility); the semver bump follows the parameter change.";
    type Input = UpdateLensIn;
    type Output = UpdateOut;

    async fn call(ctx: Ctx, i: UpdateLensIn) -> LfResult<UpdateOut> {
        let mut update = LensUpdate::new(lens_id(&i.lens_id)?);
        update.body = i.template_body.map(TemplateBody::parse).transpose()?;
        update.params = i.params.map(|p| p.into_iter().map(Into::into).collect());
        update.title = i.title.map(Title::parse).transpose()?;
        update.description = optional_description(i.description)?;
        update.visibility = i.visibility.map(Into::into);
        update.changelog = i.changelog.map(Changelog::parse).transpose()?;
        let o = ctx.services.lens.update(&ctx.principal, update).await?;
        Ok(UpdateOut {
            version: VersionOut::from(&o.version),
            version_created: o.bump.is_some(),
            previous_semver: o.previous_semver.to_string(),
            bump: o.bump.map(|b| b.as_str()),
            head_version_id: o.lens.head_version_id.to_string(),
            lens: LensOut::from(&o.lens),
            warnings: template_warnings(&lf_lens::template::lint(o.version.body.as_str())),
        })
    }
}
