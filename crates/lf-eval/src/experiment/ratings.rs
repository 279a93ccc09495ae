//! Experiments' pairwise verdicts as leaderboard results: each judged
//! pairwise cell is one comparison (the contender against its baseline,
//! both named as battles name them: a model profile as an `ai_model`
//! contender by the profile's id, so one model is one row, an AI Lenser as
//! an `ai_agent` one), rated beside closed battles by
//! lf-battle's Bradley–Terry fit through [`ExperimentRatings`] (an
//! [`lf_battle::MoreResults`]).
//!
//! - The verdict is the pairwise outcome's score: the means of both orders
//!   decide, as the battle judge ranks (a position-inconsistent verdict
//!   counts as those means say; equal means are a tie).
//! - Its categories are the case's tags, as battle categories compare them
//!   (trimmed, lowercase); datasets have no tags of their own.
//! - Only experiments everyone may read count (`community` and `public`),
//!   as the leaderboard rates only battles everyone may read: it is the
//!   same for every caller, so no private experiment shows in it, not even
//!   to its owner.
//! - A comparison is rated as one `ai_vs_ai` battle of two; a contender
//!   with no model profile (an operator endpoint named alone), a lens sent
//!   to a profile and a workflow are not rated, nor one compared with
//!   itself.
//! - It carries no answer styles: with style control on, it enters the fit
//!   with zero covariates (as a battle's pair without submissions does).

use std::sync::Arc;

use async_trait::async_trait;
use lf_battle::{BattleResult, BattleType, ContenderRef, MoreResults, ResultEntry};
use lf_core::{BattleId, LfResult, Timestamp};

use super::assertion::{Assertion, labelled};
use super::model::AssertionOutcome;
use super::store::ExperimentStore;

/// A contender as the leaderboard names it.
#[derive(Clone, Debug, PartialEq)]
pub struct Rated {
    pub reference: ContenderRef,
    /// Its label on the board (the contender as the experiment gave it).
    pub name: String,
}

/// One judged pairwise verdict of a cell, written with its result.
#[derive(Clone, Debug, PartialEq)]
pub struct Matchup {
    /// Its id as the ratings know it (each is rated as a battle of two).
    pub id: BattleId,
    pub contender: Rated,
    pub baseline: Rated,
    /// 1: the contender's answer preferred, 0.5: a tie, 0: the baseline's.
    pub score: f64,
}

/// A matchup as the ratings read it back: with its case's tags and when
/// its cell was written.
#[derive(Clone, Debug, PartialEq)]
pub struct RatedMatchup {
    pub matchup: Matchup,
    pub tags: Vec<String>,
    pub at: Timestamp,
}

/// The matchups of a cell of `contender` from its graded `outcomes`: one
/// per pairwise assertion (the experiment's, then the case's) the judge
/// gave a verdict on, when both it and its baseline are in `rated` (by
/// contender index) and are not the same.
pub fn matchups(
    experiment: &[Assertion],
    case: &[Assertion],
    contender: u16,
    outcomes: &[AssertionOutcome],
    rated: &[Option<Rated>],
) -> Vec<Matchup> {
    let of = |i: u16| rated.get(usize::from(i)).and_then(Option::as_ref);
    labelled(experiment, case)
        .filter_map(|(from, a)| {
            let Assertion::Pairwise { baseline } = a else { return None };
            let judged = outcomes.iter().find(|o| o.from == from)?.judged.as_ref()?;
            judged.position_consistent?;
            let (mine, theirs) = (of(contender)?, of(*baseline)?);
            (mine.reference != theirs.reference).then(|| Matchup {
                id: BattleId::new(),
                contender: mine.clone(),
                baseline: theirs.clone(),
                score: judged.score,
            })
        })
        .collect()
}

