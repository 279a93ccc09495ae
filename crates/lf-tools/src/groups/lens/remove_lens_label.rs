use lf_core::{LabelName, LfResult};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::shapes::{LabelMoveOut, agent_may_move_protected, lens_id};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

pub struct RemoveLensLabel;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RemoveLensLabelIn {
    /// The lens.
    #[schemars(extend("format" = "uuid"))]
    pub lens_id: String,
    /// The label to remove.
    #[schemars(length(min = 1, max = 32))]
    pub label: String,
}

#[derive(Serialize, JsonSchema)]
pub struct LabelRemovedOut {
    pub lens_id: String,
    /// The removal, as the history records it.
    pub removed: LabelMoveOut,
}

impl Tool for RemoveLensLabel {
    const NAME: &'static str = "remove_lens_label";
    const TITLE: &'static str = "Remove a lens label";
    const SAFETY: Safety = Safety::Destructive;
    const DESCRIPTION: &'static str =
        "Remove a label from a lens; its history keeps the removal. Reads by it then fail.";
    type Input = RemoveLensLabelIn;
    type Output = LabelRemovedOut;

    async fn call(ctx: Ctx, i: RemoveLensLabelIn) -> LfResult<LabelRemovedOut> {
        let id = lens_id(&i.lens_id)?;
        let label = LabelName::settable("label", &i.label)?;
        let may = agent_may_move_protected(&ctx).await?;
        let record = ctx.services.lens.remove_label(&ctx.principal, id, label, may).await?;
        Ok(LabelRemovedOut { lens_id: id.to_string(), removed: LabelMoveOut::from(&record) })
    }
}
