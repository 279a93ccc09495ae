//! An in-memory [`AgentStore`]: for tests, examples and apps that embed
//! lf-agent without a database. Same contract as the SQL stores; one lock
//! makes every method atomic.

use std::cmp::Reverse;
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use async_trait::async_trait;
use lf_core::{LenserId, LfError, LfResult, Page, PageRequest, Reach, RunId, Timestamp};

use crate::errors::{
    agent_moved, agent_not_found, handle_taken, team_run_not_found, too_many_agents, too_many_grants,
    too_many_members,
};
use crate::model::{
    ActionEntry, Agent, AgentFilter, AgentHandle, Ask, EventFilter, Grant, Member, NewEvent, Reservation,
    Role, StoredGrant, TeamEvent, TeamRun, TeamRunFilter, TeamRunId, TeamRunStatus, TeamRunUpdate, ToolKey,
    Usage, UsageDay,
};
use crate::store::AgentStore;
use crate::team::TeamRunChange;

#[derive(Default)]
struct State {
    agents: HashMap<LenserId, Agent>,
    grants: HashMap<LenserId, Vec<Grant>>,
    usage: HashMap<(LenserId, UsageDay), Usage>,
    /// The workflow runs whose spend was charged ([`AgentStore::charge_run`]).
    charged: std::collections::HashSet<RunId>,
    actions: HashMap<LenserId, Vec<ActionEntry>>,
    runs: HashMap<TeamRunId, TeamRun>,
    /// Each team run's events, in order.
    events: HashMap<TeamRunId, Vec<TeamEvent>>,
}

impl State {
    /// [`AgentStore::reserve_usage`] on the locked state.
    fn reserve(&mut self, agent: LenserId, day: UsageDay, asks: &[Ask]) -> LfResult<Reservation> {
        self.agent(agent)?;
        let usage = self.usage.entry((agent, day)).or_default();
        // Asks of one kind add up: check the sum, not each alone.
        let mut after = *usage;
        for ask in asks {
            let used = after.get(ask.kind);
            match used.checked_add(ask.amount) {
                Some(n) if n <= ask.limit => *after.get_mut(ask.kind) = n,
                _ => {
                    return Ok(Reservation::Refused {
                        kind: ask.kind,
                        used: usage.get(ask.kind),
                        asked: ask.amount,
                        limit: ask.limit,
                    });
                }
            }
        }
        *usage = after;
        Ok(Reservation::Reserved(after))
    }

    /// [`AgentStore::record_actions`] on the locked state.
    fn record(&mut self, entries: &[ActionEntry]) -> LfResult<()> {
        let mut ids = std::collections::HashSet::new();
        for entry in entries {
            self.agent(entry.agent)?;
            let taken =
                self.actions.get(&entry.agent).is_some_and(|log| log.iter().any(|e| e.id == entry.id));
            if taken || !ids.insert(entry.id) {
                return Err(LfError::conflict(format!("action log entry {} already exists", entry.id)));
            }
        }
        for entry in entries {
            self.actions.entry(entry.agent).or_default().push(entry.clone());
        }
        Ok(())
    }

    fn agent(&self, id: LenserId) -> LfResult<&Agent> {
        self.agents.get(&id).ok_or_else(|| agent_not_found(id))
    }

    fn readable(&self, reach: Reach, id: LenserId) -> LfResult<&Agent> {
        match (self.agents.get(&id), reach) {
            (Some(a), Reach::Everything) => Ok(a),
            (Some(a), Reach::Lenser(me)) if a.role_of(me).is_some() => Ok(a),
            _ => Err(agent_not_found(id)),
        }
    }

    fn run_of(&self, agent: LenserId, id: TeamRunId) -> LfResult<&TeamRun> {
        self.runs.get(&id).filter(|r| r.agent == agent).ok_or_else(|| team_run_not_found(id))
    }

