//! [`AgentStore`] over either backend: the tables of `0014_agents.sql`
//! (SQLite) and `0013_agents.sql` (PostgreSQL), through the statements of
//! `sql` (agents, members, grants, usage, the action log) and `team_sql`
//! (team runs and their events), the same on both. Writes run in one write transaction that locks
//! the agent's row (or the team run's) first; reads of more than one
//! statement (the reach check and what it guards, an agent and its
//! members) in one snapshot (see [`crate::conns`]). Why concurrent writes
//! keep the limits is in `sql`. On SQLite, the writes every agent call
//! makes (the day's counts, the action log) and the read of an agent with
//! its grant bypass sqlx (`sqlite_direct`), held to the same contract
//! suite.
//!
//! [`SqlLenserHandles`] answers lf-agent's [`LenserHandles`] from the
//! accounts' `lensers` table, for the one namespace of handles.

pub(crate) mod rows;
pub(crate) mod sql;
mod sqlite_direct;
mod team_sql;

use async_trait::async_trait;
use lf_agent::team::TeamRunChange;
use lf_agent::{
    ActionEntry, Agent, AgentFilter, AgentHandle, AgentStore, Ask, EventFilter, Grant, LenserHandles, Member,
    NewEvent, Reservation, StoredGrant, TeamEvent, TeamRun, TeamRunFilter, TeamRunId, TeamRunStatus,
    TeamRunUpdate, ToolKey, Usage, UsageDay,
};
use lf_core::{LenserId, LfResult, Page, PageRequest, Reach, Timestamp};

use crate::conns::{Conns, on};
use crate::reach::everything_or_me;
use crate::{postgres, sqlite};

/// What the answers of `agent_and_grant` kept on SQLite may weigh.
const CACHE_BYTES: usize = 4 << 20;

/// `agent_and_grant`'s key: the reach, the agent, the tool by id or name.
type CallKey = ((bool, uuid::Uuid), LenserId, Result<uuid::Uuid, String>);

/// About how many bytes of strings an agent and its grant hold.
fn call_weight((agent, _): &(Agent, Option<Grant>)) -> usize {
    let p = &agent.profile;
    let text = |t: Option<&str>| t.map_or(0, str::len);
    256 + agent.members.len() * 64
        + text(p.persona.as_ref().map(|x| x.as_str()))
        + text(p.bio.as_ref().map(|x| x.as_str()))
}

/// [`AgentStore`] over either backend.
pub(crate) struct SqlAgentStore {
    conns: Conns,
    /// SQLite: the answers of `agent_and_grant`, while the database is
    /// unchanged.
    calls: sqlite::ReadCache<CallKey, (Agent, Option<Grant>)>,
}

impl SqlAgentStore {
    pub(crate) fn new(conns: Conns) -> Self {
        Self { conns, calls: sqlite::ReadCache::new(CACHE_BYTES, call_weight) }
    }
}

#[async_trait]
impl AgentStore for SqlAgentStore {
    async fn create_agent(&self, agent: &Agent, max_per_owner: u32) -> LfResult<()> {
        on!(&self.conns, write, |conn| sql::create_agent(conn, agent, max_per_owner))
    }

    async fn get_agent(&self, reach: Reach, id: LenserId) -> LfResult<Agent> {
        on!(&self.conns, snapshot, |conn| sql::get_agent(conn, reach, id))
    }

    async fn handle_taken(&self, handle: &AgentHandle) -> LfResult<bool> {
        on!(&self.conns, reading, |conn| sql::handle_taken_by_agent(conn, handle))
    }

    async fn list_agents(
        &self,
        reach: Reach,
        filter: &AgentFilter,
        page: PageRequest,
    ) -> LfResult<Page<Agent>> {
        on!(&self.conns, snapshot, |conn| sql::list_agents(conn, reach, filter, page))
    }

