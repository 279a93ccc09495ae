//! The storage contract of agents. Implementations: [`crate::MemoryAgentStore`]
//! here, SQLite and PostgreSQL in lf-store. All of them run
//! [`crate::contract::suite`].

use async_trait::async_trait;
use lf_core::{LenserId, LfResult, Page, PageRequest, Reach, RunId, Timestamp};

use crate::model::{
    ActionEntry, Agent, AgentFilter, AgentHandle, Ask, EventFilter, Grant, Member, NewEvent, Reservation,
    StoredGrant, TeamEvent, TeamRun, TeamRunFilter, TeamRunId, TeamRunStatus, TeamRunUpdate, ToolKey, Usage,
    UsageDay,
};
use crate::team::TeamRunChange;

/// Where agents live: their records, members, grants, daily usage, action
/// log, team runs and events.
///
/// Visibility is the store's job: every read of an agent or of what is its
/// takes the caller's [`Reach`] and applies it inside the query. With
/// `Reach::Lenser(me)` an agent is readable when `me` is its owner, a
/// co-owner or an operator; `Reach::Everything` reads every agent. Agents
/// are never deleted (archiving is a status). Writes are the service's,
/// after it read the agent with the caller's reach, and take no reach.
///
/// Each write method is atomic: a SQL store does it in one transaction
/// (`BEGIN IMMEDIATE` on SQLite; on PostgreSQL a lock on the agent's row,
/// or on the owner's for [`AgentStore::create_agent`]), so that what it
/// checks (a handle free, a count under its limit, a revision or status
/// unchanged) still holds when it writes, with any number of servers on
/// one database.
///
/// Errors every implementation MUST return (other failures are INTERNAL):
/// - NOT_FOUND ([`crate::agent_not_found`]) where the agent does not exist
///   or is out of the caller's reach (the same error in both cases), and
///   ([`crate::team_run_not_found`]) where a team run is not one of the
///   agent's;
/// - CONFLICT ([`crate::handle_taken`]) where another agent holds the
///   handle, ([`crate::agent_moved`]) where the agent's revision is not the
///   one the write expects, ([`crate::team_run_moved`]) where a team run's
///   status is not the one the write expects, and where an id is taken;
/// - SLOTS_FULL ([`crate::too_many_agents`], [`crate::too_many_members`],
///   [`crate::too_many_grants`]) past a limit the caller gives.
///
/// Orders: members oldest first; agents and team runs newest first
/// (`created_at` descending, then id descending); grants by tool name;
/// action entries newest first (`at` descending, then id descending);
/// events newest first (`at` descending, then team run id descending, then
/// `seq` descending).
#[async_trait]
pub trait AgentStore: Send + Sync {
    /// Stores a new agent (with no members) if its handle is free among
    /// agents (archived ones included) and its owner has fewer than
    /// `max_per_owner` active agents. CONFLICT naming the handle when it is
    /// taken; SLOTS_FULL at the limit; CONFLICT when the id is taken.
    async fn create_agent(&self, agent: &Agent, max_per_owner: u32) -> LfResult<()>;

    /// The agent, with its members. NOT_FOUND if missing or out of reach.
    async fn get_agent(&self, reach: Reach, id: LenserId) -> LfResult<Agent>;

    /// Whether an agent, active or archived, holds `handle`. Takes no
    /// reach: a handle is taken whoever can see its agent (for the lenser
    /// side of the one namespace of handles).
    async fn handle_taken(&self, handle: &AgentHandle) -> LfResult<bool>;

    /// Readable agents matching `filter`, newest first; archived ones only
    /// with `filter.include_archived`. `total` counts every match.
    async fn list_agents(
        &self,
        reach: Reach,
        filter: &AgentFilter,
        page: PageRequest,
    ) -> LfResult<Page<Agent>>;

    /// Writes `agent`'s profile, policy, status, `updated_at` and
    /// `archived_at` with `revision = expected_revision + 1`, if its stored
    /// revision is `expected_revision`. Members, handle and owner are not
    /// written. NOT_FOUND if missing; CONFLICT if the revision moved.
    async fn update_agent(&self, agent: &Agent, expected_revision: u64) -> LfResult<()>;

    /// Adds `member` to the agent, or changes the role of the lenser if
    /// they are a member already (keeping `added_at` and `added_by`); true
    /// when added. A new member is refused at `max_members`. NOT_FOUND if
    /// the agent is missing; CONFLICT if `member.lenser` is its owner or
    /// `member.role` is owner; SLOTS_FULL at the limit.
    async fn put_member(&self, agent: LenserId, member: &Member, max_members: u32) -> LfResult<bool>;

