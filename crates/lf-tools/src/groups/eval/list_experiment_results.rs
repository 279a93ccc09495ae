use lf_core::{LfError, LfResult};
use lf_eval::experiment::ResultFilter;

use super::experiment_shapes::{CellOut, experiment_id};
use crate::catalog::paging::{PageOut, Paged, paged_input};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

paged_input! {
    pub struct ListExperimentResultsIn {
        /// The experiment.
        #[schemars(extend("format" = "uuid"))]
        pub experiment_id: String,
        /// Contender index.
        #[schemars(range(min = 0, max = 9))]
        pub contender: Option<i64>,
        /// Cases with this tag.
        #[schemars(length(min = 1, max = 64))]
        pub tag: Option<String>,
        /// Passed or not.
        pub passed: Option<bool>,
    }
}

pub struct ListExperimentResults;

impl Tool for ListExperimentResults {
    const NAME: &'static str = "list_experiment_results";
    const TITLE: &'static str = "List experiment results";
    const SAFETY: Safety = Safety::Read;
    const DESCRIPTION: &'static str = "Cells by case: answer, assertion outcomes, usage, latency, error.";
    type Input = ListExperimentResultsIn;
    type Output = PageOut<CellOut>;

    async fn call(ctx: Ctx, i: ListExperimentResultsIn) -> LfResult<PageOut<CellOut>> {
        let id = experiment_id(&i.experiment_id)?;
        let contender = i
            .contender
            .map(|c| {
                u16::try_from(c).map_err(|_| {
                    LfError::invalid_argument("contender is an index from 0.").with_field("contender")
                })
            })
            .transpose()?;
        if let Some(t) = &i.tag {
            lf_core::check_length("tag", t.trim(), 1, 64)?;
        }
        let page = i.page()?;
        let filter = ResultFilter { contender, tag: i.tag, passed: i.passed, ..ResultFilter::default() };
        let (_, results) = ctx.services.experiments.results(&ctx.principal, id, &filter, page).await?;
        Ok(PageOut::from_page(results, CellOut::of))
    }
}
