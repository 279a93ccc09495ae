use lf_core::LfResult;

use super::shapes::{LensIdIn, StatusOut, lens_id};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

pub struct RestoreLens;

impl Tool for RestoreLens {
    const NAME: &'static str = "restore_lens";
    const TITLE: &'static str = "Restore a lens";
    const SAFETY: Safety = Safety::Write;
    const DESCRIPTION: &'static str = "Bring an archived lens of yours back into listings and search.";
    type Input = LensIdIn;
    type Output = StatusOut;

    async fn call(ctx: Ctx, i: LensIdIn) -> LfResult<StatusOut> {
        let lens = ctx.services.lens.restore(&ctx.principal, lens_id(&i.lens_id)?).await?;
        Ok(StatusOut { lens_id: lens.id.to_string(), status: lens.status.as_str(), archived_at: None })
    }
}
