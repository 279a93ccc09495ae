use lf_core::LfResult;

use super::shapes::ProfileOut;
use crate::catalog::paging::{PageOut, Paged, paged_input};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

paged_input! {
    pub struct ListModelProfilesIn {}
}

pub struct ListModelProfiles;

impl Tool for ListModelProfiles {
    const NAME: &'static str = "list_model_profiles";
    const TITLE: &'static str = "List model profiles";
    const SAFETY: Safety = Safety::Read;
    const DESCRIPTION: &'static str = "List the model profiles you can use: the operator's endpoints first, then yours and the public ones, by name.";
    type Input = ListModelProfilesIn;
    type Output = PageOut<ProfileOut>;

    async fn call(ctx: Ctx, i: ListModelProfilesIn) -> LfResult<PageOut<ProfileOut>> {
        let page = ctx.services.profiles.list(&ctx.principal, i.page()?).await?;
        Ok(PageOut::from_page(page, ProfileOut::of))
    }
}
