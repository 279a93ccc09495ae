//! The run use cases for a principal: start, read, list, cancel, retry.
//! Who may do what: a run is readable by whoever may read its workflow
//! version and whose [`RunScope`] covers it (its starter, the workflow's
//! owner, every reader when the workflow has public runs); only its
//! starter and the workflow's owner (and the local operator, the Service
//! principal) may cancel or retry it.

use std::sync::Arc;

use lf_core::{
    Clock, ErrorCode, LenserId, LfError, LfResult, Page, PageRequest, Principal, SystemClock, WorkflowId,
};
use serde_json::Value;

use super::credits::{AgentCredits, agent_budget};
use super::form::check_form_inputs;
use super::inputs::check_start;
use super::model::{Caused, EventBounds, IdempotencyKey, Run, RunFilter, RunId, RunOrigin};
use super::run_not_found;
use super::store::RunStore;
use super::visibility::RunScope;
use crate::engine::{Limits, Plan, RunState, RunStatus};
use crate::model::{JsonObject, VersionSelector, WorkflowVersion};
use crate::service::WorkflowService;

/// Tells the runners of this process that something changed. The
/// composition root connects it to the runner; an app that embeds the
/// service without one uses [`NoSignal`] (runs then start at the runner's
/// next claim).
pub trait RunSignal: Send + Sync {
    /// A run was made and is due now.
    fn started(&self, run: RunId);
    /// Someone asked to cancel a run.
    fn cancel_requested(&self, run: RunId);
    /// Something a waiting step of the run waits for happened (a person
    /// decided): its runner looks again at once. By default nobody is told
    /// (the step looks again at its own timer).
    fn woken(&self, run: RunId) {
        let _ = run;
    }
}

/// A [`RunSignal`] that tells nobody.
pub struct NoSignal;

impl RunSignal for NoSignal {
    fn started(&self, _: RunId) {}
    fn cancel_requested(&self, _: RunId) {}
}

/// The defaults a run gets when its starter says nothing.
#[derive(Clone, Copy, Debug, Default)]
pub struct RunDefaults {
    pub limits: Limits,
    /// What bounds the runs events start ([`RunService::start_caused`]).
    pub events: EventBounds,
}

/// How a new run is linked to the runs before it.
#[derive(Clone, Copy, Default)]
struct Links {
    parent: Option<RunId>,
    caused_by: Option<RunId>,
    /// Its tree's root; `None`: it is its own.
    root: Option<RunId>,
}

/// What `run_workflow` asks for.
#[derive(Clone, Debug, Default)]
pub struct StartRun {
    pub workflow_id: Option<WorkflowId>,
    /// A version number; `None`: the head.
    pub version: Option<u32>,
    pub inputs: JsonObject,
    pub global_model_id: Option<String>,
    pub idempotency_key: Option<IdempotencyKey>,
    pub budget_credits: Option<u64>,
}

/// A run started, or found by its idempotency key.
#[derive(Clone, Debug)]
pub struct Started {
    pub run: Run,
    /// False when the idempotency key named an earlier run.
    pub created: bool,
}

/// A run with its node results and the version it ran, for logs.
#[derive(Clone, Debug)]
pub struct RunLog {
    pub run: Run,
    pub version: WorkflowVersion,
}

/// Whether the runners of this server can run a node type.
pub type Runnable = Arc<dyn Fn(&str) -> bool + Send + Sync>;

/// The run use cases.
pub struct RunService {
    workflows: Arc<WorkflowService>,
    runs: Arc<dyn RunStore>,
    signal: Arc<dyn RunSignal>,
    defaults: RunDefaults,
    clock: Arc<dyn Clock>,
    runnable: Option<Runnable>,
    /// What agents' runs may spend; none: their runs are not bounded by
    /// it, nor charged (embedding, tests).
    credits: Option<Arc<dyn AgentCredits>>,
}

impl RunService {
    pub fn new(workflows: Arc<WorkflowService>, runs: Arc<dyn RunStore>, signal: Arc<dyn RunSignal>) -> Self {
        RunService {
            workflows,
            runs,
            signal,
            defaults: RunDefaults::default(),
            clock: Arc::new(SystemClock),
            runnable: None,
            credits: None,
        }
    }

    /// Bounds the runs an agent starts by the credits it has left, and
    /// charges what they spend to it ([`AgentCredits`]).
    pub fn with_agent_credits(mut self, credits: Arc<dyn AgentCredits>) -> Self {
        self.credits = Some(credits);
        self
    }

