use std::collections::BTreeMap;

use lf_core::LfResult;
use lf_lens::{FindAndRun, SearchQuery, VersionSelector};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::shapes::{ParamOut, RUN_NEXT_STEP, VisibilityIn, in_field, params_out, values};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

pub struct FindAndRunLens;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FindAndRunIn {
    /// Search words describing the lens wanted (at most 16).
    #[schemars(length(min = 1, max = 500))]
    pub query: String,
    /// Parameter values by label, used if a lens is found.
    pub param_values: Option<BTreeMap<String, String>>,
    /// Only lenses of this visibility tier.
    pub visibility: Option<VisibilityIn>,
    /// Run the version of this label of the best match (the head when left out).
    pub label: Option<String>,
}

#[derive(Serialize, JsonSchema)]
pub struct CandidateOut {
    pub id: String,
    pub title: String,
}

#[derive(Serialize, JsonSchema)]
pub struct FindAndRunOut {
    /// ready, needs_params or no_match.
    pub status: &'static str,
    /// The query, when nothing matched.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lens_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lens_title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub semver: Option<String>,
    /// The prompt to execute (ready).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolved_prompt: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub params_used: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub estimated_input_tokens: Option<u64>,
    /// Required labels to ask the user for (needs_params).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub missing: Option<Vec<String>>,
    /// Every parameter of the lens (needs_params).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub all_parameters: Option<Vec<ParamOut>>,
    /// Other lenses that matched, best first.
    pub other_candidates: Vec<CandidateOut>,
    /// What to do next.
    pub next_step: String,
}

impl Tool for FindAndRunLens {
    const NAME: &'static str = "find_and_run_lens";
    const TITLE: &'static str = "Find and run a lens";
    const SAFETY: Safety = Safety::Execute;
    const DESCRIPTION: &'static str = "Find a lens by topic and resolve the best match in one call: status ready (with the prompt), needs_params (with the labels to ask for) or no_match.";
    type Input = FindAndRunIn;
    type Output = FindAndRunOut;

    async fn call(ctx: Ctx, i: FindAndRunIn) -> LfResult<FindAndRunOut> {
        let query = SearchQuery::parse(&i.query)?;
        let values = values("param_values", i.param_values)?;
        let which = i
            .label
            .as_deref()
            .map(|l| VersionSelector::label("label", l))
            .transpose()?
            .unwrap_or(VersionSelector::Head);
        let found = ctx
            .services
            .lens
            .find_and_run(&ctx.principal, &query, &i.query, &values, i.visibility.map(Into::into), which)
            .await
            .map_err(in_field("param_values"))?;
        let candidates = |c: Vec<lf_lens::Candidate>| {
            c.into_iter().map(|c| CandidateOut { id: c.id.to_string(), title: c.title }).collect()
        };
        let empty = FindAndRunOut {
            status: "no_match",
            query: None,
            lens_id: None,
            lens_title: None,
            version_id: None,
            semver: None,
            resolved_prompt: None,
            params_used: None,
            estimated_input_tokens: None,
            missing: None,
            all_parameters: None,
            other_candidates: Vec::new(),
            next_step: String::new(),
        };
        Ok(match found {
            FindAndRun::Ready { resolved, other_candidates } => FindAndRunOut {
                status: "ready",
                lens_id: Some(resolved.lens.id.to_string()),
                lens_title: Some(resolved.lens.title.to_string()),
                version_id: Some(resolved.version.id.to_string()),
                semver: Some(resolved.version.semver.to_string()),
                resolved_prompt: Some(resolved.prompt),
                params_used: Some(resolved.params_used),
                estimated_input_tokens: Some(resolved.estimated_input_tokens),
                other_candidates: candidates(other_candidates),
                next_step: RUN_NEXT_STEP.to_owned(),
                ..empty
            },
            FindAndRun::NeedsParams { view, missing, other_candidates } => FindAndRunOut {
                status: "needs_params",
                lens_id: Some(view.lens.id.to_string()),
                lens_title: Some(view.lens.title.to_string()),
                version_id: Some(view.version.id.to_string()),
                semver: Some(view.version.semver.to_string()),
                next_step: format!(
                    "Ask the user for: {}. Then call run_lens with lens_id {} and param_values including these labels.",
                    missing.join(", "),
                    view.lens.id
                ),
                missing: Some(missing),
                all_parameters: Some(params_out(&view.version.params)),
                other_candidates: candidates(other_candidates),
                ..empty
            },
            FindAndRun::NoMatch { query } => FindAndRunOut {
                next_step: "No lens matched. Try other or fewer words, or list_lenses to browse.".to_owned(),
                query: Some(query),
                ..empty
            },
        })
    }
}
