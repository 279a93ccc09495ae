use lf_core::LfResult;

use super::shapes::{LensIdIn, LensWithVersionOut, lens_id};
use crate::services::Ctx;
use crate::tool::{Safety, Tool};

pub struct GetLens;

impl Tool for GetLens {
    const NAME: &'static str = "get_lens";
    const TITLE: &'static str = "Get a lens";
    const SAFETY: Safety = Safety::Read;
    const DESCRIPTION: &'static str = "Get one lens with its head version: the template body and its parameters. Use it to see what a lens asks for before running it.";
    type Input = LensIdIn;
    type Output = LensWithVersionOut;

    async fn call(ctx: Ctx, i: LensIdIn) -> LfResult<LensWithVersionOut> {
        let view = ctx.services.lens.get(&ctx.principal, lens_id(&i.lens_id)?).await?;
        Ok(LensWithVersionOut::of(&view))
    }
}
