use lf_battle::BattleFilter;
use lf_core::{LenserId, LfResult};

use super::shapes::{BattleSummaryOut, BattleTypeIn, StatusIn};
use crate::catalog::paging::{PageOut, Paged, paged_input};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

paged_input! {
    pub struct ListBattlesIn {
        /// Only battles in this status (archived ones only so).
        pub status: Option<StatusIn>,
        /// Only battles of this format.
        pub battle_type: Option<BattleTypeIn>,
        /// Only battles created by this lenser.
        #[schemars(extend("format" = "uuid"))]
        pub creator_lenser_id: Option<String>,
    }
}

pub struct ListBattles;

impl Tool for ListBattles {
    const NAME: &'static str = "list_battles";
    const TITLE: &'static str = "List battles";
    const SAFETY: Safety = Safety::Read;
    const DESCRIPTION: &'static str =
        "List battles you can see (drafts only your own), newest first, by status, battle_type or creator.";
    type Input = ListBattlesIn;
    type Output = PageOut<BattleSummaryOut>;

    async fn call(ctx: Ctx, i: ListBattlesIn) -> LfResult<PageOut<BattleSummaryOut>> {
        let filter = BattleFilter {
            status: i.status.map(Into::into),
            battle_type: i.battle_type.map(Into::into),
            creator: i
                .creator_lenser_id
                .as_deref()
                .map(|s| LenserId::parse("creator_lenser_id", s))
                .transpose()?,
        };
        let p = ctx.services.battle.list(&ctx.principal, &filter, i.page()?).await?;
        Ok(PageOut::from_page(p, BattleSummaryOut::from))
    }
}