    /// Appends `events` to run `id`, numbered on from its last, never
    /// before its last.
    fn append(&mut self, run: &TeamRun, events: &[NewEvent], at: lf_core::Timestamp) -> Vec<TeamEvent> {
        let list = self.events.entry(run.id).or_default();
        let out = crate::team::numbered(run, events, list.last().map(|e| (e.seq, e.at)), at);
        list.extend(out.iter().cloned());
        out
    }
}

/// An [`AgentStore`] kept in process memory.
#[derive(Default)]
pub struct MemoryAgentStore {
    state: Mutex<State>,
}

impl MemoryAgentStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// `items` (sorted) cut to `page`.
fn page_of<T>(items: Vec<T>, page: PageRequest) -> Page<T> {
    let total = items.len() as u64;
    let items = items.into_iter().skip(page.offset() as usize).take(page.limit() as usize).collect();
    Page::new(items, total, page)
}

#[async_trait]
impl AgentStore for MemoryAgentStore {
    async fn create_agent(&self, agent: &Agent, max_per_owner: u32) -> LfResult<()> {
        let mut s = self.lock();
        if s.agents.contains_key(&agent.id) {
            return Err(LfError::conflict(format!("AI Lenser {} already exists", agent.id)));
        }
        if s.agents.values().any(|a| a.handle == agent.handle) {
            return Err(handle_taken(&agent.handle));
        }
        let owned = s.agents.values().filter(|a| a.owner == agent.owner && a.is_active()).count();
        if owned >= max_per_owner as usize {
            return Err(too_many_agents(agent.owner, max_per_owner));
        }
        s.agents.insert(agent.id, Agent { members: Vec::new(), ..agent.clone() });
        Ok(())
    }

    async fn get_agent(&self, reach: Reach, id: LenserId) -> LfResult<Agent> {
        self.lock().readable(reach, id).cloned()
    }

    async fn handle_taken(&self, handle: &AgentHandle) -> LfResult<bool> {
        Ok(self.lock().agents.values().any(|a| a.handle == *handle))
    }

    async fn list_agents(
        &self,
        reach: Reach,
        filter: &AgentFilter,
        page: PageRequest,
    ) -> LfResult<Page<Agent>> {
        let s = self.lock();
        let mut items: Vec<Agent> = s
            .agents
            .values()
            .filter(|a| match reach {
                Reach::Everything => true,
                Reach::Lenser(me) => a.role_of(me).is_some(),
            })
            .filter(|a| filter.include_archived || a.is_active())
            .filter(|a| match filter.lenser.map(|l| a.role_of(l)) {
                None => true,
                Some(None) => false,
                Some(Some(role)) => filter.role.is_none_or(|r| r == role),
            })
            .cloned()
            .collect();
        items.sort_by_key(|a| Reverse((a.created_at, a.id)));
        Ok(page_of(items, page))
    }

    async fn update_agent(&self, agent: &Agent, expected_revision: u64) -> LfResult<()> {
        let mut s = self.lock();
        let stored = s.agents.get_mut(&agent.id).ok_or_else(|| agent_not_found(agent.id))?;
        if stored.revision != expected_revision {
            return Err(agent_moved(agent.id));
        }
        stored.profile = agent.profile.clone();
        stored.policy = agent.policy;
        stored.status = agent.status;
        stored.updated_at = agent.updated_at;
        stored.archived_at = agent.archived_at;
        stored.revision = expected_revision + 1;
        Ok(())
    }

    async fn put_member(&self, agent: LenserId, member: &Member, max_members: u32) -> LfResult<bool> {
        let mut s = self.lock();
        let stored = s.agents.get_mut(&agent).ok_or_else(|| agent_not_found(agent))?;
        if member.lenser == stored.owner || member.role == Role::Owner {
            return Err(LfError::conflict(format!(
                "AI Lenser {agent} has one owner, {}; the owner is not added as a member, and no member becomes owner.",
                stored.owner
            )));
        }
        if let Some(m) = stored.members.iter_mut().find(|m| m.lenser == member.lenser) {
            m.role = member.role;
            return Ok(false);
        }
        if stored.members.len() >= max_members as usize {
            return Err(too_many_members(agent, max_members));
        }
        stored.members.push(member.clone());
        Ok(true)
    }

