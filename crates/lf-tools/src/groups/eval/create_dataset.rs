use lf_core::LfResult;
use lf_eval::dataset::NewDataset;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::shapes::{VisibilityIn, WrittenOut, case_source};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateDatasetIn {
    /// Unique among yours.
    #[schemars(length(min = 1, max = 100))]
    pub name: String,
    /// What it tests.
    #[schemars(length(max = 2000))]
    pub description: Option<String>,
    /// Who else reads it.
    #[schemars(extend("default" = "private"))]
    pub visibility: Option<VisibilityIn>,
    /// {inputs: {param: value}} or {prompt}; optional expected, assertions, tags, metadata.
    #[schemars(length(max = 10000))]
    pub cases: Option<Vec<Value>>,
    /// Or: one case object a line.
    #[schemars(length(max = 8000000))]
    pub jsonl: Option<String>,
    /// Or: header (prompt, expected, tags split by ;, assertions, metadata; others: lens inputs), a case a row.
    #[schemars(length(max = 8000000))]
    pub csv: Option<String>,
}

pub struct CreateDataset;

impl Tool for CreateDataset {
    const NAME: &'static str = "create_dataset";
    const TITLE: &'static str = "Create a dataset";
    const SAFETY: Safety = Safety::Write;
    const DESCRIPTION: &'static str = "Save up to 10,000 cases (cases, jsonl or csv) as a new dataset's version 1; bad cases named by place, nothing saved.";
    type Input = CreateDatasetIn;
    type Output = WrittenOut;

    async fn call(ctx: Ctx, i: CreateDatasetIn) -> LfResult<WrittenOut> {
        let new = NewDataset {
            name: i.name,
            description: i.description,
            visibility: i.visibility.map(|v| v.as_str().to_owned()),
            cases: case_source(i.cases, i.jsonl, i.csv)?,
        };
        Ok(WrittenOut::of(ctx.services.datasets.create(&ctx.principal, new).await?))
    }
}
