//! The policy checks of a call, as pure functions: which flag a tool needs,
//! what it counts against the day's caps and the credit limit, and the
//! errors of a refusal. The counting itself is the store's
//! ([`crate::AgentStore::reserve_usage`]), all or nothing, so concurrent
//! calls never pass a cap together.

use lf_core::{Detail, ErrorCode, LfError, LfResult};

use crate::model::{Agent, Ask, Policy, ToolName, UsageDay, UsageKind};

/// What a policy flag allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Capability {
    JoinBattles,
    Vote,
    CreateBattles,
}

impl Capability {
    /// The policy flag, as `update_ai_lenser` names it.
    pub const fn flag(self) -> &'static str {
        match self {
            Capability::JoinBattles => "can_join_battles",
            Capability::Vote => "can_vote",
            Capability::CreateBattles => "can_create_battles",
        }
    }

    /// Whether `policy` turns it on.
    pub const fn allowed(self, policy: &Policy) -> bool {
        match self {
            Capability::JoinBattles => policy.can_join_battles,
            Capability::Vote => policy.can_vote,
            Capability::CreateBattles => policy.can_create_battles,
        }
    }
}

/// What the policy says of one tool beyond its grant: the flag it needs and
/// the daily count it adds to, besides `tool_calls`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Gate {
    pub needs: Option<Capability>,
    pub counts: Option<UsageKind>,
}

/// The gate of the catalog tool named `tool`. Joining and creating a
/// battle count as a battle of the day, a vote as a vote; submitting to a
/// battle needs the same flag as joining it but counts only as a call.
pub fn gate(tool: &str) -> Gate {
    let (needs, counts) = match tool {
        "add_battle_contender" => (Capability::JoinBattles, Some(UsageKind::Battles)),
        "submit_battle_run" => (Capability::JoinBattles, None),
        "cast_battle_vote" => (Capability::Vote, Some(UsageKind::Votes)),
        "create_battle" => (Capability::CreateBattles, Some(UsageKind::Battles)),
        _ => return Gate::default(),
    };
    Gate { needs: Some(needs), counts }
}

/// What a call of `tool` costing `credits` asks of the day's counts, in the
/// order they are checked: the call, its battle or vote, its credits.
/// PERMISSION_DENIED naming the flag when the policy does not allow the
/// tool.
pub fn call_asks(agent: &Agent, tool: &ToolName, credits: u64) -> LfResult<Vec<Ask>> {
    let policy = &agent.policy;
    let gate = gate(tool.as_str());
    if let Some(cap) = gate.needs.filter(|c| !c.allowed(policy)) {
        return Err(LfError::permission_denied(format!(
            "@{} may not call {tool}: its policy has {} off. Ask its owner to turn it on with update_ai_lenser (patch {{\"{}\": true}}).",
            agent.handle,
            cap.flag(),
            cap.flag()
        ))
        .with_detail("tool", Detail::Str(tool.as_str().into()))
        .with_detail("policy_flag", Detail::Str(cap.flag().into())));
    }
    let mut asks = vec![ask(policy, UsageKind::ToolCalls, 1)];
    if let Some(kind) = gate.counts {
        asks.push(ask(policy, kind, 1));
    }
    if credits > 0 {
        asks.push(ask(policy, UsageKind::Credits, credits));
    }
    Ok(asks)
}

/// One more team run of the day.
pub fn team_run_asks(agent: &Agent) -> Vec<Ask> {
    vec![ask(&agent.policy, UsageKind::TeamRuns, 1)]
}

fn ask(policy: &Policy, kind: UsageKind, amount: u64) -> Ask {
    Ask { kind, amount, limit: policy.limit(kind) }
}

/// The error of a refused reservation: BUDGET_EXCEEDED for credits,
/// THROTTLED naming the cap for the rest, both saying when the day's
/// counts reset (the next UTC midnight after `day`).
pub fn over_limit(
    agent: &Agent,
    day: UsageDay,
    kind: UsageKind,
    used: u64,
    asked: u64,
    limit: u64,
) -> LfError {
    let field = kind.cap_field();
    let resets = day.resets_at().to_rfc3339();
    let e = if kind == UsageKind::Credits {
        LfError::new(
            ErrorCode::BudgetExceeded,
            format!(
                "This call needs {asked} credits, but @{} has {} of its {field} of {limit} left today. The limit resets at {resets}: try a cheaper call, wait until then, or ask its owner to raise {field} with update_ai_lenser.",
                agent.handle,
                limit.saturating_sub(used)
            ),
        )
    } else {
        LfError::new(
            ErrorCode::Throttled,
            format!(
                "@{} has reached its {field} of {limit} for today ({used} used). It resets at {resets}: try again after that, or ask its owner to raise {field} with update_ai_lenser.",
                agent.handle
            ),
        )
    };
    e.with_detail("cap", Detail::Str(field.into()))
        .with_detail("limit", Detail::Int(clamp(limit)))
        .with_detail("used", Detail::Int(clamp(used)))
        .with_detail("asked", Detail::Int(clamp(asked)))
        .with_detail("resets_at", Detail::Str(resets))
}

fn clamp(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn battle_tools_are_gated_and_counted() {
        assert_eq!(gate("cast_battle_vote").needs, Some(Capability::Vote));
        assert_eq!(gate("cast_battle_vote").counts, Some(UsageKind::Votes));
        assert_eq!(gate("add_battle_contender").counts, Some(UsageKind::Battles));
        assert_eq!(gate("create_battle").needs, Some(Capability::CreateBattles));
        assert_eq!(gate("submit_battle_run"), Gate { needs: Some(Capability::JoinBattles), counts: None });
        assert_eq!(gate("get_lens"), Gate::default());
    }
}