/// A matchup as a battle result: the preferred answer ranked first, both
/// first on a tie; its tags as categories (those that are not one left out).
pub fn as_result(m: &RatedMatchup) -> BattleResult {
    let (mine, theirs) = match m.matchup.score {
        s if s > 0.5 => (1, 2),
        s if s < 0.5 => (2, 1),
        _ => (1, 1),
    };
    let entry = |r: &Rated, rank| ResultEntry {
        reference: r.reference,
        display_name: r.name.clone(),
        rank,
        style: None,
    };
    let mut tags: Vec<String> = Vec::new();
    for t in m.tags.iter().filter_map(|t| lf_battle::category("tags", t).ok()) {
        if !tags.contains(&t) {
            tags.push(t);
        }
    }
    BattleResult {
        battle_id: m.matchup.id,
        tags,
        battle_type: BattleType::AiVsAi,
        closed_at: m.at,
        entries: vec![entry(&m.matchup.contender, mine), entry(&m.matchup.baseline, theirs)],
    }
}

/// Experiments' matchups as the leaderboard's more results (see the
/// module's docs).
pub struct ExperimentRatings {
    store: Arc<dyn ExperimentStore>,
}

impl ExperimentRatings {
    pub fn new(store: Arc<dyn ExperimentStore>) -> Self {
        Self { store }
    }
}

#[async_trait]
impl MoreResults for ExperimentRatings {
    async fn version(&self) -> LfResult<i64> {
        self.store.matchups_version().await
    }

    async fn results(&self, battle_type: Option<BattleType>) -> LfResult<Vec<BattleResult>> {
        if battle_type.is_some_and(|t| t != BattleType::AiVsAi) {
            return Ok(Vec::new());
        }
        Ok(self.store.matchups().await?.iter().map(as_result).collect())
    }
}

#[cfg(test)]
mod tests {
    use lf_battle::ContenderType;
    use lf_core::ContenderRefId;

    use super::*;
    use crate::experiment::Judged;

    fn rated(name: &str) -> Option<Rated> {
        let reference = ContenderRef { kind: ContenderType::AiModel, id: ContenderRefId::new() };
        Some(Rated { reference, name: name.into() })
    }

    fn pairwise(from: &str, score: f64, consistent: Option<bool>) -> AssertionOutcome {
        AssertionOutcome {
            kind: "pairwise".into(),
            from: from.into(),
            passed: score > 0.5,
            reason: String::new(),
            judged: Some(Judged { score, position_consistent: consistent, ..Judged::default() }),
        }
    }

    #[test]
    fn judged_pairwise_verdicts_are_matchups_ranked_as_the_judge_said() {
        let rated = [rated("a"), rated("b"), None];
        let asked = [Assertion::Pairwise { baseline: 1 }];
        let case = [Assertion::Pairwise { baseline: 2 }, Assertion::Pairwise { baseline: 0 }];
        let outcomes = [
            pairwise("assertions[0]", 1.0, Some(false)),
            pairwise("case.assertions[0]", 1.0, Some(true)),
            pairwise("case.assertions[1]", 0.0, Some(true)),
        ];
        // Against b: one matchup; against the unrated contender 2 and
        // against itself: none.
        let found = matchups(&asked, &case, 0, &outcomes, &rated);
        assert_eq!(found.len(), 1);
        assert_eq!((found[0].contender.name.as_str(), found[0].baseline.name.as_str()), ("a", "b"));
        let at = Timestamp::from_micros(0);
        let result = |score| {
            as_result(&RatedMatchup {
                matchup: Matchup { score, ..found[0].clone() },
                tags: vec![" Code".into(), "code".into()],
                at,
            })
        };
        let ranks = |r: BattleResult| r.entries.iter().map(|e| e.rank).collect::<Vec<_>>();
        assert_eq!(ranks(result(1.0)), [1, 2]);
        assert_eq!(ranks(result(0.0)), [2, 1]);
        assert_eq!(ranks(result(0.5)), [1, 1]);
        assert_eq!(result(1.0).tags, ["code"]);
        // A judge that gave no verdict (it failed): nothing.
        let failed = [pairwise("assertions[0]", 0.0, None)];
        assert!(matchups(&asked, &[], 0, &failed, &rated).is_empty());
    }
}
