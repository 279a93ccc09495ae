use lf_core::LfResult;

use super::shapes::DatasetOut;
use crate::catalog::paging::{PageOut, Paged, paged_input};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

paged_input! {
    pub struct ListDatasetsIn {
        /// Archived ones too.
        #[schemars(extend("default" = false))]
        pub include_archived: Option<bool>,
    }
}

pub struct ListDatasets;

impl Tool for ListDatasets {
    const NAME: &'static str = "list_datasets";
    const TITLE: &'static str = "List datasets";
    const SAFETY: Safety = Safety::Read;
    const DESCRIPTION: &'static str = "Datasets you can read (yours or shared).";
    type Input = ListDatasetsIn;
    type Output = PageOut<DatasetOut>;

    async fn call(ctx: Ctx, i: ListDatasetsIn) -> LfResult<PageOut<DatasetOut>> {
        let archived = i.include_archived.unwrap_or(false);
        let page = ctx.services.datasets.list(&ctx.principal, archived, i.page()?).await?;
        Ok(PageOut::from_page(page, DatasetOut::of))
    }
}
