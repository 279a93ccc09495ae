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
    /// The lens's labels and the versions they point at.
    pub labels: Vec<LabelRefOut>,
}

#[derive(Serialize, JsonSchema)]
pub struct LabelRefOut {
    pub name: String,
    pub version_id: String,
    pub semver: String,
    pub protected: bool,
}

impl Tool for GetLens {
    const NAME: &'static str = "get_lens";
    const TITLE: &'static str = "Get a lens";
    const SAFETY: Safety = Safety::Read;
    const DESCRIPTION: &'static str = "Get a lens with its head version's template and parameters (what it asks for before you run it) and its labels.";
    type Input = LensIdIn;
    type Output = GetLensOut;

    async fn call(ctx: Ctx, i: LensIdIn) -> LfResult<GetLensOut> {
        let id = lens_id(&i.lens_id)?;
        let view = ctx.services.lens.get(&ctx.principal, id).await?;
        let labels = ctx.services.lens.labels(&ctx.principal, id).await?;
        let v = &view.version;
        Ok(GetLensOut {
            lens: LensOut::from(&view.lens),
            versions: VersionBodyOut::from(v),
            version_parameters: params_out(&v.params),
            labels: labels
                .iter()
                .map(|l| LabelRefOut {
                    name: l.name.to_string(),
                    version_id: l.version.id.to_string(),
                    semver: l.version.semver.to_string(),
                    protected: l.protected,
                })
                .collect(),
        })
    }
}
