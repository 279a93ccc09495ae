//! Steps that use the server's own services: `sub_workflow` (a run of
//! another workflow, waited for) and `battle_create` (a battle made as
//! the workflow's owner).
//!
//! It is also the [`EventSink`] of the server's services: each event
//! starts a run of every workflow that follows it and may see it
//! ([`Follower::hears`]), as that workflow's owner, keyed by the event (a
//! workflow hears an event once), caused by the run whose end it is for a
//! run event and in that run's causal tree, which a workflow joins once
//! and which holds a bounded number of runs ([`RunService::start_caused`]).
//!
//! As the runner's [`RunEnds`] it tells the run events, charges an
//! agent's run's spend to the agent, and hands the outcome of a workflow
//! contender's run to its battle; as the battles'
//! [`lf_battle::WorkflowAnswers`] it starts those runs, and as their
//! [`lf_battle::ContenderRefs`] it checks contender references
//! ([`crate::answers`]).
//! As the agents' [`lf_agent::TeamDispatch`] it runs team runs as workflow
//! runs, and records their ends on them ([`crate::teams`]), once bound to
//! the agent service ([`OwnServices::bind_agents`]).
//!
//! Both steps are made before the services they call exist (the run service
//! needs the runner's signal, the runner needs its executors), so they
//! hold a [`OwnServices`] cell that the composition root fills once the
//! services are built ([`OwnServices::bind`]); a step run before that fails
//! with `not_ready`.
//!
//! Each is safe to run again: a `sub_workflow` step's run carries the
//! step's idempotency key, so an attempt run again after a takeover waits
//! for the run it started instead of starting another; `battle_create`
//! makes its battle under an id derived from that key, so a second try
//! finds the first battle.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use async_trait::async_trait;
use lf_battle::{BattleService, BattleTitle, BattleType, JudgingMode, MaxContenders, NewBattle, TaskPrompt};
use lf_core::{
    BattleId, DomainEvent, ErrorCode, EventKind, EventSink, LfError, Principal, Scopes, WorkflowId,
};
use lf_workflow::engine::{Failure, RunState, RunStatus, main_input};
use lf_workflow::exec::fill_placeholders;
use lf_workflow::follow::event_inputs;
use lf_workflow::run::{Caused, IdempotencyKey, Run, RunId, RunOrigin, RunService, StartRun};
use lf_workflow::{JsonObject, Pick, WorkflowStore};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::executor::{Done, Executor, Executors, Job};
use crate::runner::RunEnds;
use crate::steps::Runs;

/// The most nesting `max_depth` may allow.
pub const DEEPEST: u32 = 8;

#[derive(Clone)]
pub(crate) struct Bound {
    pub(crate) runs: Arc<RunService>,
    pub(crate) battles: Arc<BattleService>,
    pub(crate) workflows: Arc<dyn WorkflowStore>,
    /// The runner's shutdown: a step given up because the process stops
    /// leaves its sub-run running (the next holder waits for it again).
    draining: CancellationToken,
}

/// The services these steps call, bound after they are built.
#[derive(Clone, Default)]
pub struct OwnServices {
    cell: Arc<OnceLock<Bound>>,
    teams: Arc<OnceLock<crate::teams::Teams>>,
    profiles: Arc<OnceLock<lf_workflow::profile::ProfileService>>,
    resolver: Arc<OnceLock<Arc<dyn lf_core::ModelResolver>>>,
}

impl OwnServices {
    pub fn new() -> Self {
        Self::default()
    }

    /// Binds the services (once; a second call is ignored).
    pub fn bind(
        &self,
        runs: Arc<RunService>,
        battles: Arc<BattleService>,
        workflows: Arc<dyn WorkflowStore>,
        draining: CancellationToken,
    ) {
        let _ = self.cell.set(Bound { runs, battles, workflows, draining });
    }

    /// Binds the agent service whose team runs this runs (once; a second
    /// call is ignored). Without it team runs are not run; with it, give
    /// the agent service this as its dispatch
    /// ([`lf_agent::AgentService::with_dispatch`]).
    pub fn bind_agents(&self, agents: Arc<lf_agent::AgentService>) {
        let _ = self.teams.set(crate::teams::Teams::new(agents));
    }

