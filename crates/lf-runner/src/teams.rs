//! The workflow side of agents' team runs (lf-agent's [`TeamDispatch`]):
//! [`OwnServices`] runs a team run as a workflow run, and records on the
//! team run what came of it.
//!
//! - Dispatch: the team run's workflow (its head version) is started with
//!   the team run's inputs as the agent acting for its owner (with its
//!   owner's reach; the owner is the run's starter, the agent its
//!   `agent`), origin `team`, keyed `team:<agent id>:<team run
//!   id>`, linked to the parent team run's workflow run when nested; then
//!   `Move::Dispatch { run }`. Starting it again finds the run by its key,
//!   so a team run has one workflow run however often it is dispatched. A
//!   workflow that cannot start (not readable by the owner, inputs that do
//!   not fit, a step this server cannot run) fails the team run; a store
//!   that fails leaves it queued for the catch-up.
//! - End ([`crate::RunEnds`]): each step the run executed, by start time,
//!   becomes `node_started` then `node_completed` or `node_failed`; then
//!   `completed`, or `failed` with the run's error. A workflow run
//!   cancelled from outside cancels its team run; one cancelled with its
//!   team run adds nothing. Steps recorded by an earlier, interrupted
//!   delivery are not recorded again.
//! - Cancel: a cancelled team run's workflow run is asked to stop (as the
//!   service, for its starter), which it does within one step.
//! - A held tool call ([`crate::agent_step`]): an `agent_execute` step
//!   holds a call for approval as `Move::HoldCall` (the team run awaits
//!   approval meanwhile, its workflow run going on); once an owner decides
//!   it, the step is woken ([`lf_workflow::run::RunService::wake_waiting`]).
//!   The end of a workflow run that ends while a call is held is recorded
//!   as any other.
//! - Catch-up ([`OwnServices::catch_up_teams`], at the runner's start and
//!   every [`crate::CATCH_UP`]): queued team runs are dispatched, and
//!   running ones whose workflow run has ended get their end.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use lf_agent::team::Move;
use lf_agent::{AgentService, EventFilter, TeamDispatch, TeamEventKind, TeamRun, TeamRunId, TeamRunStatus};
use lf_core::{Clock, ErrorCode, LenserId, LfError, LfResult, PageRequest, Principal, Reach, SystemClock};
use lf_workflow::engine::{NodeStatus, Plan, RunState, RunStatus};
use lf_workflow::run::{IdempotencyKey, Run, RunId, RunOrigin, StartRun};
use lf_workflow::{VersionSelector, WorkflowVersion};

use crate::compose::{Bound, OwnServices};

const KEY_PREFIX: &str = "team:";

/// How many team runs the catch-up reads at a time.
const BATCH: u32 = 100;

/// The idempotency key of team run `run` of `agent`'s workflow run.
fn key(agent: LenserId, run: TeamRunId) -> String {
    format!("{KEY_PREFIX}{agent}:{run}")
}

/// The agent and team run a workflow run runs, read from its key.
pub(crate) fn team_of(run: &Run) -> Option<(LenserId, TeamRunId)> {
    if run.origin != RunOrigin::Team {
        return None;
    }
    let rest = run.idempotency_key.as_ref()?.as_str().strip_prefix(KEY_PREFIX)?;
    let (agent, team) = rest.split_once(':')?;
    let agent = lf_core::parse_uuid("ai_lenser_id", agent).ok()?;
    let team = lf_core::parse_uuid("team_run_id", team).ok()?;
    Some((LenserId::from_uuid(agent), TeamRunId::from_uuid(team)))
}

/// A workflow run's id as lf-agent names it.
fn named(id: RunId) -> lf_core::RunId {
    lf_core::RunId::from_uuid(id.as_uuid())
}

/// The workflow run a team run names.
fn workflow_run(id: lf_core::RunId) -> RunId {
    RunId::from_uuid(id.as_uuid())
}

/// The runner, recording progress.
pub(crate) const SERVICE: Principal = Principal::Service { acting_as: None };

/// What [`OwnServices::bind_agents`] binds.
pub(crate) struct Teams {
    agents: Arc<AgentService>,
    /// Team runs whose end this process is recording now (the hook and
    /// the catch-up may meet).
    delivering: Mutex<HashSet<TeamRunId>>,
}

impl Teams {
    pub(crate) fn new(agents: Arc<AgentService>) -> Self {
        Teams { agents, delivering: Mutex::default() }
    }

    pub(crate) fn agents(&self) -> &AgentService {
        &self.agents
    }
}

/// What one catch-up of team runs did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TeamsCaughtUp {
    /// Queued team runs dispatched (started, found started, or failed
    /// because their workflow could not start).
    pub dispatched: usize,
    /// Running team runs whose workflow run's end was recorded.
    pub ended: usize,
}

