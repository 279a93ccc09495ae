use lf_core::{LenserId, LfResult};

use super::shapes::{BattleSummaryOut, FinalStatusIn};
use crate::catalog::paging::{PageOut, Paged, paged_input};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

paged_input! {
    pub struct HistoryIn {
        /// Whose history (default: the lenser you act as).
        #[schemars(extend("format" = "uuid"))]
        pub lenser_id: Option<String>,
        /// Only battles in this final status.
        pub status: Option<FinalStatusIn>,
    }
}

pub struct GetBattleHistory;

impl Tool for GetBattleHistory {
    const NAME: &'static str = "get_battle_history";
    const TITLE: &'static str = "Get battle history";
    const SAFETY: Safety = Safety::Read;
    const DESCRIPTION: &'static str =
        "List battles a lenser created or took part in (default: you), newest first.";
    type Input = HistoryIn;
    type Output = PageOut<BattleSummaryOut>;

    async fn call(ctx: Ctx, i: HistoryIn) -> LfResult<PageOut<BattleSummaryOut>> {
        let lenser = i.lenser_id.as_deref().map(|s| LenserId::parse("lenser_id", s)).transpose()?;
        let page = i.page()?;
        let p = ctx.services.battle.history(&ctx.principal, lenser, i.status.map(Into::into), page).await?;
        Ok(PageOut::from_page(p, BattleSummaryOut::from))
    }
}
