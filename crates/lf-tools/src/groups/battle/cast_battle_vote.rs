use lf_agent::UsageKind;
use lf_agent::policy::{Capability, Gate};
use lf_battle::{Rationale, VotePick};
use lf_core::{ContenderId, ErrorCode, LfError, LfResult};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::shapes::{VoteAggregateOut, battle_id, slots, vote_aggregates};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CastVoteIn {
    /// The battle, in voting.
    #[schemars(extend("format" = "uuid"))]
    pub battle_id: String,
    /// The contender you vote for; or give tie.
    #[schemars(extend("format" = "uuid"))]
    pub contender_id: Option<String>,
    /// true: no answer was best; or give contender_id.
    #[schemars(extend("const" = true))]
    pub tie: Option<bool>,
    /// Why (shown to the battle's readers).
    #[schemars(length(min = 1, max = 2000))]
    pub rationale: Option<String>,
}

#[derive(Serialize, JsonSchema)]
pub struct VoteOut {
    pub vote_id: String,
    pub battle_id: String,
    /// The contender voted for; null for a tie.
    pub contender_id: Option<String>,
    pub tie: bool,
    /// Whether it replaced your earlier vote in this battle.
    pub replaced: bool,
    /// The battle's vote aggregates afterwards, in slot order.
    pub vote_aggregates: Vec<VoteAggregateOut>,
    pub tie_votes: u32,
    pub total_vote_count: u32,
}

pub struct CastBattleVote;

impl Tool for CastBattleVote {
    const NAME: &'static str = "cast_battle_vote";
    const TITLE: &'static str = "Cast a battle vote";
    const SAFETY: Safety = Safety::Write;
    const AGENT_GATE: Gate = Gate::needs(Capability::Vote).counting(UsageKind::Votes);
    const ACTION_WORDS: &'static [&'static str] = &["cast_vote"];
    const DESCRIPTION: &'static str = "Vote in a battle in voting: the contender whose answer was best, or tie: true; voting again replaces your vote.";
    type Input = CastVoteIn;
    type Output = VoteOut;

    async fn call(ctx: Ctx, i: CastVoteIn) -> LfResult<VoteOut> {
        let id = battle_id(&i.battle_id)?;
        let pick = match (i.contender_id.as_deref(), i.tie) {
            (_, Some(false)) => {
                return Err(LfError::invalid_argument(
                    "tie is either true or left out: give contender_id to vote for a contender, or tie: true.",
                )
                .with_field("tie"));
            }
            (Some(c), None) => VotePick::Contender(ContenderId::parse("contender_id", c)?),
            (None, Some(true)) => VotePick::Tie,
            (Some(_), Some(true)) => {
                return Err(LfError::new(
                    ErrorCode::BadInput,
                    "Give contender_id or tie: true, not both: a vote picks one contender or calls a tie.",
                )
                .with_field("tie"));
            }
            (None, _) => {
                return Err(LfError::new(
                    ErrorCode::BadInput,
                    "Give contender_id (the contender you vote for) or tie: true.",
                )
                .with_field("contender_id"));
            }
        };
        let rationale = i.rationale.map(Rationale::parse).transpose()?;
        let o = ctx.services.battle.cast_vote(&ctx.principal, id, pick, rationale).await?;
        let sheet = ctx.services.battle.get(&ctx.principal, id).await?;
        let slots = slots(&sheet.contenders);
        Ok(VoteOut {
            vote_id: o.vote.id.to_string(),
            battle_id: id.to_string(),
            contender_id: match o.vote.pick {
                VotePick::Contender(c) => Some(c.to_string()),
                VotePick::Tie => None,
            },
            tie: o.vote.pick == VotePick::Tie,
            replaced: o.replaced,
            vote_aggregates: vote_aggregates(&o.tally, &slots),
            tie_votes: o.tally.ties,
            total_vote_count: o.tally.total,
        })
    }
}
