use lf_core::{LenserId, LfResult};
use lf_lens::LensFilter;

use super::shapes::{LensOut, StatusIn, VisibilityIn};
use crate::catalog::paging::{PageOut, Paged, paged_input};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

pub struct ListLenses;

paged_input! {
    pub struct ListLensesIn {
        /// Only lenses of this visibility tier.
        pub visibility: Option<VisibilityIn>,
        /// Only lenses of this status.
        pub status: Option<StatusIn>,
        /// Only lenses owned by this lenser.
        #[schemars(extend("format" = "uuid"))]
        pub lenser_id: Option<String>,
        /// Include archived lenses.
        #[schemars(extend("default" = false))]
        pub include_archived: Option<bool>,
    }
}

impl Tool for ListLenses {
    const NAME: &'static str = "list_lenses";
    const TITLE: &'static str = "List lenses";
    const SAFETY: Safety = Safety::Read;
    const DESCRIPTION: &'static str = "Browse the lenses you can see (yours, public and community ones), newest first; search_lenses finds them by topic.";
    type Input = ListLensesIn;
    type Output = PageOut<LensOut>;

    async fn call(ctx: Ctx, i: ListLensesIn) -> LfResult<PageOut<LensOut>> {
        let filter = LensFilter {
            visibility: i.visibility.map(Into::into),
            status: i.status.map(Into::into),
            owner: i.lenser_id.as_deref().map(|s| LenserId::parse("lenser_id", s)).transpose()?,
            include_archived: i.include_archived.unwrap_or(false),
        };
        let page = ctx.services.lens.list(&ctx.principal, &filter, i.page()?).await?;
        Ok(PageOut::from_page(page, |l| LensOut::from(&l)))
    }
}