    /// Refuses to start a run with a step whose type `runnable` says the
    /// runners cannot run, rather than failing it at that step.
    pub fn with_runnable(mut self, runnable: Runnable) -> Self {
        self.runnable = Some(runnable);
        self
    }

    pub fn with_defaults(mut self, defaults: RunDefaults) -> Self {
        self.defaults = defaults;
        self
    }

    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    pub fn store(&self) -> &Arc<dyn RunStore> {
        &self.runs
    }

    /// Starts a run of a workflow the caller may read, pinned to its head
    /// (or the asked version). A repeated idempotency key within 24 hours
    /// returns the first run. Refused, saying why, when the version does
    /// not validate, the inputs do not fit its form, or they are too large,
    /// too deep or hold a secret.
    pub async fn start(&self, p: &Principal, s: StartRun) -> LfResult<Started> {
        self.start_with(p, RunOrigin::Manual, Links::default(), s).await
    }

    /// Starts a run for a trigger of the workflow itself (its schedule,
    /// its webhook, an event it follows) as `owner`, the workflow's owner
    /// as the trigger's own record names it (the schedule's row, the
    /// follower's row, the workflow the webhook's secret matched), who is
    /// its starter, with the same checks as [`RunService::start`]. A run
    /// caused by another run (an event of its end) names it as `parent`.
    /// The caller has already checked what entitles it.
    pub async fn start_triggered(
        &self,
        origin: RunOrigin,
        owner: LenserId,
        parent: Option<RunId>,
        s: StartRun,
    ) -> LfResult<Started> {
        let as_owner = Principal::Lenser { id: owner, scopes: lf_core::Scopes::READ_WRITE };
        let root = self.root_of(parent).await?;
        self.start_with(&as_owner, origin, Links { parent, caused_by: None, root }, s).await
    }

    /// Starts a run for an event that a workflow owned by `owner` follows,
    /// as [`RunService::start_triggered`] with [`RunOrigin::Event`]; `cause`
    /// is the run whose end the event is (`None` for other events): the new
    /// run is `caused_by` it and in its tree. Not started, saying why, when
    /// the workflow already has a run in that tree, the tree is full, or
    /// the owner's event-started runs of the last minute reach their bound
    /// ([`RunDefaults::events`], [`RunStore::create_caused`]).
    pub async fn start_caused(&self, owner: LenserId, cause: Option<&Run>, s: StartRun) -> LfResult<Caused> {
        let as_owner = Principal::Lenser { id: owner, scopes: lf_core::Scopes::READ_WRITE };
        let links = Links {
            parent: cause.map(|c| c.id),
            caused_by: cause.map(|c| c.id),
            root: cause.map(|c| c.root_run_id),
        };
        self.make(&as_owner, RunOrigin::Event, links, s, Some(self.defaults.events)).await
    }

    /// The root of `parent`'s tree, when there is a parent.
    async fn root_of(&self, parent: Option<RunId>) -> LfResult<Option<RunId>> {
        match parent {
            Some(p) => Ok(Some(self.runs.get_run(p).await?.root_run_id)),
            None => Ok(None),
        }
    }

    /// Starts a run for a call of the workflow's webhook: `secret` must be
    /// its webhook's, the workflow not archived and its head's trigger a
    /// webhook trigger, else one refusal whatever was wrong
    /// ([`crate::hook::hook_refused`]); then as [`RunService::start_triggered`]
    /// with [`RunOrigin::Webhook`], the head version and `inputs`. A repeated
    /// idempotency key returns the first run.
    pub async fn start_from_webhook(
        &self,
        workflow_id: WorkflowId,
        secret: Option<&str>,
        inputs: JsonObject,
        idempotency_key: Option<IdempotencyKey>,
    ) -> LfResult<Started> {
        let owner = self.check_webhook(workflow_id, secret).await?;
        self.start_from_checked_webhook(workflow_id, owner, inputs, idempotency_key).await
    }

    /// The first half of [`RunService::start_from_webhook`], before the
    /// call's body is read: checks `secret` and the workflow, answering
    /// the owner the run is started as.
    pub async fn check_webhook(&self, workflow_id: WorkflowId, secret: Option<&str>) -> LfResult<LenserId> {
        Ok(self.workflows.webhook_caller(workflow_id, secret).await?.owner)
    }