    async fn update_agent(&self, agent: &Agent, expected_revision: u64) -> LfResult<()> {
        on!(&self.conns, write, |conn| sql::update_agent(conn, agent, expected_revision))
    }

    async fn put_member(&self, agent: LenserId, member: &Member, max_members: u32) -> LfResult<bool> {
        on!(&self.conns, write, |conn| sql::put_member(conn, agent, member, max_members))
    }

    async fn remove_member(&self, agent: LenserId, lenser: LenserId) -> LfResult<bool> {
        on!(&self.conns, write, |conn| sql::remove_member(conn, agent, lenser))
    }

    async fn put_grant(&self, grant: &Grant, max_grants: u32) -> LfResult<StoredGrant> {
        on!(&self.conns, write, |conn| sql::put_grant(conn, grant, max_grants))
    }

    async fn agent_and_grant(
        &self,
        reach: Reach,
        id: LenserId,
        tool: &ToolKey,
    ) -> LfResult<(Agent, Option<Grant>)> {
        match &self.conns {
            // Every call an agent makes comes here: read on this thread, or
            // kept from the last time while nothing has changed.
            Conns::Sqlite(db) => {
                let by = match tool {
                    ToolKey::Id(t) => Ok(t.as_uuid()),
                    ToolKey::Name(n) => Err(n.as_str().to_owned()),
                };
                let key = (everything_or_me(reach), id, by);
                let read = |conn: &_| sqlite_direct::agent_and_grant(conn, reach, id, tool);
                db.direct_cached(&self.calls, key, read).await?.ok_or_else(|| lf_agent::agent_not_found(id))
            }
            Conns::Postgres(pool) => {
                postgres::snapshot(pool, async |conn| sql::agent_and_grant(conn, reach, id, tool).await).await
            }
        }
    }

    async fn list_grants(&self, reach: Reach, agent: LenserId, page: PageRequest) -> LfResult<Page<Grant>> {
        on!(&self.conns, snapshot, |conn| sql::list_grants(conn, reach, agent, page))
    }

    async fn revoke_grant(&self, agent: LenserId, tool: &ToolKey) -> LfResult<Option<Grant>> {
        on!(&self.conns, write, |conn| sql::revoke_grant(conn, agent, tool))
    }

    async fn reserve_usage(&self, agent: LenserId, day: UsageDay, asks: &[Ask]) -> LfResult<Reservation> {
        match &self.conns {
            Conns::Sqlite(db) => {
                let asks = asks.to_vec();
                db.write_direct(move |c| sqlite_direct::reserve_usage(c, agent, day, &asks)).await
            }
            Conns::Postgres(pool) => {
                postgres::write(pool, async |conn| sql::reserve_usage(conn, agent, day, asks).await).await
            }
        }
    }

    async fn charge_run(
        &self,
        agent: LenserId,
        day: UsageDay,
        run: lf_core::RunId,
        credits: u64,
    ) -> LfResult<bool> {
        on!(&self.conns, write, |conn| sql::charge_run(conn, agent, day, run, credits))
    }

    async fn usage(&self, reach: Reach, agent: LenserId, day: UsageDay) -> LfResult<Usage> {
        on!(&self.conns, snapshot, |conn| sql::usage_for(conn, reach, agent, day))
    }

    async fn release_usage(&self, agent: LenserId, day: UsageDay, units: &Usage) -> LfResult<()> {
        match &self.conns {
            Conns::Sqlite(db) => {
                let units = *units;
                db.write_direct(move |c| sqlite_direct::release_usage(c, agent, day, &units)).await
            }
            Conns::Postgres(pool) => {
                postgres::write(pool, async |conn| sql::release_usage(conn, agent, day, units).await).await
            }
        }
    }

    async fn record_action(&self, entry: &ActionEntry) -> LfResult<()> {
        self.record_actions(std::slice::from_ref(entry)).await
    }