    async fn remove_member(&self, agent: LenserId, lenser: LenserId) -> LfResult<bool> {
        let mut s = self.lock();
        let stored = s.agents.get_mut(&agent).ok_or_else(|| agent_not_found(agent))?;
        let before = stored.members.len();
        stored.members.retain(|m| m.lenser != lenser);
        Ok(stored.members.len() < before)
    }

    async fn put_grant(&self, grant: &Grant, max_grants: u32) -> LfResult<StoredGrant> {
        let mut s = self.lock();
        s.agent(grant.agent)?;
        let grants = s.grants.entry(grant.agent).or_default();
        if let Some(g) = grants.iter().find(|g| g.tool.id == grant.tool.id) {
            return Ok(StoredGrant { grant: g.clone(), created: false });
        }
        if grants.len() >= max_grants as usize {
            return Err(too_many_grants(grant.agent, max_grants));
        }
        grants.push(grant.clone());
        Ok(StoredGrant { grant: grant.clone(), created: true })
    }

    async fn agent_and_grant(
        &self,
        reach: Reach,
        id: LenserId,
        tool: &ToolKey,
    ) -> LfResult<(Agent, Option<Grant>)> {
        let s = self.lock();
        let agent = s.readable(reach, id)?.clone();
        let grant = s.grants.get(&id).and_then(|gs| gs.iter().find(|g| tool.names(&g.tool))).cloned();
        Ok((agent, grant))
    }

    async fn list_grants(&self, reach: Reach, agent: LenserId, page: PageRequest) -> LfResult<Page<Grant>> {
        let s = self.lock();
        s.readable(reach, agent)?;
        let mut items = s.grants.get(&agent).cloned().unwrap_or_default();
        items.sort_by(|a, b| a.tool.name.cmp(&b.tool.name));
        Ok(page_of(items, page))
    }

    async fn revoke_grant(&self, agent: LenserId, tool: &ToolKey) -> LfResult<Option<Grant>> {
        let mut s = self.lock();
        s.agent(agent)?;
        let Some(grants) = s.grants.get_mut(&agent) else { return Ok(None) };
        Ok(grants.iter().position(|g| tool.names(&g.tool)).map(|i| grants.remove(i)))
    }

    async fn reserve_usage(&self, agent: LenserId, day: UsageDay, asks: &[Ask]) -> LfResult<Reservation> {
        self.lock().reserve(agent, day, asks)
    }

    async fn reserve_usage_logging(
        &self,
        agent: LenserId,
        day: UsageDay,
        asks: &[Ask],
        entries: &[ActionEntry],
    ) -> LfResult<Reservation> {
        let mut s = self.lock();
        s.agent(agent)?;
        s.record(entries)?;
        s.reserve(agent, day, asks)
    }

    async fn release_usage(&self, agent: LenserId, day: UsageDay, units: &Usage) -> LfResult<()> {
        let mut s = self.lock();
        s.agent(agent)?;
        if let Some(usage) = s.usage.get_mut(&(agent, day)) {
            *usage = usage.saturating_sub(*units);
        }
        Ok(())
    }

    async fn charge_run(&self, agent: LenserId, day: UsageDay, run: RunId, credits: u64) -> LfResult<bool> {
        let mut s = self.lock();
        s.agent(agent)?;
        if !s.charged.insert(run) {
            return Ok(false);
        }
        let usage = s.usage.entry((agent, day)).or_default();
        usage.credits = usage.credits.saturating_add(credits);
        Ok(true)
    }