    /// The second half of [`RunService::start_from_webhook`], for a call
    /// [`RunService::check_webhook`] let through as `owner`.
    pub async fn start_from_checked_webhook(
        &self,
        workflow_id: WorkflowId,
        owner: LenserId,
        inputs: JsonObject,
        idempotency_key: Option<IdempotencyKey>,
    ) -> LfResult<Started> {
        let start =
            StartRun { workflow_id: Some(workflow_id), inputs, idempotency_key, ..StartRun::default() };
        self.start_triggered(RunOrigin::Webhook, owner, None, start).await
    }

    /// Starts a run for a `sub_workflow` step of run `parent`, as that
    /// run's starter (who must be able to read the workflow it names), and
    /// for the agent that started `parent` if one did; linked to it by
    /// `parent_run_id`. The step's idempotency key makes a step run again
    /// after a takeover find the run it started.
    pub async fn start_child(&self, parent: &Run, s: StartRun) -> LfResult<Started> {
        let as_starter = match parent.agent {
            // An agent's principal reaches what its owner, the starter, does:
            // only the child's `agent` differs.
            Some(agent_id) => Principal::Agent { agent_id, owner: parent.started_by },
            None => Principal::Lenser { id: parent.started_by, scopes: lf_core::Scopes::READ_WRITE },
        };
        let links = Links { parent: Some(parent.id), caused_by: None, root: Some(parent.root_run_id) };
        self.start_with(&as_starter, RunOrigin::SubWorkflow, links, s).await
    }

    /// Starts the workflow run of an agent's team run ([`RunOrigin::Team`])
    /// as the agent `agent_id` acting for its `owner`: the owner is its
    /// starter, with the owner's reach, and the agent its `agent`; `parent`
    /// is the run of the team run it is nested in. The caller (the runner)
    /// has checked the team run; the checks are those of [`RunService::start`].
    pub async fn start_team(
        &self,
        agent_id: LenserId,
        owner: LenserId,
        parent: Option<RunId>,
        s: StartRun,
    ) -> LfResult<Started> {
        let as_agent = Principal::Agent { agent_id, owner };
        let root = self.root_of(parent).await?;
        self.start_with(&as_agent, RunOrigin::Team, Links { parent, caused_by: None, root }, s).await
    }

    async fn start_with(
        &self,
        p: &Principal,
        origin: RunOrigin,
        links: Links,
        s: StartRun,
    ) -> LfResult<Started> {
        match self.make(p, origin, links, s, None).await? {
            Caused::Made(run, created) => Ok(Started { run: *run, created }),
            other => Err(LfError::internal(format!("a run not bounded by events was not made: {other:?}"))),
        }
    }

    /// Makes the run; with `bounds`, one an event starts ([`RunStore::create_caused`]).
    async fn make(
        &self,
        p: &Principal,
        origin: RunOrigin,
        links: Links,
        s: StartRun,
        bounds: Option<EventBounds>,
    ) -> LfResult<Caused> {
        check_start(&s)?;
        let workflow_id = s
            .workflow_id
            .ok_or_else(|| LfError::invalid_argument("workflow_id is required").with_field("workflow_id"))?;
        let starter = p.owner_for_create()?;
        let now = self.clock.now();
        let (workflow, version) =
            self.workflows.runnable(p, workflow_id, VersionSelector::from_number(s.version)).await?;
        if let Some(key) = &s.idempotency_key
            && let Some(first) = self.runs.find_by_key(workflow_id, starter, key, now).await?
        {
            return Ok(Caused::Made(Box::new(first), false));
        }
        let plan = Plan::new(&version).map_err(|e| {
            LfError::invalid_argument(format!(
                "Workflow {workflow_id} version {} cannot run: {e}",
                version.number
            ))
        })?;
        if let Some(can) = &self.runnable {
            let cannot: Vec<String> = plan
                .nodes
                .iter()
                .filter(|n| n.role.is_executed() && !can(&n.node_type))
                .map(|n| format!("{} ({})", n.key, n.node_type))
                .collect();
            if !cannot.is_empty() {
                return Err(LfError::invalid_argument(format!(
                    "Workflow {workflow_id} version {} cannot run on this server: it has no executor for step {}. Replace those steps, or run the workflow where they are supported.",
                    version.number,
                    cannot.join(", ")
                )));
            }
        }
        let trigger = plan.node(plan.trigger);
        let inputs = if trigger.node_type == "form_input_trigger" {
            check_form_inputs(&trigger.config, s.inputs)?
        } else {
            s.inputs
        };
        let mut limits = self.defaults.limits;
        if s.budget_credits.is_some() {
            limits.budget_credits = s.budget_credits;
        }
        limits.budget_credits = self.budget_of(p, limits.budget_credits).await?;
        let state = RunState::new(Value::Object(inputs), limits);
        let mut run = Run {
            agent: p.agent(),
            parent_run_id: links.parent,
            caused_by: links.caused_by,
            idempotency_key: s.idempotency_key,
            global_model_id: s.global_model_id,
            ..Run::new(&workflow, &version, starter, origin, now, state)
        };
        run.root_run_id = links.root.unwrap_or(run.id);
        let made = match bounds {
            Some(b) => self.runs.create_caused(&run, b).await?,
            None => {
                let (run, created) = self.runs.create_run(&run).await?;
                Caused::Made(Box::new(run), created)
            }
        };
        if let Caused::Made(run, true) = &made {
            self.signal.started(run.id);
        }
        Ok(made)
    }

