use lf_core::LfResult;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::shapes::{WrittenOut, case_source, dataset_id};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AddDatasetCasesIn {
    /// Yours.
    #[schemars(extend("format" = "uuid"))]
    pub dataset_id: String,
    /// As create_dataset takes them.
    #[schemars(length(max = 10000))]
    pub cases: Option<Vec<Value>>,
    /// Or: one case object a line.
    #[schemars(length(max = 8000000))]
    pub jsonl: Option<String>,
    /// Or: CSV, likewise.
    #[schemars(length(max = 8000000))]
    pub csv: Option<String>,
}

pub struct AddDatasetCases;

impl Tool for AddDatasetCases {
    const NAME: &'static str = "add_dataset_cases";
    const TITLE: &'static str = "Add cases to a dataset";
    const SAFETY: Safety = Safety::Write;
    const DESCRIPTION: &'static str = "Append up to 10,000 cases to your dataset as a new version; bad cases named by place, nothing saved.";
    type Input = AddDatasetCasesIn;
    type Output = WrittenOut;

    async fn call(ctx: Ctx, i: AddDatasetCasesIn) -> LfResult<WrittenOut> {
        let id = dataset_id(&i.dataset_id)?;
        let source = case_source(i.cases, i.jsonl, i.csv)?;
        Ok(WrittenOut::of(ctx.services.datasets.add_cases(&ctx.principal, id, source).await?))
    }
}
