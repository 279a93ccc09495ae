use lf_core::{LfError, LfResult};
use lf_eval::experiment::NewExperiment;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::experiment_shapes::ExperimentOut;
use super::shapes::{VisibilityIn, dataset_id};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Started, Tool};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunExperimentIn {
    /// The dataset.
    #[schemars(extend("format" = "uuid"))]
    pub dataset_id: String,
    /// Default: latest.
    #[schemars(range(min = 1))]
    pub dataset_version: Option<i64>,
    /// Profile name/id, lenser:<AI Lenser>, lens:<lens id>@<version|label>:<profile>, workflow:<id>.
    #[schemars(length(min = 1, max = 10))]
    pub contenders: Vec<String>,
    /// [{type, …}]: equals, contains(_all), not_contains, starts_with, regex, is_json, json_schema, json_path_equals, one_of, length_range, numeric_tolerance, edit_distance (no value: expected); judged: rubric {rubric, threshold}, factuality, pairwise {baseline}.
    #[schemars(length(max = 50))]
    pub assertions: Option<Vec<Value>>,
    /// Judge's model profile.
    pub judge: Option<String>,
    /// Per case, contender.
    #[schemars(range(min = 1, max = 10), extend("default" = 1))]
    pub repeats: Option<i64>,
    /// Cells at once.
    #[schemars(range(min = 1, max = 64), extend("default" = 4))]
    pub concurrency: Option<i64>,
    /// Credits cap.
    #[schemars(range(min = 1, max = 1000000000))]
    pub budget_credits: Option<i64>,
    /// Who else reads it.
    #[schemars(extend("default" = "private"))]
    pub visibility: Option<VisibilityIn>,
}

pub struct RunExperiment;

/// `v`, from 1 and within `T` (the service checks the upper bounds).
fn within<T: TryFrom<i64>>(v: Option<i64>, field: &str, range: &str) -> LfResult<Option<T>> {
    v.map(|n| {
        T::try_from(n)
            .ok()
            .filter(|_| n >= 1)
            .ok_or_else(|| LfError::invalid_argument(format!("{field} is {range}.")).with_field(field))
    })
    .transpose()
}

impl Tool for RunExperiment {
    const NAME: &'static str = "run_experiment";
    const TITLE: &'static str = "Run an experiment";
    const SAFETY: Safety = Safety::Write;
    const DESCRIPTION: &'static str =
        "Ask each contender each case of a dataset version, checked by assertions, in background.";
    type Input = RunExperimentIn;
    type Output = ExperimentOut;
    const STARTS_TASK: Option<fn(&ExperimentOut) -> Started> = Some(|out| Started::Experiment(out.id));

    async fn call(ctx: Ctx, i: RunExperimentIn) -> LfResult<ExperimentOut> {
        let assertions = i
            .assertions
            .unwrap_or_default()
            .into_iter()
            .enumerate()
            .map(|(n, v)| match v {
                Value::Object(o) => Ok(o),
                _ => {
                    Err(LfError::invalid_argument(format!("assertions[{n}] must be an object {{type, …}}."))
                        .with_field(&format!("assertions[{n}]")))
                }
            })
            .collect::<LfResult<Vec<_>>>()?;
        let new = NewExperiment {
            dataset: dataset_id(&i.dataset_id)?,
            dataset_version: within(i.dataset_version, "dataset_version", "1 or more")?,
            contenders: i.contenders,
            assertions,
            judge: i.judge,
            repeats: within(i.repeats, "repeats", "1 to 10")?,
            concurrency: within(i.concurrency, "concurrency", "1 to 64")?,
            budget_credits: within(i.budget_credits, "budget_credits", "1 or more")?,
            visibility: i.visibility.map(|v| v.as_str().to_owned()),
        };
        Ok(ExperimentOut::of(&ctx.services.experiments.run(&ctx.principal, new).await?))
    }
}