    /// Binds the model profiles an `ai_model` contender may name (once; a
    /// second call is ignored). Without it only an AI Lenser names a model.
    pub fn bind_profiles(&self, profiles: lf_workflow::profile::ProfileService) {
        let _ = self.profiles.set(profiles);
    }

    /// Binds the resolver of the models steps and AI Lensers name (once; a
    /// second call is ignored): a profile's name or id, an operator
    /// endpoint, or a bare model name on `default`. Without it a named
    /// model is asked of the runner's provider.
    pub fn bind_resolver(&self, resolver: Arc<dyn lf_core::ModelResolver>) {
        let _ = self.resolver.set(resolver);
    }

    pub(crate) fn resolver(&self) -> Option<&Arc<dyn lf_core::ModelResolver>> {
        self.resolver.get()
    }

    pub(crate) fn profiles(&self) -> Option<&lf_workflow::profile::ProfileService> {
        self.profiles.get()
    }

    pub(crate) fn bound(&self) -> Option<&Bound> {
        self.cell.get()
    }

    pub(crate) fn teams(&self) -> Option<&crate::teams::Teams> {
        self.teams.get()
    }

    /// The bound services, or the `not_ready` failure of a step run before.
    pub(crate) fn get(&self) -> Result<&Bound, Failure> {
        self.cell
            .get()
            .ok_or_else(|| Failure::new("not_ready", "the server's services are not bound to the runner yet"))
    }

    /// Adds `sub_workflow` and `battle_create` to `executors` (a runner
    /// with these steps alone; [`Executors::all`] has every step).
    pub fn register(&self, executors: Executors) -> Executors {
        executors.fill(|runs| match runs {
            Runs::SubWorkflow => Some(self.sub_workflow()),
            Runs::BattleCreate => Some(self.battle_create()),
            _ => None,
        })
    }

    pub(crate) fn sub_workflow(&self) -> Arc<dyn Executor> {
        Arc::new(SubWorkflow(self.clone()))
    }

    pub(crate) fn battle_create(&self) -> Arc<dyn Executor> {
        Arc::new(BattleCreate(self.clone()))
    }
}

fn failure(code: &str, e: &LfError) -> Failure {
    Failure::new(code, e.message().to_owned())
}

struct SubWorkflow(OwnServices);

#[async_trait]
impl Executor for SubWorkflow {
    async fn execute(&self, job: &Job) -> Result<Done, Failure> {
        let bound = self.0.get()?;
        let config = &job.node().config;
        let invalid = |what: String| Failure::new("invalid_config", what);
        let workflow_id = config
            .get("workflow_id")
            .and_then(Value::as_str)
            .and_then(|s| lf_core::parse_uuid("workflow_id", s).ok())
            .map(WorkflowId::from_uuid)
            .ok_or_else(|| invalid("workflow_id must be a workflow's id".into()))?;
        let version =
            config.get("version").and_then(Value::as_u64).map(|v| v.min(u64::from(u32::MAX)) as u32);
        let max_depth =
            config.get("max_depth").and_then(Value::as_u64).unwrap_or(2).clamp(1, u64::from(DEEPEST));

        let parent = bound.runs.store().get_run(job.run).await.map_err(|e| failure("store", &e))?;
        let depth = chain_depth(&bound.runs, &parent, RunOrigin::SubWorkflow, max_depth)
            .await
            .map_err(|e| failure("store", &e))?;
        if depth + 1 > max_depth {
            return Err(Failure::new(
                "too_deep",
                format!(
                    "step {} would nest workflows {} deep, past its max_depth of {max_depth} (a workflow that runs itself would never end)",
                    job.node().key,
                    depth + 1
                ),
            ));
        }

        let input = main_input(&job.input);
        let inputs = inputs_for(config.get("input_mapping"), input).map_err(invalid)?;
        let key = IdempotencyKey::parse("idempotency_key", &job.attempt_key())
            .map_err(|e| failure("invalid", &e))?;
        let start = StartRun {
            workflow_id: Some(workflow_id),
            version,
            inputs,
            global_model_id: job.global_model_id.clone(),
            idempotency_key: Some(key),
            budget_credits: parent.state.limits.budget_credits,
        };
        let child = match bound.runs.start_child(&parent, start).await {
            Ok(s) => s.run.id,
            Err(e) if e.code() == ErrorCode::Internal => return Err(failure("store", &e)),
            Err(e) => return Err(failure("not_runnable", &e)),
        };
        let mut guard = CancelChild { bound: bound.clone(), child, parent: job.run, done: false };
        let ended = wait(&bound.runs, child).await?;
        guard.done = true;
        match ended.status() {
            // Its result is the step's output; the run itself is found by
            // its parent_run_id.
            RunStatus::Completed => Ok(Done::output(ended.state.result.clone().unwrap_or(Value::Null))),
            status => {
                let why =
                    ended.state.error.as_ref().map_or_else(|| status.to_string(), |e| e.message.clone());
                Err(Failure::new(
                    "sub_workflow_failed",
                    format!("the run {child} of workflow {workflow_id} ended {status}: {why}"),
                ))
            }
        }
    }
}

