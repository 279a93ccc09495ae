//! The team-run use cases: start (the service only), decide an approval,
//! cancel, record the runner's progress, read runs and events. Every move
//! goes through [`crate::team::plan`] on the run as read and is written
//! only if the run is still in that status; a move that lost a race is
//! planned again on the run as it now stands, so cancelling a run that
//! just finished answers INVALID_TRANSITION, not CONFLICT.
//!
//! A write that leaves a run queued (a start with policy `auto`, an
//! approval) is followed by the [`crate::TeamDispatch`] hook's `dispatch`,
//! a cancel of a queued or running run by its `cancel`, once the write is
//! done: what the hook fails to do changes nothing of the answer (the run
//! stays queued for the runner's catch-up).

use lf_core::{
    ErrorCode, LenserId, LfError, LfResult, Page, PageRequest, Principal, Reach, Timestamp, WorkflowId,
};

use super::AgentService;
use crate::model::{
    DelegationPolicy, EventFilter, Reason, Reservation, TeamEvent, TeamInputs, TeamRun, TeamRunFilter,
    TeamRunId, TeamRunStatus, TeamRunUpdate,
};
use crate::policy;
use crate::roles::Permission;
use crate::team::{self, Move};

/// A team run to start.
#[derive(Clone, Debug)]
pub struct NewTeamRun {
    pub agent: LenserId,
    pub workflow_id: WorkflowId,
    pub inputs: TeamInputs,
    pub policy: DelegationPolicy,
    /// The agent's team run this one is nested in.
    pub parent: Option<TeamRunId>,
}

/// How often a move that lost a race is planned again before its CONFLICT
/// is answered.
const ATTEMPTS: usize = 3;

impl AgentService {
    /// Records a team run of the agent's, queued or awaiting approval by
    /// its policy; a queued one is then handed to the dispatch hook, which
    /// starts its workflow run (the answer is the run as this write left
    /// it, queued: the hook may have moved it on since). The service
    /// principal only: PERMISSION_DENIED for anyone else, as the spec says
    /// of `start_agent_team_run` over HTTP. PERMISSION_DENIED for an
    /// archived agent; INVALID_ARGUMENT past the nesting limit
    /// ([`TeamRun::MAX_DEPTH`]); THROTTLED past the day's team-run cap.
    pub async fn start_team_run(&self, p: &Principal, new: NewTeamRun) -> LfResult<TeamRunUpdate> {
        let Principal::Service { acting_as } = p else {
            return Err(LfError::permission_denied(
                "start_agent_team_run is for the service role only (the stdio server, or the runner); over HTTP it is refused.",
            ));
        };
        let agent = self.store().get_agent(Reach::Everything, new.agent).await?;
        if !agent.is_active() {
            return Err(LfError::permission_denied(format!(
                "@{} is archived and starts no team run.",
                agent.handle
            )));
        }
        let depth = match new.parent {
            None => 0,
            Some(parent) => {
                let parent = self.store().get_team_run(Reach::Everything, agent.id, parent).await?;
                if parent.depth >= TeamRun::MAX_DEPTH {
                    return Err(LfError::invalid_argument(format!(
                        "Team runs nest at most {} deep; team run {} is at depth {} already. Run this workflow from a shallower run.",
                        TeamRun::MAX_DEPTH,
                        parent.id,
                        parent.depth
                    ))
                    .with_field("parent_team_run_id"));
                }
                parent.depth + 1
            }
        };
        let now = self.now();
        let day = crate::model::UsageDay::of(now);
        if let Reservation::Refused { kind, used, asked, limit } =
            self.store().reserve_usage(agent.id, day, &policy::team_run_asks(&agent)).await?
        {
            return Err(policy::over_limit(&agent, day, kind, used, asked, limit));
        }
        let opening = team::opening(new.policy);
        let run = TeamRun {
            id: TeamRunId::new(),
            agent: agent.id,
            workflow_id: new.workflow_id,
            workflow_run: None,
            inputs: new.inputs,
            policy: new.policy,
            status: opening.to,
            parent: new.parent,
            depth,
            started_by: *acting_as,
            decision: None,
            error: None,
            created_at: now,
            updated_at: now,
            finished_at: None,
        };
        let events = self.store().create_team_run(&run, &opening.events).await?;
        self.dispatch_queued(&run).await;
        Ok(TeamRunUpdate { run, events })
    }

    /// Hands a queued run to the dispatch hook, if there is one.
    async fn dispatch_queued(&self, run: &TeamRun) {
        if run.status == TeamRunStatus::Queued
            && let Some(d) = self.dispatcher()
        {
            d.dispatch(run).await;
        }
    }

    /// Approves or rejects a team run awaiting approval (an owner or
    /// co-owner); an approved one is then dispatched as a new queued one
    /// is. A run whose workflow run holds a tool call for approval
    /// ([`crate::team::holds_call`]) goes back to running instead, and the
    /// dispatch hook is told ([`crate::TeamDispatch::held_call_decided`]):
    /// approved, the held call runs once; rejected, the agent is told.
    /// INVALID_TRANSITION for a run that is not awaiting one.
    pub async fn decide_approval(
        &self,
        p: &Principal,
        agent: LenserId,
        run: TeamRunId,
        approve: bool,
        reason: Option<Reason>,
    ) -> LfResult<TeamRunUpdate> {
        self.load(p, agent, Permission::DecideApproval).await?;
        let by = p.lenser();
        let reason = reason.map(Reason::into_string);
        let mv = if approve { Move::Approve { by, reason } } else { Move::Reject { by, reason } };
        let (from, update) = self.advance(p, agent, run, mv).await?;
        if from == TeamRunStatus::AwaitingApproval
            && update.run.status == TeamRunStatus::Running
            && let Some(d) = self.dispatcher()
        {
            d.held_call_decided(&update.run).await;
        }
        self.dispatch_queued(&update.run).await;
        Ok(update)
    }

