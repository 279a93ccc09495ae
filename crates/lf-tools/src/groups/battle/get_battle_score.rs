use lf_core::LfResult;
use schemars::JsonSchema;
use serde::Serialize;

use super::shapes::{BattleIdIn, ScoreFieldsOut, answer_costs_out, battle_id, score_fields, slots};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

#[derive(Serialize, JsonSchema)]
pub struct ScoreOut {
    pub battle_id: String,
    pub status: &'static str,
    pub judging_mode: &'static str,
    pub winner_contender_id: Option<String>,
    #[serde(flatten)]
    pub score: ScoreFieldsOut,
    #[schemars(with = "serde_json::Value", extend("type" = "array"))]
    pub answer_costs: serde_json::Value,
    /// What can happen next.
    pub next_step: String,
}

pub struct GetBattleScore;

impl Tool for GetBattleScore {
    const NAME: &'static str = "get_battle_score";
    const TITLE: &'static str = "Get a battle's score";
    const SAFETY: Safety = Safety::Read;
    const DESCRIPTION: &'static str = "Follow a battle's judging: vote aggregates, verdicts as they land, judge errors, and the standings once closed.";
    const DIFFERS_FROM_SPEC: &'static str = "`vote_score` is the contender's share of all votes cast (0 to 1), where the spec's example shows a number like 4.2 without saying what it averages.";
    type Input = BattleIdIn;
    type Output = ScoreOut;

    async fn call(ctx: Ctx, i: BattleIdIn) -> LfResult<ScoreOut> {
        let id = battle_id(&i.battle_id)?;
        let s = ctx.services.battle.score_state(&ctx.principal, id).await?;
        let costs = ctx.services.battle.answer_costs(&ctx.principal, id).await?;
        let v = &s.view;
        let b = &v.battle;
        Ok(ScoreOut {
            battle_id: b.id.to_string(),
            status: b.status.as_str(),
            judging_mode: b.judging_mode.as_str(),
            winner_contender_id: b.winner.map(|w| w.to_string()),
            score: score_fields(
                b,
                &v.contenders,
                &v.votes,
                &v.verdicts,
                &v.judge_errors,
                &v.standings,
                s.judging,
            ),
            answer_costs: answer_costs_out(&costs, &slots(&v.contenders)),
            next_step: s.next_step,
        })
    }
}
