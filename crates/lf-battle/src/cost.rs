//! What models' answers in a battle cost ([`AnswerCostRecord`]): recorded
//! with a contender's submission when a model made it (an `ai_model`
//! contender asked, an agent answering) and with the AI judge's verdicts.

use lf_core::{AnswerCost, BattleId, LfResult, Principal, ResolvedModel};

use crate::judge::Asked;
use crate::model::AnswerCostRecord;
use crate::service::BattleService;

/// Tokens of `text` when the endpoint counted none: one per four
/// characters, rounded up (as lf-lens estimates a prompt's).
pub fn estimate_tokens(text: &str) -> u64 {
    (text.chars().count() as u64).div_ceil(4)
}

/// What several calls to one model cost together: tokens, times and prices
/// added up, the first call's first byte, the last call's finish reason,
/// estimated when any call's tokens were, and the models named once each.
/// `None` for no call.
pub fn total(costs: impl IntoIterator<Item = AnswerCost>) -> Option<AnswerCost> {
    costs.into_iter().reduce(|mut sum, c| {
        if !sum.model.split(" / ").any(|m| m == c.model) {
            sum.model = format!("{} / {}", sum.model, c.model);
        }
        sum.first_byte_ms = sum.first_byte_ms.or(c.first_byte_ms);
        sum.total_ms += c.total_ms;
        sum.input_tokens += c.input_tokens;
        sum.output_tokens += c.output_tokens;
        sum.tokens_estimated |= c.tokens_estimated;
        sum.cost_usd += c.cost_usd;
        sum.finish_reason = c.finish_reason.or(sum.finish_reason);
        sum
    })
}

/// What the judge's calls to `model` cost together; `None` for none.
pub fn judging_cost(model: &ResolvedModel, asked: &[Asked]) -> Option<AnswerCost> {
    total(asked.iter().map(|a| model.cost(&a.request, &a.answer, a.elapsed_ms, estimate_tokens)))
}

impl BattleService {
    /// Each contender's mean cost and latency over closed battles (of
    /// `battle_type` when given), for the leaderboard
    /// ([`crate::BattleStore::cost_means`]). Anyone may read it, as the
    /// leaderboard.
    pub async fn cost_means(&self, battle_type: Option<crate::BattleType>) -> LfResult<Vec<crate::CostMean>> {
        self.store().cost_means(battle_type).await
    }

    /// What the answers of battle `id` that stand cost, as `p` may see it
    /// ([`crate::BattleStore::answer_costs`]): contenders' by slot, then the
    /// judge's. NOT_FOUND if missing or out of reach.
    pub async fn answer_costs(&self, p: &Principal, id: BattleId) -> LfResult<Vec<AnswerCostRecord>> {
        self.store().answer_costs(p.reach(), id).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cost(model: &str, ms: u64, tokens: (u64, u64), estimated: bool, usd: f64) -> AnswerCost {
        AnswerCost {
            profile_id: None,
            endpoint: "default".into(),
            model: model.into(),
            first_byte_ms: Some(ms / 2),
            total_ms: ms,
            input_tokens: tokens.0,
            output_tokens: tokens.1,
            tokens_estimated: estimated,
            cost_usd: usd,
            finish_reason: Some("stop".into()),
        }
    }

    #[test]
    fn calls_add_up() {
        assert_eq!(total([]), None);
        let sum = total([cost("a", 100, (10, 2), false, 0.5), cost("a", 300, (20, 4), true, 0.25)]).unwrap();
        assert_eq!((sum.total_ms, sum.input_tokens, sum.output_tokens), (400, 30, 6));
        assert_eq!((sum.first_byte_ms, sum.tokens_estimated, sum.cost_usd), (Some(50), true, 0.75));
        assert_eq!(sum.model, "a");
        let two = total([cost("a", 1, (0, 0), false, 0.0), cost("b", 1, (0, 0), false, 0.0)]).unwrap();
        assert_eq!(two.model, "a / b");
        assert_eq!((estimate_tokens(""), estimate_tokens("abcde"), estimate_tokens("éééé")), (0, 2, 1));
    }
}
