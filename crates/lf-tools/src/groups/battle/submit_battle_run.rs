use lf_agent::policy::{Capability, Gate};
use lf_battle::SubmissionText;
use lf_core::{AnswerCost, ContenderId, LfResult};
use rmcp::model::JsonObject;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::shapes::battle_id;
use crate::agent_calls::ANSWER_BATTLE;
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Called, Reaches, Safety, Tool};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SubmitRunIn {
    /// The battle, open or executing.
    #[schemars(extend("format" = "uuid"))]
    pub battle_id: String,
    /// The contender answering.
    #[schemars(extend("format" = "uuid"))]
    pub contender_id: String,
    /// The answer; a second submission replaces the first.
    #[schemars(length(min = 1, max = 100000))]
    pub content_text: String,
}

#[derive(Serialize, JsonSchema)]
pub struct SubmittedOut {
    pub submitted: bool,
    /// The submission id (kept when resubmitted).
    pub id: String,
    pub battle_id: String,
    pub contender_id: String,
    /// Whether it replaced the contender's earlier submission.
    pub replaced: bool,
    /// The battle's status afterwards.
    pub status: &'static str,
    /// Whether this was the last submission and moved the battle on (to voting or scoring).
    pub advanced: bool,
    /// Whether judging started in the background (read the verdicts with get_battle_score).
    pub scoring_started: bool,
}

pub struct SubmitBattleRun;

impl Tool for SubmitBattleRun {
    const NAME: &'static str = "submit_battle_run";
    const TITLE: &'static str = "Submit a battle run";
    const SAFETY: Safety = Safety::Write;
    const AGENT_GATE: Gate = Gate::needs(Capability::JoinBattles);
    const ACTION_WORDS: &'static [&'static str] = &["submit_entry", ANSWER_BATTLE];
    const REACHES: Reaches = Reaches::Model;
    const DESCRIPTION: &'static str = "Submit (or replace) a contender's answer while the battle is open or executing; the last answer moves an executing battle to voting, or to scoring and starts judging.";
    type Input = SubmitRunIn;
    type Output = SubmittedOut;

    async fn call(ctx: Ctx, i: SubmitRunIn) -> LfResult<SubmittedOut> {
        submit(ctx, i, None).await
    }
}

/// `submit_battle_run` of an answer a model made (an agent answering its
/// battle), `cost` written with the submission in one write.
pub(crate) async fn submit_answered(ctx: Ctx, args: JsonObject, cost: &AnswerCost) -> LfResult<Called> {
    let out = submit(ctx, SubmitBattleRun::parse(args)?, Some(cost)).await?;
    Ok(Called { output: SubmitBattleRun::output(out)?, task: None })
}

async fn submit(ctx: Ctx, i: SubmitRunIn, cost: Option<&AnswerCost>) -> LfResult<SubmittedOut> {
    let id = battle_id(&i.battle_id)?;
    let contender = ContenderId::parse("contender_id", &i.contender_id)?;
    let text = SubmissionText::parse(i.content_text)?;
    let battles = &ctx.services.battle;
    let s = battles.submit_and_judge_with_cost(&ctx.principal, id, contender, text, cost).await?;
    let o = s.outcome;
    Ok(SubmittedOut {
        submitted: true,
        id: o.submission.id.to_string(),
        battle_id: id.to_string(),
        contender_id: contender.to_string(),
        replaced: o.replaced,
        status: o.status.as_str(),
        advanced: o.advanced,
        scoring_started: s.judging_started,
    })
}
