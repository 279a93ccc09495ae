//! What several Agent tools share: ids, the agent, grant, event and
//! action-log shapes they answer, and the profile fields they take.

use lf_agent::{
    ActionEntry, Agent, AgentView, Bio, DisplayName, Grant, Headline, ModelName, Persona, Runtime, TeamEvent,
    TeamRunId, WebUrl,
};
use lf_core::{LenserId, LfResult, Timestamp};
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};

pub fn ai_lenser_id(s: &str) -> LfResult<LenserId> {
    LenserId::parse("ai_lenser_id", s)
}

pub fn team_run_id(field: &str, s: &str) -> LfResult<TeamRunId> {
    TeamRunId::parse(field, s)
}

fn time(t: Timestamp) -> String {
    t.to_rfc3339()
}

/// A present field, `null` included (`Some(None)`: clear it), told apart
/// from a missing one (`None`, with `#[serde(default)]`).
pub fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(d).map(Some)
}

/// Where an agent's model calls prefer to run.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RuntimeIn {
    Cloud,
    Local,
    Hybrid,
}

impl From<RuntimeIn> for Runtime {
    fn from(r: RuntimeIn) -> Self {
        match r {
            RuntimeIn::Cloud => Runtime::Cloud,
            RuntimeIn::Local => Runtime::Local,
            RuntimeIn::Hybrid => Runtime::Hybrid,
        }
    }
}

pub fn display_name(s: String) -> LfResult<DisplayName> {
    DisplayName::parse(s)
}

pub fn opt<T>(v: Option<String>, parse: impl FnOnce(String) -> LfResult<T>) -> LfResult<Option<T>> {
    v.map(parse).transpose()
}

pub fn bio(s: String) -> LfResult<Bio> {
    Bio::parse(s)
}
pub fn headline(s: String) -> LfResult<Headline> {
    Headline::parse(s)
}
pub fn persona(s: String) -> LfResult<Persona> {
    Persona::parse(s)
}
pub fn model(s: String) -> LfResult<ModelName> {
    ModelName::parse(s)
}
pub fn url(field: &'static str) -> impl Fn(String) -> LfResult<WebUrl> {
    move |s| WebUrl::parse(field, &s)
}

/// An AI Lenser: its profile, policy and, read alone, today's usage.
#[derive(Serialize, JsonSchema)]
pub struct AgentOut {
    pub ai_lenser_id: String,
    pub handle: String,
    pub display_name: String,
    pub bio: Option<String>,
    pub headline: Option<String>,
    /// Its system prompt when it answers.
    pub persona: Option<String>,
    /// The model it asks for (null: the server's).
    pub model: Option<String>,
    pub runtime_pref: &'static str,
    pub avatar_url: Option<String>,
    pub website_url: Option<String>,
    /// active or archived.
    pub status: &'static str,
    pub owner_lenser_id: String,
    /// Co-owners and operators.
    pub members: Vec<MemberOut>,
    /// What you are to it: owner, co_owner, operator (null: the service).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub your_role: Option<&'static str>,
    pub policy: PolicyOut,
    /// Today's counts (UTC), on a single read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<UsageOut>,
    pub created_at: String,
    pub updated_at: String,
    pub archived_at: Option<String>,
}

#[derive(Serialize, JsonSchema)]
pub struct MemberOut {
    pub lenser_id: String,
    pub role: &'static str,
}

impl MemberOut {
    /// The agent's co-owners and operators, oldest first.
    pub fn of(a: &Agent) -> Vec<MemberOut> {
        a.members
            .iter()
            .map(|m| MemberOut { lenser_id: m.lenser.to_string(), role: m.role.as_str() })
            .collect()
    }
}

/// What the agent may do; a cap of 0 allows none.
#[derive(Serialize, JsonSchema)]
pub struct PolicyOut {
    pub can_join_battles: bool,
    pub can_vote: bool,
    pub can_create_battles: bool,
    pub can_move_protected_labels: bool,
    pub max_daily_battles: u32,
    pub max_daily_votes: u32,
    pub max_daily_team_runs: u32,
    pub max_daily_tool_calls: u32,
    /// Credits per day.
    pub spending_limit_credits: u64,
}

#[derive(Serialize, JsonSchema)]
pub struct UsageOut {
    pub battles_used: u64,
    pub votes_used: u64,
    pub team_runs_used: u64,
    pub tool_calls_used: u64,
    pub credits_spent: u64,
    /// When the counts start again (next UTC midnight).
    pub resets_at: String,
}