    /// Cancels a team run that has not finished (anyone the agent belongs
    /// to); for one that was queued or running (or held a tool call for
    /// approval), the dispatch hook then stops its workflow run (within
    /// one step). INVALID_TRANSITION for a
    /// finished run.
    pub async fn cancel_team_run(
        &self,
        p: &Principal,
        agent: LenserId,
        run: TeamRunId,
        reason: Option<Reason>,
    ) -> LfResult<TeamRunUpdate> {
        self.load(p, agent, Permission::CancelTeamRun).await?;
        let mv = Move::Cancel { by: p.lenser(), reason: reason.map(Reason::into_string) };
        let (from, update) = self.advance(p, agent, run, mv).await?;
        if (from != TeamRunStatus::AwaitingApproval || update.run.workflow_run.is_some())
            && let Some(d) = self.dispatcher()
        {
            d.cancel(&update.run).await;
        }
        Ok(update)
    }

    /// Cancels every unfinished team run of `agent` (its owner archived
    /// it), stopping their workflow runs; how many it cancelled. A run that
    /// finished meanwhile is left as it is.
    pub(crate) async fn stop_team_runs(&self, p: &Principal, agent: LenserId) -> LfResult<usize> {
        let mut stopped = 0;
        for status in [TeamRunStatus::Queued, TeamRunStatus::AwaitingApproval, TeamRunStatus::Running] {
            loop {
                let page = self
                    .store()
                    .list_team_runs(
                        Reach::Everything,
                        agent,
                        &TeamRunFilter { status: Some(status) },
                        PageRequest::first(100),
                    )
                    .await?;
                if page.items.is_empty() {
                    break;
                }
                let mut moved = false;
                for run in page.items {
                    let mv = Move::Cancel {
                        by: p.lenser(),
                        reason: Some("its AI Lenser was archived".to_owned()),
                    };
                    match self.advance(&Principal::Service { acting_as: None }, agent, run.id, mv).await {
                        Ok((from, update)) => {
                            stopped += 1;
                            moved = true;
                            if from != TeamRunStatus::AwaitingApproval
                                && let Some(d) = self.dispatcher()
                            {
                                d.cancel(&update.run).await;
                            }
                        }
                        Err(e) if e.code() == ErrorCode::InvalidTransition => {}
                        Err(e) => return Err(e),
                    }
                }
                if !moved {
                    break;
                }
            }
        }
        Ok(stopped)
    }

    /// Records the runner's progress on a team run: its dispatch, its
    /// steps, its tool calls, a tool call held for approval
    /// ([`Move::HoldCall`]) and its end. The service principal only.
    pub async fn record_progress(
        &self,
        p: &Principal,
        agent: LenserId,
        run: TeamRunId,
        mv: Move,
    ) -> LfResult<TeamRunUpdate> {
        if !matches!(p, Principal::Service { .. }) {
            return Err(LfError::permission_denied(
                "Only the runner (the service principal) records a team run's progress.",
            ));
        }
        Ok(self.advance(p, agent, run, mv).await?.1)
    }

    /// Every agent's team runs in `status`, oldest first, after `after`
    /// (the `(created_at, id)` of the last of the previous batch), at most
    /// `limit` (at most 100): what the runner's catch-up goes through. The
    /// service principal only.
    pub async fn team_runs_in(
        &self,
        p: &Principal,
        status: TeamRunStatus,
        after: Option<(Timestamp, TeamRunId)>,
        limit: u32,
    ) -> LfResult<Vec<TeamRun>> {
        if !matches!(p, Principal::Service { .. }) {
            return Err(LfError::permission_denied(
                "Only the runner (the service principal) reads every agent's team runs.",
            ));
        }
        self.store().team_runs_in(status, after, limit.clamp(1, PageRequest::MAX_LIMIT)).await
    }

    /// Plans `mv` on the run as read and writes it, planning again on a
    /// CONFLICT; the status it moved from, with the write.
    async fn advance(
        &self,
        p: &Principal,
        agent: LenserId,
        id: TeamRunId,
        mv: Move,
    ) -> LfResult<(TeamRunStatus, TeamRunUpdate)> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let run = self.store().get_team_run(p.reach(), agent, id).await?;
            let change = team::plan(&run, &mv, self.now())?;
            match self.store().advance_team_run(&change).await {
                Err(e) if e.code() == ErrorCode::Conflict && attempt < ATTEMPTS => continue,
                other => return other.map(|u| (change.from, u)),
            }
        }
    }

    /// One of the agent's team runs.
    pub async fn get_team_run(&self, p: &Principal, agent: LenserId, run: TeamRunId) -> LfResult<TeamRun> {
        self.load(p, agent, Permission::View).await?;
        self.store().get_team_run(p.reach(), agent, run).await
    }

    /// The agent's team runs, newest first.
    pub async fn list_team_runs(
        &self,
        p: &Principal,
        agent: LenserId,
        status: Option<TeamRunStatus>,
        page: PageRequest,
    ) -> LfResult<Page<TeamRun>> {
        self.load(p, agent, Permission::View).await?;
        self.store().list_team_runs(p.reach(), agent, &TeamRunFilter { status }, page).await
    }

    /// Events of the agent's team runs, newest first.
    pub async fn list_events(
        &self,
        p: &Principal,
        agent: LenserId,
        filter: &EventFilter,
        page: PageRequest,
    ) -> LfResult<Page<TeamEvent>> {
        self.load(p, agent, Permission::View).await?;
        self.store().list_events(p.reach(), agent, filter, page).await
    }
}
