use lf_core::LfResult;
use schemars::JsonSchema;
use serde::Deserialize;

use super::experiment_shapes::{ExperimentOut, experiment_id};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CancelExperimentIn {
    /// Yours, running.
    #[schemars(extend("format" = "uuid"))]
    pub experiment_id: String,
}

pub struct CancelExperiment;

impl Tool for CancelExperiment {
    const NAME: &'static str = "cancel_experiment";
    const TITLE: &'static str = "Cancel an experiment";
    const SAFETY: Safety = Safety::Write;
    const DESCRIPTION: &'static str = "Stop your running experiment; results so far stay.";
    type Input = CancelExperimentIn;
    type Output = ExperimentOut;

    async fn call(ctx: Ctx, i: CancelExperimentIn) -> LfResult<ExperimentOut> {
        let id = experiment_id(&i.experiment_id)?;
        Ok(ExperimentOut::of(&ctx.services.experiments.cancel(&ctx.principal, id).await?))
    }
}
