use lf_core::LfResult;
use lf_lens::SearchQuery;

use super::shapes::{LensOut, VisibilityIn};
use crate::catalog::paging::{PageOut, Paged, paged_input};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

pub struct SearchLenses;

paged_input! {
    pub struct SearchLensesIn {
        /// Search words (at most 16), each matching the start of a word.
        #[schemars(length(min = 1, max = 500))]
        pub query: String,
        /// Only lenses of this visibility tier.
        pub visibility: Option<VisibilityIn>,
    }
}

impl Tool for SearchLenses {
    const NAME: &'static str = "search_lenses";
    const TITLE: &'static str = "Search lenses";
    const SAFETY: Safety = Safety::Read;
    const DESCRIPTION: &'static str =
        "Find lenses by topic: full-text search over titles, descriptions and templates, best first.";
    type Input = SearchLensesIn;
    type Output = PageOut<LensOut>;

    async fn call(ctx: Ctx, i: SearchLensesIn) -> LfResult<PageOut<LensOut>> {
        let query = SearchQuery::parse(&i.query)?;
        let page = i.page()?;
        let found =
            ctx.services.lens.search(&ctx.principal, &query, i.visibility.map(Into::into), page).await?;
        Ok(PageOut::from_page(found, |l| LensOut::from(&l)))
    }
}