    /// Removes `lenser` from the agent's members; true if they were one.
    /// NOT_FOUND if the agent is missing. The owner is not a member.
    async fn remove_member(&self, agent: LenserId, lenser: LenserId) -> LfResult<bool>;

    /// Stores the grant of `grant.tool` (by its id) to the agent, unless
    /// it holds it already: then nothing is written and the stored grant
    /// comes back with `created: false`. A new grant is refused at
    /// `max_grants`. NOT_FOUND if the agent is missing; SLOTS_FULL at the
    /// limit.
    async fn put_grant(&self, grant: &Grant, max_grants: u32) -> LfResult<StoredGrant>;

    /// The agent, with its members, and its grant of the tool `tool` names
    /// (by id, or by the name it was granted under), if any, read together:
    /// what every call an agent makes checks. NOT_FOUND if the agent is
    /// missing or out of reach.
    async fn agent_and_grant(
        &self,
        reach: Reach,
        id: LenserId,
        tool: &ToolKey,
    ) -> LfResult<(Agent, Option<Grant>)>;

    /// The agent's grants by tool name. NOT_FOUND if missing or out of reach.
    async fn list_grants(&self, reach: Reach, agent: LenserId, page: PageRequest) -> LfResult<Page<Grant>>;

    /// Removes the agent's grant of the tool `tool` names; the grant
    /// removed, if there was one. NOT_FOUND if the agent is missing.
    async fn revoke_grant(&self, agent: LenserId, tool: &ToolKey) -> LfResult<Option<Grant>>;

    /// Counts every ask against the agent's usage of `day`, all or none:
    /// if for each ask the day's count plus `amount` stays within `limit`,
    /// every count grows and the new usage comes back; otherwise nothing is
    /// written and the first ask that did not fit comes back. Two callers
    /// never both pass a limit that has room for one. NOT_FOUND if the
    /// agent is missing.
    async fn reserve_usage(&self, agent: LenserId, day: UsageDay, asks: &[Ask]) -> LfResult<Reservation>;

    /// Gives back `units` of the agent's usage of `day` (what a server
    /// reserved for calls it then did not make), no count going below
    /// zero. NOT_FOUND if the agent is missing.
    async fn release_usage(&self, agent: LenserId, day: UsageDay, units: &Usage) -> LfResult<()>;

    /// Counts `credits` that workflow run `run`, started by the agent,
    /// spent against the agent's usage of `day`, once per run: the first
    /// charge of `run` adds them (whatever the limit: they are spent) and
    /// answers true; a later one writes nothing and answers false. So a
    /// charge made again after a crash counts once. NOT_FOUND if the agent
    /// is missing.
    async fn charge_run(&self, agent: LenserId, day: UsageDay, run: RunId, credits: u64) -> LfResult<bool>;

    /// The agent's usage of `day` (zero for a day with none). NOT_FOUND if
    /// missing or out of reach.
    async fn usage(&self, reach: Reach, agent: LenserId, day: UsageDay) -> LfResult<Usage>;

    /// Appends an entry to the agent's action log. NOT_FOUND if the agent
    /// is missing; CONFLICT if the id is taken. Returns once the entry is
    /// committed: a process killed after that keeps it (a call answers on
    /// it, see `service/group_commit.rs`).
    async fn record_action(&self, entry: &ActionEntry) -> LfResult<()>;

    /// Appends `entries` (of any agents) to the action log, all or none, in
    /// one transaction, committed when it returns: NOT_FOUND if an agent is
    /// missing, CONFLICT if an id is taken (also twice in `entries`), and
    /// then nothing is written.
    async fn record_actions(&self, entries: &[ActionEntry]) -> LfResult<()>;

    /// [`AgentStore::record_actions`] of `entries` and
    /// [`AgentStore::reserve_usage`] in one write (on SQL, one transaction
    /// and one commit): a call ledger writes the log that waits with the
    /// reservation it has to make anyway. Both or neither: an error of
    /// either writes nothing (a refused reservation is no error: the log
    /// is written). Committed when it returns, as `record_actions`.
    async fn reserve_usage_logging(
        &self,
        agent: LenserId,
        day: UsageDay,
        asks: &[Ask],
        entries: &[ActionEntry],
    ) -> LfResult<Reservation>;

    /// The agent's action log, newest first. NOT_FOUND if the agent is
    /// missing or out of reach.
    async fn list_actions(
        &self,
        reach: Reach,
        agent: LenserId,
        page: PageRequest,
    ) -> LfResult<Page<ActionEntry>>;