fn both(own: &OwnServices) -> LfResult<(&Bound, &Teams)> {
    match (own.bound(), own.teams()) {
        (Some(b), Some(t)) => Ok((b, t)),
        _ => Err(LfError::internal("the workflow runner is not bound to the agent service yet")),
    }
}

/// Whether `e` is the store failing (try again later) rather than a
/// refusal of the start.
fn transient(e: &LfError) -> bool {
    e.code() == ErrorCode::Internal
}

/// Ignores INVALID_TRANSITION: the team run moved meanwhile (cancelled,
/// or recorded by another delivery).
pub(crate) fn moved<T>(r: LfResult<T>) -> LfResult<Option<T>> {
    match r {
        Ok(v) => Ok(Some(v)),
        Err(e) if e.code() == ErrorCode::InvalidTransition => Ok(None),
        Err(e) => Err(e),
    }
}

#[async_trait]
impl TeamDispatch for OwnServices {
    async fn dispatch(&self, run: &TeamRun) {
        if let Err(e) = dispatch(self, run).await {
            tracing::warn!(team_run = %run.id, agent = %run.agent, error = %e, "a team run was not dispatched; the catch-up dispatches it");
        }
    }

    async fn cancel(&self, run: &TeamRun) {
        if let Err(e) = cancel(self, run).await {
            tracing::warn!(team_run = %run.id, agent = %run.agent, error = %e, "a cancelled team run's workflow run was not cancelled");
        }
    }

    /// Wakes the workflow run's waiting step, which reads the decision.
    async fn held_call_decided(&self, run: &TeamRun) {
        let (Some(bound), Some(id)) = (self.bound(), run.workflow_run) else { return };
        if let Err(e) = bound.runs.wake_waiting(workflow_run(id)).await {
            tracing::warn!(team_run = %run.id, agent = %run.agent, error = %e, "a decided tool call's step was not woken; it finds the decision when it next looks");
        }
    }
}

impl OwnServices {
    /// Dispatches the queued team runs and records the ends of the running
    /// ones whose workflow run has ended: what a process that died, or a
    /// hook that failed, left undone. What fails for one team run is
    /// logged, and tried again at the next catch-up.
    pub async fn catch_up_teams(&self) -> LfResult<TeamsCaughtUp> {
        let (bound, teams) = both(self)?;
        let mut done = TeamsCaughtUp::default();
        let mut after = None;
        loop {
            let batch = teams.agents.team_runs_in(&SERVICE, TeamRunStatus::Queued, after, BATCH).await?;
            for t in &batch {
                match dispatch(self, t).await {
                    Ok(()) => done.dispatched += 1,
                    Err(e) => {
                        tracing::warn!(team_run = %t.id, agent = %t.agent, error = %e, "a queued team run was not dispatched")
                    }
                }
            }
            match batch.last() {
                Some(t) if batch.len() == BATCH as usize => after = Some((t.created_at, t.id)),
                _ => break,
            }
        }
        for status in [TeamRunStatus::Running, TeamRunStatus::AwaitingApproval] {
            done.ended += self.catch_up_ends(bound, teams, status).await?;
        }
        Ok(done)
    }

    /// Records the ends of the team runs in `status` (running, or holding a
    /// tool call) whose workflow run has ended; how many.
    async fn catch_up_ends(&self, bound: &Bound, teams: &Teams, status: TeamRunStatus) -> LfResult<usize> {
        let mut ended = 0;
        let mut after = None;
        loop {
            let batch = teams.agents.team_runs_in(&SERVICE, status, after, BATCH).await?;
            for t in &batch {
                match end_if_ended(self, bound, t).await {
                    Ok(true) => ended += 1,
                    Ok(false) => {}
                    Err(e) => {
                        tracing::warn!(team_run = %t.id, agent = %t.agent, error = %e, "a team run's end was not recorded")
                    }
                }
            }
            match batch.last() {
                Some(t) if batch.len() == BATCH as usize => after = Some((t.created_at, t.id)),
                _ => break,
            }
        }
        Ok(ended)
    }
}

