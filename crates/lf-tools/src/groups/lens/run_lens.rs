use std::collections::BTreeMap;

use lf_core::{LfResult, WorkflowId};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::shapes::{RUN_NEXT_STEP, in_field, lens_id, values, version_or_label};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

pub struct RunLens;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunLensIn {
    /// The lens to run.
    #[schemars(extend("format" = "uuid"))]
    pub lens_id: String,
    /// Pin a version; the head when left out.
    #[schemars(extend("format" = "uuid"))]
    pub version_id: Option<String>,
    /// Or run the version this label points at.
    pub label: Option<String>,
    /// Parameter values by label (case-insensitive; unknown labels are ignored).
    pub param_values: Option<BTreeMap<String, String>>,
    /// Record the run against this workflow.
    #[schemars(extend("format" = "uuid"))]
    pub workflow_id: Option<String>,
}

#[derive(Serialize, JsonSchema)]
pub struct RunOut {
    /// The prompt to execute, with every parameter filled in.
    pub resolved_prompt: String,
    pub lens_title: String,
    pub lens_description: Option<String>,
    pub lens_id: String,
    pub version_id: String,
    pub semver: String,
    /// The recorded run when workflow_id was given, else null.
    pub run_id: Option<String>,
    /// The labels that got a value.
    pub params_used: Vec<String>,
    /// ceil(characters / 4): an estimate, not a tokenizer count.
    pub estimated_input_tokens: u64,
    /// Whether a run was recorded.
    pub persisted: bool,
    pub next_step: &'static str,
}

impl Tool for RunLens {
    const NAME: &'static str = "run_lens";
    const TITLE: &'static str = "Run a lens";
    const SAFETY: Safety = Safety::Execute;
    const ACTION_WORDS: &'static [&'static str] = &["run_lens"];
    const DESCRIPTION: &'static str = "Resolve a lens with parameter values into a ready prompt; it calls no model, so execute resolved_prompt yourself. MISSING_PARAMS names the labels to ask for.";
    type Input = RunLensIn;
    type Output = RunOut;

    async fn call(ctx: Ctx, i: RunLensIn) -> LfResult<RunOut> {
        let which = version_or_label(i.version_id.as_deref(), i.label.as_deref())?;
        let values = values("param_values", i.param_values)?;
        let workflow = i.workflow_id.as_deref().map(|w| WorkflowId::parse("workflow_id", w)).transpose()?;
        let r = ctx
            .services
            .lens
            .run(&ctx.principal, lens_id(&i.lens_id)?, which, &values, None)
            .await
            .map_err(in_field("param_values"))?;
        // The tracking run goes where every workflow run is.
        let run_id = match workflow {
            None => None,
            Some(w) => {
                let call = serde_json::json!({
                    "lens_id": r.lens.id.to_string(),
                    "version_id": r.version.id.to_string(),
                    "semver": r.version.semver.to_string(),
                    "params_used": r.params_used,
                    "estimated_input_tokens": r.estimated_input_tokens,
                });
                Some(ctx.services.runs.record_lens(&ctx.principal, w, call).await?.id)
            }
        };
        Ok(RunOut {
            resolved_prompt: r.prompt,
            lens_title: r.lens.title.to_string(),
            lens_description: r.lens.description.as_ref().map(|d| d.to_string()),
            lens_id: r.lens.id.to_string(),
            version_id: r.version.id.to_string(),
            semver: r.version.semver.to_string(),
            persisted: run_id.is_some(),
            run_id: run_id.map(|id| id.to_string()),
            params_used: r.params_used,
            estimated_input_tokens: r.estimated_input_tokens,
            next_step: RUN_NEXT_STEP,
        })
    }
}
