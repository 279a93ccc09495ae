use lf_core::{LfError, LfResult};
use schemars::JsonSchema;
use serde::Serialize;

use super::shapes::{CaseOut, DatasetOut, VersionOut, dataset_id};
use crate::catalog::paging::{PageOut, Paged, paged_input};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

paged_input! {
    pub struct GetDatasetIn {
        /// The dataset.
        #[schemars(extend("format" = "uuid"))]
        pub dataset_id: String,
        /// Default: latest.
        #[schemars(range(min = 1))]
        pub version: Option<i64>,
    }
}

#[derive(Serialize, JsonSchema)]
pub struct GetDatasetOut {
    pub dataset: DatasetOut,
    pub version: VersionOut,
    /// That version's cases, by position.
    pub cases: PageOut<CaseOut>,
}

pub struct GetDataset;

impl Tool for GetDataset {
    const NAME: &'static str = "get_dataset";
    const TITLE: &'static str = "Get a dataset";
    const SAFETY: Safety = Safety::Read;
    const DESCRIPTION: &'static str = "A dataset and a page of a version's cases.";
    type Input = GetDatasetIn;
    type Output = GetDatasetOut;

    async fn call(ctx: Ctx, i: GetDatasetIn) -> LfResult<GetDatasetOut> {
        let id = dataset_id(&i.dataset_id)?;
        let version = i
            .version
            .map(|v| {
                u32::try_from(v).ok().filter(|v| *v >= 1).ok_or_else(|| {
                    LfError::invalid_argument("version must be a whole number from 1.").with_field("version")
                })
            })
            .transpose()?;
        let (d, v, cases) = ctx.services.datasets.get(&ctx.principal, id, version, i.page()?).await?;
        Ok(GetDatasetOut {
            dataset: DatasetOut::of(d),
            version: VersionOut::of(&v),
            cases: PageOut::from_page(cases, CaseOut::of),
        })
    }
}