/// Starts `team`'s workflow run (or finds it by its key) and records it.
async fn dispatch(own: &OwnServices, team: &TeamRun) -> LfResult<()> {
    let (bound, teams) = both(own)?;
    let agents = &teams.agents;
    let agent = agents.get(&SERVICE, team.agent).await?.agent;
    if !agent.is_active() {
        let error = format!("@{} was archived before its team run started.", agent.handle);
        moved(agents.record_progress(&SERVICE, team.agent, team.id, Move::Fail { error }).await)?;
        return Ok(());
    }
    let parent = match team.parent {
        Some(p) => agents.get_team_run(&SERVICE, team.agent, p).await?.workflow_run.map(workflow_run),
        None => None,
    };
    let start = StartRun {
        workflow_id: Some(team.workflow_id),
        inputs: team.inputs.as_map().clone(),
        idempotency_key: Some(IdempotencyKey::parse("idempotency_key", &key(team.agent, team.id))?),
        ..StartRun::default()
    };
    let run = match bound.runs.start_team(team.agent, agent.owner, parent, start).await {
        Ok(started) => started.run,
        Err(e) if transient(&e) => return Err(e),
        Err(e) => {
            let error = format!("Workflow {} did not start: {}", team.workflow_id, e.message());
            moved(agents.record_progress(&SERVICE, team.agent, team.id, Move::Fail { error }).await)?;
            return Ok(());
        }
    };
    let recorded = moved(
        agents.record_progress(&SERVICE, team.agent, team.id, Move::Dispatch { run: named(run.id) }).await,
    )?;
    if recorded.is_none() {
        // Moved meanwhile: dispatched by another (nothing to do), or
        // cancelled before its run was recorded (stop the run).
        let now = agents.get_team_run(&SERVICE, team.agent, team.id).await?;
        if now.status == TeamRunStatus::Cancelled {
            stop(bound, run.id).await?;
        }
        return Ok(());
    }
    if run.status().is_final() {
        // Found by its key, already ended (its end was heard before the
        // team run knew its run).
        deliver(own, team.agent, team.id, run.id).await?;
    }
    Ok(())
}

/// Asks `team`'s workflow run, if it has one, to stop.
async fn cancel(own: &OwnServices, team: &TeamRun) -> LfResult<()> {
    let (bound, teams) = both(own)?;
    let run = match team.workflow_run {
        Some(r) => Some(workflow_run(r)),
        // Cancelled while queued: a dispatch may have started its run
        // without recording it yet.
        None => {
            let key = IdempotencyKey::parse("idempotency_key", &key(team.agent, team.id))?;
            // The agent's owner started it, as `dispatch` does.
            let owner = teams.agents.get(&SERVICE, team.agent).await?.agent.owner;
            bound
                .runs
                .store()
                .find_by_key(team.workflow_id, owner, &key, SystemClock.now())
                .await?
                .map(|r| r.id)
        }
    };
    match run {
        Some(r) => stop(bound, r).await,
        None => Ok(()),
    }
}

/// Cancels workflow run `id` unless it has ended, as the service for its
/// starter.
async fn stop(bound: &Bound, id: RunId) -> LfResult<()> {
    let run = bound.runs.store().get_run(id).await?;
    if run.status().is_final() {
        return Ok(());
    }
    let as_starter = Principal::Service { acting_as: Some(run.started_by) };
    moved(bound.runs.cancel(&as_starter, id).await).map(|_| ())
}

/// Hands the end of team run `run`'s workflow run to its team run, in a
/// task of its own (what is not recorded because the process stops is
/// caught up).
pub(crate) fn ended(own: &OwnServices, run: &Run, _state: &RunState) {
    let Some((agent, team)) = team_of(run) else { return };
    if own.teams().is_none() {
        return;
    }
    let Ok(rt) = tokio::runtime::Handle::try_current() else { return };
    let (own, id) = (own.clone(), run.id);
    rt.spawn(async move {
        if let Err(e) = deliver(&own, agent, team, id).await {
            tracing::warn!(team_run = %team, agent = %agent, run = %id, error = %e, "a team run's end was not recorded; the catch-up records it");
        }
    });
}

/// Records the end of running team run `team` if its workflow run ended.
async fn end_if_ended(own: &OwnServices, bound: &Bound, team: &TeamRun) -> LfResult<bool> {
    let Some(id) = team.workflow_run.map(workflow_run) else { return Ok(false) };
    match bound.runs.store().get_run(id).await {
        Ok(run) if run.status().is_final() => deliver(own, team.agent, team.id, id).await,
        Ok(_) => Ok(false),
        Err(e) if e.code() == ErrorCode::NotFound => {
            let error = format!("Its workflow run {id} is gone.");
            let agents = &both(own)?.1.agents;
            Ok(moved(agents.record_progress(&SERVICE, team.agent, team.id, Move::Fail { error }).await)?
                .is_some())
        }
        Err(e) => Err(e),
    }
}

