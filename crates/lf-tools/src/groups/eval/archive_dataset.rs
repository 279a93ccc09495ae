use lf_core::LfResult;
use schemars::JsonSchema;
use serde::Deserialize;

use super::shapes::{DatasetOut, dataset_id};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ArchiveDatasetIn {
    /// Yours.
    #[schemars(extend("format" = "uuid"))]
    pub dataset_id: String,
    /// true, once the user has agreed.
    #[schemars(extend("const" = true))]
    pub confirm: Option<bool>,
}

pub struct ArchiveDataset;

impl Tool for ArchiveDataset {
    const NAME: &'static str = "archive_dataset";
    const TITLE: &'static str = "Archive a dataset";
    const SAFETY: Safety = Safety::Destructive;
    const DESCRIPTION: &'static str =
        "Retire your dataset: unlisted, not extended; pinned versions stay readable. Needs confirm: true.";
    type Input = ArchiveDatasetIn;
    type Output = DatasetOut;

    async fn call(ctx: Ctx, i: ArchiveDatasetIn) -> LfResult<DatasetOut> {
        let id = dataset_id(&i.dataset_id)?;
        Ok(DatasetOut::of(ctx.services.datasets.archive(&ctx.principal, id, i.confirm == Some(true)).await?))
    }
}
