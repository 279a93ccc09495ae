use lf_core::LfResult;
use lf_lens::LabelName;
use schemars::JsonSchema;
use serde::Serialize;

use super::shapes::{LabelMoveOut, LabelOut, lens_id};
use crate::catalog::paging::{PageOut, Paged, paged_input};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

pub struct ListLensLabels;

paged_input! {
    pub struct ListLensLabelsIn {
        /// The lens.
        #[schemars(extend("format" = "uuid"))]
        pub lens_id: String,
        /// Only this label's history.
        #[schemars(length(min = 1, max = 32))]
        pub label: Option<String>,
    }
}

#[derive(Serialize, JsonSchema)]
pub struct LabelsOut {
    pub lens_id: String,
    /// By name.
    pub labels: Vec<LabelOut>,
    /// The moves, newest first.
    pub history: PageOut<LabelMoveOut>,
}

impl Tool for ListLensLabels {
    const NAME: &'static str = "list_lens_labels";
    const TITLE: &'static str = "List lens labels";
    const SAFETY: Safety = Safety::Read;
    const DESCRIPTION: &'static str =
        "A lens's labels with their versions, and who moved them when, from which version to which.";
    type Input = ListLensLabelsIn;
    type Output = LabelsOut;

    async fn call(ctx: Ctx, i: ListLensLabelsIn) -> LfResult<LabelsOut> {
        let id = lens_id(&i.lens_id)?;
        let page = i.page()?;
        let label = i.label.as_deref().map(|l| LabelName::parse("label", l)).transpose()?;
        let lens = &ctx.services.lens;
        let labels = lens.labels(&ctx.principal, id).await?;
        let history = lens.label_history(&ctx.principal, id, label, page).await?;
        Ok(LabelsOut {
            lens_id: id.to_string(),
            labels: labels.iter().map(LabelOut::from).collect(),
            history: PageOut::from_page(history, |m| LabelMoveOut::from(&m)),
        })
    }
}