/// Records on team run `team` of `agent` how its workflow run `id` ended:
/// its steps, then its end. True when this call recorded the end.
async fn deliver(own: &OwnServices, agent: LenserId, team: TeamRunId, id: RunId) -> LfResult<bool> {
    let (bound, teams) = both(own)?;
    if !teams.delivering.lock().unwrap_or_else(|p| p.into_inner()).insert(team) {
        return Ok(false);
    }
    let result = deliver_once(bound, &teams.agents, agent, team, id).await;
    teams.delivering.lock().unwrap_or_else(|p| p.into_inner()).remove(&team);
    result
}

async fn deliver_once(
    bound: &Bound,
    agents: &AgentService,
    agent: LenserId,
    team: TeamRunId,
    id: RunId,
) -> LfResult<bool> {
    let run = bound.runs.store().load_run(id).await?;
    if !run.status().is_final() {
        return Ok(false);
    }
    let mut now = agents.get_team_run(&SERVICE, agent, team).await?;
    if now.status == TeamRunStatus::Queued {
        // Its dispatch started this run and has not recorded it yet.
        now = match moved(
            agents.record_progress(&SERVICE, agent, team, Move::Dispatch { run: named(id) }).await,
        )? {
            Some(u) => u.run,
            None => agents.get_team_run(&SERVICE, agent, team).await?,
        };
    }
    let going = now.status == TeamRunStatus::Running || lf_agent::team::holds_call(&now);
    if !going || now.workflow_run != Some(named(id)) {
        // Cancelled (its run stopped with it), or ended already.
        return Ok(false);
    }
    let end = match run.status() {
        RunStatus::Cancelled => {
            Move::Cancel { by: None, reason: Some(format!("Its workflow run {id} was cancelled.")) }
        }
        status => {
            let version = bound
                .workflows
                .get_version(Reach::Everything, run.workflow_id, VersionSelector::Id(run.version_id))
                .await?;
            let recorded = node_events(agents, agent, team).await?;
            for mv in steps(&version, &run.state).into_iter().skip(recorded) {
                if moved(agents.record_progress(&SERVICE, agent, team, mv).await)?.is_none() {
                    return Ok(false);
                }
            }
            if status == RunStatus::Completed {
                Move::Complete
            } else {
                let error = run.state.error.as_ref().map_or_else(
                    || format!("Workflow run {id} failed without an error recorded."),
                    |e| e.message.clone(),
                );
                Move::Fail { error }
            }
        }
    };
    Ok(moved(agents.record_progress(&SERVICE, agent, team, end).await)?.is_some())
}

/// How many step events the team run has (recorded by an earlier delivery
/// that did not get to the end).
async fn node_events(agents: &AgentService, agent: LenserId, team: TeamRunId) -> LfResult<usize> {
    let mut n = 0;
    for kind in [TeamEventKind::NodeStarted, TeamEventKind::NodeCompleted, TeamEventKind::NodeFailed] {
        let filter = EventFilter { team_run: Some(team), kind: Some(kind) };
        n += agents.list_events(&SERVICE, agent, &filter, PageRequest::new(Some(1), None)?).await?.total;
    }
    Ok(n as usize)
}

/// The step moves of a run that ended in `state`: for each step it started
/// (not its trigger), by start time then plan order, `NodeStarted` then
/// `NodeCompleted` or `NodeFailed`. A loop body's step is named
/// `key[item]`.
fn steps(version: &WorkflowVersion, state: &RunState) -> Vec<Move> {
    let plan = Plan::new(version).ok();
    let trigger = plan.as_ref().map(|p| p.trigger);
    let mut order: Vec<usize> = (0..version.nodes.len()).collect();
    if let Some(plan) = &plan {
        for (pos, &i) in plan.order.iter().enumerate() {
            if let Some(o) = order.get_mut(i as usize) {
                *o = pos;
            }
        }
    }
    let mut started: Vec<_> = state
        .slots
        .iter()
        .filter(|(slot, n)| Some(slot.node) != trigger && n.started_at.is_some())
        .filter_map(|(slot, n)| {
            let node = version.nodes.get(slot.node as usize)?;
            let name = match slot.item {
                Some(i) => format!("{}[{i}]", node.key.as_str()),
                None => node.key.as_str().to_owned(),
            };
            Some((n.started_at, order[slot.node as usize], slot.item, name, n))
        })
        .collect();
    started.sort_by_key(|a| (a.0, a.1, a.2));
    let mut moves = Vec::with_capacity(started.len() * 2);
    for (_, _, _, node, n) in started {
        moves.push(Move::NodeStarted { node: node.clone() });
        moves.push(match n.status {
            NodeStatus::Completed => Move::NodeCompleted { node },
            status => {
                let error = n.error.as_ref().map_or_else(
                    || format!("the step ended {status}: the run ended before it finished"),
                    |f| f.message.clone(),
                );
                Move::NodeFailed { node, error }
            }
        });
    }
    moves
}