/// How many links of runs started by `origin` (a sub-workflow step) lead
/// up from `run` to the run that began the chain, read no further than
/// `most`.
async fn chain_depth(
    runs: &RunService,
    run: &lf_workflow::run::Run,
    origin: RunOrigin,
    most: u64,
) -> lf_core::LfResult<u64> {
    let mut depth = 0;
    let mut up = run.clone();
    while up.origin == origin
        && let Some(p) = up.parent_run_id
        && depth < most
    {
        depth += 1;
        up = runs.store().get_run(p).await?;
    }
    Ok(depth)
}

/// The sub-run's inputs: the mapping's picks of the step's input, or the
/// input itself (an object; anything else as `{"input": value}`).
fn inputs_for(mapping: Option<&Value>, input: &Value) -> Result<JsonObject, String> {
    match mapping.and_then(Value::as_object) {
        Some(m) => {
            let mut out = JsonObject::new();
            for (name, pick) in m {
                let text = pick.as_str().ok_or_else(|| format!("input_mapping.{name} must be a pick"))?;
                let pick = Pick::parse("input_mapping", text).map_err(|e| e.message().to_owned())?;
                out.insert(name.clone(), pick.pick(input).map_or(Value::Null, std::borrow::Cow::into_owned));
            }
            Ok(out)
        }
        None => Ok(match input {
            Value::Object(m) => m.clone(),
            other => {
                let mut m = JsonObject::new();
                m.insert("input".into(), other.clone());
                m
            }
        }),
    }
}

/// Waits for run `id` to end, reading it a little less often the longer it
/// takes (the step's timeout bounds the wait).
pub(crate) async fn wait(runs: &RunService, id: RunId) -> Result<lf_workflow::run::Run, Failure> {
    let mut pause = Duration::from_millis(5);
    loop {
        let run = runs.store().get_run(id).await.map_err(|e| failure("store", &e))?;
        if run.status().is_final() {
            return Ok(run);
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_millis(500));
    }
}

/// Cancels the sub-run when the step is given up before it ended (its
/// timeout, its run cancelled), but not when the process is stopping.
struct CancelChild {
    bound: Bound,
    child: RunId,
    parent: RunId,
    done: bool,
}

impl Drop for CancelChild {
    fn drop(&mut self) {
        if self.done || self.bound.draining.is_cancelled() {
            return;
        }
        let (runs, child, parent) = (self.bound.runs.clone(), self.child, self.parent);
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move {
                // As the one who started both runs; a sub-run that ended
                // meanwhile answers INVALID_TRANSITION, which is fine.
                if let Ok(by) = runs.store().get_run(parent).await.map(|p| p.started_by) {
                    let _ = runs.cancel(&Principal::Service { acting_as: Some(by) }, child).await;
                }
            });
        }
    }
}

struct BattleCreate(OwnServices);

