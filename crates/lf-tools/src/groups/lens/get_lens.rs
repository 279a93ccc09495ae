use lf_core::LfResult;
use schemars::JsonSchema;
use serde::Serialize;

use super::shapes::{LensIdIn, LensOut, ParamOut, VersionBodyOut, lens_id, params_out};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

pub struct GetLens;

/// The lens in the spec's shape: its head version as `versions`, and that
/// version's parameters at the top as `version_parameters`.
#[derive(Serialize, JsonSchema)]
pub struct GetLensOut {
    #[serde(flatten)]
    pub lens: LensOut,
    /// The head version, with its template.
    pub versions: VersionBodyOut,
    /// The head version's parameters, in order of first appearance in the template.
    pub version_parameters: Vec<ParamOut>,
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
            versions: VersionBodyOut::from(v),
            version_parameters: params_out(&v.params),
        })
    }
}