    async fn usage(&self, reach: Reach, agent: LenserId, day: UsageDay) -> LfResult<Usage> {
        let s = self.lock();
        s.readable(reach, agent)?;
        Ok(s.usage.get(&(agent, day)).copied().unwrap_or_default())
    }

    async fn record_action(&self, entry: &ActionEntry) -> LfResult<()> {
        self.record_actions(std::slice::from_ref(entry)).await
    }

    async fn record_actions(&self, entries: &[ActionEntry]) -> LfResult<()> {
        self.lock().record(entries)
    }

    async fn list_actions(
        &self,
        reach: Reach,
        agent: LenserId,
        page: PageRequest,
    ) -> LfResult<Page<ActionEntry>> {
        let s = self.lock();
        s.readable(reach, agent)?;
        let mut items = s.actions.get(&agent).cloned().unwrap_or_default();
        items.sort_by_key(|e| Reverse((e.at, e.id)));
        Ok(page_of(items, page))
    }

    async fn create_team_run(&self, run: &TeamRun, events: &[NewEvent]) -> LfResult<Vec<TeamEvent>> {
        let mut s = self.lock();
        s.agent(run.agent)?;
        if s.runs.contains_key(&run.id) {
            return Err(LfError::conflict(format!("team run {} already exists", run.id)));
        }
        s.runs.insert(run.id, run.clone());
        Ok(s.append(run, events, run.created_at))
    }

    async fn get_team_run(&self, reach: Reach, agent: LenserId, id: TeamRunId) -> LfResult<TeamRun> {
        let s = self.lock();
        s.readable(reach, agent)?;
        s.run_of(agent, id).cloned()
    }

    async fn list_team_runs(
        &self,
        reach: Reach,
        agent: LenserId,
        filter: &TeamRunFilter,
        page: PageRequest,
    ) -> LfResult<Page<TeamRun>> {
        let s = self.lock();
        s.readable(reach, agent)?;
        let mut items: Vec<TeamRun> = s
            .runs
            .values()
            .filter(|r| r.agent == agent && filter.status.is_none_or(|st| r.status == st))
            .cloned()
            .collect();
        items.sort_by_key(|r| Reverse((r.created_at, r.id)));
        Ok(page_of(items, page))
    }

    async fn team_runs_in(
        &self,
        status: TeamRunStatus,
        after: Option<(Timestamp, TeamRunId)>,
        limit: u32,
    ) -> LfResult<Vec<TeamRun>> {
        let st = self.lock();
        let mut runs: Vec<TeamRun> = st
            .runs
            .values()
            .filter(|r| r.status == status && after.is_none_or(|a| (r.created_at, r.id) > a))
            .cloned()
            .collect();
        runs.sort_by_key(|r| (r.created_at, r.id));
        runs.truncate(limit as usize);
        Ok(runs)
    }

    async fn advance_team_run(&self, change: &TeamRunChange) -> LfResult<TeamRunUpdate> {
        let mut s = self.lock();
        let run = change.apply(s.run_of(change.agent, change.id)?.clone())?;
        let events = s.append(&run, &change.events, change.at);
        s.runs.insert(run.id, run.clone());
        Ok(TeamRunUpdate { run, events })
    }

    async fn list_events(
        &self,
        reach: Reach,
        agent: LenserId,
        filter: &EventFilter,
        page: PageRequest,
    ) -> LfResult<Page<TeamEvent>> {
        let s = self.lock();
        s.readable(reach, agent)?;
        if let Some(run) = filter.team_run {
            s.run_of(agent, run)?;
        }
        let mut items: Vec<TeamEvent> = s
            .events
            .iter()
            .filter(|(run, _)| filter.team_run.is_none_or(|r| r == **run))
            .flat_map(|(_, evs)| evs.iter())
            .filter(|e| e.agent == agent && filter.kind.is_none_or(|k| e.kind == k))
            .cloned()
            .collect();
        items.sort_by_key(|e| Reverse((e.at, e.team_run, e.seq)));
        Ok(page_of(items, page))
    }
}