#[async_trait]
impl Executor for BattleCreate {
    async fn execute(&self, job: &Job) -> Result<Done, Failure> {
        let bound = self.0.get()?;
        let config = &job.node().config;
        let input = main_input(&job.input);
        let text = |key: &str| config.get(key).and_then(Value::as_str).map(|t| fill_placeholders(t, input));
        let invalid = |e: LfError| Failure::new("invalid_config", e.message().to_owned());
        let title = BattleTitle::parse(text("title").unwrap_or_default()).map_err(invalid)?;
        let task = TaskPrompt::parse(text("task_prompt").unwrap_or_default()).map_err(invalid)?;
        let mut new = NewBattle::new(title, task);
        if let Some(t) = config.get("battle_type").and_then(Value::as_str) {
            new.battle_type = Some(BattleType::parse(t).map_err(invalid)?);
        }
        if let Some(m) = config.get("judging_mode").and_then(Value::as_str) {
            new.judging_mode = Some(JudgingMode::parse(m).map_err(invalid)?);
        }
        if let Some(n) = config.get("max_contenders").and_then(Value::as_i64) {
            new.max_contenders = Some(MaxContenders::parse(n).map_err(invalid)?);
        }
        // The same attempt makes the same battle: its id comes from the key.
        let id = BattleId::from_uuid(uuid::Uuid::new_v5(&KEYS, job.attempt_key().as_bytes()));
        let owner = match job.agent {
            Some(agent_id) if job.started_by == job.workflow_owner => {
                Principal::Agent { agent_id, owner: job.workflow_owner }
            }
            _ => Principal::Lenser { id: job.workflow_owner, scopes: Scopes::READ_WRITE },
        };
        let battle = match bound.battles.create_with_id(&owner, id, new).await {
            Ok(b) => b,
            Err(e) if e.code() == ErrorCode::Conflict => {
                bound.battles.get(&owner, id).await.map_err(|e| failure("store", &e))?.battle
            }
            Err(e) if e.code() == ErrorCode::Internal => return Err(failure("store", &e)),
            Err(e) => return Err(failure("invalid_config", &e)),
        };
        Ok(Done::output(json!({"battle_id": battle.id.to_string(), "status": battle.status.as_str()})))
    }
}

/// The namespace of battle ids made from step keys.
const KEYS: uuid::Uuid = uuid::Uuid::from_u128(0x6c66_6261_7474_6c65_8000_0000_0000_0001);

impl EventSink for OwnServices {
    fn publish(&self, event: DomainEvent) {
        let Some(bound) = self.cell.get().cloned() else { return };
        let Ok(rt) = tokio::runtime::Handle::try_current() else { return };
        rt.spawn(async move {
            let kind = event.kind;
            if let Err(e) = follow(&bound, event).await {
                tracing::warn!(event = %kind, error = %e, "the workflows following an event were not started");
            }
        });
    }
}

#[async_trait]
impl RunEnds for OwnServices {
    /// Tells `workflow.run.completed` / `failed` to the workflows that
    /// follow them (a cancelled run is no event), delivers the outcome of
    /// a workflow contender's run to its battle, and records a team run's
    /// end on it.
    fn ended(&self, run: &Run, state: &RunState) {
        charge(self, run, state);
        match run.origin {
            RunOrigin::Battle => crate::answers::deliver(self, run, state),
            RunOrigin::Team => crate::teams::ended(self, run, state),
            _ => {}
        }
        let kind = match state.status {
            RunStatus::Completed => EventKind::WorkflowRunCompleted,
            RunStatus::Failed => EventKind::WorkflowRunFailed,
            _ => return,
        };
        let mut event = DomainEvent::new(kind, run.workflow_owner, false)
            .with("run_id", run.id.to_string())
            .with("workflow_id", run.workflow_id.to_string())
            .with("status", state.status.as_str());
        if let Some(e) = &state.error {
            event = event.with("error", e.message.clone());
        }
        // Whether others may see it is the sink's to learn, if anyone else follows it.
        event.run = Some((run.id.as_uuid(), run.workflow_id.as_uuid()));
        self.publish(event);
    }

