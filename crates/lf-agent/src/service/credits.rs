//! An agent's credits and the workflow runs it starts: a run gets a
//! budget no larger than what the agent has left of its daily credit
//! limit ([`AgentService::credits_left`]), and what the run spent is
//! counted against the agent, once, when the run ends
//! ([`AgentService::charge_run`]). The run service asks through its port
//! (`lf_workflow::run::AgentCredits`), which the composition root fills
//! from here.

use lf_core::{LenserId, LfResult, Reach, RunId};

use super::AgentService;
use crate::model::{UsageDay, UsageKind};

/// What an agent may still spend today.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CreditsLeft {
    /// Its `spending_limit_credits` less what it spent today (never below 0).
    pub left: u64,
    /// Its `spending_limit_credits`.
    pub limit: u64,
    /// The day, for when it resets.
    pub day: UsageDay,
}

impl AgentService {
    /// What agent `id` may still spend today: its credit limit less the
    /// day's credits (less what this server holds ahead, which is not
    /// spent). NOT_FOUND if there is no such agent.
    pub async fn credits_left(&self, id: LenserId) -> LfResult<CreditsLeft> {
        let agent = self.store().get_agent(Reach::Everything, id).await?;
        let day = UsageDay::of(self.now());
        let mut usage = self.store().usage(Reach::Everything, id, day).await?;
        if let Some(ledger) = &self.ledger {
            usage = usage.saturating_sub(ledger.holding(id, day));
        }
        let limit = agent.policy.limit(UsageKind::Credits);
        Ok(CreditsLeft { left: limit.saturating_sub(usage.credits), limit, day })
    }

    /// Counts the `credits` run `run` spent against agent `id` today, once
    /// per run ([`crate::AgentStore::charge_run`]): true when this charged
    /// it, false when it was charged before.
    pub async fn charge_run(&self, id: LenserId, run: RunId, credits: u64) -> LfResult<bool> {
        let day = UsageDay::of(self.now());
        self.store().charge_run(id, day, run, credits).await
    }
}
