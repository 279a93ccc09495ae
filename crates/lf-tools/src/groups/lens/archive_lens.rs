use lf_core::LfResult;

use super::shapes::{LensIdIn, StatusOut, lens_id};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

pub struct ArchiveLens;

impl Tool for ArchiveLens {
    const NAME: &'static str = "archive_lens";
    const TITLE: &'static str = "Archive a lens";
    const SAFETY: Safety = Safety::Destructive;
    const DESCRIPTION: &'static str =
        "Hide your lens from listings and search without deleting it; restore_lens brings it back.";
    type Input = LensIdIn;
    type Output = StatusOut;

    async fn call(ctx: Ctx, i: LensIdIn) -> LfResult<StatusOut> {
        let lens = ctx.services.lens.archive(&ctx.principal, lens_id(&i.lens_id)?).await?;
        Ok(StatusOut {
            lens_id: lens.id.to_string(),
            status: lens.status.as_str(),
            archived_at: lens.archived_at.map(|t| t.to_rfc3339()),
        })
    }
}