    /// Starts the missing runs of workflow contenders and delivers the
    /// outcomes nobody delivered ([`BattleService::answer_waiting`]), then
    /// moves on the battles left in executing with every answer in
    /// ([`BattleService::settle_answered`]); then dispatches the queued
    /// team runs and records the ends nobody recorded
    /// ([`OwnServices::catch_up_teams`]).
    async fn catch_up(&self) {
        let Some(bound) = self.bound() else { return };
        match bound.runs.charge_ended().await {
            Ok(0) => {}
            Ok(n) => tracing::info!(runs = n, "agents' ended runs nobody charged were charged"),
            Err(e) => tracing::warn!(error = %e, "the agents' ended runs were not charged yet"),
        }
        if let Err(e) = bound.battles.answer_waiting().await {
            tracing::warn!(error = %e, "the workflow contenders waiting for an answer were not caught up");
        }
        match bound.battles.settle_answered().await {
            Ok(0) => {}
            Ok(n) => tracing::info!(battles = n, "battles left in executing with every answer in moved on"),
            Err(e) => tracing::warn!(error = %e, "the battles with every answer in were not caught up"),
        }
        if self.teams().is_some()
            && let Err(e) = self.catch_up_teams().await
        {
            tracing::warn!(error = %e, "the team runs were not caught up");
        }
    }
}

/// Charges what `run` spent to the agent that started it, if one did
/// ([`RunService::charge_agent`]), in a task of its own; a charge that
/// fails is made by the next catch-up.
fn charge(own: &OwnServices, run: &Run, state: &RunState) {
    let Some(bound) = own.bound().filter(|_| run.agent.is_some()) else { return };
    let Ok(rt) = tokio::runtime::Handle::try_current() else { return };
    let (runs, run, credits) = (bound.runs.clone(), run.clone(), state.usage().credits);
    rt.spawn(async move {
        if let Err(e) = runs.charge_agent(&run, credits).await {
            tracing::warn!(run = %run.id, error = %e, "a run's spend was not charged to its agent yet");
        }
    });
}

/// Starts the runs of the workflows that hear `event`, each in the causal
/// tree of the run the event is about (if it is): a workflow that has a
/// run in that tree, a full tree, or a follower's owner past the bound of
/// runs events start for them a minute, starts none
/// ([`RunService::start_caused`]).
async fn follow(bound: &Bound, event: DomainEvent) -> lf_core::LfResult<()> {
    let mut followers = bound.workflows.followers(event.kind).await?;
    if followers.is_empty() {
        return Ok(());
    }
    let cause = match event.run {
        Some((run, _)) => Some(bound.runs.store().get_run(RunId::from_uuid(run)).await?),
        None => None,
    };
    match (event.run, &cause) {
        (Some((_, workflow)), Some(run)) if followers.iter().any(|f| f.owner != event.owner) => {
            // A run's end is heard by whoever may read the run.
            let w = bound
                .workflows
                .get_workflow(lf_core::Reach::Everything, WorkflowId::from_uuid(workflow))
                .await?;
            followers.retain(|f| f.hears_run(&event, &w, run));
        }
        _ => followers.retain(|f| f.hears(&event)),
    }
    if followers.is_empty() {
        return Ok(());
    }
    let key = IdempotencyKey::parse("idempotency_key", &format!("event:{}", event.id))?;
    for f in followers {
        let start = StartRun {
            workflow_id: Some(f.workflow_id),
            inputs: event_inputs(&event),
            idempotency_key: Some(key.clone()),
            ..StartRun::default()
        };
        match bound.runs.start_caused(f.owner, cause.as_ref(), start).await {
            Ok(Caused::Made(..) | Caused::InTree) => {}
            Ok(Caused::TreeFull { first }) => {
                let root = cause.as_ref().map(|c| c.root_run_id.to_string()).unwrap_or_default();
                if first {
                    tracing::warn!(root = %root, workflow = %f.workflow_id, event = %event.kind, "the runs caused by a run reached the bound of its tree: the workflows following its tree's events are no longer started");
                } else {
                    tracing::debug!(root = %root, workflow = %f.workflow_id, "a workflow following an event of a full tree did not start");
                }
            }
            Ok(Caused::TooFast) => {
                tracing::warn!(lenser = %f.owner, workflow = %f.workflow_id, event = %event.kind, "a workflow following an event did not start: its owner's runs started by events reached their bound for this minute");
            }
            Err(e) => {
                tracing::warn!(workflow = %f.workflow_id, event = %event.kind, error = %e, "a workflow following an event did not start");
            }
        }
    }
    Ok(())
}
