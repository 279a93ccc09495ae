//! The policy checks of a call, as pure functions: what a call behind its
//! tool's gate (the flag it needs, the count it adds to, as the catalog
//! declares them) asks of the day's caps and the credit limit, and the
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
/// the daily count it adds to, besides `tool_calls`. The catalog declares
/// each tool's gate and hands it over with each call
/// ([`crate::Call::gated`]); this crate keeps no list of tools.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Gate {
    pub needs: Option<Capability>,
    pub counts: Option<UsageKind>,
}

impl Gate {
    /// No flag, and no count but the call's.
    pub const NONE: Gate = Gate { needs: None, counts: None };

    /// A tool the policy allows only with `capability` on.
    pub const fn needs(capability: Capability) -> Gate {
        Gate { needs: Some(capability), counts: None }
    }

    /// The same gate, each call also counting one of `kind` in the day.
    pub const fn counting(self, kind: UsageKind) -> Gate {
        Gate { needs: self.needs, counts: Some(kind) }
    }
}

/// What a call of `tool`, behind `gate` and costing `credits`, asks of the
/// day's counts, in the order they are checked: the call, its battle or
/// vote, its credits. PERMISSION_DENIED naming the flag when the policy
/// does not allow the tool.
pub fn call_asks(agent: &Agent, tool: &ToolName, gate: Gate, credits: u64) -> LfResult<Vec<Ask>> {
    let policy = &agent.policy;
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
