use lf_core::{LabelName, LfResult};
use lf_lens::SetLabel;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::shapes::{LabelMoveOut, LabelOut, agent_may_move_protected, lens_id, selector_from_text};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

pub struct SetLensLabel;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetLensLabelIn {
    /// The lens.
    #[schemars(extend("format" = "uuid"))]
    pub lens_id: String,
    /// a-z, 0-9, _ and -; not latest.
    #[schemars(length(min = 1, max = 32))]
    pub label: String,
    /// The version to point at: a semver or a version id.
    pub version: String,
    /// Protect it (owner only); production always is.
    pub protected: Option<bool>,
}

#[derive(Serialize, JsonSchema)]
pub struct LabelSetOut {
    pub lens_id: String,
    pub label: LabelOut,
    /// The move recorded; null when it already pointed there.
    pub moved: Option<LabelMoveOut>,
}

impl Tool for SetLensLabel {
    const NAME: &'static str = "set_lens_label";
    const TITLE: &'static str = "Set a lens label";
    const SAFETY: Safety = Safety::Write;
    const DESCRIPTION: &'static str = "Point a label (production, staging) at a version of a lens: set, move, or move back to roll back. Only the owner moves protected ones.";
    type Input = SetLensLabelIn;
    type Output = LabelSetOut;

    async fn call(ctx: Ctx, i: SetLensLabelIn) -> LfResult<LabelSetOut> {
        let set = SetLabel {
            lens_id: lens_id(&i.lens_id)?,
            label: LabelName::settable("label", &i.label)?,
            version: selector_from_text("version", &i.version)?,
            protect: i.protected,
        };
        let may = agent_may_move_protected(&ctx).await?;
        let done = ctx.services.lens.set_label(&ctx.principal, set, may).await?;
        Ok(LabelSetOut {
            lens_id: done.lens.id.to_string(),
            label: LabelOut::from(&done.label),
            moved: done.moved.as_ref().map(LabelMoveOut::from),
        })
    }
}
