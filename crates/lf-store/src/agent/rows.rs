//! Conversions between stored agent values and lf-agent's types, shared by
//! both backends. Reading back is strict: a value lf-agent would refuse is
//! a corrupt row (INTERNAL).
//!
//! Both backends store the same columns (see the `0014_agents.sql` /
//! `0013_agents.sql` migrations); ids, texts, numbers and booleans bind
//! and read as sqlx does, times as each backend's
//! [`crate::dialect::Dialect`] spells them. Counts are `u64` in lf-agent
//! and `i64` in both databases: a count past `i64::MAX` is never stored
//! (`reserve_usage` refuses it). A team run's inputs are JSON text on both.

use lf_agent::{
    ActionEntry, ActionId, ActionName, ActionOutcome, Agent, AgentHandle, AgentStatus, ArgsSummary, Bio, Cap,
    CreditLimit, Decision, DelegationPolicy, DisplayName, EventDetail, Grant, Headline, Member, ModelName,
    Persona, Policy, Profile, Role, Runtime, Safety, TeamEvent, TeamEventId, TeamEventKind, TeamInputs,
    TeamRun, TeamRunId, TeamRunStatus, ToolGroup, ToolId, ToolName, ToolRef, Usage, WebUrl,
};
use lf_core::{ErrorCode, LenserId, LfResult, RunId, WorkflowId};
use uuid::Uuid;

use crate::dialect::{Bind, Columns};
use crate::error::corrupt;

/// A value read back that lf-agent refuses: a corrupt row.
fn valid<T, E: std::fmt::Display>(r: Result<T, E>, column: &str) -> LfResult<T> {
    r.map_err(|e| corrupt(format!("{column}: {e}")))
}

fn count(n: i64, column: &str) -> LfResult<u64> {
    u64::try_from(n).map_err(|_| corrupt(format!("{column}: {n} is negative")))
}