    /// Stores a new team run of its agent with its first events (numbered
    /// from 1); the events as stored. NOT_FOUND if the agent is missing;
    /// CONFLICT if the id is taken.
    async fn create_team_run(&self, run: &TeamRun, events: &[NewEvent]) -> LfResult<Vec<TeamEvent>>;

    /// The team run `id` of `agent`. NOT_FOUND ([`crate::agent_not_found`])
    /// if the agent is missing or out of reach, ([`crate::team_run_not_found`])
    /// if the run is missing or another agent's.
    async fn get_team_run(&self, reach: Reach, agent: LenserId, id: TeamRunId) -> LfResult<TeamRun>;

    /// The agent's team runs matching `filter`, newest first. NOT_FOUND if
    /// the agent is missing or out of reach.
    async fn list_team_runs(
        &self,
        reach: Reach,
        agent: LenserId,
        filter: &TeamRunFilter,
        page: PageRequest,
    ) -> LfResult<Page<TeamRun>>;

    /// Every agent's team runs in `status`, oldest first (`created_at`
    /// ascending, then id ascending), only those after `after` in that
    /// order (the `(created_at, id)` of the last run of the previous
    /// batch), at most `limit`. Takes no reach: it is for the runner's
    /// catch-up, which dispatches the queued runs a dead process never
    /// dispatched and delivers the ends of running ones nobody heard.
    async fn team_runs_in(
        &self,
        status: TeamRunStatus,
        after: Option<(Timestamp, TeamRunId)>,
        limit: u32,
    ) -> LfResult<Vec<TeamRun>>;

    /// Applies `change` if the team run is still in `change.from`: status
    /// `change.to`, `updated_at = change.at`, `finished_at = change.at`
    /// when `to` is finished, and `workflow_run`, `decision` and `error`
    /// where the change sets them; then appends its events, numbered on
    /// from the run's last, each `at` the later of `change.at` and the
    /// run's last event's (so a clock that steps back never reorders a
    /// run's events). The run and the events as stored. NOT_FOUND if the
    /// run is not `change.agent`'s; CONFLICT if its status moved.
    async fn advance_team_run(&self, change: &TeamRunChange) -> LfResult<TeamRunUpdate>;

    /// Events of the agent's team runs matching `filter`, newest first.
    /// NOT_FOUND if the agent is missing or out of reach, or if
    /// `filter.team_run` is not one of its team runs.
    async fn list_events(
        &self,
        reach: Reach,
        agent: LenserId,
        filter: &EventFilter,
        page: PageRequest,
    ) -> LfResult<Page<TeamEvent>>;
}

/// Answers what lf-agent asks of the lensers (people's accounts), which it
/// does not know: whether one holds a handle (agents and lensers share one
/// namespace of handles), and whether one exists. The composition root
/// answers it from the account store.
#[async_trait]
pub trait LenserHandles: Send + Sync {
    /// Whether a lenser holds `handle` (lowercase `[a-z0-9_]`).
    async fn lenser_holds(&self, handle: &str) -> LfResult<bool>;

    /// Whether lenser `id` has an account.
    async fn lenser_exists(&self, id: LenserId) -> LfResult<bool>;
}

/// No lensers: for an app that has agents but no accounts, and for tests.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoLensers;

#[async_trait]
impl LenserHandles for NoLensers {
    async fn lenser_holds(&self, _handle: &str) -> LfResult<bool> {
        Ok(false)
    }

    async fn lenser_exists(&self, _id: LenserId) -> LfResult<bool> {
        Ok(false)
    }
}

/// Lensers kept in memory, by id and handle: for apps without an account
/// store, and for tests.
#[derive(Debug, Default)]
pub struct MemoryLensers(std::sync::Mutex<std::collections::HashMap<LenserId, String>>);

impl MemoryLensers {
    pub fn new() -> Self {
        Self::default()
    }

    /// Records lenser `id`, holding `handle` (kept lowercase).
    pub fn add(&self, id: LenserId, handle: &str) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).insert(id, handle.to_ascii_lowercase());
    }
}

#[async_trait]
impl LenserHandles for MemoryLensers {
    async fn lenser_holds(&self, handle: &str) -> LfResult<bool> {
        let handle = handle.to_ascii_lowercase();
        Ok(self.0.lock().unwrap_or_else(|e| e.into_inner()).values().any(|h| *h == handle))
    }

    async fn lenser_exists(&self, id: LenserId) -> LfResult<bool> {
        Ok(self.0.lock().unwrap_or_else(|e| e.into_inner()).contains_key(&id))
    }
}