    /// Records a lens that `run_lens` resolved for a workflow: a run of the
    /// workflow's head (which the caller must be able to read: NOT_FOUND
    /// otherwise), origin `lens`, started by the caller and already
    /// completed, whose inputs and result are `call` (which lens and
    /// version, with which parameters). Nothing runs it; the run tools read
    /// it like any other.
    pub async fn record_lens(&self, p: &Principal, workflow_id: WorkflowId, call: Value) -> LfResult<Run> {
        let starter = p.owner_for_create()?;
        let (workflow, version) = self
            .workflows
            .store()
            .get_workflow_and_version(p.reach(), workflow_id, VersionSelector::Head)
            .await?;
        let now = self.clock.now();
        let mut state = RunState::new(call.clone(), self.defaults.limits);
        state.status = RunStatus::Completed;
        state.started_at = Some(now);
        state.finished_at = Some(now);
        state.result = Some(call);
        let run =
            Run { agent: p.agent(), ..Run::new(&workflow, &version, starter, RunOrigin::Lens, now, state) };
        Ok(self.runs.create_run(&run).await?.0)
    }

    /// The run, if the caller may read it ([`RunScope`]) and its workflow
    /// version.
    pub async fn get(&self, p: &Principal, id: RunId) -> LfResult<Run> {
        let run = self.runs.get_run(id).await?;
        self.readable(p, &run).await.map(|_| run)
    }

    /// The run with every node result, and the version it runs.
    pub async fn log(&self, p: &Principal, id: RunId) -> LfResult<RunLog> {
        let run = self.runs.load_run(id).await?;
        let version = self.readable(p, &run).await?;
        Ok(RunLog { run, version })
    }

    /// Runs newest first: those of one readable workflow the caller may
    /// read ([`RunScope`]), or those the caller started or whose workflow
    /// the caller owns.
    pub async fn list(&self, p: &Principal, mut filter: RunFilter, page: PageRequest) -> LfResult<Page<Run>> {
        let me = p.owner_for_create()?;
        if let Some(w) = filter.workflow_id {
            let workflow = self.workflows.store().get_workflow(p.reach(), w).await?;
            if let Some(starter) = RunScope::of(p, &workflow).started_by() {
                filter.started_by = Some(starter);
            }
        }
        self.runs.list_runs(me, &filter, page).await
    }

    /// Asks the run's runner to stop it (within one node). Only its starter
    /// and the workflow's owner (and the Service principal) may; a run that
    /// has ended cannot be.
    pub async fn cancel(&self, p: &Principal, id: RunId) -> LfResult<Run> {
        let run = self.get(p, id).await?;
        let who = self.controller(p, &run, "cancel")?;
        if run.status().is_final() {
            return Err(LfError::new(
                ErrorCode::InvalidTransition,
                format!(
                    "Workflow run {id} has already ended ({}): there is nothing to cancel.",
                    run.status()
                ),
            ));
        }
        let run = self.runs.request_cancel(id, &who.to_string(), self.clock.now()).await?;
        self.signal.cancel_requested(id);
        Ok(run)
    }

    /// Wakes the run's waiting steps ([`RunStore::wake`], then the
    /// runner's signal): for the hooks that record what they wait for (a
    /// person's decision on a held tool call), which have checked who
    /// decided; it reveals nothing and changes nothing else.
    pub async fn wake_waiting(&self, id: RunId) -> LfResult<()> {
        self.runs.wake(id, self.clock.now()).await?;
        self.signal.woken(id);
        Ok(())
    }

