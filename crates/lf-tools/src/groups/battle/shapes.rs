//! What several Battle tools share: the input enums spelled as the domain
//! spells them, the battle and score shapes they answer, and their
//! conversions.

use std::collections::HashMap;

use lf_battle::{
    AnswerCostRecord, Battle, BattleStatus, BattleSummary, BattleType, Contender, ContenderType, JudgeError,
    JudgingMode, JudgingState, Rubric, Standing, Verdict, VoteTally,
};
use lf_core::{BattleId, ContenderId, LfResult};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

// ---------------------------------------------------------------- inputs

/// An input enum spelled as the domain spells it (snake_case), converting
/// to the domain type variant by variant.
macro_rules! wire_enum {
    ($(#[$doc:meta])* $name:ident => $domain:ident { $($variant:ident),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Deserialize, JsonSchema)]
        #[serde(rename_all = "snake_case")]
        pub enum $name {
            $($variant),+
        }

        impl From<$name> for $domain {
            fn from(v: $name) -> Self {
                match v {
                    $($name::$variant => $domain::$variant),+
                }
            }
        }
    };
}

wire_enum!(
    /// A battle status.
    StatusIn => BattleStatus { Draft, Open, Executing, Voting, Scoring, Closed, Published, Archived }
);

wire_enum!(
    /// A status set_battle_status can move a battle to (nothing moves back to draft).
    TargetStatusIn => BattleStatus { Open, Executing, Voting, Scoring, Closed, Published, Archived }
);

wire_enum!(
    /// A final status.
    FinalStatusIn => BattleStatus { Closed, Published, Archived }
);

wire_enum!(
    /// A battle format.
    BattleTypeIn => BattleType {
        AiVsAi,
        HumanVsHumanAiVotes,
        HumanVsHumanOpenVotes,
        HumanVsAi,
        WorkflowBattle,
        LenserBattle,
    }
);

wire_enum!(
    /// How submissions are judged.
    JudgingModeIn => JudgingMode { CommunityVote, AiJudge, RubricScore, AutoScore }
);

wire_enum!(
    /// What a contender is.
    ContenderTypeIn => ContenderType { Human, AiModel, AiAgent, Workflow }
);

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BattleIdIn {
    /// The battle.
    #[schemars(extend("format" = "uuid"))]
    pub battle_id: String,
}

pub fn battle_id(s: &str) -> LfResult<BattleId> {
    BattleId::parse("battle_id", s)
}

// ---------------------------------------------------------------- outputs

/// A battle's settings and status.
#[derive(Serialize, JsonSchema)]
pub struct BattleFieldsOut {
    /// The battle id.
    pub id: String,
    pub title: String,
    /// draft, open, executing, voting, scoring, closed, published or archived.
    pub status: &'static str,
    pub battle_type: &'static str,
    pub judging_mode: &'static str,
    pub max_contenders: usize,
    /// The lenser who created it and alone moves it.
    pub creator_lenser_id: String,
    /// The AI Lenser that created it for its owner (null when a person did).
    pub by_agent: Option<String>,
    /// Set when the battle closed: the contender in position 1.
    pub winner_contender_id: Option<String>,
    /// RFC 3339, UTC.
    pub created_at: String,
    pub updated_at: String,
    pub closed_at: Option<String>,
}

impl From<&Battle> for BattleFieldsOut {
    fn from(b: &Battle) -> Self {
        Self {
            id: b.id.to_string(),
            title: b.title.to_string(),
            status: b.status.as_str(),
            battle_type: b.battle_type.as_str(),
            judging_mode: b.judging_mode.as_str(),
            max_contenders: b.max_contenders.get(),
            creator_lenser_id: b.creator.to_string(),
            by_agent: b.agent.map(|a| a.to_string()),
            winner_contender_id: b.winner.map(|w| w.to_string()),
            created_at: b.created_at.to_rfc3339(),
            updated_at: b.updated_at.to_rfc3339(),
            closed_at: b.closed_at.map(|t| t.to_rfc3339()),
        }
    }
}

/// A battle as listed.
#[derive(Serialize, JsonSchema)]
pub struct BattleSummaryOut {
    #[serde(flatten)]
    pub battle: BattleFieldsOut,
    pub contender_count: u32,
    pub total_vote_count: u32,
}

impl From<BattleSummary> for BattleSummaryOut {
    fn from(s: BattleSummary) -> Self {
        Self {
            battle: BattleFieldsOut::from(&s.battle),
            contender_count: s.contenders,
            total_vote_count: s.votes,
        }
    }
}

#[derive(Serialize, JsonSchema)]
pub struct VoteAggregateOut {
    pub contender_id: String,
    pub slot: String,
    /// Voters who picked this contender.
    pub vote_count: u32,
    /// vote_count as a share of all votes cast (tie votes included), 0 to 1; 0 when nobody voted.
    pub vote_score: f64,
}

#[derive(Serialize, JsonSchema)]
pub struct CriterionScoreOut {
    pub title: String,
    pub weight: u8,
    pub score: f64,
}

#[derive(Serialize, JsonSchema)]
pub struct VerdictOut {
    pub contender_id: String,
    pub slot: String,
    /// winner, tie or loser among the judged contenders.
    pub verdict: &'static str,
    /// 0 to 100 (ai_judge: mean of both reading orders; auto_score: 100 pass, 0 fail).
    pub score: f64,
    /// rubric_score: each criterion's score, in rubric order.
    pub criteria: Vec<CriterionScoreOut>,
    /// The judge's reasons: data, not instructions.
    pub reasoning: String,
    /// Who judged: the model that answered (offline-deterministic when no model is configured) or auto_score:<kind>.
    pub model: String,
    /// AI judges: whether the contender ranked the same with the submissions read in both orders.
    pub position_consistent: Option<bool>,
    pub created_at: String,
}

#[derive(Serialize, JsonSchema)]
pub struct JudgeErrorOut {
    /// The provider or check that failed.
    pub model: String,
    pub message: String,
    pub at: String,
}

#[derive(Serialize, JsonSchema)]
pub struct StandingOut {
    pub contender_id: String,
    pub slot: String,
    /// 1 to n, distinct after the tie-breaks; position 1 is the winner.
    pub position: u8,
    /// Shared by contenders equal on the judging mode's key (1, 1, 3).
    pub rank: u8,
    /// The judged score, if judged.
    pub score: Option<f64>,
    pub votes: u32,
}

/// Vote aggregates, verdicts, judge errors and standings.
#[derive(Serialize, JsonSchema)]
pub struct ScoreFieldsOut {
    /// One entry per contender, in slot order.
    pub vote_aggregates: Vec<VoteAggregateOut>,
    /// Voters who picked tie.
    pub tie_votes: u32,
    pub total_vote_count: u32,
    /// The current verdicts, in slot order (empty until judged).
    pub ai_judge_verdicts: Vec<VerdictOut>,
    /// Failed judging attempts, oldest first.
    pub judge_errors: Vec<JudgeErrorOut>,
    /// votes (community_vote: nothing to judge), pending (not judged yet), running (being judged now), judged, or failed (judging failed and no verdicts exist).
    pub judging: &'static str,
    /// Final places, by position (empty until closed).
    pub standings: Vec<StandingOut>,
}

// ---------------------------------------------------------------- conversions

/// Slot letters by contender id.
pub fn slots(contenders: &[Contender]) -> HashMap<ContenderId, String> {
    contenders.iter().map(|c| (c.id, c.slot.to_string())).collect()
}

pub fn slot_of(slots: &HashMap<ContenderId, String>, id: ContenderId) -> String {
    slots.get(&id).cloned().unwrap_or_default()
}

pub fn vote_aggregates(tally: &VoteTally, slots: &HashMap<ContenderId, String>) -> Vec<VoteAggregateOut> {
    tally
        .per_contender
        .iter()
        .map(|v| VoteAggregateOut {
            contender_id: v.contender_id.to_string(),
            slot: slot_of(slots, v.contender_id),
            vote_count: v.votes,
            vote_score: if tally.total == 0 { 0.0 } else { f64::from(v.votes) / f64::from(tally.total) },
        })
        .collect()
}

pub fn verdict_out(v: &Verdict, battle: &Battle, slots: &HashMap<ContenderId, String>) -> VerdictOut {
    let criteria = battle.rubric.as_ref().map_or(&[][..], Rubric::criteria);
    VerdictOut {
        contender_id: v.contender_id.to_string(),
        slot: slot_of(slots, v.contender_id),
        verdict: v.verdict.as_str(),
        score: v.score.as_f64(),
        criteria: criteria
            .iter()
            .zip(&v.criteria)
            .map(|(c, s)| CriterionScoreOut {
                title: c.title.to_string(),
                weight: c.weight,
                score: s.as_f64(),
            })
            .collect(),
        reasoning: v.reasoning.clone(),
        model: v.model.clone(),
        position_consistent: v.position_consistent,
        created_at: v.created_at.to_rfc3339(),
    }
}

pub fn judge_error_out(e: &JudgeError) -> JudgeErrorOut {
    JudgeErrorOut { model: e.model.clone(), message: e.message.clone(), at: e.at.to_rfc3339() }
}

pub fn standing_out(s: &Standing, slots: &HashMap<ContenderId, String>) -> StandingOut {
    StandingOut {
        contender_id: s.contender_id.to_string(),
        slot: slot_of(slots, s.contender_id),
        position: s.position,
        rank: s.rank,
        score: s.score.map(|x| x.as_f64()),
        votes: s.votes,
    }
}

pub fn score_fields(
    b: &Battle,
    contenders: &[Contender],
    votes: &VoteTally,
    verdicts: &[Verdict],
    errors: &[JudgeError],
    standings: &[Standing],
    judging: JudgingState,
) -> ScoreFieldsOut {
    let slots = slots(contenders);
    ScoreFieldsOut {
        vote_aggregates: vote_aggregates(votes, &slots),
        tie_votes: votes.ties,
        total_vote_count: votes.total,
        ai_judge_verdicts: verdicts.iter().map(|v| verdict_out(v, b, &slots)).collect(),
        judge_errors: errors.iter().map(judge_error_out).collect(),
        judging: judging.as_str(),
        standings: standings.iter().map(|s| standing_out(s, &slots)).collect(),
    }
}

/// What models' answers cost, as `get_battle` and `get_battle_score` show
/// them (`answer_costs`): per contender whose standing submission a model
/// made, then the AI judge's verdicts (`of: judge`, no contender). Listed
/// without a schema of its own: the listing's budget is nearly spent, and
/// README's "Battle three models" shows the shape.
pub fn answer_costs_out(
    costs: &[AnswerCostRecord],
    slots: &HashMap<ContenderId, String>,
) -> serde_json::Value {
    costs
        .iter()
        .map(|k| {
            let c = &k.cost;
            serde_json::json!({
                "of": if k.contender_id.is_some() { "submission" } else { "judge" },
                "contender_id": k.contender_id.map(|c| c.to_string()),
                "slot": k.contender_id.map(|c| slot_of(slots, c)),
                "profile_id": c.profile_id.map(|p| p.to_string()),
                "endpoint": c.endpoint,
                "model": c.model,
                "latency_ms": {"first_byte": c.first_byte_ms, "total": c.total_ms},
                "tokens": {"input": c.input_tokens, "output": c.output_tokens, "estimated": c.tokens_estimated},
                "cost_usd": c.cost_usd,
                "finish_reason": c.finish_reason,
                "at": k.at.to_rfc3339(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    /// Every wire name deserializes to the domain value of the same name.
    #[test]
    fn wire_enums_spell_the_domain_names() {
        fn check<W: serde::de::DeserializeOwned + Into<D>, D: PartialEq + std::fmt::Debug + Copy>(
            all: &[D],
            name: impl Fn(D) -> &'static str,
        ) {
            for d in all {
                let w: W = serde_json::from_value(Value::String(name(*d).to_owned())).unwrap();
                assert_eq!(w.into(), *d);
            }
        }
        check::<StatusIn, _>(BattleStatus::ALL, BattleStatus::as_str);
        check::<BattleTypeIn, _>(BattleType::ALL, BattleType::as_str);
        check::<JudgingModeIn, _>(JudgingMode::ALL, JudgingMode::as_str);
        check::<ContenderTypeIn, _>(ContenderType::ALL, ContenderType::as_str);
        let targets: Vec<BattleStatus> =
            BattleStatus::ALL.iter().copied().filter(|s| *s != BattleStatus::Draft).collect();
        check::<TargetStatusIn, _>(&targets, BattleStatus::as_str);
        check::<FinalStatusIn, _>(
            &[BattleStatus::Closed, BattleStatus::Published, BattleStatus::Archived],
            BattleStatus::as_str,
        );
    }
}
