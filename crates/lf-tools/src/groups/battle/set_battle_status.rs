use lf_core::LfResult;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::shapes::{TargetStatusIn, battle_id};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Reaches, Safety, Tool};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetStatusIn {
    /// The battle.
    #[schemars(extend("format" = "uuid"))]
    pub battle_id: String,
    /// The status to move to; scoring again on a battle in scoring judges it again.
    pub status: TargetStatusIn,
    /// true to move to closed or archived, once the user has agreed.
    #[schemars(extend("const" = true))]
    pub confirm: Option<bool>,
}

#[derive(Serialize, JsonSchema)]
pub struct StatusOut {
    pub battle_id: String,
    pub status: &'static str,
    /// Set when the battle closed.
    pub winner_contender_id: Option<String>,
    /// Whether it moved on by itself past executing: every contender had submitted.
    pub advanced: bool,
    /// Whether judging started in the background (read the verdicts with get_battle_score).
    pub scoring_started: bool,
    pub next_step: String,
}

pub struct SetBattleStatus;

impl Tool for SetBattleStatus {
    const NAME: &'static str = "set_battle_status";
    const TITLE: &'static str = "Set battle status";
    const SAFETY: Safety = Safety::Write;
    const REACHES: Reaches = Reaches::Model;
    const DESCRIPTION: &'static str = "Move your battle along draft→open→executing→voting→scoring→closed→published, or to archived; closed and archived need confirm: true. Executing runs workflow contenders; scoring starts judging.";
    type Input = SetStatusIn;
    type Output = StatusOut;

    async fn call(ctx: Ctx, i: SetStatusIn) -> LfResult<StatusOut> {
        let id = battle_id(&i.battle_id)?;
        let confirm = i.confirm == Some(true);
        let c = ctx.services.battle.request_status(&ctx.principal, id, i.status.into(), confirm).await?;
        Ok(StatusOut {
            battle_id: id.to_string(),
            status: c.battle.status.as_str(),
            winner_contender_id: c.battle.winner.map(|w| w.to_string()),
            advanced: c.advanced,
            scoring_started: c.judging_started,
            next_step: c.next_step,
        })
    }
}
