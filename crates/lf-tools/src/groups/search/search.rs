use lf_core::{LfResult, PageRequest, SearchQuery};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};
use crate::mcp::documents::DocId;

/// Hits of each kind at most.
const PER_KIND: u32 = 10;

pub struct Search;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchIn {
    /// Words to look for (at most 16), all to match.
    #[schemars(length(min = 1, max = 500))]
    pub query: String,
}

#[derive(Serialize, JsonSchema)]
pub struct SearchOut {
    /// Lenses best first, then workflows and battles newest first; at most 10 of each.
    pub results: Vec<HitOut>,
}

#[derive(Serialize, JsonSchema)]
pub struct HitOut {
    /// What fetch takes: lens:<uuid>, workflow:<uuid> or battle:<uuid>.
    pub id: String,
    pub title: String,
    /// Its lenserfight:// resource URI.
    pub url: String,
}

fn hit(id: DocId, title: &str) -> HitOut {
    HitOut { id: id.short(), title: title.to_owned(), url: id.uri() }
}

impl Tool for Search {
    const NAME: &'static str = "search";
    const TITLE: &'static str = "Search everything";
    const SAFETY: Safety = Safety::Read;
    const DESCRIPTION: &'static str = "Search everything you can read (lenses, workflows, battles) by words, then fetch a result by its id.";
    type Input = SearchIn;
    type Output = SearchOut;

    async fn call(ctx: Ctx, i: SearchIn) -> LfResult<SearchOut> {
        let query = SearchQuery::parse(&i.query)?;
        let (p, s) = (&ctx.principal, &ctx.services);
        let page = PageRequest::first(PER_KIND);
        let lenses = s.lens.search(p, &query, None, page).await?;
        let workflows = s.workflow.search(p, &query, page).await?;
        let battles = s.battle.search(p, &query, page).await?;
        let results = lenses
            .items
            .iter()
            .map(|l| hit(DocId::Lens(l.id), l.title.as_str()))
            .chain(workflows.items.iter().map(|w| hit(DocId::Workflow(w.id), w.title.as_str())))
            .chain(battles.items.iter().map(|b| hit(DocId::Battle(b.battle.id), b.battle.title.as_str())))
            .collect();
        Ok(SearchOut { results })
    }
}
