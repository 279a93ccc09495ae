use std::collections::BTreeMap;

use lf_core::LfResult;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::shapes::{TemplateWarningOut, lens_id, template_warnings, values, version_selector};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

pub struct ValidateLensParams;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ValidateLensParamsIn {
    /// The lens.
    #[schemars(extend("format" = "uuid"))]
    pub lens_id: String,
    /// A version; the head when left out.
    #[schemars(extend("format" = "uuid"))]
    pub version_id: Option<String>,
    /// Parameter values by label (case-insensitive).
    pub values: BTreeMap<String, String>,
}

#[derive(Serialize, JsonSchema)]
pub struct InvalidValueOut {
    pub label: String,
    pub reason: String,
}

#[derive(Serialize, JsonSchema)]
pub struct ValidateOut {
    /// True when nothing is missing, unknown or invalid.
    pub valid: bool,
    /// Required labels with no value, in template order.
    pub missing: Vec<String>,
    /// Given labels that match no parameter.
    pub unknown: Vec<String>,
    /// Values outside a parameter's allowed options.
    pub invalid: Vec<InvalidValueOut>,
    pub total_params: usize,
    /// How many values were given.
    pub provided: usize,
    /// Each `[[` of the template left unclosed, so text and not a parameter no value fills.
    pub warnings: Vec<TemplateWarningOut>,
}

impl Tool for ValidateLensParams {
    const NAME: &'static str = "validate_lens_params";
    const TITLE: &'static str = "Validate lens parameter values";
    const SAFETY: Safety = Safety::Read;
    const DESCRIPTION: &'static str = "Check values against a lens's parameters before running it: missing and unknown labels, values outside the options.";
    type Input = ValidateLensParamsIn;
    type Output = ValidateOut;

    async fn call(ctx: Ctx, i: ValidateLensParamsIn) -> LfResult<ValidateOut> {
        let which = version_selector(i.version_id.as_deref())?;
        let values = values("values", Some(i.values))?;
        let v =
            ctx.services.lens.validate_params(&ctx.principal, lens_id(&i.lens_id)?, which, &values).await?;
        Ok(ValidateOut {
            valid: v.valid,
            missing: v.missing,
            unknown: v.unknown,
            invalid: v.invalid.into_iter().map(|(label, reason)| InvalidValueOut { label, reason }).collect(),
            total_params: v.total_params,
            provided: v.provided,
            warnings: template_warnings(&v.warnings),
        })
    }
}
