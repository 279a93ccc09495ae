//! A store whose action-log writes fail while it is told to (the database
//! away for a while), whose reservations and log writes can be made to
//! take a while and are counted, and the memory store for everything else.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::task::Poll;

use async_trait::async_trait;
use lf_agent::team::TeamRunChange;
use lf_agent::{
    ActionEntry, Agent, AgentFilter, AgentHandle, AgentStore, Ask, EventFilter, Grant, Member,
    MemoryAgentStore, NewEvent, Reservation, StoredGrant, TeamEvent, TeamRun, TeamRunFilter, TeamRunId,
    TeamRunStatus, TeamRunUpdate, ToolKey, Usage, UsageDay,
};
use lf_core::{LenserId, LfError, LfResult, Page, PageRequest, Reach, Timestamp};

#[derive(Default)]
pub struct Flaky {
    pub inner: Arc<MemoryAgentStore>,
    /// While set, writes of the action log fail as INTERNAL.
    pub failing: AtomicBool,
    /// While set, a reservation or a write of the log lets other futures
    /// run before it is made (as a write waiting for the database does).
    pub slow: AtomicBool,
    /// The reservations asked of it.
    pub reservations: AtomicUsize,
    /// The writes of the action log asked of it, reservations aside.
    pub log_writes: AtomicUsize,
}

impl Flaky {
    pub fn fail(&self, on: bool) {
        self.failing.store(on, Ordering::SeqCst);
    }

    /// Counts a reservation and, when slow, yields once before it.
    async fn reserving(&self) {
        self.reservations.fetch_add(1, Ordering::SeqCst);
        self.yield_if_slow().await;
    }

    /// Counts a write of the log and, when slow, yields once before it.
    async fn logging(&self) {
        self.log_writes.fetch_add(1, Ordering::SeqCst);
        self.yield_if_slow().await;
    }

    async fn yield_if_slow(&self) {
        if self.slow.load(Ordering::SeqCst) {
            let mut yielded = false;
            std::future::poll_fn(|cx| {
                if yielded {
                    return Poll::Ready(());
                }
                yielded = true;
                cx.waker().wake_by_ref();
                Poll::Pending
            })
            .await;
        }
    }

    fn down(&self) -> LfResult<()> {
        match self.failing.load(Ordering::SeqCst) {
            true => Err(LfError::internal("the database is away")),
            false => Ok(()),
        }
    }
}

#[async_trait]
impl AgentStore for Flaky {
    async fn record_action(&self, entry: &ActionEntry) -> LfResult<()> {
        self.logging().await;
        self.down()?;
        self.inner.record_action(entry).await
    }
    async fn record_actions(&self, entries: &[ActionEntry]) -> LfResult<()> {
        self.logging().await;
        self.down()?;
        self.inner.record_actions(entries).await
    }
    async fn reserve_usage_logging(
        &self,
        agent: LenserId,
        day: UsageDay,
        asks: &[Ask],
        entries: &[ActionEntry],
    ) -> LfResult<Reservation> {
        self.reserving().await;
        self.down()?;
        self.inner.reserve_usage_logging(agent, day, asks, entries).await
    }

    // Everything else as the memory store does it.
    async fn create_agent(&self, agent: &Agent, max_per_owner: u32) -> LfResult<()> {
        self.inner.create_agent(agent, max_per_owner).await
    }
    async fn get_agent(&self, reach: Reach, id: LenserId) -> LfResult<Agent> {
        self.inner.get_agent(reach, id).await
    }
    async fn handle_taken(&self, handle: &AgentHandle) -> LfResult<bool> {
        self.inner.handle_taken(handle).await
    }
    async fn list_agents(
        &self,
        reach: Reach,
        filter: &AgentFilter,
        page: PageRequest,
    ) -> LfResult<Page<Agent>> {
        self.inner.list_agents(reach, filter, page).await
    }
    async fn update_agent(&self, agent: &Agent, expected_revision: u64) -> LfResult<()> {
        self.inner.update_agent(agent, expected_revision).await
    }
    async fn put_member(&self, agent: LenserId, member: &Member, max_members: u32) -> LfResult<bool> {
        self.inner.put_member(agent, member, max_members).await
    }
    async fn remove_member(&self, agent: LenserId, lenser: LenserId) -> LfResult<bool> {
        self.inner.remove_member(agent, lenser).await
    }
    async fn put_grant(&self, grant: &Grant, max_grants: u32) -> LfResult<StoredGrant> {
        self.inner.put_grant(grant, max_grants).await
    }
    async fn agent_and_grant(
        &self,
        reach: Reach,
        id: LenserId,
        tool: &ToolKey,
    ) -> LfResult<(Agent, Option<Grant>)> {
        self.inner.agent_and_grant(reach, id, tool).await
    }
    async fn list_grants(&self, reach: Reach, agent: LenserId, page: PageRequest) -> LfResult<Page<Grant>> {
        self.inner.list_grants(reach, agent, page).await
    }
    async fn revoke_grant(&self, agent: LenserId, tool: &ToolKey) -> LfResult<Option<Grant>> {
        self.inner.revoke_grant(agent, tool).await
    }
    async fn reserve_usage(&self, agent: LenserId, day: UsageDay, asks: &[Ask]) -> LfResult<Reservation> {
        self.reserving().await;
        self.inner.reserve_usage(agent, day, asks).await
    }
    async fn release_usage(&self, agent: LenserId, day: UsageDay, units: &Usage) -> LfResult<()> {
        self.inner.release_usage(agent, day, units).await
    }
    async fn charge_run(
        &self,
        agent: LenserId,
        day: UsageDay,
        run: lf_core::RunId,
        credits: u64,
    ) -> LfResult<bool> {
        self.inner.charge_run(agent, day, run, credits).await
    }
    async fn usage(&self, reach: Reach, agent: LenserId, day: UsageDay) -> LfResult<Usage> {
        self.inner.usage(reach, agent, day).await
    }
    async fn list_actions(
        &self,
        reach: Reach,
        agent: LenserId,
        page: PageRequest,
    ) -> LfResult<Page<ActionEntry>> {
        self.inner.list_actions(reach, agent, page).await
    }
    async fn create_team_run(&self, run: &TeamRun, events: &[NewEvent]) -> LfResult<Vec<TeamEvent>> {
        self.inner.create_team_run(run, events).await
    }
    async fn get_team_run(&self, reach: Reach, agent: LenserId, id: TeamRunId) -> LfResult<TeamRun> {
        self.inner.get_team_run(reach, agent, id).await
    }
    async fn list_team_runs(
        &self,
        reach: Reach,
        agent: LenserId,
        filter: &TeamRunFilter,
        page: PageRequest,
    ) -> LfResult<Page<TeamRun>> {
        self.inner.list_team_runs(reach, agent, filter, page).await
    }
    async fn team_runs_in(
        &self,
        status: TeamRunStatus,
        after: Option<(Timestamp, TeamRunId)>,
        limit: u32,
    ) -> LfResult<Vec<TeamRun>> {
        self.inner.team_runs_in(status, after, limit).await
    }
    async fn advance_team_run(&self, change: &TeamRunChange) -> LfResult<TeamRunUpdate> {
        self.inner.advance_team_run(change).await
    }
    async fn list_events(
        &self,
        reach: Reach,
        agent: LenserId,
        filter: &EventFilter,
        page: PageRequest,
    ) -> LfResult<Page<TeamEvent>> {
        self.inner.list_events(reach, agent, filter, page).await
    }
}
