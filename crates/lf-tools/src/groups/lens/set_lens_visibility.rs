use lf_core::LfResult;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::shapes::{VisibilityIn, lens_id};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

pub struct SetLensVisibility;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetVisibilityIn {
    /// The lens.
    #[schemars(extend("format" = "uuid"))]
    pub lens_id: String,
    /// The new visibility tier.
    pub visibility: VisibilityIn,
}

#[derive(Serialize, JsonSchema)]
pub struct VisibilityOut {
    pub lens_id: String,
    pub visibility: &'static str,
}

impl Tool for SetLensVisibility {
    const NAME: &'static str = "set_lens_visibility";
    const TITLE: &'static str = "Set lens visibility";
    const SAFETY: Safety = Safety::Write;
    const DESCRIPTION: &'static str =
        "Change who can see your lens: public (everyone), community (signed-in lensers) or private (you).";
    type Input = SetVisibilityIn;
    type Output = VisibilityOut;

    async fn call(ctx: Ctx, i: SetVisibilityIn) -> LfResult<VisibilityOut> {
        let lens = ctx
            .services
            .lens
            .set_visibility(&ctx.principal, lens_id(&i.lens_id)?, i.visibility.into())
            .await?;
        Ok(VisibilityOut { lens_id: lens.id.to_string(), visibility: lens.visibility.as_str() })
    }
}