impl AgentOut {
    pub fn new(a: &Agent) -> Self {
        let p = &a.profile;
        let s = |v: Option<&str>| v.map(str::to_owned);
        AgentOut {
            ai_lenser_id: a.id.to_string(),
            handle: a.handle.as_str().to_owned(),
            display_name: p.display_name.as_str().to_owned(),
            bio: s(p.bio.as_ref().map(|v| v.as_str())),
            headline: s(p.headline.as_ref().map(|v| v.as_str())),
            persona: s(p.persona.as_ref().map(|v| v.as_str())),
            model: s(p.model.as_ref().map(|v| v.as_str())),
            runtime_pref: p.runtime.as_str(),
            avatar_url: s(p.avatar_url.as_ref().map(WebUrl::as_str)),
            website_url: s(p.website_url.as_ref().map(WebUrl::as_str)),
            status: a.status.as_str(),
            owner_lenser_id: a.owner.to_string(),
            members: MemberOut::of(a),
            your_role: None,
            policy: PolicyOut {
                can_join_battles: a.policy.can_join_battles,
                can_vote: a.policy.can_vote,
                can_create_battles: a.policy.can_create_battles,
                can_move_protected_labels: a.policy.can_move_protected_labels,
                max_daily_battles: a.policy.max_daily_battles.get(),
                max_daily_votes: a.policy.max_daily_votes.get(),
                max_daily_team_runs: a.policy.max_daily_team_runs.get(),
                max_daily_tool_calls: a.policy.max_daily_tool_calls.get(),
                spending_limit_credits: a.policy.spending_limit_credits.get(),
            },
            usage: None,
            created_at: time(a.created_at),
            updated_at: time(a.updated_at),
            archived_at: a.archived_at.map(time),
        }
    }

    pub fn viewed(v: &AgentView) -> Self {
        let u = &v.usage;
        AgentOut {
            your_role: v.role.map(|r| r.as_str()),
            usage: Some(UsageOut {
                battles_used: u.battles,
                votes_used: u.votes,
                team_runs_used: u.team_runs,
                tool_calls_used: u.tool_calls,
                credits_spent: u.credits,
                resets_at: time(v.day.resets_at()),
            }),
            ..AgentOut::new(&v.agent)
        }
    }
}

/// A tool granted to an agent.
#[derive(Serialize, JsonSchema)]
pub struct GrantOut {
    /// The tool's stable id.
    pub tool_id: String,
    pub name: String,
    pub group: String,
    pub safety: &'static str,
    pub granted_by: String,
    pub granted_at: String,
}

impl GrantOut {
    pub fn new(g: &Grant) -> Self {
        GrantOut {
            tool_id: g.tool.id.to_string(),
            name: g.tool.name.as_str().to_owned(),
            group: g.tool.group.as_str().to_owned(),
            safety: g.tool.safety.as_str(),
            granted_by: g.granted_by.to_string(),
            granted_at: time(g.granted_at),
        }
    }
}

/// One event of a team run.
#[derive(Serialize, JsonSchema)]
pub struct EventOut {
    pub id: String,
    pub team_run_id: String,
    /// Its place in its run, from 1.
    pub seq: u32,
    pub event_type: &'static str,
    pub payload: EventPayload,
    pub occurred_at: String,
}

#[derive(Serialize, JsonSchema)]
pub struct EventPayload {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actor: Option<String>,
    /// The workflow run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl EventOut {
    pub fn new(e: &TeamEvent) -> Self {
        let d = &e.detail;
        EventOut {
            id: e.id.to_string(),
            team_run_id: e.team_run.to_string(),
            seq: e.seq,
            event_type: e.kind.as_str(),
            payload: EventPayload {
                actor: d.actor.map(|a| a.to_string()),
                run_id: d.run.map(|r| r.to_string()),
                node: d.node.clone(),
                tool: d.tool.clone(),
                note: d.note.clone(),
            },
            occurred_at: time(e.at),
        }
    }
}

/// What the action log says of one action.
#[derive(Serialize, JsonSchema)]
pub struct ActionOut {
    pub action_log_id: String,
    pub action: String,
    pub tool: Option<String>,
    /// succeeded, failed or refused.
    pub outcome: &'static str,
    pub code: Option<&'static str>,
    pub at: String,
}

impl ActionOut {
    pub fn new(e: &ActionEntry) -> Self {
        ActionOut {
            action_log_id: e.id.to_string(),
            action: e.action.as_str().to_owned(),
            tool: e.tool.as_ref().map(|t| t.name.as_str().to_owned()),
            outcome: e.outcome.as_str(),
            code: e.code.map(|c| c.as_str()),
            at: time(e.at),
        }
    }
}