    /// A new run of a failed or cancelled run's version with its inputs,
    /// linked by `parent_run_id`; with `resume`, the completed steps'
    /// outputs are reused instead of run again.
    pub async fn retry(&self, p: &Principal, id: RunId, resume: bool) -> LfResult<Run> {
        let old = self.get(p, id).await?;
        let starter = self.controller(p, &old, "retry")?;
        if !matches!(old.status(), RunStatus::Failed | RunStatus::Cancelled) {
            return Err(LfError::new(
                ErrorCode::InvalidTransition,
                format!(
                    "Workflow run {id} is {}: only a failed or cancelled run can be retried.",
                    old.status()
                ),
            ));
        }
        let mut limits = old.state.limits;
        limits.budget_credits = self.budget_of(p, limits.budget_credits).await?;
        let state = RunState::new(old.state.inputs.clone(), limits);
        let run = Run {
            id: RunId::new(),
            origin: RunOrigin::Retry,
            parent_run_id: Some(old.id),
            resume_from: resume.then_some(old.id),
            idempotency_key: None,
            started_by: starter,
            // The retry's own starter, not the old run's.
            agent: p.agent(),
            created_at: self.clock.now(),
            cancel_requested_by: None,
            state,
            ..old
        };
        let (run, _) = self.runs.create_run(&run).await?;
        self.signal.started(run.id);
        Ok(run)
    }

    /// The budget of a run `p` starts asking for `asked`: for an agent, at
    /// most the credits it has left ([`agent_budget`]).
    async fn budget_of(&self, p: &Principal, asked: Option<u64>) -> LfResult<Option<u64>> {
        match (p.agent(), &self.credits) {
            (Some(agent), Some(credits)) => Ok(Some(agent_budget(agent, asked, credits.left(agent).await?)?)),
            _ => Ok(asked),
        }
    }

    /// Charges what the ended `run` spent (`credits`) to the agent that
    /// started it, once ([`AgentCredits::charge`]), and marks it charged
    /// ([`RunStore::mark_charged`]): a stop between the two charges it
    /// again at the next catch-up, which counts nothing twice. Nothing for
    /// a run no agent started, or without [`RunService::with_agent_credits`].
    pub async fn charge_agent(&self, run: &Run, credits: u64) -> LfResult<()> {
        let (Some(agent), Some(port)) = (run.agent, &self.credits) else { return Ok(()) };
        port.charge(agent, run.id, credits).await?;
        self.runs.mark_charged(run.id, self.clock.now()).await
    }

    /// Charges the agents' ended runs nobody charged (their process
    /// stopped first; the runner's catch-up calls it); how many.
    pub async fn charge_ended(&self) -> LfResult<usize> {
        if self.credits.is_none() {
            return Ok(0);
        }
        const BATCH: u32 = 100;
        let mut charged = 0;
        loop {
            let ids = self.runs.to_charge(BATCH).await?;
            for id in &ids {
                let run = self.runs.load_run(*id).await?;
                self.charge_agent(&run, run.state.usage().credits).await?;
            }
            charged += ids.len();
            if ids.len() < BATCH as usize {
                return Ok(charged);
            }
        }
    }

    /// The run's version, if the caller may read the run: NOT_FOUND, as for
    /// a run that is not there, when its workflow version is not readable
    /// to the caller or its [`RunScope`] leaves the run out.
    async fn readable(&self, p: &Principal, run: &Run) -> LfResult<WorkflowVersion> {
        let (workflow, version) = self
            .workflows
            .store()
            .get_workflow_and_version(p.reach(), run.workflow_id, VersionSelector::Id(run.version_id))
            .await
            .map_err(|e| if e.code() == ErrorCode::NotFound { run_not_found(run.id) } else { e })?;
        if !RunScope::of(p, &workflow).covers(run) {
            return Err(run_not_found(run.id));
        }
        Ok(version)
    }

    fn controller(&self, p: &Principal, run: &Run, what: &str) -> LfResult<lf_core::LenserId> {
        let who = p.owner_for_create()?;
        // The local operator may change any row, so it may control any run.
        if !run.may_control(who) && !matches!(p, Principal::Service { .. }) {
            return Err(LfError::forbidden(format!(
                "Only the lenser who started workflow run {} or the workflow's owner may {what} it.",
                run.id
            )));
        }
        Ok(who)
    }
}
