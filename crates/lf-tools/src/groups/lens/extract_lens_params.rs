use lf_core::LfResult;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::shapes::{ParamOut, TemplateWarningOut, lens_id, params_out, template_warnings, version_selector};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

pub struct ExtractLensParams;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExtractLensParamsIn {
    /// The lens.
    #[schemars(extend("format" = "uuid"))]
    pub lens_id: String,
    /// A version; the head when left out.
    #[schemars(extend("format" = "uuid"))]
    pub version_id: Option<String>,
}

#[derive(Serialize, JsonSchema)]
pub struct ExtractOut {
    pub lens_id: String,
    pub version_id: String,
    pub semver: String,
    /// In order of first appearance.
    pub params: Vec<ParamOut>,
    /// Each distinct token as first written, brackets included.
    pub raw_tokens_in_template: Vec<String>,
    /// Each `[[` of the template left unclosed, so text and not a parameter.
    pub warnings: Vec<TemplateWarningOut>,
}

impl Tool for ExtractLensParams {
    const NAME: &'static str = "extract_lens_params";
    const TITLE: &'static str = "Extract lens parameters";
    const SAFETY: Safety = Safety::Read;
    const DESCRIPTION: &'static str = "List a lens version's parameters and its tokens as written.";
    type Input = ExtractLensParamsIn;
    type Output = ExtractOut;

    async fn call(ctx: Ctx, i: ExtractLensParamsIn) -> LfResult<ExtractOut> {
        let which = version_selector(i.version_id.as_deref())?;
        let e = ctx.services.lens.extract_params(&ctx.principal, lens_id(&i.lens_id)?, which).await?;
        Ok(ExtractOut {
            lens_id: e.lens.id.to_string(),
            version_id: e.version.id.to_string(),
            semver: e.version.semver.to_string(),
            params: params_out(&e.version.params),
            raw_tokens_in_template: e.raw_tokens,
            warnings: template_warnings(&e.warnings),
        })
    }
}
