use lf_core::LfResult;
use schemars::JsonSchema;
use serde::Deserialize;

use super::experiment_shapes::{ExperimentViewOut, experiment_id};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetExperimentIn {
    /// The experiment.
    #[schemars(extend("format" = "uuid"))]
    pub experiment_id: String,
}

pub struct GetExperiment;

impl Tool for GetExperiment {
    const NAME: &'static str = "get_experiment";
    const TITLE: &'static str = "Get an experiment";
    const SAFETY: Safety = Safety::Read;
    const DESCRIPTION: &'static str =
        "Progress and per contender pass rate (95% interval), mean score, errors, tokens, cost, latency.";
    type Input = GetExperimentIn;
    type Output = ExperimentViewOut;

    async fn call(ctx: Ctx, i: GetExperimentIn) -> LfResult<ExperimentViewOut> {
        let id = experiment_id(&i.experiment_id)?;
        Ok(ExperimentViewOut::of(&ctx.services.experiments.get(&ctx.principal, id).await?))
    }
}