    async fn record_actions(&self, entries: &[ActionEntry]) -> LfResult<()> {
        match &self.conns {
            Conns::Sqlite(db) => {
                let rows = sqlite_direct::action_rows(entries);
                db.write_direct(move |c| sqlite_direct::record_actions(c, &rows)).await
            }
            Conns::Postgres(pool) => {
                postgres::write(pool, async |conn| sql::record_actions(conn, entries).await).await
            }
        }
    }

    async fn reserve_usage_logging(
        &self,
        agent: LenserId,
        day: UsageDay,
        asks: &[Ask],
        entries: &[ActionEntry],
    ) -> LfResult<Reservation> {
        match &self.conns {
            Conns::Sqlite(db) => {
                let (rows, asks) = (sqlite_direct::action_rows(entries), asks.to_vec());
                db.write_direct(move |c| {
                    sqlite_direct::record_actions(c, &rows)?;
                    sqlite_direct::reserve_usage(c, agent, day, &asks)
                })
                .await
            }
            Conns::Postgres(pool) => {
                postgres::write(pool, async |conn| {
                    sql::record_actions(conn, entries).await?;
                    sql::reserve_usage(conn, agent, day, asks).await
                })
                .await
            }
        }
    }

    async fn list_actions(
        &self,
        reach: Reach,
        agent: LenserId,
        page: PageRequest,
    ) -> LfResult<Page<ActionEntry>> {
        on!(&self.conns, snapshot, |conn| sql::list_actions(conn, reach, agent, page))
    }

    async fn create_team_run(&self, run: &TeamRun, events: &[NewEvent]) -> LfResult<Vec<TeamEvent>> {
        on!(&self.conns, write, |conn| team_sql::create_team_run(conn, run, events))
    }

    async fn get_team_run(&self, reach: Reach, agent: LenserId, id: TeamRunId) -> LfResult<TeamRun> {
        on!(&self.conns, snapshot, |conn| team_sql::get_team_run(conn, reach, agent, id))
    }

    async fn list_team_runs(
        &self,
        reach: Reach,
        agent: LenserId,
        filter: &TeamRunFilter,
        page: PageRequest,
    ) -> LfResult<Page<TeamRun>> {
        on!(&self.conns, snapshot, |conn| team_sql::list_team_runs(conn, reach, agent, filter, page))
    }

    async fn team_runs_in(
        &self,
        status: TeamRunStatus,
        after: Option<(Timestamp, TeamRunId)>,
        limit: u32,
    ) -> LfResult<Vec<TeamRun>> {
        on!(&self.conns, snapshot, |conn| team_sql::team_runs_in(conn, status, after, limit))
    }

    async fn advance_team_run(&self, change: &TeamRunChange) -> LfResult<TeamRunUpdate> {
        on!(&self.conns, write, |conn| team_sql::advance_team_run(conn, change))
    }

    async fn list_events(
        &self,
        reach: Reach,
        agent: LenserId,
        filter: &EventFilter,
        page: PageRequest,
    ) -> LfResult<Page<TeamEvent>> {
        on!(&self.conns, snapshot, |conn| team_sql::list_events(conn, reach, agent, filter, page))
    }
}

/// [`LenserHandles`] over either backend: whether a lenser (an account in
/// `lensers`) holds a handle. A lenser's handle is stored lowercase; the
/// handle asked about is lowercased first.
pub(crate) struct SqlLenserHandles {
    conns: Conns,
}

impl SqlLenserHandles {
    pub(crate) fn new(conns: Conns) -> Self {
        Self { conns }
    }
}

#[async_trait]
impl LenserHandles for SqlLenserHandles {
    async fn lenser_holds(&self, handle: &str) -> LfResult<bool> {
        on!(&self.conns, reading, |conn| sql::lenser_holds(conn, handle))
    }

    async fn lenser_exists(&self, id: LenserId) -> LfResult<bool> {
        on!(&self.conns, reading, |conn| sql::lenser_exists(conn, id))
    }
}
