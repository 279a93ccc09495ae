//! What an AI Lenser's runs may spend. A run an agent starts (its
//! [`super::Run::agent`]) gets a budget no larger than what the agent has
//! left of its daily credit limit, and is refused when nothing is left;
//! what the run spent is counted against the agent once, when it ends
//! (the runner tells [`super::RunService::charge_agent`], and its catch-up
//! charges the ends a stopped process did not). The agents are lf-agent's:
//! the composition root answers this port from the agent service.

use async_trait::async_trait;
use lf_core::{Detail, ErrorCode, LenserId, LfError, LfResult, Timestamp};

use super::model::RunId;

/// What an agent may still spend.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CreditsLeft {
    /// Its limit less what it spent today, never below zero.
    pub left: u64,
    /// Its daily limit (`spending_limit_credits`).
    pub limit: u64,
    /// When the day's count resets.
    pub resets_at: Timestamp,
}

/// The agents' credits, as the run service asks about them.
#[async_trait]
pub trait AgentCredits: Send + Sync {
    /// What `agent` may still spend today. NOT_FOUND if there is no such agent.
    async fn left(&self, agent: LenserId) -> LfResult<CreditsLeft>;

    /// Counts the `credits` run `run` spent against `agent`, once per run:
    /// a charge made again (after a crash) counts nothing.
    async fn charge(&self, agent: LenserId, run: RunId, credits: u64) -> LfResult<()>;
}

/// The budget of a run `agent` starts asking for `asked` (`None`: no
/// budget of its own): at most what is left. BUDGET_EXCEEDED, naming the
/// limit and when it resets, when nothing is.
pub fn agent_budget(agent: LenserId, asked: Option<u64>, c: CreditsLeft) -> LfResult<u64> {
    if c.left == 0 {
        let resets = c.resets_at.to_rfc3339();
        return Err(LfError::new(
            ErrorCode::BudgetExceeded,
            format!(
                "AI Lenser {agent} has none of its spending_limit_credits of {} left today, and a run it starts spends from them: no run was started. The limit resets at {resets}: wait until then, or ask its owner to raise spending_limit_credits with update_ai_lenser.",
                c.limit
            ),
        )
        .with_detail("cap", Detail::Str("spending_limit_credits".into()))
        .with_detail("limit", Detail::Int(i64::try_from(c.limit).unwrap_or(i64::MAX)))
        .with_detail("resets_at", Detail::Str(resets)));
    }
    Ok(asked.map_or(c.left, |b| b.min(c.left)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_is_at_most_what_is_left() {
        let c = CreditsLeft { left: 3, limit: 10, resets_at: Timestamp::from_micros(0) };
        let agent = LenserId::new();
        assert_eq!(agent_budget(agent, None, c).unwrap(), 3);
        assert_eq!(agent_budget(agent, Some(50), c).unwrap(), 3);
        assert_eq!(agent_budget(agent, Some(2), c).unwrap(), 2);
        let none = agent_budget(agent, Some(2), CreditsLeft { left: 0, ..c }).unwrap_err();
        assert_eq!(none.code(), ErrorCode::BudgetExceeded);
        assert!(none.message().contains("spending_limit_credits of 10"), "{}", none.message());
    }
}