/// A `u64` count or limit as both databases store it. Callers never hand
/// over more than `i64::MAX` (see `reserve_usage`); saturating keeps a
/// bug from wrapping.
pub(crate) fn stored_count(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn opt_text<T>(
    row: &impl Columns,
    column: &'static str,
    parse: impl FnOnce(String) -> LfResult<T>,
) -> LfResult<Option<T>> {
    valid(row.value::<Option<String>>(column)?.map(parse).transpose(), column)
}

fn lenser(row: &impl Columns, column: &str) -> LfResult<LenserId> {
    Ok(LenserId::from_uuid(row.value(column)?))
}

fn opt_lenser(row: &impl Columns, column: &str) -> LfResult<Option<LenserId>> {
    Ok(row.value::<Option<Uuid>>(column)?.map(LenserId::from_uuid))
}

/// The columns of `agents` (as `a`), in the order [`bind_agent`] binds
/// them and [`agent`] reads them (by name).
macro_rules! agent_columns {
    () => {
        "a.id, a.handle, a.owner_id, a.display_name, a.bio, a.headline, a.persona, a.model, a.runtime_pref, \
         a.avatar_url, a.website_url, a.can_join_battles, a.can_vote, a.can_create_battles, \
         a.can_move_protected_labels, a.max_daily_battles, a.max_daily_votes, a.max_daily_team_runs, a.max_daily_tool_calls, \
         a.spending_limit_credits, a.status, a.revision, a.created_at, a.updated_at, a.archived_at"
    };
}
pub(crate) use agent_columns;

/// An `agents` row, without its members (read apart: [`member`]).
pub(crate) fn agent<R: Columns>(row: &R) -> LfResult<Agent> {
    let cap = |column: &'static str| valid(Cap::parse(column, row.value(column)?), column);
    let url = |column: &'static str| opt_text(row, column, |s| WebUrl::parse(column, &s));
    let revision = row.value::<i64>("revision")?;
    Ok(Agent {
        id: lenser(row, "id")?,
        handle: valid(AgentHandle::parse(row.text("handle")?), "agents.handle")?,
        owner: lenser(row, "owner_id")?,
        profile: Profile {
            display_name: valid(
                DisplayName::parse(row.value::<String>("display_name")?),
                "agents.display_name",
            )?,
            bio: opt_text(row, "bio", Bio::parse)?,
            headline: opt_text(row, "headline", Headline::parse)?,
            persona: opt_text(row, "persona", Persona::parse)?,
            model: opt_text(row, "model", ModelName::parse)?,
            runtime: valid(Runtime::parse(row.text("runtime_pref")?), "agents.runtime_pref")?,
            avatar_url: url("avatar_url")?,
            website_url: url("website_url")?,
        },
        policy: Policy {
            can_join_battles: row.value("can_join_battles")?,
            can_vote: row.value("can_vote")?,
            can_create_battles: row.value("can_create_battles")?,
            can_move_protected_labels: row.value("can_move_protected_labels")?,
            max_daily_battles: cap("max_daily_battles")?,
            max_daily_votes: cap("max_daily_votes")?,
            max_daily_team_runs: cap("max_daily_team_runs")?,
            max_daily_tool_calls: cap("max_daily_tool_calls")?,
            spending_limit_credits: valid(
                CreditLimit::parse(row.value("spending_limit_credits")?),
                "agents.spending_limit_credits",
            )?,
        },
        status: status(row.text("status")?)?,
        members: Vec::new(),
        revision: count(revision, "agents.revision")?,
        created_at: row.time("created_at")?,
        updated_at: row.time("updated_at")?,
        archived_at: row.opt_time("archived_at")?,
    })
}

fn status(s: &str) -> LfResult<AgentStatus> {
    valid(AgentStatus::parse(s), "agents.status")
}

/// Binds the columns of an `agents` row, in [`agent_columns`] order.
pub(crate) fn bind_agent<Q: Bind>(q: Q, a: &Agent) -> Q {
    bind_profile(q.put(a.id.as_uuid()).put(a.handle.as_str().to_owned()).put(a.owner.as_uuid()), a)
        .put(stored_count(a.revision))
        .put_time(a.created_at)
        .put_time(a.updated_at)
        .put_opt_time(a.archived_at)
}

/// Binds what `update_agent` writes, from `display_name` to `status`, in
/// [`agent_columns`] order.
pub(crate) fn bind_profile<Q: Bind>(q: Q, a: &Agent) -> Q {
    let p = &a.profile;
    let text = |t: Option<&str>| t.map(str::to_owned);
    let policy = &a.policy;
    q.put(p.display_name.as_str().to_owned())
        .put(text(p.bio.as_ref().map(Bio::as_str)))
        .put(text(p.headline.as_ref().map(Headline::as_str)))
        .put(text(p.persona.as_ref().map(Persona::as_str)))
        .put(text(p.model.as_ref().map(ModelName::as_str)))
        .put(p.runtime.as_str().to_owned())
        .put(text(p.avatar_url.as_ref().map(WebUrl::as_str)))
        .put(text(p.website_url.as_ref().map(WebUrl::as_str)))
        .put(policy.can_join_battles)
        .put(policy.can_vote)
        .put(policy.can_create_battles)
        .put(policy.can_move_protected_labels)
        .put(i64::from(policy.max_daily_battles.get()))
        .put(i64::from(policy.max_daily_votes.get()))
        .put(i64::from(policy.max_daily_team_runs.get()))
        .put(i64::from(policy.max_daily_tool_calls.get()))
        .put(stored_count(policy.spending_limit_credits.get()))
        .put(a.status.as_str().to_owned())
}

/// An `agent_members` row, with its `agent_id`.
pub(crate) fn member<R: Columns>(row: &R) -> LfResult<(LenserId, Member)> {
    let role = valid(Role::parse(row.text("role")?), "agent_members.role")?;
    if role == Role::Owner {
        return Err(corrupt("agent_members.role: owner"));
    }
    let m = Member {
        lenser: lenser(row, "lenser_id")?,
        role,
        added_by: lenser(row, "added_by")?,
        added_at: row.time("added_at")?,
    };
    Ok((lenser(row, "agent_id")?, m))
}

/// Binds an `agent_members` row: agent, lenser, role, added_by, added_at.
pub(crate) fn bind_member<Q: Bind>(q: Q, agent: LenserId, m: &Member) -> Q {
    q.put(agent.as_uuid())
        .put(m.lenser.as_uuid())
        .put(m.role.as_str().to_owned())
        .put(m.added_by.as_uuid())
        .put_time(m.added_at)
}

/// A tool from its four columns: id, name, group and safety class.
fn tool(row: &impl Columns, cols: [&'static str; 4]) -> LfResult<ToolRef> {
    let [id, name, group, safety] = cols;
    Ok(ToolRef {
        id: ToolId::from_uuid(row.value(id)?),
        name: valid(ToolName::parse("tool", row.text(name)?), name)?,
        group: valid(ToolGroup::parse("group", row.text(group)?), group)?,
        safety: valid(Safety::parse(row.text(safety)?), safety)?,
    })
}

/// The columns of `agent_grants` (as `g`), in the order [`bind_grant`]
/// binds them.
macro_rules! grant_columns {
    () => {
        "g.agent_id, g.tool_id, g.tool_name, g.tool_group, g.safety, g.granted_by, g.granted_at"
    };
}
pub(crate) use grant_columns;

/// An `agent_grants` row.
pub(crate) fn grant<R: Columns>(row: &R) -> LfResult<Grant> {
    Ok(Grant {
        agent: lenser(row, "agent_id")?,
        tool: tool(row, ["tool_id", "tool_name", "tool_group", "safety"])?,
        granted_by: lenser(row, "granted_by")?,
        granted_at: row.time("granted_at")?,
    })
}

/// Binds an `agent_grants` row, in [`grant_columns`] order.
pub(crate) fn bind_grant<Q: Bind>(q: Q, g: &Grant) -> Q {
    q.put(g.agent.as_uuid())
        .put(g.tool.id.as_uuid())
        .put(g.tool.name.as_str().to_owned())
        .put(g.tool.group.as_str().to_owned())
        .put(g.tool.safety.as_str().to_owned())
        .put(g.granted_by.as_uuid())
        .put_time(g.granted_at)
}

/// An `agent_usage` row's counts.
pub(crate) fn usage<R: Columns>(row: &R) -> LfResult<Usage> {
    let n = |column: &'static str| count(row.value(column)?, column);
    Ok(Usage {
        battles: n("battles")?,
        votes: n("votes")?,
        team_runs: n("team_runs")?,
        tool_calls: n("tool_calls")?,
        credits: n("credits")?,
    })
}

/// Binds a day's counts: battles, votes, team_runs, tool_calls, credits.
pub(crate) fn bind_usage<Q: Bind>(q: Q, u: &Usage) -> Q {
    q.put(stored_count(u.battles))
        .put(stored_count(u.votes))
        .put(stored_count(u.team_runs))
        .put(stored_count(u.tool_calls))
        .put(stored_count(u.credits))
}

/// The columns of `agent_actions`, in the order [`bind_action`] binds them.
macro_rules! action_columns {
    () => {
        "id, agent_id, action, tool_id, tool_name, tool_group, tool_safety, arguments, outcome, code, message, \
         actor_id, at"
    };
}
pub(crate) use action_columns;

/// An `agent_actions` row.
pub(crate) fn action<R: Columns>(row: &R) -> LfResult<ActionEntry> {
    let tool = match row.value::<Option<Uuid>>("tool_id")? {
        Some(_) => Some(tool(row, ["tool_id", "tool_name", "tool_group", "tool_safety"])?),
        None => None,
    };
    let code = match row.value::<Option<String>>("code")? {
        Some(c) => Some(
            ErrorCode::ALL
                .iter()
                .copied()
                .find(|k| k.as_str() == c)
                .ok_or_else(|| corrupt(format!("agent_actions.code: {c:?}")))?,
        ),
        None => None,
    };
    Ok(ActionEntry {
        id: ActionId::from_uuid(row.value("id")?),
        agent: lenser(row, "agent_id")?,
        action: valid(ActionName::parse("action", row.text("action")?), "agent_actions.action")?,
        tool,
        arguments: ArgsSummary::new(row.text("arguments")?),
        outcome: valid(ActionOutcome::parse(row.text("outcome")?), "agent_actions.outcome")?,
        code,
        message: row.value("message")?,
        actor: opt_lenser(row, "actor_id")?,
        at: row.time("at")?,
    })
}

/// Binds an `agent_actions` row, in [`action_columns`] order.
pub(crate) fn bind_action<Q: Bind>(q: Q, e: &ActionEntry) -> Q {
    let t = e.tool.as_ref();
    q.put(e.id.as_uuid())
        .put(e.agent.as_uuid())
        .put(e.action.as_str().to_owned())
        .put(t.map(|t| t.id.as_uuid()))
        .put(t.map(|t| t.name.as_str().to_owned()))
        .put(t.map(|t| t.group.as_str().to_owned()))
        .put_word(t.map(|t| t.safety.as_str()))
        .put(e.arguments.as_str().to_owned())
        .put_word(Some(e.outcome.as_str()))
        .put_word(e.code.map(|c| c.as_str()))
        .put(e.message.clone())
        .put(e.actor.map(|a| a.as_uuid()))
        .put_time(e.at)
}

/// The columns of `agent_team_runs`, in the order [`bind_team_run`] binds
/// them.
macro_rules! team_run_columns {
    () => {
        "id, agent_id, workflow_id, workflow_run_id, inputs, policy, status, parent_id, depth, started_by, \
         decision_approved, decision_by, decision_reason, decision_at, error, created_at, updated_at, finished_at"
    };
}
pub(crate) use team_run_columns;

fn team_run_status(s: &str) -> LfResult<TeamRunStatus> {
    valid(TeamRunStatus::parse(s), "agent_team_runs.status")
}

/// An `agent_team_runs` row.
pub(crate) fn team_run<R: Columns>(row: &R) -> LfResult<TeamRun> {
    const INPUTS: &str = "agent_team_runs.inputs";
    let inputs = valid(serde_json::from_str(row.text("inputs")?), INPUTS)?;
    let decision = match row.value::<Option<bool>>("decision_approved")? {
        Some(approved) => Some(Decision {
            approved,
            by: opt_lenser(row, "decision_by")?,
            reason: row.value("decision_reason")?,
            at: row
                .opt_time("decision_at")?
                .ok_or_else(|| corrupt("agent_team_runs.decision_at: NULL with a decision"))?,
        }),
        None => None,
    };
    let depth = row.value::<i64>("depth")?;
    Ok(TeamRun {
        id: TeamRunId::from_uuid(row.value("id")?),
        agent: lenser(row, "agent_id")?,
        workflow_id: WorkflowId::from_uuid(row.value("workflow_id")?),
        workflow_run: row.value::<Option<Uuid>>("workflow_run_id")?.map(RunId::from_uuid),
        inputs: valid(TeamInputs::new(inputs), INPUTS)?,
        policy: valid(DelegationPolicy::parse(row.text("policy")?), "agent_team_runs.policy")?,
        status: team_run_status(row.text("status")?)?,
        parent: row.value::<Option<Uuid>>("parent_id")?.map(TeamRunId::from_uuid),
        depth: u8::try_from(depth).map_err(|_| corrupt(format!("agent_team_runs.depth: {depth}")))?,
        started_by: opt_lenser(row, "started_by")?,
        decision,
        error: row.value("error")?,
        created_at: row.time("created_at")?,
        updated_at: row.time("updated_at")?,
        finished_at: row.opt_time("finished_at")?,
    })
}

/// Binds an `agent_team_runs` row, in [`team_run_columns`] order.
pub(crate) fn bind_team_run<Q: Bind>(q: Q, r: &TeamRun) -> Q {
    let q = q
        .put(r.id.as_uuid())
        .put(r.agent.as_uuid())
        .put(r.workflow_id.as_uuid())
        .put(r.workflow_run.map(|w| w.as_uuid()))
        .put(serde_json::Value::Object(r.inputs.as_map().clone()).to_string())
        .put(r.policy.as_str().to_owned())
        .put(r.status.as_str().to_owned())
        .put(r.parent.map(|p| p.as_uuid()))
        .put(i64::from(r.depth))
        .put(r.started_by.map(|s| s.as_uuid()));
    bind_decision(q, r.decision.as_ref())
        .put(r.error.clone())
        .put_time(r.created_at)
        .put_time(r.updated_at)
        .put_opt_time(r.finished_at)
}

/// Binds a decision's four columns: approved, by, reason, at.
pub(crate) fn bind_decision<Q: Bind>(q: Q, d: Option<&Decision>) -> Q {
    q.put(d.map(|d| d.approved))
        .put(d.and_then(|d| d.by).map(|b| b.as_uuid()))
        .put(d.and_then(|d| d.reason.clone()))
        .put_opt_time(d.map(|d| d.at))
}

/// The columns of `agent_team_events`, in the order [`bind_event`] binds
/// them.
macro_rules! event_columns {
    () => {
        "id, team_run_id, agent_id, seq, kind, actor_id, run_id, node, tool, note, at"
    };
}
pub(crate) use event_columns;

/// An `agent_team_events` row.
pub(crate) fn event<R: Columns>(row: &R) -> LfResult<TeamEvent> {
    let seq = row.value::<i64>("seq")?;
    Ok(TeamEvent {
        id: TeamEventId::from_uuid(row.value("id")?),
        team_run: TeamRunId::from_uuid(row.value("team_run_id")?),
        agent: lenser(row, "agent_id")?,
        seq: u32::try_from(seq).map_err(|_| corrupt(format!("agent_team_events.seq: {seq}")))?,
        kind: valid(TeamEventKind::parse(row.text("kind")?), "agent_team_events.kind")?,
        detail: EventDetail {
            actor: opt_lenser(row, "actor_id")?,
            run: row.value::<Option<Uuid>>("run_id")?.map(RunId::from_uuid),
            node: row.value("node")?,
            tool: row.value("tool")?,
            note: row.value("note")?,
        },
        at: row.time("at")?,
    })
}

/// Binds an `agent_team_events` row, in [`event_columns`] order.
pub(crate) fn bind_event<Q: Bind>(q: Q, e: &TeamEvent) -> Q {
    q.put(e.id.as_uuid())
        .put(e.team_run.as_uuid())
        .put(e.agent.as_uuid())
        .put(i64::from(e.seq))
        .put(e.kind.as_str().to_owned())
        .put(e.detail.actor.map(|a| a.as_uuid()))
        .put(e.detail.run.map(|r| r.as_uuid()))
        .put(e.detail.node.clone())
        .put(e.detail.tool.clone())
        .put(e.detail.note.clone())
        .put_time(e.at)
}
