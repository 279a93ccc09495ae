use lf_core::LfResult;
use schemars::JsonSchema;
use serde::Serialize;

use super::shapes::{LensIdIn, LensOut, ParamOut, lens_id, params_out};
use crate::services::Ctx;
use crate::tool::{Safety, Tool};

pub struct GetLens;

/// The lens in the spec's shape: its head version as `versions`, and that
/// version's parameters at the top as `version_parameters`.
#[derive(Serialize, JsonSchema)]
pub struct GetLensOut {
    #[serde(flatten)]
    pub lens: LensOut,
    /// The head version, with its template.
    pub versions: HeadVersionOut,
    /// The head version's parameters, in order of first appearance in the template.
    pub version_parameters: Vec<ParamOut>,
}

/// A version with its template; its parameters are beside it.
#[derive(Serialize, JsonSchema)]
pub struct HeadVersionOut {
    pub id: String,
    pub lens_id: String,
    pub semver: String,
    /// The template as written, with its [[Parameter]] tokens.
    pub template_body: String,
    pub changelog: String,
    pub created_at: String,
}

impl Tool for GetLens {
    const NAME: &'static str = "get_lens";
    const TITLE: &'static str = "Get a lens";
    const SAFETY: Safety = Safety::Read;
    const DESCRIPTION: &'static str =
        "Get a lens with its head version's template and parameters: what it asks for before you run it.";
    type Input = LensIdIn;
    type Output = GetLensOut;

    async fn call(ctx: Ctx, i: LensIdIn) -> LfResult<GetLensOut> {
        let view = ctx.services.lens.get(&ctx.principal, lens_id(&i.lens_id)?).await?;
        let v = &view.version;
        Ok(GetLensOut {
            lens: LensOut::from(&view.lens),
            versions: HeadVersionOut {
                id: v.id.to_string(),
                lens_id: v.lens_id.to_string(),
                semver: v.semver.to_string(),
                template_body: v.body.as_str().to_owned(),
                changelog: v.changelog.clone(),
                created_at: v.created_at.to_rfc3339(),
            },
            version_parameters: params_out(&v.params),
        })
    }
}
